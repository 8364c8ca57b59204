// search_layouts(): enumerates (tp, cp, pp) placements as work units handed to a thread pool;
// each unit walks micro-batch x schedule x sequence parallel x recompute x ZeRO in a fixed order,
// rejecting whole sub-trees with integer checks and costing the rest with the lean closed form.
// Every candidate has an ordinal (unit, position) and every ranking is a total order that ends
// on it, so results, counts and the "first rejected" examples do not depend on thread count.
#include "plansight/estimator/layout_search.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <limits>
#include <thread>

#include "layout_search_lean.h"
#include "layout_search_moe.h"
#include "plansight/estimator/estimator.h"

namespace plansight::estimator {
namespace {

using namespace search_detail;

template <class T>
bool allowed(const std::vector<T>& list, T value) {
  return list.empty() || std::find(list.begin(), list.end(), value) != list.end();
}
bool allowed(const std::vector<std::int64_t>& list, const SearchBound& bound, std::int64_t value) {
  return bound.contains(value) && allowed(list, value);
}

// Ascending; O(sqrt n), so clusters of millions of GPUs enumerate quickly.
std::vector<std::int64_t> divisors(std::int64_t n) {
  std::vector<std::int64_t> low, high;
  for (std::int64_t d = 1; d * d <= n; ++d) {
    if (n % d != 0) continue;
    low.push_back(d);
    if (d != n / d) high.push_back(n / d);
  }
  low.insert(low.end(), high.rbegin(), high.rend());
  return low;
}

// Runs fn(index, worker) for index in [0, n) on `threads` threads (the caller is worker 0).
template <class F>
void parallel_for(std::size_t n, unsigned threads, F&& fn) {
  std::atomic<std::size_t> next{0};
  auto body = [&](unsigned worker) {
    for (std::size_t i = next.fetch_add(1); i < n; i = next.fetch_add(1)) fn(i, worker);
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads && t < n; ++t) pool.emplace_back(body, t);
  body(0);
  for (auto& th : pool) th.join();
}

struct ScheduleChoice {
  PipelineSchedule schedule;
  std::int64_t vpp;
};

struct Unit {
  std::int64_t tp, cp, pp, dp;
  std::size_t pair;  // index of (tp, cp) in Setup::pairs
};

// The enumeration, fixed before any thread starts.
struct Setup {
  std::vector<Unit> units;
  std::vector<std::pair<std::int64_t, std::int64_t>> pairs;  // (tp, cp)
  std::vector<std::optional<RejectReason>> pair_reject;
  std::vector<std::int64_t> micro_batches;
  std::vector<Recompute> recomputes;
  std::vector<std::int64_t> zeros;
  std::vector<ScheduleChoice> one_stage, stages;  // pp == 1, pp > 1
  std::vector<bool> sp_single{false}, sp_multi;   // tp == 1, tp > 1
  std::size_t keep = 1;
  bool framework_rules = true;
};

Setup make_setup(const Plan& base, const SearchOptions& o) {
  const SearchSpace& s = o.space;
  const auto& model = base.model;
  Setup setup;
  for (std::int64_t tp : divisors(base.cluster.gpus)) {
    if (!allowed(s.tp, s.tp_bound, tp)) continue;
    for (std::int64_t cp : divisors(base.cluster.gpus / tp)) {
      if (!allowed(s.cp, s.cp_bound, cp)) continue;
      const std::size_t pair = setup.pairs.size();
      setup.pairs.emplace_back(tp, cp);
      std::optional<RejectReason> reject;
      if (model.heads % tp != 0 || model.kv_heads % tp != 0) reject = RejectReason::tp_heads;
      else if (model.ffn_hidden % tp != 0) reject = RejectReason::tp_ffn;
      else if (cp > 1 && base.training.seq_len % (2 * cp) != 0) reject = RejectReason::cp_sequence;
      else if (cp > 1 && s.framework_rules && base.training.attention != AttentionKernel::flash) {
        reject = RejectReason::cp_attention;
      }
      setup.pair_reject.push_back(reject);
      for (std::int64_t pp : divisors(base.cluster.gpus / (tp * cp))) {
        const std::int64_t dp = base.cluster.gpus / (tp * cp * pp);
        if (allowed(s.pp, s.pp_bound, pp) && allowed(s.dp, s.dp_bound, dp)) setup.units.push_back({tp, cp, pp, dp, pair});
      }
    }
  }
  if (!s.micro_batch.empty()) {
    for (std::int64_t b : s.micro_batch) if (s.micro_batch_bound.contains(b)) setup.micro_batches.push_back(b);
  } else {
    // Powers of two; a bound's lower end is tried too (a bound of 3..8 tries 3, 4 and 8).
    const std::int64_t hi = std::min({s.max_micro_batch, base.training.global_batch, s.micro_batch_bound.max});
    const std::int64_t lo = std::max<std::int64_t>(1, s.micro_batch_bound.min);
    if (lo <= hi && (lo & (lo - 1)) != 0) setup.micro_batches.push_back(lo);
    for (std::int64_t b = 1; b <= hi; b *= 2) {
      if (b >= lo) setup.micro_batches.push_back(b);
    }
  }
  for (Recompute r : {Recompute::none, Recompute::selective, Recompute::full}) {
    if (allowed(s.recompute, r)) setup.recomputes.push_back(r);
  }
  for (std::int64_t z = 0; z <= 3; ++z) if (allowed(s.zero_stage, z)) setup.zeros.push_back(z);
  // One stage: the schedules coincide, so 1F1B (plain gradient accumulation) stands for them.
  for (PipelineSchedule k : {PipelineSchedule::one_f_one_b, PipelineSchedule::gpipe, PipelineSchedule::zb_h1}) {
    if (allowed(s.schedule, k) && allowed(s.vpp, s.vpp_bound, std::int64_t{1})) {
      if (setup.one_stage.empty()) setup.one_stage.push_back({k, 1});
      setup.stages.push_back({k, 1});
    }
  }
  if (allowed(s.schedule, PipelineSchedule::interleaved)) {
    for (std::int64_t v : s.vpp.empty() ? divisors(model.layers) : s.vpp) {
      if (v >= 2 && s.vpp_bound.contains(v)) setup.stages.push_back({PipelineSchedule::interleaved, v});
    }
  }
  if (s.sequence_parallel) setup.sp_multi = {*s.sequence_parallel};
  else setup.sp_multi = {false, true};
  setup.keep = std::max<std::size_t>(1, o.top * std::max<std::size_t>(o.simulate, 1));
  setup.framework_rules = s.framework_rules;
  return setup;
}

// Throughputs within about 0.01% are a tie: the time model is nowhere near that precise, and
// between two such layouts the one needing less memory is the better advice. Quantizing the
// logarithm keeps the order a strict weak order (a tolerance compare would not be transitive).
std::int64_t speed_class(double seconds) { return std::llround(std::log(seconds) * 1e4); }

struct Scored {
  Candidate candidate;
  double iteration_s = 0;
  double bytes = 0;
  std::uint64_t ordinal = 0;
  std::int64_t speed = 0;  // speed_class(iteration_s)
};
// Faster first; ties: less memory, then the exact time, then enumeration order.
bool better(const Scored& a, const Scored& b) {
  if (a.speed != b.speed) return a.speed < b.speed;
  if (a.bytes != b.bytes) return a.bytes < b.bytes;
  if (a.iteration_s != b.iteration_s) return a.iteration_s < b.iteration_s;
  return a.ordinal < b.ordinal;
}

struct Tally {
  std::int64_t count = 0;
  std::uint64_t first_ordinal = std::numeric_limits<std::uint64_t>::max();
  Candidate first;
  std::uint64_t closest_ordinal = std::numeric_limits<std::uint64_t>::max();
  Candidate closest;
  double closest_bytes = std::numeric_limits<double>::infinity();

  void merge(std::int64_t n, std::uint64_t ordinal, const Candidate& c) {
    count += n;
    if (ordinal < first_ordinal) first_ordinal = ordinal, first = c;
  }
  void near_miss(std::uint64_t ordinal, const Candidate& c, double bytes) {
    if (bytes < closest_bytes || (bytes == closest_bytes && ordinal < closest_ordinal)) {
      closest_bytes = bytes, closest_ordinal = ordinal, closest = c;
    }
  }
};

// Cache-line aligned: each thread updates its own counters in the hot loop.
struct alignas(64) Worker {
  std::array<Tally, kRejectReasonCount> tallies;
  std::vector<Scored> best;  // a heap whose front is the worst kept
  std::int64_t enumerated = 0, evaluated = 0, fitting = 0;

  void reject(RejectReason r, std::int64_t n, std::uint64_t ordinal, const Candidate& c) {
    tallies[static_cast<std::size_t>(r)].merge(n, ordinal, c);
  }
  void accept(const Scored& s, std::size_t keep) {
    if (best.size() < keep) {
      best.push_back(s);
      std::push_heap(best.begin(), best.end(), better);
    } else if (better(s, best.front())) {
      std::pop_heap(best.begin(), best.end(), better);
      best.back() = s;
      std::push_heap(best.begin(), best.end(), better);
    }
  }
};

// Key costs of one (tp, cp) pair, indexed [micro-batch][sequence parallel][recompute].
using KeyTable = std::vector<KeyCosts>;
std::size_t key_index(const Setup& s, std::size_t mb, std::size_t sp, std::size_t rc) {
  return (mb * 2 + sp) * s.recomputes.size() + rc;
}

void run_unit(const SearchContext& ctx, const Setup& s, const std::vector<KeyTable>& keys, std::size_t u, Worker& w) {
  const Unit& unit = s.units[u];
  const auto& sps = unit.tp > 1 ? s.sp_multi : s.sp_single;
  const auto& schedules = unit.pp > 1 ? s.stages : s.one_stage;
  const std::size_t nz = s.zeros.size(), nrc = s.recomputes.size(), nsp = sps.size(), ns = schedules.size();
  const std::int64_t inner = static_cast<std::int64_t>(nsp * nrc * nz);
  const std::int64_t size = static_cast<std::int64_t>(s.micro_batches.size() * ns) * inner;
  if (size == 0) return;
  w.enumerated += size;
  const std::uint64_t unit_ordinal = static_cast<std::uint64_t>(u) << 32;

  Candidate c;
  c.tp = unit.tp, c.cp = unit.cp, c.pp = unit.pp, c.dp = unit.dp;
  auto reset_inner = [&] {
    c.sequence_parallel = sps[0], c.recompute = s.recomputes[0], c.zero_stage = s.zeros[0];
  };
  c.micro_batch = s.micro_batches[0], c.schedule = schedules[0].schedule, c.vpp = schedules[0].vpp;
  reset_inner();
  if (const auto reason = s.pair_reject[unit.pair]) return w.reject(*reason, size, unit_ordinal, c);

  const UnitLinks links = unit_links(ctx, unit.tp, unit.cp, unit.dp);
  const double capacity = static_cast<double>(ctx.base.cluster.gpu.memory_bytes);
  const std::int64_t global = ctx.base.training.global_batch, layers = ctx.base.model.layers;
  const KeyTable& table = keys[unit.pair];
  for (std::size_t mi = 0; mi < s.micro_batches.size(); ++mi) {
    c.micro_batch = s.micro_batches[mi];
    const bool divisible = global % (c.micro_batch * unit.dp) == 0;
    const std::int64_t m = divisible ? global / (c.micro_batch * unit.dp) : 0;
    for (std::size_t si = 0; si < ns; ++si) {
      c.schedule = schedules[si].schedule, c.vpp = schedules[si].vpp;
      reset_inner();
      const std::uint64_t ordinal0 = unit_ordinal + (mi * ns + si) * static_cast<std::uint64_t>(inner);
      if (layers % (unit.pp * c.vpp) != 0) { w.reject(RejectReason::layer_split, inner, ordinal0, c); continue; }
      if (!divisible) { w.reject(RejectReason::global_batch, inner, ordinal0, c); continue; }
      if (c.schedule == PipelineSchedule::interleaved && m % unit.pp != 0) {
        w.reject(RejectReason::interleaved_micro_batches, inner, ordinal0, c);
        continue;
      }
      for (std::size_t pi = 0; pi < nsp; ++pi) {
        c.sequence_parallel = sps[pi];
        for (std::size_t ri = 0; ri < nrc; ++ri) {
          c.recompute = s.recomputes[ri];
          const KeyCosts& key = table[key_index(s, mi, c.sequence_parallel ? 1 : 0, ri)];
          for (std::size_t zi = 0; zi < nz; ++zi) {
            c.zero_stage = s.zeros[zi];
            const std::uint64_t ordinal = ordinal0 + (pi * nrc + ri) * nz + zi;
            if (s.framework_rules && unit.pp > 1 && c.zero_stage >= 2) {
              w.reject(RejectReason::zero_pipeline, 1, ordinal, c);
              continue;
            }
            ++w.evaluated;
            const LeanMemory mem = lean_memory(ctx, key, c);
            if (mem.total_bytes > capacity) {
              w.reject(RejectReason::memory, 1, ordinal, c);
              w.tallies[static_cast<std::size_t>(RejectReason::memory)].near_miss(ordinal, c, mem.total_bytes);
              continue;
            }
            ++w.fitting;
            const double iteration_s = lean_iteration_s(ctx, key, links, c);
            w.accept({c, iteration_s, mem.total_bytes, ordinal, speed_class(iteration_s)}, s.keep);
          }
        }
      }
    }
  }
}

// validate() of the base plan with a neutral layout, keeping what no layout can fix.
std::vector<Diagnostic> base_errors(const Plan& base) {
  Plan neutral = base;
  neutral.layout = LayoutSpec{};
  neutral.training.micro_batch = 1;
  std::vector<Diagnostic> out;
  for (auto& d : validate(neutral)) {
    const bool layout_bound = d.field.rfind("layout.", 0) == 0 || d.field == "training.global_batch";
    if (d.severity == Severity::error && !layout_bound) out.push_back(std::move(d));
  }
  return out;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// A search run once per variant of the plan (a precision, an offloading), merged: counts add
// up (add_search_counts), layouts rank as one list. A variant whose search fails (an empty space for it) is left out;
// when all fail, the first failure is the answer.
struct Variant {
  Plan plan;
  SearchOptions options;
};
Result<SearchResult> search_variants(std::vector<Variant> variants, std::size_t top, SearchResult merged) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<Diagnostic> errors;
  bool searched = false;
  for (auto& v : variants) {
    auto r = search_layouts(v.plan, v.options);
    if (!r) {
      if (errors.empty()) errors = r.errors();
      continue;
    }
    searched = true;
    add_search_counts(merged, *r);
    for (auto& layout : r->layouts) merged.layouts.push_back(std::move(layout));
  }
  if (!searched) return errors;
  std::stable_sort(merged.layouts.begin(), merged.layouts.end(), ranks_before);
  if (merged.layouts.size() > top) merged.layouts.resize(top);
  merged.seconds = seconds_since(start);
  return merged;
}

// SearchSpace::precision: each precision the GPU has a peak for, gradients following it.
Result<SearchResult> search_precisions(const Plan& base, const SearchOptions& options) {
  SearchResult skipped;
  std::vector<Variant> variants;
  for (Precision precision : options.space.precision) {
    if (base.cluster.gpu.peak_flops(precision) <= 0) {
      skipped.skipped_precisions.push_back(precision);
      continue;
    }
    Variant v{base, options};
    v.plan.training.precision = precision;
    v.plan.training.grad_precision = gradient_precision_for(precision);
    v.options.space.precision = {precision};
    variants.push_back(std::move(v));
  }
  if (variants.empty()) {
    std::string names;
    for (Precision p : options.space.precision) names += (names.empty() ? "" : ", ") + std::string(to_string(p));
    return make_error("search.precision", names + ": the " + base.cluster.gpu.name + " has no peak for any of them");
  }
  return search_variants(std::move(variants), options.top, std::move(skipped));
}

// SearchSpace::offload: the plan with each offloading (searched by the library-costed search).
Result<SearchResult> search_offloads(const Plan& base, const SearchOptions& options) {
  std::vector<Variant> variants;
  for (const OffloadChoice& o : options.space.offload) {
    Variant v{base, options};
    v.plan.layout.offload_optimizer = o.optimizer;
    v.plan.layout.offload_params = o.params;
    v.plan.layout.offload_activations = o.activations;
    v.options.space.offload.clear();
    variants.push_back(std::move(v));
  }
  return search_variants(std::move(variants), options.top, SearchResult{});
}

}  // namespace

bool ranks_before(const RankedLayout& a, const RankedLayout& b) {
  const double ta = a.estimate.time.iteration_s, tb = b.estimate.time.iteration_s;
  if (speed_class(ta) != speed_class(tb)) return speed_class(ta) < speed_class(tb);
  const double ma = a.estimate.memory.peak.total_bytes(), mb = b.estimate.memory.peak.total_bytes();
  if (ma != mb) return ma < mb;
  return ta < tb;
}

void add_search_counts(SearchResult& into, const SearchResult& part) {
  into.enumerated += part.enumerated, into.evaluated += part.evaluated, into.fitting += part.fitting;
  into.simulated += part.simulated;
  into.threads = std::max(into.threads, part.threads);
  into.closed_form_seconds += part.closed_form_seconds;
  for (Precision p : part.skipped_precisions) {
    if (std::find(into.skipped_precisions.begin(), into.skipped_precisions.end(), p) == into.skipped_precisions.end()) {
      into.skipped_precisions.push_back(p);
    }
  }
  for (const Rejection& rej : part.rejections) {
    auto same = std::find_if(into.rejections.begin(), into.rejections.end(),
                             [&](const Rejection& m) { return m.reason == rej.reason; });
    if (same == into.rejections.end()) {
      into.rejections.push_back(rej);
      continue;
    }
    same->count += rej.count;
    if (rej.reason == RejectReason::memory && rej.closest_bytes > 0 &&
        (same->closest_bytes <= 0 || rej.closest_bytes < same->closest_bytes)) {
      same->closest = rej.closest, same->closest_bytes = rej.closest_bytes;
    }
  }
  std::stable_sort(into.rejections.begin(), into.rejections.end(),
                   [](const Rejection& a, const Rejection& b) { return a.count > b.count; });
}

Result<SearchResult> search_layouts(const Plan& base, const SearchOptions& options) {
  // DualPipe and DualPipeV are estimated plan by plan: the search's closed forms and its lean
  // memory model know one pipeline of uniform chunks per rank.
  if (!options.space.schedule.empty() &&
      std::all_of(options.space.schedule.begin(), options.space.schedule.end(), [](PipelineSchedule k) {
        return k == PipelineSchedule::dualpipev || k == PipelineSchedule::dualpipe;
      })) {
    return make_error("search.schedule", "dualpipe and dualpipev are not searched (estimate them one plan at a time); "
                                         "valid: gpipe, 1f1b, interleaved, zb-h1");
  }
  const auto& precisions = options.space.precision;
  if (!precisions.empty() && !(precisions.size() == 1 && precisions.front() == base.training.precision)) {
    return search_precisions(base, options);
  }
  if (!options.space.offload.empty()) return search_offloads(base, options);
  const auto start = std::chrono::steady_clock::now();
  if (auto errors = base_errors(base); !errors.empty()) return errors;
  if (base.layout.placement != kDefaultPlacement) {
    // The lean evaluation caches links per (tp, cp, dp), which holds for TP-CP-DP-PP order only.
    return make_error("layout.placement", "the search places ranks tp-cp-dp-pp (innermost first); got " +
                                              to_string(base.layout.placement) + ". Estimate other placements one by one");
  }
  if (base.cluster.shared_processors > 0) {
    // The closed-form ranking assumes a device per rank; processor sharing needs the simulation.
    return make_error("cluster.shared_processors", "value " + std::to_string(base.cluster.shared_processors) +
                                                       ": the search ranks layouts of ranks with a device each; valid: 0. "
                                                       "Estimate shared-processor layouts one by one");
  }
  // The lean evaluation knows no experts and no host side (transfers, CPU step, host memory:
  // offload.h): those plans are costed candidate by candidate by the library's own functions.
  if (base.model.moe.enabled() || base.layout.offloads()) return search_library_costed(base, options);
  const Setup setup = make_setup(base, options);
  if (setup.units.empty() || setup.micro_batches.empty() || setup.recomputes.empty() || setup.zeros.empty() ||
      (setup.one_stage.empty() && setup.stages.empty()) || options.top == 0) {
    return make_error("search", "nothing to search: a dimension has no allowed value (check the fixed tp/pp/cp/dp/"
                                "vpp/micro-batch/zero/recompute/schedule values against " +
                                    std::to_string(base.cluster.gpus) + " GPUs) or top is 0");
  }
  for (std::int64_t mb : setup.micro_batches) {
    if (mb < 1) return make_error("search.micro_batch", "value " + std::to_string(mb) + " is invalid; valid: >= 1");
  }
  SearchResult result;
  result.threads = options.threads > 0 ? options.threads : std::max(1u, std::thread::hardware_concurrency());
  const SearchContext ctx(base);

  // Layer costs per (tp, cp) pair that passes the integer checks, computed once and shared.
  std::vector<KeyTable> keys(setup.pairs.size());
  std::vector<std::size_t> live;
  for (std::size_t i = 0; i < setup.pairs.size(); ++i) {
    if (setup.pair_reject[i]) continue;
    keys[i].resize(setup.micro_batches.size() * 2 * setup.recomputes.size());
    live.push_back(i);
  }
  const std::size_t per_pair = setup.micro_batches.size();
  parallel_for(live.size() * per_pair, result.threads, [&](std::size_t item, unsigned) {
    const std::size_t pair = live[item / per_pair], mi = item % per_pair;
    const auto [tp, cp] = setup.pairs[pair];
    for (std::size_t sp = 0; sp < (tp > 1 ? 2u : 1u); ++sp) {
      for (std::size_t ri = 0; ri < setup.recomputes.size(); ++ri) {
        keys[pair][key_index(setup, mi, sp, ri)] =
            key_costs(ctx, tp, cp, sp == 1, setup.micro_batches[mi], setup.recomputes[ri]);
      }
    }
  });

  std::vector<Worker> workers(result.threads);
  parallel_for(setup.units.size(), result.threads,
               [&](std::size_t u, unsigned worker) { run_unit(ctx, setup, keys, u, workers[worker]); });

  Worker all;
  std::vector<Scored> kept;
  for (const auto& w : workers) {
    all.enumerated += w.enumerated, all.evaluated += w.evaluated, all.fitting += w.fitting;
    for (std::size_t r = 0; r < kRejectReasonCount; ++r) {
      const Tally& t = w.tallies[r];
      if (t.count == 0) continue;
      all.tallies[r].merge(t.count, t.first_ordinal, t.first);
      if (t.closest_ordinal != std::numeric_limits<std::uint64_t>::max()) {
        all.tallies[r].near_miss(t.closest_ordinal, t.closest, t.closest_bytes);
      }
    }
    kept.insert(kept.end(), w.best.begin(), w.best.end());
  }
  std::sort(kept.begin(), kept.end(), better);
  if (kept.size() > setup.keep) kept.resize(setup.keep);
  result.enumerated = all.enumerated, result.evaluated = all.evaluated, result.fitting = all.fitting;
  for (std::size_t r = 0; r < kRejectReasonCount; ++r) {
    const Tally& t = all.tallies[r];
    if (t.count == 0) continue;
    Rejection rej;
    rej.reason = static_cast<RejectReason>(r);
    rej.count = t.count;
    rej.first = t.first;
    rej.detail = rejection_detail(base, rej.reason, t.first);
    if (rej.reason == RejectReason::memory) rej.closest = t.closest, rej.closest_bytes = t.closest_bytes;
    result.rejections.push_back(std::move(rej));
  }
  std::stable_sort(result.rejections.begin(), result.rejections.end(),
                   [](const Rejection& a, const Rejection& b) { return a.count > b.count; });
  result.closed_form_seconds = seconds_since(start);

  // Re-rank the best by the full estimate (simulated schedule), in parallel.
  const double tokens = static_cast<double>(base.training.global_batch) * static_cast<double>(base.training.seq_len);
  std::vector<std::optional<RankedLayout>> ranked(kept.size());
  parallel_for(kept.size(), result.threads, [&](std::size_t i, unsigned) {
    RankedLayout r;
    r.candidate = kept[i].candidate;
    r.plan = apply_candidate(base, r.candidate);
    EstimateOptions estimate_options;
    estimate_options.max_simulated_ops = options.max_simulated_ops;
    estimate_options.parallel_simulations = false;  // this loop fills the cores already
    auto e = estimate(r.plan, estimate_options);
    if (!e || !e->memory.fits || !e->time.available) return;  // cannot happen for a candidate that passed
    r.estimate = std::move(*e);
    r.closed_form_iteration_s = kept[i].iteration_s;
    r.closed_form_tokens_per_s = tokens / kept[i].iteration_s;
    ranked[i] = std::move(r);
  });
  result.simulated = 0;
  for (auto& r : ranked) {
    if (!r) continue;
    result.simulated += r->estimate.time.simulated ? 1 : 0;
    result.layouts.push_back(std::move(*r));
  }
  // kept is in closed-form order, so stable_sort leaves that order (and the ordinal) as the last tie-break.
  std::stable_sort(result.layouts.begin(), result.layouts.end(), ranks_before);
  if (result.layouts.size() > options.top) result.layouts.resize(options.top);
  result.seconds = seconds_since(start);
  return result;
}

}  // namespace plansight::estimator
