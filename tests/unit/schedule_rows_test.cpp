// Sparse schedule tables (schedule_rows.h): every op, written when the table is made or on
// demand, is make_schedule's; their runs of the steady state are make_schedule's; and a
// simulation of a sparse table gives every figure of the whole table's, skipping alike.
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <string>
#include <thread>
#include <tuple>

#include "plansight/estimator/pipeline_schedule.h"
#include "plansight/estimator/pipeline_simulator.h"
#include "drawn_costs.h"
#include "schedule_rows.h"
#include "simulation_costs.h"
#include "steady_state.h"

namespace plansight::estimator {
namespace {

struct Case {
  PipelineSchedule kind;
  std::int64_t p, v, m, group;
};

std::string name(const Case& c) {
  return std::string(to_string(c.kind)) + " p=" + std::to_string(c.p) + " v=" + std::to_string(c.v) +
         " m=" + std::to_string(c.m) + " group=" + std::to_string(c.group);
}

// Every kind a sparse table is made for, over ranks, micro-batches at and above where the
// simulation skips (skippable: m >= 32 + 3p), and interleaved groups that do and do not divide m.
std::vector<Case> cases() {
  std::vector<Case> out;
  for (std::int64_t p : {2, 3, 4, 8, 16}) {
    for (std::int64_t m : {32 + 3 * p, 40 + 3 * p, 4 * (32 + 3 * p), 97 + 5 * p}) {
      out.push_back({PipelineSchedule::one_f_one_b, p, 1, m, 0});
      out.push_back({PipelineSchedule::zb_h1, p, 1, m, 0});
      if (m >= 2 * p) out.push_back({PipelineSchedule::dualpipev, p, 2, m, 0});
      for (std::int64_t v : {2, 3}) {
        for (std::int64_t group : {p, 2 * p}) {
          const std::int64_t rounded = (m + group - 1) / group * group;
          out.push_back({PipelineSchedule::interleaved, p, v, rounded, group});
          // The last group partial (m % group >= p): no middle is left out, the table stays whole.
          if (group > p) out.push_back({PipelineSchedule::interleaved, p, v, rounded - p, group});
        }
      }
    }
  }
  return out;
}

ScheduleOptions options_of(const Case& c) {
  ScheduleOptions o;
  o.microbatch_group = static_cast<std::int32_t>(c.group);
  return o;
}

TEST(ScheduleRows, EveryOpOfASparseTableIsMakeSchedules) {
  int sparse = 0;
  for (const Case& c : cases()) {
    SCOPED_TRACE(name(c));
    const auto whole = make_schedule(c.kind, c.p, c.v, c.m, options_of(c));
    const auto made = make_simulation_table(c.kind, c.p, c.v, c.m, options_of(c), true);
    ASSERT_TRUE(whole.ok() && made.ok()) << whole.error_text() << made.error_text();
    const ScheduleRows& rows = made->rows;
    sparse += rows.sparse() ? 1 : 0;
    EXPECT_EQ(made->table.repeating, whole->repeating);
    ASSERT_EQ(rows.ranks(), static_cast<std::size_t>(c.p));
    for (std::size_t r = 0; r < rows.ranks(); ++r) {
      const auto& list = whole->ranks[r];
      ASSERT_EQ(rows.size(r), list.size());
      for (std::size_t i = 0; i < list.size(); ++i) ASSERT_EQ(rows.at(r, i), list[i]) << "rank " << r << " op " << i;
      // read(): any range, across the ops written and left out, clipped at the end.
      for (std::size_t from = 0; from < list.size(); from += list.size() / 7 + 1) {
        const std::size_t to = from + list.size() / 3 + 5;
        std::vector<ScheduleOp> copy(to - from);
        rows.read(r, from, to, copy.data());
        for (std::size_t i = from; i < std::min(to, list.size()); ++i) ASSERT_EQ(copy[i - from], list[i]) << "op " << i;
      }
      // Written in pieces, in any order, as runs ask for them; then all of it.
      const std::size_t n = list.size();
      for (const auto& [from, to] : {std::pair{n / 2, n / 2 + 7}, std::pair{n / 3, n / 2 + 3}, std::pair{std::size_t{0}, n / 4},
                                     std::pair{n - 5, n + 9}, std::pair{n / 5, n / 5}}) {
        rows.ensure(r, from, to);
        for (std::size_t i = from; i < std::min(to, n); ++i) ASSERT_EQ(rows.data(r)[i], list[i]) << "rank " << r << " op " << i;
      }
      rows.ensure(r, 0, n);
      for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(rows.data(r)[i], list[i]) << "rank " << r << " op " << i;
      // The micro-batch bounds (ensure_times sets up the pair times they name): no op of [0, to)
      // runs a micro-batch at or past micro_batch_end(r, to), none of [from, n) one below
      // micro_batch_begin(r, from).
      std::int32_t below = INT32_MIN;
      std::vector<std::int32_t> least_from(n + 1, INT32_MAX);
      for (std::size_t i = n; i-- > 0;) least_from[i] = std::min(least_from[i + 1], list[i].micro_batch);
      for (std::size_t to = 1; to <= n; ++to) {
        below = std::max(below, list[to - 1].micro_batch);
        if (to % 7 != 0 && to != n) continue;
        ASSERT_GT(rows.micro_batch_end(r, to), below) << "rank " << r << " ops [0, " << to << ")";
        ASSERT_LE(rows.micro_batch_begin(r, to - 1), least_from[to - 1]) << "rank " << r << " ops from " << to - 1;
      }
      // The chunks' first and last ops the table's maker found, as a walk of the whole list finds them.
      if (const ScheduleRows::ChunkOps* known = rows.chunk_ops(); known != nullptr) {
        const auto v = static_cast<std::size_t>(c.v);
        std::vector<std::int64_t> first_f(v, -1), first_b(v, -1), last_bwd(v, -1);
        find_chunk_ops([&](std::size_t i) { return list[i]; }, n, v, first_f.data(), first_b.data(), last_bwd.data());
        for (std::size_t k = 0; k < v; ++k) {
          EXPECT_EQ(known->first_f[r * v + k], first_f[k]) << "rank " << r << " chunk " << k;
          EXPECT_EQ(known->first_b[r * v + k], first_b[k]) << "rank " << r << " chunk " << k;
          EXPECT_EQ(known->last_bwd[r * v + k], last_bwd[k]) << "rank " << r << " chunk " << k;
        }
      }
    }
  }
  // The cases whose steady loops leave out at least ArraySink::kMinLeftOut ops (256) are sparse.
  EXPECT_GT(sparse, 60);
}

// A sparse table made after one freed on the same thread writes into the freed one's memory (no
// fresh pages to fault in), and a block left over from a larger table holds none of its ops.
TEST(ScheduleRows, ATableTakesTheMemoryOfTheLastOneFreedOnItsThread) {
  const ScheduleOp* first_block = nullptr;
  {
    const auto big = make_simulation_table(PipelineSchedule::interleaved, 16, 4, 512, ScheduleOptions{}, true);
    ASSERT_TRUE(big.ok()) << big.error_text();
    ASSERT_TRUE(big->rows.sparse());
    first_block = big->rows.data(0);
  }
  for (const auto& [kind, v, m] : {std::tuple{PipelineSchedule::one_f_one_b, 1, 300}, std::tuple{PipelineSchedule::zb_h1, 1, 256},
                                    std::tuple{PipelineSchedule::dualpipev, 2, 200}}) {
    SCOPED_TRACE(to_string(kind));
    const auto whole = make_schedule(kind, 16, v, m);
    const auto made = make_simulation_table(kind, 16, v, m, ScheduleOptions{}, true);
    ASSERT_TRUE(whole.ok() && made.ok()) << whole.error_text() << made.error_text();
    ASSERT_TRUE(made->rows.sparse());
    EXPECT_EQ(made->rows.data(0), first_block);
    for (std::size_t r = 0; r < 16; ++r) {
      const std::size_t n = whole->ranks[r].size();
      made->rows.ensure(r, 0, n);
      for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(made->rows.data(r)[i], whole->ranks[r][i]) << "rank " << r << " op " << i;
    }
  }
}

TEST(ScheduleRows, WholeTablesWhereSparseCannotPay) {
  // GPipe has no steady loop; too few micro-batches to skip; DualPipe's whole table.
  for (const Case& c : {Case{PipelineSchedule::gpipe, 8, 1, 256, 0}, Case{PipelineSchedule::one_f_one_b, 8, 1, 40, 0},
                        Case{PipelineSchedule::dualpipe, 8, 2, 256, 0}}) {
    SCOPED_TRACE(name(c));
    const auto made = make_simulation_table(c.kind, c.p, c.v, c.m, options_of(c), true);
    ASSERT_TRUE(made.ok());
    EXPECT_FALSE(made->rows.sparse());
    EXPECT_EQ(made->table.ranks.size(), static_cast<std::size_t>(c.p));
  }
  const auto big = make_simulation_table(PipelineSchedule::interleaved, 64, 4, 1024, {}, true);
  ASSERT_TRUE(big.ok());
  EXPECT_TRUE(big->rows.sparse());
  EXPECT_TRUE(big->table.ranks[0].empty());  // its ops are in its rows only
  // Bad arguments are make_schedule's errors, named alike.
  const auto bad = make_simulation_table(PipelineSchedule::interleaved, 8, 2, 100, {}, true);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.errors()[0].field, "training.global_batch");
  const auto bad_half = make_dualpipe_lower_half_table(7, 256, {}, true);
  ASSERT_FALSE(bad_half.ok());
  EXPECT_EQ(bad_half.errors()[0].field, "layout.pp");
}

SimulationInput drawn_input(std::int64_t stages, std::uint32_t seed) {
  std::uint32_t x = seed * 2654435761u + 7;
  auto ms = [&](double lo, double hi) {
    x = x * 1664525u + 1013904223u;
    return (lo + (hi - lo) * static_cast<double>(x >> 8) / static_cast<double>(1u << 24)) * 1e-3;
  };
  SimulationInput in;
  for (std::int64_t s = 0; s < stages; ++s) in.chunks.push_back(test::drawn_chunk(ms, seed));
  test::draw_run_settings(in, ms, seed);
  in.keep_timeline = false;
  return in;
}

// The sparse table's run against the whole table's: the same figures, the same ops skipped.
TEST(ScheduleRows, ASparseTableSimulatesAsTheWholeTable) {
  int runs = 0, skipping = 0;
  for (const Case& c : cases()) {
    if (c.p > 8) continue;
    for (std::uint32_t seed = 0; seed < 3; ++seed) {
      SCOPED_TRACE(name(c) + " seed=" + std::to_string(seed));
      const SimulationInput in = drawn_input(c.p * c.v, seed);
      const auto whole = make_schedule(c.kind, c.p, c.v, c.m, options_of(c));
      const auto made = make_simulation_table(c.kind, c.p, c.v, c.m, options_of(c), true);
      ASSERT_TRUE(whole.ok() && made.ok());
      const auto a = simulate_well_formed(*whole, in);
      const auto b = simulate_well_formed(*made, in);
      ASSERT_TRUE(a.ok() && b.ok()) << a.error_text() << b.error_text();
      test::expect_same_figures(*b, *a);
      EXPECT_EQ(b->skipped_ops, a->skipped_ops);
      EXPECT_EQ(b->simulated_ops, a->simulated_ops);
      skipping += a->skipped_ops > 0 ? 1 : 0;
      ++runs;
    }
  }
  EXPECT_GT(skipping, runs / 2);  // the skip, which a sparse table is for, ran in most
}

// predict_time's two runs read one sparse table at once, from two threads (TSan checks the
// locking in its build); each gives the figures of its run alone.
TEST(ScheduleRows, TwoRunsOfOneSparseTableAtOnce) {
  for (const PipelineSchedule kind : {PipelineSchedule::interleaved, PipelineSchedule::dualpipev}) {
    const std::int64_t p = 8, v = 2, m = 256;
    const SimulationInput in = drawn_input(p * v, 5);
    SimulationInput free = in;
    for (auto& c : free.chunks) c.send_activation_seconds = c.send_gradient_seconds = 0;
    const auto whole = make_schedule(kind, p, v, m);
    const auto made = make_simulation_table(kind, p, v, m, {}, true);
    ASSERT_TRUE(whole.ok() && made.ok());
    ASSERT_TRUE(made->rows.sparse());
    std::optional<Result<SimulationResult>> side;
    std::thread other([&] { side.emplace(simulate_well_formed(*made, free)); });
    const auto here = simulate_well_formed(*made, in);
    other.join();
    ASSERT_TRUE(here.ok() && side->ok());
    test::expect_same_figures(*here, *simulate_well_formed(*whole, in));
    test::expect_same_figures(**side, *simulate_well_formed(*whole, free));
  }
}

// The steady state's search on a sparse table finds what it finds on the whole one.
TEST(ScheduleRows, TheSteadyPeriodOfASparseTableIsTheWholeTables) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(name(c));
    const auto whole = make_schedule(c.kind, c.p, c.v, c.m, options_of(c));
    const auto made = make_simulation_table(c.kind, c.p, c.v, c.m, options_of(c), true);
    ASSERT_TRUE(whole.ok() && made.ok());
    const std::vector<std::size_t> first(static_cast<std::size_t>(c.p), 1);
    std::vector<std::size_t> end(static_cast<std::size_t>(c.p));
    for (std::size_t r = 0; r < end.size(); ++r) end[r] = whole->ranks[r].size() - 1;
    const auto a = find_steady_period(*whole, first, end, TableKnown::generated);
    const auto b = find_steady_period(made->table, made->rows, first, end, TableKnown::generated, 0);
    ASSERT_EQ(a.has_value(), b.has_value());
    if (!a) continue;
    EXPECT_EQ(a->micro_batches, b->micro_batches);
    EXPECT_EQ(a->ops, b->ops);
    EXPECT_EQ(a->begin, b->begin);
    EXPECT_EQ(a->copies_end, b->copies_end);
  }
}

}  // namespace
}  // namespace plansight::estimator
