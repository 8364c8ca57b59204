// TrainingSpec: batch, sequence, token budget, precisions, optimizer and the framework reserve.
#pragma once

#include <cstdint>

#include "plansight/estimator/enums.h"

namespace plansight::estimator {

struct TrainingSpec {
  std::int64_t micro_batch = 1;
  std::int64_t global_batch = 1;
  std::int64_t seq_len = 2048;
  double tokens = 0;  // training token budget; 0: no duration estimate

  // Compute precision; also the precision weights are kept in (fp8: weights kept in bf16 and
  // cast per GEMM, as Transformer Engine does).
  Precision precision = Precision::bf16;
  // Gradient precision; defaults to the weights' precision (ZeRO paper's 16 B/param
  // convention); fp32 gives Megatron's bf16 + fp32-gradient 18 B/param convention.
  Precision grad_precision = Precision::bf16;
  MasterPrecision master_precision = MasterPrecision::fp32;  // ignored for fp32 training
  Optimizer optimizer = Optimizer::adam;
  AttentionKernel attention = AttentionKernel::flash;
  bool causal_attention_flops = false;  // false: full s*s score FLOPs (Narayanan, Korthikanti)

  // Throughput assumption for the cost estimate: one of them (or neither).
  double achieved_tflops = 0;  // per GPU, hardware FLOPs
  double mfu = 0;              // model FLOPs utilisation in (0, 1]

  // Framework reserve: CUDA context, cuBLAS/NCCL workspaces, plus allocator fragmentation as a
  // fraction of everything else. Defaults documented in memory.cpp.
  double reserve_fixed_bytes = 1.0 * (1 << 30);
  double fragmentation = 0.05;
  double dp_bucket_bytes = 25.0 * (1 << 20);  // PyTorch DDP bucket_cap_mb default
  // ZeRO-3/FSDP: the next layer's parameters are gathered while the current one computes (FSDP's
  // backward_prefetch, Megatron/DeepSpeed prefetch): one more unsharded layer in memory, gathers
  // hidden behind compute. false: each layer gathers when it starts (exposed, one layer held).
  bool zero3_prefetch = true;
  // The loss's softmax overwrites the logits, and its gradient the softmax (llm.c's fused
  // classifier; plansight-probe's head). false: Megatron-LM's vocabulary-parallel cross-entropy,
  // which keeps the logits and an fp32 softmax, and makes the logits' gradient apart.
  bool loss_in_place = false;
  // The vocabulary is padded to a multiple of this times TP, as Megatron-LM's
  // --make-vocab-size-divisible-by (default 128; megatron/training/tokenizer
  // _vocab_size_with_padding) does, so the embedding and LM head shard evenly and their GEMMs stay
  // Tensor-Core aligned. 1 keeps the tokenizer's vocabulary (padded only to a multiple of TP,
  // which vocabulary-parallel layers need): what frameworks without padding run.
  std::int64_t vocab_divisible_by = 128;
};

// The gradient precision that follows a compute precision when none is given: the same type
// (ZeRO's 16 B/param convention), bf16 for fp8 (Transformer Engine keeps 16-bit gradients). The
// one rule behind "precision" in plan files, --precision and the app's precision field.
inline Precision gradient_precision_for(Precision compute) {
  return compute == Precision::fp8 ? Precision::bf16 : compute;
}

}  // namespace plansight::estimator
