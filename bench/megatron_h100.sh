#!/usr/bin/env bash
# Dense GPT training on H100: predicted (no throughput given) vs the eleven runs NVIDIA published
# for Megatron-Core r0.8.0 on DGX H100 (docs/time-model-sources.md R30): the weak-scaling table
# (nine GPT models, 1.7B on 48 GPUs to 462B on 6144, per-GPU TFLOP/s printed) and the two ends of
# the strong-scaling run (the 177B model, batch 1152, 47% MFU on 96 GPUs and 42% on 4608).
# These eleven rows set the H100's in-step slowdown (assets/presets/gpus.json): 1.25 is the
# factor, to two digits, at which the mean error over the rows is zero. The spread around it is
# what this script shows.
# Usage: P=build/release/app/cli/plansight bash bench/megatron_h100.sh
#
# Stated by the source, applied to every row: vocabulary 131,072, sequence 4096, the table's
# hidden size, heads, layers, TP, PP and batch; bf16; --overlap-grad-reduce and
# --overlap-param-gather (dp_overlap, with the distributed optimizer: zero 1); --tp-comm-overlap
# (layout.tp_overlap, which Megatron allows only with sequence parallelism). The parameter counts
# the table prints (1.7B, 7.1B, ... 462B) are those of untied embeddings and a 4h MLP.
# Not stated, chosen once for every row: micro-batch 1; no interleaving (Megatron's default, so a
# row that interleaved runs faster than we predict: the PP rows with few micro-batches); no
# recomputation (Megatron's default); fused attention (flash); gradients reduced in fp32
# (Megatron-LM's rule for --bf16, arguments.py); learned positions, LayerNorm, biases (the GPT
# defaults of pretrain_gpt.py).
P=${P:-build/release/app/cli/plansight}
export P
export BENCH_DIR="$(cd "$(dirname "$0")" && pwd)"
python3 - <<'PY'
import json, os, sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.environ["BENCH_DIR"])
import plan_estimate  # noqa: E402

P = os.environ["P"]
PEAK_BF16_TFLOPS = 989.4  # H100 SXM dense bf16 (assets/presets/gpus.json)

# name, heads, hidden, layers, TP, PP, GPUs, batch, published TFLOP/s per GPU
ROWS = [
    # [R30] images/model_table.png: "Per-GPU teraFLOP/s" column.
    ("1.7B", 16, 2048, 24, 1, 1, 48, 192, 408.8),
    ("7.1B", 32, 4096, 30, 2, 1, 96, 192, 465.9),
    ("16B", 48, 6144, 32, 4, 1, 192, 192, 489.1),
    ("32B", 56, 7168, 48, 8, 1, 384, 192, 459.6),
    ("70B", 64, 8192, 84, 8, 2, 768, 384, 419.7),
    ("119B", 80, 10240, 92, 8, 4, 1536, 768, 420.5),
    ("177B", 96, 12288, 96, 8, 6, 2304, 1152, 432.8),
    ("314B", 128, 16384, 96, 8, 8, 3072, 1536, 474.4),
    ("462B", 144, 18432, 112, 8, 16, 6144, 3072, 459.9),
    # [R30] README text: "from 96 H100 GPUs to 4608 GPUs, using the same batch size of 1152
    # sequences ... a reduction in MFU from 47% to 42%"; the layout is the table's 177B row's.
    ("177B@96", 96, 12288, 96, 8, 6, 96, 1152, 0.47 * PEAK_BF16_TFLOPS),
    ("177B@4608", 96, 12288, 96, 8, 6, 4608, 1152, 0.42 * PEAK_BF16_TFLOPS),
]

print("%-10s %-12s %6s %9s %9s %7s  %8s  %s" % ("model", "layout", "GPUs", "ours", "published", "error", "iter s", "breakdown (s)"))
errors = []
for name, heads, hidden, layers, tp, pp, gpus, batch, published in ROWS:
    model = {"name": "megatron-core-gpt-" + name, "layers": layers, "hidden": hidden, "heads": heads, "kv_heads": heads,
             "head_dim": hidden // heads, "ffn_hidden": 4 * hidden, "vocab": 131072, "max_seq_len": 4096,
             "gated_mlp": False, "norm": "layernorm", "norm_bias": True, "norms_per_layer": 2, "position": "learned",
             "qkv_bias": True, "attention_out_bias": True, "mlp_bias": True, "dropout": True, "tied_embeddings": False}
    plan = {"model": model, "cluster": {"system": "dgx-h100", "gpus": gpus},
            "layout": {"tp": tp, "pp": pp, "zero_stage": 1, "sequence_parallel": tp > 1, "tp_overlap": tp > 1,
                       "recompute": "none", "dp_overlap": True},
            "training": {"micro_batch": 1, "global_batch": batch, "seq_len": 4096, "precision": "bf16",
                         "grad_precision": "fp32", "attention": "flash", "achieved_tflops": 0, "mfu": 0}}
    d = plan_estimate.estimate(P, plan)
    if d.get("errors"):
        print(name, d["errors"])
        continue
    t = d["time"]
    ours = t["achieved_tflops_per_gpu"]
    err = ours / published - 1
    errors.append(err)
    parts = " ".join("%s=%.2f" % (k.replace("_comm_s", "").replace("_s", ""), v) for k, v in t["breakdown"].items() if v > 0)
    print("%-10s tp%d pp%-2d      %6d %9.1f %9.1f %+6.1f%%  %8.2f  %s" % (name, tp, pp, gpus, ours, published, 100 * err, t["iteration_s"], parts))
print("mean error %+.1f%%, mean |error| %.1f%%, from %+.1f%% to %+.1f%% over %d rows" % (
    100 * sum(errors) / len(errors), 100 * sum(abs(e) for e in errors) / len(errors), 100 * min(errors), 100 * max(errors), len(errors)))
PY
