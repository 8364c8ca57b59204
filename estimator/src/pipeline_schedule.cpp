// Schedule tables: their validation, make_schedule (the generators are in schedule_generators.h),
// the table check and the in-flight walks.
#include "plansight/estimator/pipeline_schedule.h"

#include <algorithm>
#include <atomic>
#include <string>

#include "schedule_generators.h"
#include "side_thread.h"
#include "simulation_costs.h"
#include "steady_state.h"

namespace plansight::estimator {
namespace {

// Upper bound on ops per table, so that a typo (m = 10^9) is an error, not an allocation failure.
constexpr std::int64_t kMaxOps = 50'000'000;

std::string num(std::int64_t value) { return std::to_string(value); }

std::vector<Diagnostic> validate(PipelineSchedule kind, std::int64_t p, std::int64_t v,
                                 std::int64_t m, std::int64_t group) {
  std::vector<Diagnostic> errors;
  const std::string name(to_string(kind));
  if (p < 1) errors.push_back(make_error("layout.pp", "pp = " + num(p) + "; it must be >= 1"));
  if (v < 1) errors.push_back(make_error("layout.vpp", "vpp = " + num(v) + "; it must be >= 1"));
  if (v > kMaxChunksPerRank) {
    errors.push_back(make_error("layout.vpp", "vpp = " + num(v) + "; at most " + num(kMaxChunksPerRank) +
                                                  " model chunks per rank can be scheduled"));
  }
  if (m < 1) {
    errors.push_back(make_error("training.global_batch",
                                "micro-batches per iteration m = " + num(m) + "; it must be >= 1"));
  }
  if (!errors.empty()) return errors;
  if (p * v * m > kMaxOps / 3) {
    errors.push_back(make_error("training.global_batch", "pp * vpp * m = " + num(p * v * m) +
                                                             " chunk-micro-batches; at most " +
                                                             num(kMaxOps / 3) +
                                                             " can be scheduled"));
    return errors;
  }
  if (kind == PipelineSchedule::dualpipe) {
    // dualpipe.py: DualPipe.step asserts an even number of ranks and num_chunks % 2 == 0 and
    // num_chunks >= 2 * num_ranks; each rank holds two modules.
    if (p % 2 != 0) {
      errors.push_back(make_error("layout.pp", "pp = " + num(p) + " with schedule dualpipe; it must be even "
                                               "(half the ranks feed each direction)"));
    }
    if (v != 2) {
      errors.push_back(make_error("layout.vpp", "vpp = " + num(v) + " with schedule dualpipe; it must be 2 "
                                                "(DualPipe holds one stage of each model copy per rank)"));
    }
    if (m < 2 * p || m % 2 != 0) {
      errors.push_back(make_error("training.global_batch", "dualpipe with pp = " + num(p) + " needs an even m >= 2 * pp = " +
                                                               num(2 * p) + " micro-batches, but m = " + num(m)));
    }
    return errors;
  }
  if (kind == PipelineSchedule::dualpipev) {
    // dualpipev.py: two modules per rank, and DualPipeV.step asserts num_chunks >= 2 * num_ranks.
    if (v != 2) {
      errors.push_back(make_error("layout.vpp", "vpp = " + num(v) + " with schedule dualpipev; it must be 2 "
                                                "(DualPipeV holds two chunks per rank, one each way of its V)"));
    }
    if (m < 2 * p) {
      errors.push_back(make_error("training.global_batch", "dualpipev with pp = " + num(p) + " needs m >= 2 * pp = " +
                                                               num(2 * p) + " micro-batches, but m = " + num(m)));
    }
    return errors;
  }
  if (kind != PipelineSchedule::interleaved) {
    if (v != 1) {
      errors.push_back(make_error("layout.vpp", "vpp = " + num(v) + " with schedule " + name +
                                                    "; it must be 1, or use schedule interleaved"));
    }
    return errors;
  }
  // Interleaving needs several ranks and several chunks per rank (Narayanan et al. 2021, 2.2.2).
  if (p < 2) {
    errors.push_back(make_error("layout.pp", "pp = " + num(p) +
                                                 " with schedule interleaved; it "
                                                 "must be >= 2 (or use one_f_one_b)"));
  }
  if (v < 2) {
    errors.push_back(make_error("layout.vpp", "vpp = " + num(v) +
                                                  " with schedule interleaved; it "
                                                  "must be >= 2 (or use one_f_one_b)"));
  }
  if (!errors.empty()) return errors;
  // Megatron-LM (schedules.py, forward_backward_pipelining_with_interleaving) raises unless
  // p <= group <= m, and unless the last group is empty or has at least p micro-batches.
  if (group < p || group > m) {
    errors.push_back(
        make_error("training.global_batch", "interleaved schedule with pp = " + num(p) +
                                                " and a micro-batch group of " + num(group) +
                                                " needs m >= group >= pp, but m = " + num(m) +
                                                "; use m >= " + num(std::max(p, group))));
  } else if (m % group != 0 && m % group < p) {
    errors.push_back(
        make_error("training.global_batch",
                   "interleaved schedule needs m % group == 0 or m % group >= pp; m = " + num(m) +
                       ", group = " + num(group) + ", pp = " + num(p) +
                       "; with the default group = pp, use m a "
                       "multiple of " +
                       num(p) + " (e.g. " + num((m / group + 1) * group) + ")"));
  }
  return errors;
}

// Rank r's list of a table whose kind, p, v and m are set.
void make_rank(ScheduleTable& table, std::int32_t r, std::int32_t group, const std::vector<ScheduleOp>& forwards) {
  auto& ops = table.ranks[static_cast<std::size_t>(r)];
  if (table.kind == PipelineSchedule::dualpipe) {
    ops = generators::dualpipe_rank(table.p, r, table.m);
  } else {
    generators::ListSink sink(generators::ops_per_rank(table.kind, table.v, table.m));
    generators::write_rank(sink, table.kind, table.p, table.v, r, table.m, group, forwards);
    ops = std::move(sink.ops);
  }
  // The run of the steady state, while the list is in cache (ScheduleTable::repeating).
  const generators::RunPeriod run = generators::run_period(table, ops.size(), group);
  if (run.period > 0) table.repeating[static_cast<std::size_t>(r)] = repeating_run(ops, run.period, run.shift);
}

}  // namespace

namespace generators {
ScheduleTable empty_table(PipelineSchedule kind, std::int64_t p, std::int64_t v, std::int64_t m) {
  ScheduleTable table;
  table.kind = kind;
  table.p = static_cast<std::int32_t>(p);
  table.v = static_cast<std::int32_t>(v);
  table.m = static_cast<std::int32_t>(m);
  table.split_backward = kind == PipelineSchedule::zb_h1 || kind == PipelineSchedule::dualpipev ||
                         kind == PipelineSchedule::dualpipe;
  table.ranks.resize(static_cast<std::size_t>(p));
  table.repeating.resize(static_cast<std::size_t>(p));
  return table;
}

RunPeriod run_period(const ScheduleTable& table, std::size_t n, std::int32_t group) {
  if (table.kind == PipelineSchedule::gpipe) return {};
  const std::int32_t micro_batches = two_pipelines(table.kind) ? table.m / 2 : table.m;
  if (micro_batches <= 0 || n % static_cast<std::size_t>(micro_batches) != 0) return {};
  const std::int32_t shift = table.kind == PipelineSchedule::interleaved ? group : 1;
  return {n / static_cast<std::size_t>(micro_batches) * static_cast<std::size_t>(shift), shift};
}

// A long table is made on two threads (every rank's list is its own): a 64 x 4 x 1024 table of
// 524,288 ops took 0.55 ms on one, before both its simulations (predict_time now makes it so only
// when its two runs do not run side by side, each on a table of its own). Each thread takes the next rank
// left, so the caller's starts at once and the side thread joins when it wakes (28 us on
// average, bench/results/time-core-cpu.txt), instead of the caller waiting for its half.
void make_ranks(std::int32_t p, std::int64_t chunk_micro_batches, bool two_threads,
                const std::function<void(std::int32_t)>& make) {
  std::atomic<std::int32_t> next_rank{0};
  const auto run = [&] {
    for (std::int32_t r = next_rank++; r < p; r = next_rank++) make(r);
  };
  if (two_threads && p >= 2 && 2 * chunk_micro_batches >= kTwoThreadTableOps) {
    SideJob other(run);
    run();
    other.wait();
  } else {
    run();
  }
}

std::vector<Diagnostic> validate_schedule(PipelineSchedule kind, std::int64_t p, std::int64_t v, std::int64_t m,
                                          std::int64_t group) {
  return validate(kind, p, v, m, group);
}
}  // namespace generators

char op_letter(OpKind kind) {
  switch (kind) {
    case OpKind::forward:
      return 'F';
    case OpKind::backward:
      return 'B';
    case OpKind::weight_grad:
      return 'W';
  }
  return '?';
}

Result<ScheduleTable> make_schedule(PipelineSchedule kind, std::int64_t p, std::int64_t v,
                                    std::int64_t m, ScheduleOptions options) {
  const std::int64_t group = options.microbatch_group > 0 ? options.microbatch_group : p;
  if (auto errors = validate(kind, p, v, m, group); !errors.empty()) return errors;
  ScheduleTable table = generators::empty_table(kind, p, v, m);
  const std::vector<ScheduleOp> forwards = kind == PipelineSchedule::interleaved
                                               ? generators::interleaved_forwards(table.v, table.m, static_cast<std::int32_t>(group))
                                               : std::vector<ScheduleOp>{};
  generators::make_ranks(table.p, p * v * m, options.two_threads,
                         [&](std::int32_t r) { make_rank(table, r, static_cast<std::int32_t>(group), forwards); });
  return table;
}

Result<ScheduleTable> make_dualpipe_lower_half(std::int64_t p, std::int64_t m, ScheduleOptions options) {
  if (auto errors = validate(PipelineSchedule::dualpipe, p, 2, m, p); !errors.empty()) return errors;
  return make_schedule(PipelineSchedule::dualpipev, p / 2, 2, m / 2, options);
}

Result<ScheduleTable> make_schedule(const LayoutSpec& layout, std::int64_t micro_batches,
                                    ScheduleOptions options) {
  return make_schedule(layout.schedule, layout.pp, layout.vpp, micro_batches, options);
}

std::vector<Diagnostic> check_schedule(const ScheduleTable& t) {
  std::vector<Diagnostic> errors;
  if (t.p < 1 || t.v < 1 || t.v > kMaxChunksPerRank || t.m < 1 || t.ranks.size() != static_cast<std::size_t>(t.p)) {
    errors.push_back(make_error("schedule", "table has p = " + num(t.p) + ", v = " + num(t.v) +
                                                ", m = " + num(t.m) + " and " +
                                                num(static_cast<std::int64_t>(t.ranks.size())) +
                                                " rank lists; need p, m >= 1, 1 <= v <= " +
                                                num(kMaxChunksPerRank) + " and p lists"));
    return errors;
  }
  const std::size_t pairs = static_cast<std::size_t>(t.v) * static_cast<std::size_t>(t.m);
  // Per (chunk, micro-batch): position of its F, B and W in the rank's list, -1 until seen.
  std::vector<std::int64_t> seen(3 * pairs);
  for (std::int32_t r = 0; r < t.p; ++r) {
    // Texts are made only for an error: this check runs before every simulation.
    auto field = [r] { return "schedule.ranks[" + num(r) + "]"; };
    std::fill(seen.begin(), seen.end(), -1);
    const auto& ops = t.ranks[static_cast<std::size_t>(r)];
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const ScheduleOp& o = ops[i];
      auto what = [&o] {
        return std::string(1, op_letter(o.kind)) + " chunk " + num(o.chunk) + " micro-batch " + num(o.micro_batch);
      };
      if (o.chunk < 0 || o.chunk >= t.v || o.micro_batch < 0 || o.micro_batch >= t.m ||
          !t.passes(t.global_chunk(r, o.chunk), o.micro_batch)) {
        errors.push_back(make_error(field(), "op " + num(static_cast<std::int64_t>(i)) + " (" + what() +
                                                 ") is outside v = " + num(t.v) + ", m = " + num(t.m) +
                                                 (two_pipelines(t.kind) ? " and its pipeline's micro-batches" : "")));
        continue;
      }
      if (o.kind == OpKind::weight_grad && !t.split_backward) {
        errors.push_back(make_error(field(), what() + ": W op in a schedule without split backward"));
        continue;
      }
      const std::size_t pair = static_cast<std::size_t>(o.chunk) * t.m + o.micro_batch;
      const auto k = static_cast<std::size_t>(o.kind);
      if (seen[k * pairs + pair] >= 0) {
        errors.push_back(make_error(field(), what() + " appears twice"));
        continue;
      }
      seen[k * pairs + pair] = static_cast<std::int64_t>(i);
      if (o.kind != OpKind::forward && seen[(k - 1) * pairs + pair] < 0) {
        errors.push_back(make_error(field(), what() + " comes before its " + std::string(1, op_letter(OpKind(k - 1)))));
      }
    }
    if (!ops.empty() && ops.back().pairs_with_next) {
      errors.push_back(make_error(field(), std::string(1, op_letter(ops.back().kind)) + " chunk " + num(ops.back().chunk) +
                                               " micro-batch " + num(ops.back().micro_batch) +
                                               " pairs with the next op, but it is the rank's last"));
    }
    const std::size_t kinds = t.split_backward ? 3 : 2;
    for (std::size_t k = 0; k < kinds; ++k) {
      for (std::size_t pair = 0; pair < pairs; ++pair) {
        if (seen[k * pairs + pair] >= 0) continue;
        const auto chunk = static_cast<std::int32_t>(pair / static_cast<std::size_t>(t.m));
        if (!t.passes(t.global_chunk(r, chunk), static_cast<std::int32_t>(pair % static_cast<std::size_t>(t.m)))) continue;
        errors.push_back(
            make_error(field(), std::string(1, op_letter(OpKind(k))) + " chunk " +
                                  num(static_cast<std::int64_t>(pair / t.m)) + " micro-batch " +
                                  num(static_cast<std::int64_t>(pair % t.m)) + " is missing"));
      }
    }
  }
  return errors;
}

std::vector<std::int32_t> peak_in_flight(const ScheduleTable& t) {
  const OpKind releases = t.split_backward ? OpKind::weight_grad : OpKind::backward;
  std::vector<std::int32_t> peaks;
  peaks.reserve(t.ranks.size());
  for (const auto& ops : t.ranks) {
    std::int32_t now = 0, peak = 0;
    for (const ScheduleOp& o : ops) {
      if (o.kind == OpKind::forward) peak = std::max(peak, ++now);
      if (o.kind == releases) --now;
    }
    peaks.push_back(peak);
  }
  return peaks;
}

std::vector<std::int32_t> in_flight_at_peak(const std::vector<ScheduleOp>& ops, bool split_backward,
                                            const std::vector<double>& chunk_weight) {
  const OpKind releases = split_backward ? OpKind::weight_grad : OpKind::backward;
  std::vector<std::int32_t> now(chunk_weight.size(), 0), at_peak = now;
  double total = 0, peak = 0;
  for (const ScheduleOp& o : ops) {
    const auto c = static_cast<std::size_t>(o.chunk);
    if (c >= now.size()) continue;
    if (o.kind == OpKind::forward) {
      ++now[c];
      total += chunk_weight[c];
      if (total > peak) peak = total, at_peak = now;
    } else if (o.kind == releases) {
      --now[c];
      total -= chunk_weight[c];
    }
  }
  return at_peak;
}

}  // namespace plansight::estimator
