// The steady-state skip of the dedicated-processor engine (dedicated_run.h, steady_state.h).
#include <algorithm>
#include <climits>
#include <optional>
#include <unordered_map>

#include "dedicated_run.h"

namespace plansight::estimator {

// The steady state (steady_state.h): runs every rank into its periods, then a period more at a
// time (later several), comparing the state after each with those before; once the state
// repeats up to a shift, skips the periods that can only repeat it. Leaves every rank free to
// run to its end. False when cancelled.
bool DedicatedRun::skip_steady_state() {
  const auto p = static_cast<std::size_t>(t_.p);
  const auto v = static_cast<std::size_t>(t_.v);
  if (!skippable(t_)) return true;
  // Ops with one-off work (a chunk's first forward and backward when they gather its
  // parameters, its last backward when it issues the chunk's gradient reduction, the rank's
  // last op, which closes its bubble window) stay out of the periods.
  std::vector<std::size_t> first(p, 1), end(p);
  for (std::size_t r = 0; r < p; ++r) {
    end[r] = rows_->size(r) == 0 ? 0 : rows_->size(r) - 1;
    for (std::size_t c = r * v; c < (r + 1) * v; ++c) {
      const NsChunkCost& cc = cost(global_of(static_cast<std::int32_t>(r), static_cast<std::int32_t>(c - r * v)));
      if (cc.param_gather > 0) {
        for (const std::int64_t i : {first_f_[c], first_b_[c]}) first[r] = std::max(first[r], static_cast<std::size_t>(i + 1));
      }
      if (last_bwd_[c] >= 0 && cc.dp_reduce > 0 && in_.dp_issue == DpReduceIssue::per_chunk) {
        end[r] = std::min(end[r], static_cast<std::size_t>(last_bwd_[c]));
      }
    }
    if (first[r] >= end[r]) return true;
  }
  if (t_.kind == PipelineSchedule::gpipe) {
    // GPipe runs all its forwards, then all its backwards: no period spans both halves, but
    // each may have its own, one op a micro-batch. Each half is a flow line (stage after stage
    // for the forwards, back for the backwards): its state repeats only when the stage that
    // feeds it is the slowest, so that every later one waits for its input; a slower stage
    // after it gathers a backlog that grows to the end of the half (Narayanan's 1 T model: the
    // last stage's LM head makes its forwards 2.6 % slower), and such a half is not searched.
    std::vector<std::size_t> mid(p), forwards_end(p), backwards_first(p);
    for (std::size_t r = 0; r < p; ++r) {
      mid[r] = rows_->size(r) / 2;
      forwards_end[r] = std::min(mid[r], end[r]);
      backwards_first[r] = std::max(mid[r], first[r]);
    }
    if (feeder_is_slowest(OpKind::forward) && !skip_region(first, forwards_end, 1)) return false;
    if (feeder_is_slowest(OpKind::backward) && !skip_region(backwards_first, end, 1)) return false;
  } else if (!skip_region(first, end, 0)) {
    return false;
  }
  return finish_skipping();
}

// GPipe (one chunk a rank): whether the stage that starts the flow of `kind` ops (the first for
// forwards, the last for backwards) takes at least as long per op as every other, an op's
// time on a stage being the longer of its compute and its send on the lane.
bool DedicatedRun::feeder_is_slowest(OpKind kind) const {
  const bool forward = kind == OpKind::forward;
  const auto pace = [&](std::int32_t g) {
    const NsChunkCost& c = cost(g);
    const bool sends = forward ? g + 1 < stages_ : g > 0;
    return std::max(c.shapes[shape_index(kind)].ns, sends ? (forward ? c.send_activation : c.send_gradient) : 0);
  };
  const std::int64_t feeder = pace(forward ? 0 : stages_ - 1);
  for (std::int32_t g = 0; g < stages_; ++g) {
    if (pace(g) > feeder) return false;
  }
  return true;
}

// The steady-state skip over the ops [first[r], end[r]) of every rank (steady_state.h's
// arguments); false when cancelled. Leaves each rank where its last cut, or the skip, put it.
bool DedicatedRun::skip_region(const std::vector<std::size_t>& first, const std::vector<std::size_t>& end,
                               std::size_t ops_per_micro_batch) {
  const auto p = static_cast<std::size_t>(t_.p);
  for (std::size_t r = 0; r < p; ++r) {
    if (first[r] >= end[r]) return true;
  }
  const TableKnown known = generated_ ? TableKnown::generated : TableKnown::nothing;
  const std::optional<SteadyPeriod> period = periods_ != nullptr
                                                 ? periods_->find(t_, *rows_, first, end, known, ops_per_micro_batch)
                                                 : find_steady_period(t_, *rows_, first, end, known, ops_per_micro_batch);
  if (!period) return true;
  prepare_windows();
  // Room to compare and skip (kSkipMinPeriods): 1.5 periods of a micro-batch group, whose first
  // cut lies half a period in (below); else 2 periods holding two cycles of p micro-batches
  // (1F1B's longest, below).
  for (std::size_t r = 0; r < p; ++r) {
    const std::size_t room = period->copies_end[r] - period->begin[r];
    if (period->micro_batches > 1 ? 2 * room < 3 * period->ops[r]
                                  : room / period->ops[r] < kSkipMinPeriods || room / period->ops[r] < 2 * p) return true;
  }
  // A steady state may repeat itself only every few periods (alternating patterns when stages
  // or their lanes differ; with p2p latency, 1F1B's critical circuit runs through every stage
  // and back, and its cycle is p periods), so each period's snapshot is hashed up to the shift
  // (shape_hash) and looked up among those before it; a match `cycle` periods back is then
  // compared exactly and the skip starts there. The snapshots of the first periods are kept,
  // so a match among them is compared at once. After those, a run still in its transient (one
  // that takes hundreds of periods: nearly balanced stages, where a backlog of the warm-up
  // drains by the small difference of their periods) keeps only each snapshot's hash; a match
  // there keeps that snapshot, which is compared `cycle` periods later.
  const auto& ops = period->ops;
  std::unordered_map<std::uint64_t, std::int64_t> seen;  // shape -> periods done when seen
  // The kept ones, then three more, then drift's three (snapshots(): reused from the thread's
  // last run).
  const std::size_t kept_count = std::min<std::size_t>(2 * p + 8, kSkipMaxCycle) + 1;
  std::vector<SteadySnapshot>& kept = snapshots(kept_count + 6);
  const auto kept_periods = static_cast<std::int64_t>(kept_count);
  SteadySnapshot& shape = kept[kept_count];  // after the kept ones: this period's, a match's
  SteadySnapshot& candidate = kept[kept_count + 1];
  std::int64_t candidate_at = -1, candidate_cycle = 0;
  SteadySnapshot& last = kept[kept_count + 2];  // the last cut's, when no skip came after it (last_done >= 0)
  bool own_periods = false;  // the last two cuts' states repeat with a shift per rank
  std::int64_t own_retry_wait = 0, own_retry_at = 0, own_stalls = 0;
  std::int64_t last_done = -1;
  record_margins_ = false;
  // Drift (iteration_engine.h): the last three cuts a period apart, whose periods' comparisons
  // were recorded (record_exact_), oldest first, with the periods done at each (-1: none).
  SteadySnapshot* drift_cuts[3] = {&kept[kept_count + 3], &kept[kept_count + 4], &kept[kept_count + 5]};
  std::int64_t drift_at[3] = {-1, -1, -1};
  bool drift = false;  // cutting every period and recording its comparisons for the drift search
  bool own_seen = false;  // the state repeated per rank at some cut
  std::int64_t drift_stalls = 0, drift_retry_wait = 0, drift_retry_at = kDensePeriods, drift_skips = 0;
  std::int64_t exact_from = -1;  // the cut whose period is recorded (record_exact_)
  Drift shifts;
  record_exact_ = false;
  // Each rank may run to the start of its periods, then a period further each time. Where it
  // stops (there, or short of it waiting for a rank held back) is the cut: the ops run so far
  // are what the simulation has run, whichever order it ran them in.
  // A period of a micro-batch group (Megatron's interleaved order) starts where the rank's
  // warm-up ends, while the first backward wave is still on its way through the stages: the
  // state cannot repeat there yet, and half a period on it has (64 x 4 x 1024: a period of 512
  // ops a rank found one period earlier, bench/results/time-core-cpu.txt). So the first cut is
  // half such a period in. Any cut gives the same figures (the skip is exact); periods of one
  // micro-batch (a few ops) keep theirs at the start, which measured best for them.
  std::size_t period_ops = 0;
  for (const std::size_t n : ops) period_ops += n;
  const auto kept_stride = static_cast<std::int64_t>(std::clamp<std::size_t>((kMinOpsPerCut + period_ops - 1) / period_ops, 1, kSparsePeriods));
  limit_ = period->begin;
  if (period->micro_batches > 1) {
    for (std::size_t r = 0; r < p; ++r) limit_[r] += ops[r] / 2;
  }
  std::vector<std::size_t> cut_before;  // next_ at the last cut
  for (std::int64_t periods_done = 0;;) {
    queue_all();
    if (!drain()) return false;
    // A rank held back before its first compute would still record its window's start.
    for (std::size_t r = 0; r < p; ++r) {
      if (activity_[r].compute_begin_ns > activity_[r].compute_end_ns) return true;
    }
    // No rank moved though every limit moved on: nothing ever will (a table that deadlocks;
    // the run after the search reports it).
    if (cut_before == next_) return true;
    cut_before = next_;
    const bool in_kept = periods_done < kept_periods;
    const bool due = candidate_at >= 0 && periods_done == candidate_at + candidate_cycle;
    // Drift's cuts: this one joins the last two if the period between was recorded whole (a
    // period, every op on the lean path); otherwise they start again from here. Its snapshot is
    // taken in their place, or copied there while snapshots are kept.
    const bool drift_cut = drift || (!own_seen && periods_done >= drift_retry_at);
    if (drift_cut) {
      if (record_exact_ && exact_lean_only_ && exact_from == periods_done - 1 && drift_at[2] == exact_from) {
        std::rotate(drift_cuts, drift_cuts + 1, drift_cuts + 3);
        std::rotate(drift_at, drift_at + 1, drift_at + 3);
      } else {
        drift_at[0] = drift_at[1] = -1;
      }
      drift_at[2] = periods_done;
    }
    SteadySnapshot& now = in_kept ? kept[static_cast<std::size_t>(periods_done)] : drift_cut ? *drift_cuts[2] : shape;
    take_snapshot(now);
    if (drift_cut && in_kept) *drift_cuts[2] = now;
    if (due) {
      if (skip_from(*period, candidate, now, candidate_cycle, false).cycles > 0) break;
      candidate_at = -1;
    }
    // Ranks that move on by periods of their own (rank_shifts): the state since the last cut
    // repeats with a shift per rank while every decision between ranks that move apart keeps
    // its side; the skip goes to the first such decision that may change (margin_cycles), and
    // the run goes on from there, a cut a period, to the next. DualPipeV at 64 x 1024: after the
    // warm-up each rank works off its backlog at its own pace until the slower pace of rank 0
    // (its two chunks hold the embedding and the LM head) reaches it, a front moving up the
    // ranks a few micro-batches apart (bench/results/time-core-cpu.txt).
    std::int64_t own_skipped = 0;
    // Not while drift's skips go on (drift finds per-rank repetitions too; comparing and copying
    // the cuts for this search as well cost 1F1B with ZeRO-3 at 64 x 1024 5 %).
    const bool drifting = drift && drift_skips > 0 && drift_stalls == 0;
    if (last_done >= 0 && periods_done >= own_retry_at && !drifting) {
      const bool margins = record_margins_;
      const Skipped skipped = skip_from(*period, last, now, periods_done - last_done, !own_periods, margins);
      if (skipped.all) break;
      own_skipped = skipped.cycles;
      // A state that does not repeat per rank, or repeats but keeps a decision on its edge
      // (kOwnStalls comparisons in a row without a skip), is looked at again less and less
      // often: comparing every cut cost ZB-H1's transient 5 % (its deferred Ws' inputs lag their
      // ranks' clocks), and a cut every period kept a state that repeats over several periods
      // from the uniform search's strides.
      own_stalls = skipped.own_periods && margins && skipped.cycles == 0 ? own_stalls + 1 : 0;
      const bool own = skipped.own_periods && own_stalls < kOwnStalls;
      if (skipped.cycles > 0) own_retry_wait = 0;
      if (!own) own_retry_wait = std::clamp<std::int64_t>(2 * own_retry_wait, 1, 64);
      own_retry_at = own ? periods_done : periods_done + own_retry_wait;
      if (skipped.cycles > 0) {
        periods_done += skipped.cycles * (periods_done - last_done);
        seen.clear();
        candidate_at = -1;
      }
      own_periods = own;
      if (skipped.cycles > 0) {
        // The skip ends where a decision may change side, in the period after it: the next
        // cut starts the next comparison instead of ending one that holds that change.
        last_done = -1;
      } else {
        last = now;
        last_done = periods_done;
      }
    } else if (!drifting) {
      last = now;
      last_done = periods_done;
    } else {
      last_done = -1;
    }
    // Drift: where the state moves on by a shift of its own for every time (a rank waiting for
    // inputs from two sides that come at different paces: 1F1B with ZeRO-3 at 64 x 1024, where
    // the first stage is the slowest, and a front moves up the ranks one every dozen periods as
    // each rank's backlog of backward inputs runs out), skips to the first comparison that may
    // change side, then cuts every period again to the next.
    if (own_skipped == 0 && drift && drift_at[0] >= 0 && drift_at[0] == periods_done - 2) {
      const Skipped skipped = skip_drift_from(*period, *drift_cuts[0], *drift_cuts[1], now, shifts);
      if (skipped.all) break;
      if (skipped.cycles > 0) {
        periods_done += skipped.cycles;
        own_skipped = skipped.cycles;  // as after a skip per rank: no uniform search at this cut
        seen.clear();
        candidate_at = -1;
        last_done = -1;
        drift_stalls = 0;
        drift_retry_wait = 0;
        ++drift_skips;
      } else if (++drift_stalls >= kDriftStalls) {
        // Looked at again less and less often, and not at all in a run where it never skipped:
        // there, a transient that settles or repeats in cycles (1F1B with ZeRO-3 gathers
        // prefetched, 64 x 1024), tries every few periods cost 18 % more than they found.
        drift = false;
        drift_stalls = 0;
        drift_retry_wait = std::clamp<std::int64_t>(4 * drift_retry_wait, 4, 256);
        drift_retry_at = drift_skips > 0 ? periods_done + drift_retry_wait : INT64_MAX;
      }
      // After a skip the run is no longer at this cut: the next three start after it.
      if (skipped.cycles > 0) drift_at[0] = drift_at[1] = drift_at[2] = -1;
    }
    // The uniform search, but while ranks move apart and their skips go on (a state that
    // repeats per rank does not repeat as a whole; hashing it at every cut cost DualPipeV 5 %).
    // Nor while drift's skips go on (they find a state that repeats as a whole too; hashing at
    // each of their cuts cost 1F1B with ZeRO-3 at 64 x 1024 6 %).
    if (own_skipped == 0 && (!own_periods || own_stalls > 0) && !drifting) {
      auto [it, fresh] = seen.try_emplace(shape_hash(now, ops, period->micro_batches, periods_done), periods_done);
      if (!fresh) {
        const std::int64_t cycle = periods_done - it->second;
        if (in_kept) {
          if (skip_from(*period, kept[static_cast<std::size_t>(it->second)], now, cycle, false).cycles > 0) break;
        } else if (candidate_at < 0 && cycle <= static_cast<std::int64_t>(kSkipMaxCycle)) {
          if (&now == drift_cuts[2]) drift_at[2] = -1;  // the drift cut's snapshot becomes the candidate
          std::swap(candidate, now);
          candidate_at = periods_done;
          candidate_cycle = cycle;
        }
        it->second = periods_done;
      }
    }
    clear_margins();
    // The next cut: a period on for the first kDensePeriods (a state that repeats at once is
    // found at once: the default plan's), then, while snapshots are kept, kept_stride periods
    // on, at least kMinOpsPerCut ops of all ranks; after, kSparsePeriods on (and at a
    // candidate's due period). A snapshot of a 64-stage run and stopping every rank for it
    // cost about as much as simulating one of ZB-H1's periods (3 ops a rank), and a transient
    // of hundreds of periods (ZB-H1's, DualPipe's) spent more on them than on its ops. A state
    // that repeats every c periods then matches lcm(c, stride) periods on, and the skip moves
    // whole such cycles. Where a cut leaves each rank is the same whichever steps it took
    // there (each runs as far as its inputs and limit allow); the cuts are compared exactly
    // before any skip.
    std::int64_t next = periods_done + (periods_done < kDensePeriods ? 1 : kept_stride);
    if (next > kept_periods) next = kept_periods + ((periods_done - kept_periods) / kSparsePeriods + 1) * kSparsePeriods;
    record_margins_ = own_periods;
    if (own_periods) next = periods_done + 1;
    // Drift, searched once the dense periods found no repetition, in a run whose state never
    // repeated per rank (where it does, as in ZB-H1's and DualPipeV's transients, the per-rank
    // search skips for less: a comparison of two cuts, not three, and no comparison recorded
    // per op).
    own_seen = own_seen || own_periods;
    if (!drift && !own_seen && periods_done >= drift_retry_at) drift = true;
    if (own_seen) drift = false;
    if (drift) next = periods_done + 1;
    if (candidate_at >= 0) next = std::min(next, candidate_at + candidate_cycle);
    // ... while a period after it could still be skipped.
    for (std::size_t r = 0; r < p; ++r) {
      const std::size_t reach = repeats_until(*period, r);
      const auto left = static_cast<std::int64_t>((reach - std::min(next_[r], reach)) / ops[r]);
      next = std::min(next, periods_done + left - 1);
    }
    if (next <= periods_done) break;
    for (std::size_t r = 0; r < p; ++r) limit_[r] = next_[r] + static_cast<std::size_t>(next - periods_done) * ops[r];
    record_exact_ = drift && next == periods_done + 1;
    if (record_exact_) {
      start_exact_period(ops);
      exact_from = periods_done;
    }
    periods_done = next;
  }
  record_margins_ = false;
  record_exact_ = false;
  clear_margins();
  return true;
}

DedicatedRun::Skipped DedicatedRun::skip_drift_from(const SteadyPeriod& period, SteadySnapshot& s0, SteadySnapshot& s1,
                                                    SteadySnapshot& s2, Drift& shifts) {
  std::int64_t cycles = INT64_MAX;
  for (std::size_t r = 0; r < period.ops.size(); ++r) {
    const std::size_t n = period.ops[r], reach = repeats_until(period, r);
    if (s0.cut[r] < period.begin[r] || s1.cut[r] != s0.cut[r] + n || s2.cut[r] != s1.cut[r] + n || s2.cut[r] > reach) return {};
    cycles = std::min(cycles, static_cast<std::int64_t>((reach - s2.cut[r]) / n));
  }
  const std::int64_t to_end = cycles;
  // The shifts first: while a front moves, they are what differs between the two periods more
  // often (1F1B with ZeRO-3 at 64 x 1024: 4 tries in 10 fail there, none on a comparison).
  if (!drift_shifts(s0, s1, s2, period.micro_batches, shifts)) return {};
  cycles = std::min(cycles, exact_cycles());
  if (cycles <= 0) return {};
  if (skip_drift(s1, s2, period.ops, period.micro_batches, cycles, shifts) == 0) return {};
  Skipped out;
  out.cycles = cycles;
  out.all = cycles == to_end;
  return out;
}

DedicatedRun::Skipped DedicatedRun::skip_from(const SteadyPeriod& period, SteadySnapshot& before, SteadySnapshot& now,
                                              std::int64_t cycle, bool own_only, bool margins) {
  std::vector<std::size_t> ops(period.ops.size());
  std::int64_t cycles = INT64_MAX;
  for (std::size_t r = 0; r < ops.size(); ++r) {
    ops[r] = static_cast<std::size_t>(cycle) * period.ops[r];
    const std::size_t reach = repeats_until(period, r);
    if (before.cut[r] < period.begin[r] || now.cut[r] != before.cut[r] + ops[r] || now.cut[r] > reach) return {};
    cycles = std::min(cycles, static_cast<std::int64_t>((reach - now.cut[r]) / ops[r]));
  }
  const auto shift = static_cast<std::int32_t>(cycle * period.micro_batches);
  const std::vector<std::int64_t> ns = rank_shifts(before, now, own_only);
  if (ns.empty()) return {};
  Skipped out;
  const std::int64_t to_end = cycles;
  if (std::any_of(ns.begin(), ns.end(), [&](std::int64_t x) { return x != ns[0]; })) {
    out.own_periods = true;
    if (!margins) {
      // Found here: the whole state must repeat per rank (the search then cuts every period and
      // records the decisions; a state whose clocks alone repeat is drift's, skip_region).
      if (!pending_repeat(before, now, shift, ns)) return {};
      return out;
    }
    // Recording the decisions, the state repeated per rank at the last cut: its pending times
    // are compared only once the decisions allow a skip. (Compared at each cut, they were a
    // tenth of ZB-H1's estimate with ZeRO-3 at 64 x 1024, whose state repeated per rank at 7 cuts
    // for each that skipped, a decision on its edge: bench/results/time-core-cpu.txt.) A cut
    // whose pending times would not repeat counts as a stall, not as the end of the repetition.
    cycles = std::min(cycles, all_margin_cycles(ns));
    if (cycles <= 0) return out;
  }
  if (!pending_repeat(before, now, shift, ns)) return {};
  if (cycles <= 0 || skip_periods(before, now, ops, shift, cycles, ns) == 0) return out;
  out.cycles = cycles;
  out.all = cycles == to_end;
  return out;
}

}  // namespace plansight::estimator
