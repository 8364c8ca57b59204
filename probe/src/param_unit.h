// ParamUnit: the parameters of one layer (or the word embedding, positions, final norm) on one
// rank, in one flat buffer, with the ZeRO partitioning of its states over the DP group
// (Rajbhandari et al. 2020, Sec. 5): stage 1 keeps AdamW's moments for a 1/dp shard, stage 2
// also keeps only that shard of the gradients, stage 3 also of the weights (all-gathered before
// each use and freed after). A unit is the bucket of the data-parallel gradient reduction.
// The weights the kernels read are in the backend's compute type; with a 16-bit compute type an
// fp32 master copy of the rank's part (its shard from ZeRO-1 on) takes the optimizer's update
// and is rounded into the compute copy (mixed precision, Micikevicius et al. 2018 §3.1; the
// master copy counts as optimizer state, as Rajbhandari et al. 2020 Sec. 3.1 count it).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "param_init.h"
#include "backend.h"
#include "plansight/kernels/adamw.h"
#include "rank_context.h"

namespace plansight::probe {

class ParamUnit {
 public:
  // `tensors` in buffer order (offsets are assigned here). `stage` is the global chunk.
  ParamUnit(RankContext& ctx, std::string name, std::vector<TensorDesc> tensors, int stage, bool tied);

  const std::string& name() const { return name_; }
  const std::vector<TensorDesc>& tensors() const { return tensors_; }
  bool tied() const { return tied_; }  // word embedding shared with the LM head across stages
  std::size_t count() const { return count_; }

  // Local parameters (compute type) / fp32 gradients of tensor `i` (nullptr for an absent
  // optional tensor, index < 0). Parameters are valid between acquire() and release() (always,
  // below ZeRO-3); gradients between begin_backward() and end_backward() (always, below ZeRO-2).
  void* param(int i) { return i < 0 ? nullptr : full_params_.at(tensors_[static_cast<std::size_t>(i)].offset); }
  float* grad(int i) { return i < 0 ? nullptr : full_grads_.f32() + tensors_[static_cast<std::size_t>(i)].offset; }

  // ZeRO-3: all-gathers the weights (reference counted, so nested uses gather once).
  void acquire(estimator::Phase phase, int micro_batch);
  void release();

  // How many backward uses one micro-batch makes of this unit (2: the word embedding when the
  // embedding and the tied head live in the same chunk).
  void set_backward_uses(int uses) { backward_uses_ = uses; }
  void begin_backward();
  // After a use's backward; after the last use of a micro-batch, hands the gradients to the
  // DP reduction: every micro-batch at ZeRO-2/3, the last one (`last_micro_batch`) below.
  void end_backward(bool last_micro_batch);

  void zero_grads();  // at the start of a step
  // After GradSync::drain(): the tied-embedding all-reduce (Megatron's embedding group), AdamW
  // on this rank's shard, and at ZeRO-1/2 the all-gather of the updated weights.
  // With dynamic loss scaling: grads are multiplied by `grad_multiplier` (1 / scale) and the
  // update is skipped on the device when the step's non-finite flag is set.
  void optimizer_step(const kernels::AdamWSettings& settings, int step, float grad_multiplier = 1.0f,
                      bool skip_when_nonfinite = false);
  // Sets the backend's non-finite flag when the gradients this rank updates hold inf or NaN.
  void flag_nonfinite_grads();

  // Writes this rank's slice of every tensor into `out` (global shapes, by name; elements other
  // ranks hold are NaN). At ZeRO-3 every DP rank must call it (it all-gathers).
  void export_to(std::map<std::string, std::vector<float>>& out);

 private:
  // The fp32 gradients of what this rank updates (its shard at ZeRO >= 1) and their count.
  std::pair<float*, std::size_t> update_grads();
  std::size_t shard_size() const { return padded_ / static_cast<std::size_t>(ctx_.cfg.dp); }
  std::size_t shard_begin() const { return shard_size() * static_cast<std::size_t>(ctx_.at.dp); }
  void submit_reduction();
  float* master_part();  // fp32 weights the optimizer updates: the rank's shard from ZeRO-1 on

  RankContext& ctx_;
  std::string name_;
  std::vector<TensorDesc> tensors_;
  int stage_;
  bool tied_;
  int zero_;
  std::size_t count_ = 0, padded_ = 0;
  bool mixed_ = false;  // compute type narrower than fp32: a separate fp32 master copy
  Buf full_params_;   // weights, compute type; at ZeRO-3 a gathered copy (buffers)
  Buf shard_params_;  // ZeRO-3: this rank's shard, compute type (weights)
  Buf master_;        // mixed precision: fp32 master of the rank's part (optimizer)
  Buf full_grads_;    // fp32 gradients; at ZeRO-2/3 a transient per micro-batch (buffers)
  Buf grad_shard_;    // ZeRO-2/3: reduced fp32 shard (gradients)
  Buf adam_m_, adam_v_;
  int acquired_ = 0;
  int backward_uses_ = 1;
  int uses_done_ = 0;
};

}  // namespace plansight::probe
