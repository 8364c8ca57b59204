// ParamUnit: ZeRO stages over one flat buffer. A unit's length is padded to a multiple of dp
// (zeros, never updated) whenever it is sharded, so reduce-scatter and all-gather move equal
// blocks; rank d owns elements [d * S, (d + 1) * S) with S = padded / dp.
#include "param_unit.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "grad_sync.h"

namespace plansight::probe {
namespace {

namespace est = plansight::estimator;
using runtime::MemoryCategory;
using runtime::TrackedBuffer;

}  // namespace

ParamUnit::ParamUnit(RankContext& ctx, std::string name, std::vector<TensorDesc> tensors, int stage, bool tied)
    : ctx_(ctx), name_(std::move(name)), tensors_(std::move(tensors)), stage_(stage), tied_(tied), zero_(ctx.cfg.zero_stage) {
  const int tp = ctx.cfg.tp, t = ctx.at.tp;
  for (auto& d : tensors_) {
    d.offset = count_;
    count_ += d.local_count(tp);
  }
  const auto dp = static_cast<std::size_t>(ctx.cfg.dp);
  padded_ = zero_ >= 1 ? (count_ + dp - 1) / dp * dp : count_;

  // Initial weights from the global indices, so all layouts start from the serial model.
  std::vector<float> init(padded_, 0.0f);
  for (const auto& d : tensors_) {
    const std::size_t n = d.local_count(tp);
    for (std::size_t i = 0; i < n; ++i) init[d.offset + i] = init_value(ctx.cfg.request.seed, d, d.global_index(i, tp, t));
  }
  runtime::MemoryTracker* m = &ctx.memory;
  if (zero_ >= 3) {
    shard_params_ = TrackedBuffer(m, MemoryCategory::weights, shard_size());
    std::copy_n(init.data() + shard_begin(), shard_size(), shard_params_.data());
  } else {
    full_params_ = TrackedBuffer(m, MemoryCategory::weights, padded_);
    std::copy(init.begin(), init.end(), full_params_.data());
  }
  if (zero_ >= 2) {
    grad_shard_ = TrackedBuffer(m, MemoryCategory::gradients, shard_size());
  } else {
    full_grads_ = TrackedBuffer(m, MemoryCategory::gradients, padded_);
  }
  const std::size_t states = zero_ >= 1 ? shard_size() : padded_;
  adam_m_ = TrackedBuffer(m, MemoryCategory::optimizer, states);
  adam_v_ = TrackedBuffer(m, MemoryCategory::optimizer, states);
}

void ParamUnit::acquire(est::Phase phase, int micro_batch) {
  if (zero_ < 3 || acquired_++ > 0) return;
  full_params_ = TrackedBuffer(&ctx_.memory, MemoryCategory::buffers, padded_);
  ctx_.all_gather(*ctx_.dp, shard_params_.data(), full_params_.data(), shard_size(), "zero3.all_gather", phase, stage_, micro_batch);
}

void ParamUnit::release() {
  if (zero_ < 3) return;
  if (--acquired_ == 0) full_params_.reset();
}

void ParamUnit::begin_backward() {
  if (zero_ >= 2 && full_grads_.empty()) {
    // Two buckets of full gradients at most: the one being reduce-scattered and this one being
    // filled (DeepSpeed's double-buffered reduction buckets; the estimator's ZeRO-2/3 buffers).
    // Without the bound the transient buckets piled up behind a slow gradient thread.
    ctx_.grad_sync->wait_until_pending_at_most(1);
    ctx_.grad_staging[ctx_.grad_staging_next++ % 2].reset();  // the one before last: reduced
    full_grads_ = TrackedBuffer(&ctx_.memory, MemoryCategory::buffers, padded_);
  }
}

void ParamUnit::end_backward(bool last_micro_batch) {
  if (++uses_done_ < backward_uses_) return;
  uses_done_ = 0;
  if (zero_ >= 2 || last_micro_batch) submit_reduction();
}

void ParamUnit::submit_reduction() {
  const double bytes = static_cast<double>(padded_ * sizeof(float));
  const std::size_t shard = shard_size();
  float* grads = full_grads_.data();
  if (zero_ == 0) {
    ctx_.grad_sync->submit("dp.all_reduce", stage_, bytes, [grads, n = padded_](runtime::Communicator& c) { return c.all_reduce(grads, n); });
  } else if (zero_ == 1) {
    // In place, as NCCL allows: the output is the rank's own block of the input.
    float* out = grads + shard_begin();
    ctx_.grad_sync->submit("dp.reduce_scatter", stage_, bytes, [grads, out, shard](runtime::Communicator& c) { return c.reduce_scatter(grads, out, shard); });
  } else {
    // The transient full gradients go with the task and stay in their staging slot until it is
    // reused (rank_context.h).
    auto transient = std::make_shared<TrackedBuffer>(std::move(full_grads_));
    ctx_.grad_staging[(ctx_.grad_staging_next + 1) % 2] = transient;
    float* acc = grad_shard_.data();
    ctx_.grad_sync->submit("dp.reduce_scatter", stage_, bytes, [transient, acc, shard](runtime::Communicator& c) {
      float* block = transient->data() + static_cast<std::size_t>(c.rank()) * shard;
      auto status = c.reduce_scatter(transient->data(), block, shard);
      if (status) for (std::size_t i = 0; i < shard; ++i) acc[i] += block[i];
      return status;
    });
  }
}

void ParamUnit::zero_grads() {
  if (zero_ >= 2) grad_shard_.zero();
  else full_grads_.zero();
  uses_done_ = 0;
}

void ParamUnit::optimizer_step(const kernels::AdamWSettings& settings, int step) {
  const bool sharded = zero_ >= 1;
  const std::size_t n = sharded ? shard_size() : padded_;
  float* grads = zero_ >= 2 ? grad_shard_.data() : full_grads_.data() + (sharded ? shard_begin() : 0);
  float* params = zero_ >= 3 ? shard_params_.data() : full_params_.data() + (sharded ? shard_begin() : 0);
  if (tied_ && ctx_.embedding) {
    // Megatron's _allreduce_embedding_grads: the first stage's embedding and the last stage's
    // head copy add their gradients, so both copies take the same update. Shards line up
    // because both units have the same shape.
    ctx_.all_reduce(*ctx_.embedding, grads, n, "embedding.all_reduce", est::Phase::communication, stage_, -1);
  }
  {
    auto span = ctx_.compute("adamw", est::Phase::optimizer, stage_, -1);
    kernels::cpu::adamw_update(params, adam_m_.data(), adam_v_.data(), grads, n, settings, step);
  }
  if (sharded && zero_ < 3 && ctx_.cfg.dp > 1) {
    ctx_.all_gather(*ctx_.dp, params, full_params_.data(), shard_size(), "zero.all_gather", est::Phase::optimizer, stage_, -1);
  }
}

void ParamUnit::export_to(std::map<std::string, std::vector<float>>& out) {
  acquire(est::Phase::none, -1);
  const int tp = ctx_.cfg.tp, t = ctx_.at.tp;
  for (const auto& d : tensors_) {
    auto& dst = out[d.name];
    const int rows = d.valid_rows >= 0 ? d.valid_rows : d.rows;
    // NaN marks what this rank does not hold; the caller merges the ranks' maps.
    if (dst.empty()) dst.assign(static_cast<std::size_t>(rows) * static_cast<std::size_t>(d.cols), std::numeric_limits<float>::quiet_NaN());
    const std::size_t n = d.local_count(tp);
    for (std::size_t i = 0; i < n; ++i) {
      const std::int64_t g = d.global_index(i, tp, t);
      if (g >= 0) dst[static_cast<std::size_t>(g)] = full_params_.data()[d.offset + i];
    }
  }
  release();
}

}  // namespace plansight::probe
