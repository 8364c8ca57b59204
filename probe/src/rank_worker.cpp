// rank_main(): one training step is zero gradients, walk the schedule, drain the DP reductions,
// AdamW (with the tied-embedding all-reduce and ZeRO all-gathers), then a world all-reduce of
// [loss, stop] that both ends the step together on every rank and tells them all to stop.
#include "rank_worker.h"

#include <chrono>
#include <stdexcept>

#include "grad_sync.h"
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

  for (int step = 0; step < steps; ++step) {
    const auto start = std::chrono::steady_clock::now();
    if (ctx.rank == state.fail_rank && step + 1 == state.fail_step) throw std::runtime_error("injected failure");
    if (ctx.tracer) ctx.tracer->clear(ctx.rank);  // keep the last step only
    state.device->step_begins(ctx.rank, step, step + 1 == steps);
    ctx.memory.reset_peaks();
    for (ParamUnit* u : units) u->zero_grads();
    run_schedule(ctx, chunks, data, step);
    ctx.grad_sync->drain();
    ctx.be.fence(Queue::grad, Queue::compute);  // on a GPU: the reductions ran before the update
    for (auto& staging : ctx.grad_staging) staging.reset();  // every reduce-scatter is done
    for (ParamUnit* u : units) u->optimizer_step(adamw, step + 1);

    // The step's one host synchronisation on a GPU: the loss, then [loss, stop] over the world.
    const double loss = ctx.be.take_loss();
    const bool reports_loss = ctx.last_stage() && ctx.at.tp == 0;
    float end[2] = {reports_loss ? static_cast<float>(loss) : 0.0f,
                    ctx.rank == 0 && state.stop && state.stop->load() ? 1.0f : 0.0f};
    check(ctx.be.all_reduce_host(*ctx.world, end, 2));
    const bool stop = end[1] > 0 && step + 1 < steps;
    if (ctx.rank == 0) {
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      std::lock_guard lock(state.mutex);
      state.steps.push_back({step + 1, static_cast<double>(end[0]) / (cfg.micro_batches * cfg.dp), seconds});
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
    GradSync sync(ctx, *ctx.dp_grad, state.cfg.request.layout.dp_overlap);
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
