// The period of a schedule table's steady state (steady_state.h).
#include "steady_state.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstring>
#include <tuple>
#include <utility>

#include "schedule_rows.h"

namespace plansight::estimator {
namespace {

// Whether every (local chunk, kind) of rank r runs its pipeline's micro-batches in order: 0, 1,
// ..., m-1 (DualPipe: from m/2 for its second pipeline). `next` is scratch of v x 3 entries.
bool micro_batches_in_order(const ScheduleTable& t, const ScheduleRows& rows, std::int32_t r, std::vector<std::int32_t>& next) {
  const std::int32_t v = t.v;
  next.assign(static_cast<std::size_t>(v) * 3, 0);
  for (std::int32_t c = 0; c < v; ++c) {
    if (two_pipelines(t.kind) && t.global_chunk(r, c) >= t.p) {
      for (std::size_t k = 0; k < 3; ++k) next[static_cast<std::size_t>(c) * 3 + k] = t.m / 2;
    }
  }
  bool ok = true;
  const auto ri = static_cast<std::size_t>(r);
  for (std::size_t i = 0; i < rows.size(ri); ++i) {
    const ScheduleOp o = rows.at(ri, i);
    if (o.chunk < 0 || o.chunk >= v) return false;
    std::int32_t& n = next[static_cast<std::size_t>(o.chunk) * 3 + static_cast<std::size_t>(o.kind)];
    ok &= o.micro_batch == n;  // no branch per op: this walk is a good part of a long run's cost
    ++n;
  }
  return ok;
}

// An op as one 64-bit word: kind, pairing and chunk in the low half, the micro-batch in the high
// half. The walks below compare every op of a long table with the op a period later, twice per
// estimate; field by field that was a tenth of a 64-stage interleaved estimate. The later op
// minus the earlier one, as words, is the shift in the high half exactly when the low halves are
// equal and the micro-batches differ by the shift (a low half's difference is zero only when the
// low halves are equal, and then nothing borrows from the high half).
static_assert(std::endian::native == std::endian::little && sizeof(ScheduleOp) == 8 &&
              offsetof(ScheduleOp, kind) == 0 && offsetof(ScheduleOp, pairs_with_next) == 1 &&
              offsetof(ScheduleOp, chunk) == 2 && offsetof(ScheduleOp, micro_batch) == 4);
[[gnu::always_inline]] inline std::uint64_t word_of(const ScheduleOp& o) {
  std::uint64_t word;
  std::memcpy(&word, &o, sizeof word);
  return word;
}
[[gnu::always_inline]] inline std::uint64_t shift_word(std::int32_t shift) {
  return static_cast<std::uint64_t>(static_cast<std::uint32_t>(shift)) << 32;
}

// ops[i + period] is ops[i] `shift` micro-batches later.
[[gnu::always_inline]] inline bool repeats(const ScheduleOp* ops, std::size_t i, std::size_t period, std::int32_t shift) {
  return word_of(ops[i + period]) - word_of(ops[i]) == shift_word(shift);
}

// Whether ops[i + k + period] repeats ops[i + k] for k in [0, kBlock): the walks below go a
// block at a time (then op by op in the block that ends the run), the differences of the words
// OR-ed so that the compiler keeps them in vector registers.
constexpr std::size_t kBlock = 16;
// Ops compared at a time in the search for the period (find_steady_period).
constexpr std::size_t kCompared = 64;
[[gnu::always_inline]] inline bool block_repeats(const ScheduleOp* ops, std::size_t i, std::size_t period, std::int32_t shift) {
  const std::uint64_t want = shift_word(shift);
  std::uint64_t differ = 0;
  for (std::size_t k = 0; k < kBlock; ++k) differ |= word_of(ops[i + k + period]) - word_of(ops[i + k]) - want;
  return differ == 0;
}

// The run of ops that repeat (ops[i + period] is ops[i] `shift` micro-batches later) through
// ops[mid], widened both ways as far as [first, end) allows: [b, e) with e + period <= end.
// [b, e) repeating already: widen_from(..., mid, mid, ...).
std::pair<std::size_t, std::size_t> widen_from(const ScheduleOp* ops, std::size_t first, std::size_t end, std::size_t b,
                                               std::size_t e, std::size_t period, std::int32_t shift) {
  while (b >= first + kBlock && block_repeats(ops, b - kBlock, period, shift)) b -= kBlock;
  while (b > first && repeats(ops, b - 1, period, shift)) --b;
  while (e + period + kBlock <= end && block_repeats(ops, e, period, shift)) e += kBlock;
  while (e + period < end && repeats(ops, e, period, shift)) ++e;
  return {b, e};
}
std::pair<std::size_t, std::size_t> widen(const ScheduleOp* ops, std::size_t first, std::size_t end, std::size_t mid,
                                          std::size_t period, std::int32_t shift) {
  return widen_from(ops, first, end, mid, mid, period, shift);
}

}  // namespace

std::optional<SteadyPeriod> find_steady_period(const ScheduleTable& t, const std::vector<std::size_t>& first,
                                               const std::vector<std::size_t>& end, TableKnown known,
                                               std::size_t ops_per_micro_batch) {
  return find_steady_period(t, ScheduleRows(t), first, end, known, ops_per_micro_batch);
}

std::optional<SteadyPeriod> find_steady_period(const ScheduleTable& t, const ScheduleRows& rows,
                                               const std::vector<std::size_t>& first, const std::vector<std::size_t>& end,
                                               TableKnown known, std::size_t ops_per_micro_batch) {
  const auto p = static_cast<std::size_t>(t.p);
  if (t.m < 8 || rows.ranks() != p || first.size() != p || end.size() != p) return std::nullopt;
  // Ops per micro-batch on each rank (of each pipeline: DualPipe's two take m/2 each), and the
  // shortest room any rank has.
  const auto micro_batches = static_cast<std::size_t>(two_pipelines(t.kind) ? t.m / 2 : t.m);
  std::vector<std::size_t> per_micro_batch(p);
  std::size_t room_per_micro_batch = SIZE_MAX;
  for (std::size_t r = 0; r < p; ++r) {
    const std::size_t n = rows.size(r);
    if (n == 0 || micro_batches == 0 || n % micro_batches != 0 || end[r] > n || first[r] >= end[r]) return std::nullopt;
    per_micro_batch[r] = ops_per_micro_batch > 0 ? ops_per_micro_batch : n / micro_batches;
    room_per_micro_batch = std::min(room_per_micro_batch, (end[r] - first[r]) / per_micro_batch[r]);
  }
  // Three periods at least (the warm-up and the cool-down take the rest): the search below
  // tries shifts up to a third of the room.
  const auto max_shift = static_cast<std::int32_t>(room_per_micro_batch / 3);
  if (max_shift < 1) return std::nullopt;

  SteadyPeriod out;
  out.ops.resize(p);
  // The smallest shift whose period holds for one whole period in the middle of every rank's room.
  for (std::int32_t shift = 1; shift <= max_shift && out.micro_batches == 0; ++shift) {
    bool all = true;
    for (std::size_t r = 0; r < p && all; ++r) {
      const std::size_t period = per_micro_batch[r] * static_cast<std::size_t>(shift);
      const std::size_t mid = first[r] + (end[r] - first[r] - period) / 2;
      // make_schedule's run says so already (every op of it repeats a period on).
      const RepeatingOps* run = known == TableKnown::generated && r < t.repeating.size() ? &t.repeating[r] : nullptr;
      if (run != nullptr && run->micro_batches == shift && run->period == period && run->begin <= mid &&
          mid + period <= run->end) {
        continue;
      }
      // A block at a time from copies: a sparse table derives the ops it left out
      // (ScheduleRows::read). The first block short: a wrong shift fails at its first ops.
      std::array<ScheduleOp, kCompared> now, later;
      for (std::size_t i = mid; i < mid + period && all;) {
        const std::size_t k = std::min(i == mid ? kCompared / 8 : kCompared, mid + period - i);
        rows.read(r, i, i + k, now.data());
        rows.read(r, i + period, i + period + k, later.data());
        for (std::size_t j = 0; j < k && all; ++j) all = word_of(later[j]) - word_of(now[j]) == shift_word(shift);
        i += k;
      }
    }
    if (all) out.micro_batches = shift;
  }
  if (out.micro_batches == 0) return std::nullopt;

  out.begin.resize(p);
  out.copies_end.resize(p);
  std::vector<std::int32_t> scratch;
  for (std::size_t r = 0; r < p; ++r) {
    const ScheduleOp* ops = rows.data(r);
    const std::size_t period = per_micro_batch[r] * static_cast<std::size_t>(out.micro_batches);
    out.ops[r] = period;
    // The run of repeating ops through the middle, widened both ways to first and end.
    const std::size_t mid = first[r] + (end[r] - first[r] - period) / 2;
    std::size_t b = mid, e = mid;
    const RepeatingOps* run = known == TableKnown::generated && r < t.repeating.size() ? &t.repeating[r] : nullptr;
    if (run != nullptr && run->micro_batches == out.micro_batches && run->period == period && run->begin <= mid &&
        mid < run->end) {
      // make_schedule's run holds mid: the walk below would stop where that run ends, or at
      // first and end (a 64 x 4 x 1024 interleaved table is 6 MB, out of cache by now).
      b = std::max(run->begin, first[r]);
      e = std::min(run->end, end[r] - period);
    } else if (rows.sparse()) {
      return std::nullopt;  // its middle is not written: the walk needs make_schedule's run
    } else {
      std::tie(b, e) = widen(ops, first[r], end[r], mid, period, out.micro_batches);
    }
    out.begin[r] = b;
    out.copies_end[r] = e;
    // No room to compare two cuts a period apart and skip a period (the first cut at the run's
    // start or half a period in: DedicatedRun::kSkipMinPeriods).
    if (2 * (e - b) < 3 * period) return std::nullopt;
    if (known == TableKnown::nothing && !micro_batches_in_order(t, rows, static_cast<std::int32_t>(r), scratch)) return std::nullopt;
  }
  return out;
}

RepeatingOps repeating_run(const std::vector<ScheduleOp>& list, std::size_t period, std::int32_t micro_batches) {
  return repeating_run(list.data(), list.size(), period, micro_batches);
}

RepeatingOps repeating_run(const ScheduleOp* ops, std::size_t n, std::size_t period, std::int32_t micro_batches) {
  if (period == 0 || n <= period) return {};
  const std::size_t mid = (n - period) / 2;
  if (!repeats(ops, mid, period, micro_batches)) return {};
  const auto [b, e] = widen(ops, 0, n, mid, period, micro_batches);
  return RepeatingOps{micro_batches, period, b, e};
}

RepeatingOps repeating_run_around(const ScheduleOp* ops, std::size_t n, std::size_t period, std::int32_t micro_batches,
                                  std::size_t known_begin, std::size_t known_end) {
  if (period == 0 || n <= period) return {};
  const std::size_t mid = (n - period) / 2;
  if (mid < known_begin || mid >= known_end || known_end + period > n) return {};
  const auto [b, e] = widen_from(ops, 0, n, known_begin, known_end, period, micro_batches);
  return RepeatingOps{micro_batches, period, b, e};
}

std::optional<SteadyPeriod> SteadyPeriods::find(const ScheduleTable& table, const std::vector<std::size_t>& first,
                                                const std::vector<std::size_t>& end, TableKnown known,
                                                std::size_t ops_per_micro_batch) {
  return find(table, ScheduleRows(table), first, end, known, ops_per_micro_batch);
}

std::optional<SteadyPeriod> SteadyPeriods::find(const ScheduleTable& table, const ScheduleRows& rows,
                                                const std::vector<std::size_t>& first, const std::vector<std::size_t>& end,
                                                TableKnown known, std::size_t ops_per_micro_batch) {
  const std::lock_guard lock(mutex_);
  for (const Found& f : found_) {
    if (f.first == first && f.end == end && f.known == known && f.ops_per_micro_batch == ops_per_micro_batch) {
      return f.period;
    }
  }
  auto period = find_steady_period(table, rows, first, end, known, ops_per_micro_batch);
  found_.push_back({first, end, known, ops_per_micro_batch, period});
  return period;
}

std::int64_t comparison_cycles(const std::int64_t* before, const std::int64_t* now, std::size_t n) {
  std::int64_t cycles = INT64_MAX;
  for (std::size_t k = 0; k < n; ++k) {
    const std::int64_t a = before[k], b = now[k];
    // Most comparisons are between times that move on alike (or made by neither period): the
    // same value, the same side for ever.
    if (a == b) continue;
    if (a == kNoComparison || b == kNoComparison) return 0;
    // Another side: signs that differ, or zero on one side only.
    if ((a < 0) != (b < 0) || a == 0 || b == 0) return 0;
    const std::int64_t slope = b - a;
    // Moving towards the other side: it keeps this one for |b| / |slope| more periods.
    if ((b > 0) == (slope < 0)) cycles = std::min(cycles, (b > 0 ? b : -b) / (slope > 0 ? slope : -slope));
  }
  return cycles;
}

}  // namespace plansight::estimator
