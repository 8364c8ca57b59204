// rank_main(): one training step is zero gradients, walk the schedule, drain the DP reductions,
// AdamW (with the tied-embedding all-reduce and ZeRO all-gathers), then a world all-reduce of
// [loss, stop] that both ends the step together on every rank and tells them all to stop.
#include "rank_worker.h"

#include <chrono>
#include <stdexcept>

#include "grad_sync.h"
#include "plansight/runtime/cuda/loss_scaler.h"
#include "model_chunk.h"
#include "pipeline_executor.h"

namespace plansight::probe {
namespace {

namespace est = plansight::estimator;

void fail(RunState& state, const std::string& message) {
  state.device->abort(message);
  std::lock_guard lock(state.mutex);
  state.errors.push_back(message);
}

void run_steps(RunState& state, RankContext& ctx, std::vector<std::unique_ptr<ModelChunk>>& chunks) {
  const ProbeConfig& cfg = state.cfg;
  const int steps = static_cast<int>(cfg.request.steps);
  DataLoader data(cfg);
  std::vector<ParamUnit*> units;
  for (auto& c : chunks) for (ParamUnit* u : c->units()) units.push_back(u);
  kernels::AdamWSettings adamw;
  adamw.learning_rate = static_cast<float>(cfg.request.learning_rate);
  adamw.weight_decay = static_cast<float>(cfg.request.weight_decay);
  adamw.eps = state.adam_eps;
  // fp16 trains with dynamic loss scaling (Micikevicius et al. 2018, §3.2; PyTorch GradScaler's
  // defaults). Every rank runs its own scaler on the same world-reduced flags, so all agree.
  const bool scaled = cfg.request.precision == Precision::fp16;
  runtime::cuda::LossScaler scaler(scaled ? runtime::cuda::LossScalerSettings{}
                                          : runtime::cuda::LossScalerSettings::disabled());
  int applied = 0;  // AdamW's step count: skipped steps do not count (as torch.optim with GradScaler)

  for (int step = 0; step < steps; ++step) {
    const auto start = std::chrono::steady_clock::now();
    if (ctx.rank == state.fail_rank && step + 1 == state.fail_step) throw std::runtime_error("injected failure");
    if (ctx.tracer) {
      ctx.tracer->clear(ctx.rank);  // keep the last step only
      // The kept step's spans also say how long their thread ran (a CPU clock read costs 1.3 us
      // on the 2-core VM: the other steps, whose times make the median, do without).
      ctx.tracer->set_thread_cpu_time(ctx.rank, step + 1 == steps && state.device->host_spans_are_timeline());
    }
    state.device->step_begins(ctx.rank, step, step + 1 == steps);
    ctx.memory.reset_peaks();
    for (ParamUnit* u : units) u->zero_grads();
    const float scale = scaler.scale();
    ctx.loss_scale = scale;
    run_schedule(ctx, chunks, data, step);
    ctx.grad_sync->drain();
    ctx.be.fence(Queue::grad, Queue::compute);  // on a GPU: the reductions ran before the update
    ctx.grad_staging.clear();  // every reduce-scatter is done
    if (scaled) {
      // Any rank's inf/NaN skips the step everywhere; the update reads the flag on the device.
      for (ParamUnit* u : units) u->flag_nonfinite_grads();
      check(ctx.be.reduce_nonfinite(*ctx.world));
    }
    adamw.learning_rate = static_cast<float>(learning_rate_at(cfg.request, step + 1));
    for (ParamUnit* u : units) u->optimizer_step(adamw, applied + 1, scaled ? 1.0f / scale : 1.0f, scaled);

    // The step's one wait for its GPU work: the loss (and the non-finite flag), read once every
    // kernel of the step has run; then [loss, stop] over the world, a second, short wait for a
    // two-value all-reduce only (all_reduce_host).
    const double loss = ctx.be.take_loss();
    bool skipped = false;
    if (scaled) {
      auto action = scaler.update(ctx.be.nonfinite_at_take());
      if (!action) throw RankFailure(action.error_text());
      skipped = *action == runtime::cuda::StepAction::skip;
    }
    if (!skipped) ++applied;
    const bool reports_loss = ctx.last_stage() && ctx.at.tp == 0;
    float end[2] = {reports_loss ? static_cast<float>(loss) : 0.0f,
                    ctx.rank == 0 && state.stop && state.stop->load() ? 1.0f : 0.0f};
    check(ctx.be.all_reduce_host(*ctx.world, end, 2));
    state.device->step_ends(ctx.rank, step);
    const bool stop = end[1] > 0 && step + 1 < steps;
    if (ctx.rank == 0) {
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      std::lock_guard lock(state.mutex);
      // The loss was computed before scaling (the scale multiplies only its gradient).
      state.steps.push_back({step + 1, static_cast<double>(end[0]) / (cfg.micro_batches * cfg.dp), seconds,
                             scaled ? static_cast<double>(scale) : 0.0, skipped});
      state.stopped_early = stop;
      state.changed.notify_all();
    }
    if (stop || step + 1 == steps) {
      RankMemory& m = state.memory[static_cast<std::size_t>(ctx.rank)];
      m.rank = ctx.rank;
      m.current = ctx.memory.current().breakdown();
      m.peak = ctx.memory.peak().breakdown();
      m.peak_total_bytes = static_cast<double>(ctx.memory.peak_total());
    }
    if (stop) break;
  }
  if (state.collect_parameters) {
    auto& out = state.parameters[static_cast<std::size_t>(ctx.rank)];
    for (ParamUnit* u : units) u->export_to(out);
  }
}

}  // namespace

void rank_main(RunState& state, int world_rank) {
  auto backend = state.device->make_backend(world_rank);
  if (!backend) {
    fail(state, "rank " + std::to_string(world_rank) + ": " + backend.error_text());
    std::lock_guard lock(state.mutex);
    ++state.ranks_done;
    state.changed.notify_all();
    return;
  }
  RankContext ctx(state.cfg, world_rank, state.tracer.get(), std::move(*backend));
  try {
    auto world = state.device->world(world_rank, ctx.be);
    check(world ? runtime::ok_status() : runtime::Status(world.errors()));
    ctx.world = std::move(*world);
    check(ctx.connect(*state.device, *ctx.world));
    // Chunks outlive the gradient thread (declared first, destroyed last), and a failure
    // aborts the world before that thread is joined, so its pending collectives return.
    std::vector<std::unique_ptr<ModelChunk>> chunks;
    // On NCCL the reductions overlap the backward by the gradient stream, issued from this
    // thread in program order like every other collective (Communicator::enqueues_only): a
    // gradient thread would issue them in an order that differs by rank, which NCCL may deadlock
    // on. Communicators that wait on the host get the thread.
    const bool gradient_thread = state.cfg.request.layout.dp_overlap && !ctx.dp_grad->enqueues_only();
    GradSync sync(ctx, *ctx.dp_grad, gradient_thread,
                  [&state, world_rank] { return state.device->thread_started(world_rank); });
    ctx.grad_sync = &sync;
    try {
      for (int c = 0; c < state.cfg.vpp; ++c) chunks.push_back(std::make_unique<ModelChunk>(ctx, c * state.cfg.pp + ctx.at.pp));
      run_steps(state, ctx, chunks);
    } catch (const std::exception& e) {
      fail(state, "rank " + std::to_string(world_rank) + ": " + e.what());
    }
  } catch (const std::exception& e) {
    fail(state, "rank " + std::to_string(world_rank) + ": " + e.what());
  }
  std::lock_guard lock(state.mutex);
  ++state.ranks_done;
  state.changed.notify_all();
}

}  // namespace plansight::probe
