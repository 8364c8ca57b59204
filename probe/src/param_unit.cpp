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
  // The weights' arrays are unfilled (Fill::none): each is uploaded or converted whole from
  // `init` (padding included) before anything reads it. Gradients and moments start at zero.
  Backend& be = ctx.be;
  const Elem e = be.act();
  mixed_ = e != Elem::f32;
  const bool sharded = zero_ >= 1;
  if (mixed_) {
    // The fp32 master of the rank's part, then the compute copy rounded from it.
    const std::size_t n = sharded ? shard_size() : padded_;
    master_ = Buf(be, MemoryCategory::optimizer, n, Elem::f32, Fill::none);
    be.upload(master_.data(), init.data() + (sharded ? shard_begin() : 0), n * sizeof(float));
  }
  if (zero_ >= 3) {
    shard_params_ = Buf(be, MemoryCategory::weights, shard_size(), e, Fill::none);
    if (mixed_) be.to_act(shard_params_.data(), master_.f32(), shard_size(), Queue::compute);
    else be.upload(shard_params_.data(), init.data() + shard_begin(), shard_size() * sizeof(float));
  } else {
    full_params_ = Buf(be, MemoryCategory::weights, padded_, e, Fill::none);
    if (mixed_) {
      Buf staging(be, MemoryCategory::buffers, padded_, Elem::f32, Fill::none);
      be.upload(staging.data(), init.data(), padded_ * sizeof(float));
      be.to_act(full_params_.data(), staging.f32(), padded_, Queue::compute);
    } else {
      be.upload(full_params_.data(), init.data(), padded_ * sizeof(float));
    }
  }
  if (zero_ >= 2) {
    grad_shard_ = Buf(be, MemoryCategory::gradients, shard_size());
  } else {
    full_grads_ = Buf(be, MemoryCategory::gradients, padded_);
  }
  const std::size_t states = sharded ? shard_size() : padded_;
  adam_m_ = Buf(be, MemoryCategory::optimizer, states);
  adam_v_ = Buf(be, MemoryCategory::optimizer, states);
}

float* ParamUnit::master_part() {
  if (mixed_) return master_.f32();
  if (zero_ >= 3) return shard_params_.f32();
  return full_params_.f32() + (zero_ >= 1 ? shard_begin() : 0);
}

void ParamUnit::acquire(est::Phase phase, int micro_batch) {
  if (zero_ < 3 || acquired_++ > 0) return;
  const Elem e = ctx_.be.act();
  // Unfilled: the all-gather writes all dp shards, padded_ elements.
  full_params_ = Buf(ctx_.be, MemoryCategory::buffers, padded_, e, Fill::none);
  ctx_.all_gather(*ctx_.dp, shard_params_.data(), full_params_.data(), shard_size(), e, "zero3.all_gather", phase, stage_, micro_batch);
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
    // All but the newest submitted transient are reduced: their reduce-scatters (and the sums
    // that add them to the shard) are on the gradient queue, so each goes back to the allocator
    // in that queue's order, after the work that reads it. The compute queue does not wait for
    // them: on a GPU the reduce-scatters keep overlapping the backward (a fence here made every
    // unit's backward wait for the unit before's reduction).
    while (ctx_.grad_staging.size() > 1) {
      ctx_.grad_staging.front()->reset(Queue::grad);
      ctx_.grad_staging.pop_front();
    }
    full_grads_ = Buf(ctx_.be, MemoryCategory::buffers, padded_);
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
  float* grads = full_grads_.f32();
  Backend* be = &ctx_.be;
  be->fence(Queue::compute, Queue::grad);  // the gradients are final on the compute queue
  if (zero_ == 0) {
    ctx_.grad_sync->submit("dp.all_reduce", stage_, bytes, [grads, n = padded_](runtime::Communicator& c) { return c.all_reduce(grads, n); });
  } else if (zero_ == 1) {
    // In place, as NCCL allows: the output is the rank's own block of the input.
    float* out = grads + shard_begin();
    ctx_.grad_sync->submit("dp.reduce_scatter", stage_, bytes, [grads, out, shard](runtime::Communicator& c) { return c.reduce_scatter(grads, out, shard); });
  } else {
    // The transient full gradients stay with the rank until the compute thread frees them after
    // a fence (rank_context.h): the task only borrows them.
    auto transient = std::make_shared<Buf>(std::move(full_grads_));
    ctx_.grad_staging.push_back(transient);
    float* acc = grad_shard_.f32();
    float* full = transient->f32();
    ctx_.grad_sync->submit("dp.reduce_scatter", stage_, bytes, [full, acc, shard, be](runtime::Communicator& c) {
      float* block = full + static_cast<std::size_t>(c.rank()) * shard;
      auto status = c.reduce_scatter(full, block, shard);
      if (status) be->add_f32(acc, block, shard, Queue::grad);
      return status;
    });
  }
}

void ParamUnit::zero_grads() {
  if (zero_ >= 2) grad_shard_.zero();
  else full_grads_.zero();
  uses_done_ = 0;
}

std::pair<float*, std::size_t> ParamUnit::update_grads() {
  const bool sharded = zero_ >= 1;
  const std::size_t n = sharded ? shard_size() : padded_;
  float* grads = zero_ >= 2 ? grad_shard_.f32() : full_grads_.f32() + (sharded ? shard_begin() : 0);
  return {grads, n};
}

void ParamUnit::flag_nonfinite_grads() {
  auto [grads, n] = update_grads();
  auto span = ctx_.compute("check_finite", est::Phase::optimizer, stage_, -1);
  ctx_.be.flag_nonfinite(grads, n);
}

void ParamUnit::optimizer_step(const kernels::AdamWSettings& settings, int step, float grad_multiplier,
                               bool skip_when_nonfinite) {
  const bool sharded = zero_ >= 1;
  auto [grads, n] = update_grads();
  // The compute copy of the rank's part, which a mixed-precision update rounds into.
  void* compute_part = zero_ >= 3 ? shard_params_.data() : full_params_.at(sharded ? shard_begin() : 0);
  if (tied_ && ctx_.embedding) {
    // Megatron's _allreduce_embedding_grads: the first stage's embedding and the last stage's
    // head copy add their gradients, so both copies take the same update. Shards line up
    // because both units have the same shape.
    ctx_.all_reduce(*ctx_.embedding, grads, n, Elem::f32, "embedding.all_reduce", est::Phase::communication, stage_, -1);
  }
  {
    auto span = ctx_.compute("adamw", est::Phase::optimizer, stage_, -1);
    ctx_.be.adamw(master_part(), mixed_ ? compute_part : nullptr, adam_m_.f32(), adam_v_.f32(), grads, n, settings, step,
                  grad_multiplier, skip_when_nonfinite);
  }
  if (sharded && zero_ < 3 && ctx_.cfg.dp > 1) {
    const Elem e = ctx_.be.act();
    ctx_.all_gather(*ctx_.dp, compute_part, full_params_.data(), shard_size(), e, "zero.all_gather", est::Phase::optimizer, stage_, -1);
  }
}

void ParamUnit::export_to(std::map<std::string, std::vector<float>>& out) {
  acquire(est::Phase::none, -1);
  // The weights as the kernels read them, in fp32 on the host.
  std::vector<float> host(padded_);
  {
    Buf f32(ctx_.be, MemoryCategory::buffers, padded_, Elem::f32, Fill::none);  // converted into whole
    ctx_.be.to_f32(f32.f32(), full_params_.data(), padded_, Queue::compute);
    ctx_.be.download(host.data(), f32.data(), padded_ * sizeof(float));
  }
  const int tp = ctx_.cfg.tp, t = ctx_.at.tp;
  for (const auto& d : tensors_) {
    auto& dst = out[d.name];
    const int rows = d.valid_rows >= 0 ? d.valid_rows : d.rows;
    // NaN marks what this rank does not hold; the caller merges the ranks' maps.
    if (dst.empty()) dst.assign(static_cast<std::size_t>(rows) * static_cast<std::size_t>(d.cols), std::numeric_limits<float>::quiet_NaN());
    const std::size_t n = d.local_count(tp);
    for (std::size_t i = 0; i < n; ++i) {
      const std::int64_t g = d.global_index(i, tp, t);
      if (g >= 0) dst[static_cast<std::size_t>(g)] = host[d.offset + i];
    }
  }
  release();
}

}  // namespace plansight::probe
