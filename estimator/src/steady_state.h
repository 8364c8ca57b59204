// Private to the simulator: where a schedule table repeats itself. In the steady state of the
// 1F1B family every rank's op list is periodic: P_r ops later comes the same op (kind, chunk,
// pairing) for the micro-batch Δ later (1F1B and ZB-H1: Δ = 1; Megatron's interleaved order: Δ =
// its micro-batch group, p by default). The engine (iteration_engine.h) simulates two such
// periods, and when the second leaves the run in the state the first left it, only later in time
// by T and later in micro-batch by Δ, it moves every rank on by K periods of T at once instead of
// simulating them op by op: with costs per chunk, not per micro-batch, the periods in between
// could only repeat (a dependency-driven schedule with fixed durations is a max-plus linear
// system: once its state repeats up to a shift it stays periodic; Baccelli et al. 1992,
// "Synchronization and Linearity", Ch. 3).
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <vector>

#include "plansight/estimator/pipeline_schedule.h"

namespace plansight::estimator {

// The steady state's search runs only where it can pay: the transient and two cycles, each up
// to about p micro-batches (1F1B's critical circuit runs through every stage and back), must
// leave periods to skip. Below that the search would cost more than it saves.
inline constexpr std::int32_t kSkipMinMicroBatches = 32;
inline bool skippable(std::int64_t p, std::int64_t m) { return m >= kSkipMinMicroBatches + 3 * p; }
inline bool skippable(const ScheduleTable& t) { return skippable(t.p, t.m); }

struct SteadyPeriod {
  std::int32_t micro_batches = 0;       // Δ: how far one period moves every micro-batch index
  std::vector<std::size_t> ops;         // per rank: P_r, the ops of one period
  std::vector<std::size_t> begin;       // per rank: the first op of the first period
  // Per rank: ranks[r][i + P_r] is ranks[r][i] Δ micro-batches later for every i in
  // [begin, copies_end), and copies_end + P_r <= the rank's `end` given to find_steady_period.
  std::vector<std::size_t> copies_end;
};

// The table's period, or nothing when it has none worth using: every rank needs room for at
// least three periods between first[r] (its ops before it may do one-off work: a chunk's first
// parameter gather) and end[r] (the first op that must be simulated: a chunk's gradient
// reduction, the rank's last op), and ops that repeat for two and a half of them
// (copies_end - begin >= 1.5 periods). Also nothing unless every (rank, chunk, kind) runs its
// pipeline's micro-batches in order 0, 1, ..., m-1 (DualPipe's second from m/2), which the
// engine's snapshot relies on: what a rank has
// consumed or produced of a chunk is then a prefix of the micro-batches (known already for every
// table make_schedule() generates). A period of Δ micro-batches holds
// Δ x (the rank's ops / m) ops, or Δ x `ops_per_micro_batch` when given: a part of a table whose
// ops are not spread evenly over the iteration (GPipe's forwards, then its backwards: one op a
// micro-batch in each half). O(ops), comparisons only.
// What is known of a table before its search: nothing; that its micro-batches run in order (see
// above); or that it is make_schedule's, unedited, so that they do and its runs
// (ScheduleTable::repeating) hold, which spares the walk through them.
enum class TableKnown { nothing, in_order, generated };

std::optional<SteadyPeriod> find_steady_period(const ScheduleTable& table, const std::vector<std::size_t>& first,
                                               const std::vector<std::size_t>& end, TableKnown known = TableKnown::nothing,
                                               std::size_t ops_per_micro_batch = 0);
// The same, reading the table's ops from `rows` (a sparse table's: its middles are read through
// ScheduleRows::at, and make_schedule's runs must hold them).
class ScheduleRows;
std::optional<SteadyPeriod> find_steady_period(const ScheduleTable& table, const ScheduleRows& rows,
                                               const std::vector<std::size_t>& first, const std::vector<std::size_t>& end,
                                               TableKnown known, std::size_t ops_per_micro_batch);

// The widest run of `ops` through the middle of the list whose ops each repeat `period` ops on,
// `micro_batches` later (ScheduleTable::repeating; none: period 0). O(ops), comparisons only.
RepeatingOps repeating_run(const std::vector<ScheduleOp>& ops, std::size_t period, std::int32_t micro_batches);
RepeatingOps repeating_run(const ScheduleOp* ops, std::size_t n, std::size_t period, std::int32_t micro_batches);
// The same for the n ops at `ops` of which ops [known_begin, known_end) are known to repeat: the
// run through them, widened both ways, reading only the ops within a period of its ends (a sparse
// table's, schedule_rows.h, whose middle is not written). The run through the middle when the
// middle lies in [known_begin, known_end), as repeating_run finds it; none otherwise.
RepeatingOps repeating_run_around(const ScheduleOp* ops, std::size_t n, std::size_t period, std::int32_t micro_batches,
                                  std::size_t known_begin, std::size_t known_end);

// Drift's comparisons (DedicatedRun, iteration_engine.h's Drift): n values recorded in each of
// two periods in a row, `before` and `now`, the k-th of each the same comparison of the same op
// (one side less the other), kNoComparison where that op made none. How many more periods keep
// every comparison on the side it took in both (negative, zero or positive), each moving on by
// its change between them: 0 when one changed side between them (or was made in one only);
// INT64_MAX when none moves towards the other side. Reaching zero at the last period is a tie,
// whose max() is the same whichever side it takes.
inline constexpr std::int64_t kNoComparison = INT64_MIN;
std::int64_t comparison_cycles(const std::int64_t* before, const std::int64_t* now, std::size_t n);

// The periods found in one table, for the runs that simulate it (predict_time's two, which differ
// only in their transfers, so their one-off ops and ranges are the same): find_steady_period walks
// the whole table, and two runs walking the same megabytes at once contend for the cache.
// Thread-safe: the first run to ask for a range searches it while another waits for the answer.
class SteadyPeriods {
 public:
  std::optional<SteadyPeriod> find(const ScheduleTable& table, const std::vector<std::size_t>& first,
                                   const std::vector<std::size_t>& end, TableKnown known, std::size_t ops_per_micro_batch);
  std::optional<SteadyPeriod> find(const ScheduleTable& table, const ScheduleRows& rows,
                                   const std::vector<std::size_t>& first, const std::vector<std::size_t>& end,
                                   TableKnown known, std::size_t ops_per_micro_batch);

 private:
  struct Found {
    std::vector<std::size_t> first, end;
    TableKnown known;
    std::size_t ops_per_micro_batch;
    std::optional<SteadyPeriod> period;
  };
  std::mutex mutex_;
  std::vector<Found> found_;
};

}  // namespace plansight::estimator
