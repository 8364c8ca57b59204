// The library-costed layout search, for MoE models and for plans that offload: enumerates
// tp x cp x pp (dp what remains) x ep x etp (MoE) x micro-batch x sequence parallel x
// recomputation x ZeRO x schedule, rejects with the integer rules of validate() (Megatron-Core's
// for EP/ETP; the framework rules and offloading's ZeRO needs for dense models), costs the rest
// with estimate_memory() and closed_form_time() of iteration_costs(), and re-ranks the best by
// estimate(). Sequential and deterministic (enumeration order breaks ties); a candidate costs
// ~10x a dense lean one, so the defaults keep the space small: ZeRO {0, 1} for MoE (Megatron's
// distributed optimizer is ZeRO-1) and etp {1, tp}; with offloading the stages it needs.
#include "layout_search_moe.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include "layout_search_lean.h"
#include "plansight/estimator/device_model.h"
#include "plansight/estimator/estimator.h"
#include "plansight/estimator/memory.h"
#include "plansight/estimator/parameters.h"
#include "plansight/estimator/time_model.h"

namespace plansight::estimator {
namespace {

std::vector<std::int64_t> divisors_of(std::int64_t n) {
  std::vector<std::int64_t> small, large;
  for (std::int64_t d = 1; d * d <= n; ++d) {
    if (n % d != 0) continue;
    small.push_back(d);
    if (d != n / d) large.insert(large.begin(), n / d);
  }
  small.insert(small.end(), large.begin(), large.end());
  return small;
}

template <class T>
bool allowed(const std::vector<T>& values, T v) {
  return values.empty() || std::find(values.begin(), values.end(), v) != values.end();
}

struct Scored {
  Candidate candidate;
  double iteration_s = 0;
  double bytes = 0;
  std::int64_t ordinal = 0;
};

// Faster first (0.01% classes, as the dense search), then less memory, then enumeration order.
bool better(const Scored& a, const Scored& b) {
  const auto speed = [](double s) { return std::llround(std::log(s) * 1e4); };
  if (speed(a.iteration_s) != speed(b.iteration_s)) return speed(a.iteration_s) < speed(b.iteration_s);
  if (a.bytes != b.bytes) return a.bytes < b.bytes;
  return a.ordinal < b.ordinal;
}

struct Tallies {
  std::array<Rejection, kRejectReasonCount> by_reason;
  void reject(RejectReason r, const Candidate& c) {
    Rejection& t = by_reason[static_cast<std::size_t>(r)];
    if (t.count++ == 0) t.first = c;
  }
};

// The first integer rule `c` breaks, in the dense search's order with the expert rules last.
// Dense models (searched here for offloading) keep the dense search's rules: an even layer split
// and, with `framework_rules`, context parallelism on flash attention only and no ZeRO-2/3 with
// pipeline parallelism.
std::optional<RejectReason> integer_check(const Plan& base, const Candidate& c, bool framework_rules) {
  const auto& m = base.model;
  const auto& e = m.moe;
  const bool moe = e.enabled();
  if (m.heads % c.tp != 0 || m.kv_heads % c.tp != 0) return RejectReason::tp_heads;
  if (m.ffn_hidden % c.tp != 0) return RejectReason::tp_ffn;
  if (c.cp > 1 && base.training.seq_len % (2 * c.cp) != 0) return RejectReason::cp_sequence;
  if (!moe && framework_rules && c.cp > 1 && base.training.attention != AttentionKernel::flash) {
    return RejectReason::cp_attention;
  }
  if (m.layers < c.pp * c.vpp) return RejectReason::layer_split;  // uneven splits: apply_candidate (MoE)
  if (!moe && m.layers % (c.pp * c.vpp) != 0) return RejectReason::layer_split;
  if (base.training.global_batch % (c.micro_batch * c.dp) != 0) return RejectReason::global_batch;
  const std::int64_t micro_batches = base.training.global_batch / (c.micro_batch * c.dp);
  if (c.schedule == PipelineSchedule::interleaved && micro_batches % c.pp != 0) {
    return RejectReason::interleaved_micro_batches;
  }
  if (!moe) {
    if (framework_rules && c.zero_stage >= 2 && c.pp > 1) return RejectReason::zero_pipeline;
    return std::nullopt;
  }
  const std::int64_t etp = c.etp > 0 ? c.etp : c.tp;
  if (e.experts % c.ep != 0 || (c.tp * c.cp * c.dp) % (c.ep * etp) != 0 || e.expert_ffn_hidden % etp != 0 ||
      (e.shared_experts > 0 && e.effective_shared_ffn_hidden() % c.tp != 0)) {
    return RejectReason::expert_layout;
  }
  return std::nullopt;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

Result<SearchResult> search_library_costed(const Plan& base, const SearchOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  const SearchSpace& s = options.space;
  const std::int64_t gpus = base.cluster.gpus;
  std::vector<std::int64_t> micro_batches = s.micro_batch;
  if (micro_batches.empty()) {
    for (std::int64_t b = 1; b <= s.max_micro_batch && b <= base.training.global_batch; b *= 2) micro_batches.push_back(b);
  }
  const bool moe = base.model.moe.enabled();
  // ZeRO stages: MoE {0, 1} unless given; offloading needs its stage (ZeRO-Offload >= 1,
  // ZeRO-Infinity 3: offload.h), so a stage it cannot run with is not enumerated.
  std::vector<std::int64_t> zeros = s.zero_stage;
  if (zeros.empty()) zeros = moe ? std::vector<std::int64_t>{0, 1} : std::vector<std::int64_t>{0, 1, 2, 3};
  const std::int64_t least_zero = base.layout.offload_params ? 3 : base.layout.offload_optimizer ? 1 : 0;
  std::erase_if(zeros, [&](std::int64_t z) { return z < least_zero; });
  // Schedules: MoE 1F1B unless given; dense models (offloading) every schedule the dense search
  // tries.
  std::vector<std::pair<PipelineSchedule, std::int64_t>> schedules;
  for (PipelineSchedule k : {PipelineSchedule::one_f_one_b, PipelineSchedule::gpipe, PipelineSchedule::zb_h1}) {
    if (allowed(s.schedule, k) && (s.schedule.size() > 0 || k == PipelineSchedule::one_f_one_b || !moe)) schedules.push_back({k, 1});
  }
  if (allowed(s.schedule, PipelineSchedule::interleaved) && (!s.schedule.empty() || !moe)) {
    for (std::int64_t v : s.vpp.empty() ? divisors_of(base.model.layers) : s.vpp) {
      if (v >= 2) schedules.push_back({PipelineSchedule::interleaved, v});
    }
  }
  if (micro_batches.empty() || zeros.empty() || schedules.empty() || options.top == 0) {
    return make_error("search", "nothing to search: a dimension has no allowed value or top is 0");
  }

  SearchResult result;
  result.threads = 1;
  Tallies tallies;
  std::vector<Scored> kept;
  const std::size_t keep = std::max<std::size_t>(1, options.top * std::max<std::size_t>(options.simulate, 1));
  std::int64_t ordinal = 0;
  const auto consider = [&](const Candidate& c) {
    ++result.enumerated;
    const std::int64_t this_ordinal = ordinal++;
    if (auto reason = integer_check(base, c, s.framework_rules)) {
      tallies.reject(*reason, c);
      return;
    }
    ++result.evaluated;
    const Plan plan = apply_candidate(base, c);
    const std::int64_t vocab = padded_vocab(base.model.vocab, c.tp, base.training.vocab_divisible_by);
    const MemoryEstimate memory = estimate_memory(plan, vocab);
    if (!memory.fits) {
      Rejection& t = tallies.by_reason[static_cast<std::size_t>(RejectReason::memory)];
      tallies.reject(RejectReason::memory, c);
      if (t.count == 1 || memory.peak.total_bytes() < t.closest_bytes) {
        t.closest = c;
        t.closest_bytes = memory.peak.total_bytes();
      }
      return;
    }
    ++result.fitting;
    const DeviceModel device(plan.cluster.gpu, plan.training.precision, default_efficiency(plan.cluster.gpu));
    const CommLinks links = plan_links(plan, device.efficiency());
    const double iteration_s = closed_form_time(plan, iteration_costs(plan, device, links, vocab)).iteration_s;
    kept.push_back({c, iteration_s, memory.peak.total_bytes(), this_ordinal});
    if (kept.size() > 4 * keep) {  // trim now and then; the final sort decides
      std::sort(kept.begin(), kept.end(), better);
      kept.resize(keep);
    }
  };

  for (std::int64_t tp : divisors_of(gpus)) {
    if (!allowed(s.tp, tp)) continue;
    for (std::int64_t cp : divisors_of(gpus / tp)) {
      if (!allowed(s.cp, cp)) continue;
      for (std::int64_t pp : divisors_of(gpus / (tp * cp))) {
        const std::int64_t dp = gpus / (tp * cp * pp);
        if (!allowed(s.pp, pp) || !allowed(s.dp, dp)) continue;
        std::vector<std::int64_t> etps = s.etp;
        if (etps.empty()) etps = tp > 1 && moe ? std::vector<std::int64_t>{1, tp} : std::vector<std::int64_t>{moe ? 1 : 0};
        // Sequence parallelism: Megatron-Core requires it with MoE and tp > 1; dense models try
        // both (or the one given) where tp > 1.
        std::vector<bool> sps{false};
        if (tp > 1) sps = moe ? std::vector<bool>{true} : s.sequence_parallel ? std::vector<bool>{*s.sequence_parallel} : std::vector<bool>{false, true};
        for (std::int64_t etp : etps) {
          for (std::int64_t ep : !moe ? std::vector<std::int64_t>{1} : s.ep.empty() ? divisors_of(base.model.moe.experts) : s.ep) {
            if (moe && s.ep.empty() && ep * etp > tp * cp * dp) continue;  // cannot fold into the stage
            for (std::int64_t mb : micro_batches) {
              for (bool sp : sps) {
                for (Recompute r : {Recompute::none, Recompute::selective, Recompute::full}) {
                  if (!allowed(s.recompute, r)) continue;
                  for (std::int64_t z : zeros) {
                    for (const auto& [schedule, vpp] : schedules) {
                      if (pp == 1 && (schedule != schedules.front().first || vpp > 1)) continue;
                      Candidate c;
                      c.tp = tp, c.cp = cp, c.pp = pp, c.dp = dp, c.ep = ep, c.etp = etp, c.micro_batch = mb;
                      c.sequence_parallel = sp, c.recompute = r, c.zero_stage = z, c.schedule = schedule, c.vpp = vpp;
                      consider(c);
                    }
                  }
                }
              }
            }
          }
        }
      }
    }
  }
  std::sort(kept.begin(), kept.end(), better);
  if (kept.size() > keep) kept.resize(keep);
  for (std::size_t r = 0; r < kRejectReasonCount; ++r) {
    Rejection t = tallies.by_reason[r];
    if (t.count == 0) continue;
    t.reason = static_cast<RejectReason>(r);
    t.detail = search_detail::rejection_detail(base, t.reason, t.first);
    result.rejections.push_back(std::move(t));
  }
  std::stable_sort(result.rejections.begin(), result.rejections.end(),
                   [](const Rejection& a, const Rejection& b) { return a.count > b.count; });
  result.closed_form_seconds = seconds_since(start);

  const double tokens = static_cast<double>(base.training.global_batch) * static_cast<double>(base.training.seq_len);
  for (const Scored& k : kept) {
    RankedLayout r;
    r.candidate = k.candidate;
    r.plan = apply_candidate(base, k.candidate);
    auto e = estimate(r.plan);
    if (!e || !e->memory.fits || !e->time.available) continue;
    r.estimate = std::move(*e);
    r.closed_form_iteration_s = k.iteration_s;
    r.closed_form_tokens_per_s = tokens / k.iteration_s;
    result.layouts.push_back(std::move(r));
  }
  result.simulated = kept.size();
  std::stable_sort(result.layouts.begin(), result.layouts.end(), [](const RankedLayout& a, const RankedLayout& b) {
    return a.estimate.time.iteration_s < b.estimate.time.iteration_s;
  });
  if (result.layouts.size() > options.top) result.layouts.resize(options.top);
  result.seconds = seconds_since(start);
  return result;
}

}  // namespace plansight::estimator
