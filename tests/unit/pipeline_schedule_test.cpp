// Pipeline schedule tables: coverage and local order for every kind over a grid of (p, v, m),
// op orders checked against hand-derived and Megatron-LM documented examples, the in-flight walk
// against its closed forms (1F1B, GPipe, Korthikanti's interleaved factor, ZB-H1), error fields.
#include "plansight/estimator/pipeline_schedule.h"

#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

namespace plansight::estimator {
namespace {

struct Case {
  PipelineSchedule kind;
  std::int64_t p, v, m;
};

std::vector<Case> valid_cases() {
  std::vector<Case> cases;
  for (std::int64_t p : {1, 2, 3, 4, 8}) {
    for (std::int64_t m : {1, 2, 3, 4, 7, 8, 16}) {
      cases.push_back({PipelineSchedule::gpipe, p, 1, m});
      cases.push_back({PipelineSchedule::one_f_one_b, p, 1, m});
      cases.push_back({PipelineSchedule::zb_h1, p, 1, m});
    }
  }
  for (std::int64_t p : {2, 4, 8}) {
    for (std::int64_t v : {2, 3, 4}) {
      for (std::int64_t k : {1, 2, 3})
        cases.push_back({PipelineSchedule::interleaved, p, v, k * p});
    }
  }
  return cases;
}

// "F0.1 B0.0 ..." (kind, chunk, micro-batch) for readable expectations.
std::string render(const std::vector<ScheduleOp>& ops) {
  std::string out;
  for (const auto& o : ops) {
    if (!out.empty()) out += ' ';
    out += op_letter(o.kind) + std::to_string(o.chunk) + "." + std::to_string(o.micro_batch);
  }
  return out;
}

TEST(PipelineSchedule, EveryRankCoversEveryChunkMicroBatchOnceInLocalOrder) {
  for (const Case& c : valid_cases()) {
    SCOPED_TRACE(std::string(to_string(c.kind)) + " p=" + std::to_string(c.p) +
                 " v=" + std::to_string(c.v) + " m=" + std::to_string(c.m));
    auto table = make_schedule(c.kind, c.p, c.v, c.m);
    ASSERT_TRUE(table.ok()) << table.error_text();
    EXPECT_EQ(table->split_backward, c.kind == PipelineSchedule::zb_h1);
    EXPECT_TRUE(check_schedule(*table).empty()) << join_messages(check_schedule(*table));
    const std::size_t kinds = table->split_backward ? 3 : 2;
    for (const auto& ops : table->ranks) EXPECT_EQ(ops.size(), kinds * c.v * c.m);
  }
}

TEST(PipelineSchedule, OneFOneBOrderIsWarmupSteadyDrain) {
  // Narayanan et al. 2021, Fig. 4 (top): rank 0 of 4 warms up with p-1 = 3 forwards.
  auto t = make_schedule(PipelineSchedule::one_f_one_b, 4, 1, 6);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(render(t->ranks[0]), "F0.0 F0.1 F0.2 F0.3 B0.0 F0.4 B0.1 F0.5 B0.2 B0.3 B0.4 B0.5");
  EXPECT_EQ(render(t->ranks[3]), "F0.0 B0.0 F0.1 B0.1 F0.2 B0.2 F0.3 B0.3 F0.4 B0.4 F0.5 B0.5");
  auto g = make_schedule(PipelineSchedule::gpipe, 2, 1, 3);
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(render(g->ranks[1]), "F0.0 F0.1 F0.2 B0.0 B0.1 B0.2");
}

// A table of 65,536 ops or more is made on two threads, half the ranks each: every rank of a
// 64-stage 1F1B table of 131,072 ops follows the order, the ranks both threads made alike, and
// long tables of three schedules are those the caller's thread makes alone.
TEST(PipelineSchedule, ALongTableMadeOnTwoThreadsFollowsTheOrderOnEveryRank) {
  const std::int32_t p = 64, m = 1024;
  auto t = make_schedule(PipelineSchedule::one_f_one_b, p, 1, m);
  ASSERT_TRUE(t.ok());
  EXPECT_TRUE(check_schedule(*t).empty());
  for (std::int32_t r = 0; r < p; ++r) {
    SCOPED_TRACE("rank " + std::to_string(r));
    const auto& ops = t->ranks[static_cast<std::size_t>(r)];
    ASSERT_EQ(ops.size(), 2u * m);
    // p-r-1 warm-up forwards, then forward warm-up+k and backward k, then the drain.
    const std::int32_t warmup = p - r - 1;
    std::size_t i = 0;
    for (std::int32_t k = 0; k < warmup; ++k, ++i) EXPECT_EQ(render({ops[i]}), "F0." + std::to_string(k));
    for (std::int32_t k = 0; k < m - warmup; ++k, i += 2) {
      EXPECT_EQ(render({ops[i], ops[i + 1]}), "F0." + std::to_string(k + warmup) + " B0." + std::to_string(k));
    }
    for (std::int32_t k = m - warmup; k < m; ++k, ++i) EXPECT_EQ(render({ops[i]}), "B0." + std::to_string(k));
  }
  // The same table on the caller's thread alone (the layout search's choice).
  ScheduleOptions one_thread;
  one_thread.two_threads = false;
  for (const auto kind : {PipelineSchedule::one_f_one_b, PipelineSchedule::interleaved, PipelineSchedule::dualpipev}) {
    const std::int32_t v = kind == PipelineSchedule::interleaved ? 4 : kind == PipelineSchedule::dualpipev ? 2 : 1;
    auto a = make_schedule(kind, p, v, m);
    auto b = make_schedule(kind, p, v, m, one_thread);
    ASSERT_TRUE(a.ok() && b.ok());
    for (std::size_t r = 0; r < static_cast<std::size_t>(p); ++r) EXPECT_EQ(render(a->ranks[r]), render(b->ranks[r]));
  }
}

TEST(PipelineSchedule, InterleavedForwardOrderMatchesMegatronDocExamples) {
  // megatron/core/model_parallel_config.py, microbatch_group_size_per_vp_stage docstring:
  // PP=2 VP=2, group 2, m=4: "0 1 0 1 2 3 2 3"; group 3, m=5: "0 1 2 0 1 2 3 4 3 4".
  auto forwards = [](const ScheduleTable& t, std::int32_t r) {
    std::string out;
    for (const auto& o : t.ranks[static_cast<std::size_t>(r)]) {
      if (o.kind == OpKind::forward) out += std::to_string(o.micro_batch);
    }
    return out;
  };
  auto a = make_schedule(PipelineSchedule::interleaved, 2, 2, 4);
  ASSERT_TRUE(a.ok()) << a.error_text();
  EXPECT_EQ(forwards(*a, 0), "01012323");
  EXPECT_EQ(forwards(*a, 1), "01012323");
  auto b = make_schedule(PipelineSchedule::interleaved, 2, 2, 5, ScheduleOptions{3});
  ASSERT_TRUE(b.ok()) << b.error_text();
  EXPECT_EQ(forwards(*b, 0), "0120123434");
  // Rank 0 of p=2, v=2, m=4: warm-up (p-r-1)*2 + (v-1)*p = 4 forwards, then F/B pairs; backward
  // k runs chunk v-1-c of forward k's (micro-batch, chunk).
  EXPECT_EQ(render(a->ranks[0]),
            "F0.0 F0.1 F1.0 F1.1 F0.2 B1.0 F0.3 B1.1 F1.2 B0.0 F1.3 B0.1 B1.2 B1.3 B0.2 B0.3");
  // The last rank warms up with (v-1)*p = 2 forwards.
  EXPECT_EQ(render(a->ranks[1]),
            "F0.0 F0.1 F1.0 B1.0 F1.1 B1.1 F0.2 B0.0 F0.3 B0.1 F1.2 B1.2 F1.3 B1.3 B0.2 B0.3");
}

TEST(PipelineSchedule, ZbH1DefersRWeightGradsOnRankR) {
  // Qi et al. 2023, Sec. 2.1: the last rank delays its first W until p micro-batches are in
  // flight; rank 0 behaves like 1F1B with W right after B.
  auto t = make_schedule(PipelineSchedule::zb_h1, 3, 1, 4);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(render(t->ranks[0]), "F0.0 F0.1 F0.2 B0.0 W0.0 F0.3 B0.1 W0.1 B0.2 W0.2 B0.3 W0.3");
  EXPECT_EQ(render(t->ranks[2]), "F0.0 B0.0 F0.1 B0.1 F0.2 B0.2 W0.0 F0.3 B0.3 W0.1 W0.2 W0.3");
}

TEST(PipelineSchedule, InFlightPeaksFollowTheClosedForms) {
  for (std::int64_t p : {1, 2, 4, 8}) {
    for (std::int64_t m : {1, 3, 4, 8, 16}) {
      SCOPED_TRACE("p=" + std::to_string(p) + " m=" + std::to_string(m));
      const auto f1b = peak_in_flight(*make_schedule(PipelineSchedule::one_f_one_b, p, 1, m));
      const auto gp = peak_in_flight(*make_schedule(PipelineSchedule::gpipe, p, 1, m));
      const auto zb = peak_in_flight(*make_schedule(PipelineSchedule::zb_h1, p, 1, m));
      for (std::int64_t r = 0; r < p; ++r) {
        const auto i = static_cast<std::size_t>(r);
        EXPECT_EQ(f1b[i], std::min(p - r, m)) << "1F1B rank " << r;
        EXPECT_EQ(gp[i], m) << "GPipe rank " << r;
        // ZB-H1 holds 1F1B's rank-0 peak on every rank (Qi et al. 2023, Sec. 2.1).
        EXPECT_EQ(zb[i], std::min(p, m)) << "ZB-H1 rank " << r;
      }
    }
  }
}

TEST(PipelineSchedule, InterleavedRankZeroMatchesKorthikantiFactor) {
  // Rank 0 holds v*p + p - 1 chunk-micro-batches, each 1/v of a stage: in stage units
  // p * (1 + (p-1)/(p*v)) (Korthikanti et al. 2022, Sec. 4, pipeline parallelism).
  for (std::int64_t p : {2, 4, 8}) {
    for (std::int64_t v : {2, 3, 4}) {
      const std::int64_t m = 4 * p;
      const auto peaks = peak_in_flight(*make_schedule(PipelineSchedule::interleaved, p, v, m));
      SCOPED_TRACE("p=" + std::to_string(p) + " v=" + std::to_string(v));
      EXPECT_EQ(peaks[0], v * p + p - 1);
      const double stages = static_cast<double>(peaks[0]) / static_cast<double>(v);
      EXPECT_DOUBLE_EQ(stages / static_cast<double>(p),
                       1.0 + static_cast<double>(p - 1) / static_cast<double>(p * v));
      // Later ranks warm up 2 forwards less per rank (Megatron's warm-up count), capped at m*v.
      for (std::int64_t r = 0; r < p; ++r) {
        EXPECT_EQ(peaks[static_cast<std::size_t>(r)],
                  std::min((p - r - 1) * 2 + (v - 1) * p + 1, v * m));
      }
    }
  }
}

std::string first_field(const Result<ScheduleTable>& r) {
  return r.ok() || r.errors().empty() ? "" : r.errors().front().field;
}

TEST(PipelineSchedule, ImpossibleCombinationsNameTheField) {
  using PS = PipelineSchedule;
  EXPECT_EQ(first_field(make_schedule(PS::interleaved, 4, 1, 8)), "layout.vpp");
  EXPECT_EQ(first_field(make_schedule(PS::interleaved, 1, 2, 8)), "layout.pp");
  EXPECT_EQ(first_field(make_schedule(PS::interleaved, 4, 2, 6)), "training.global_batch");
  EXPECT_EQ(first_field(make_schedule(PS::interleaved, 4, 2, 2)), "training.global_batch");
  EXPECT_EQ(first_field(make_schedule(PS::one_f_one_b, 4, 2, 8)), "layout.vpp");
  EXPECT_EQ(first_field(make_schedule(PS::zb_h1, 4, 2, 8)), "layout.vpp");
  EXPECT_EQ(first_field(make_schedule(PS::gpipe, 0, 1, 8)), "layout.pp");
  EXPECT_EQ(first_field(make_schedule(PS::gpipe, 2, 1, 0)), "training.global_batch");
  // Megatron's tunable group: m % group must be 0 or >= p (here 7 % 4 = 3 >= 2 is fine, 9 % 4 = 1
  // is not).
  EXPECT_TRUE(make_schedule(PS::interleaved, 2, 2, 7, ScheduleOptions{4}).ok());
  EXPECT_EQ(first_field(make_schedule(PS::interleaved, 2, 2, 9, ScheduleOptions{4})),
            "training.global_batch");
  const auto bad = make_schedule(PS::interleaved, 4, 2, 6);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error_text().find("m = 6"), std::string::npos) << bad.error_text();
  EXPECT_NE(bad.error_text().find("multiple of 4"), std::string::npos) << bad.error_text();
  LayoutSpec layout;
  layout.pp = 4;
  layout.vpp = 2;
  layout.schedule = PS::interleaved;
  EXPECT_TRUE(make_schedule(layout, 8).ok());
  // An op holds its chunk in two bytes: more chunks per rank are refused, not wrapped.
  const auto too_many = make_schedule(PS::interleaved, 2, kMaxChunksPerRank + 1, 2);
  EXPECT_EQ(first_field(too_many), "layout.vpp");
  EXPECT_NE(too_many.error_text().find("vpp = 32768; at most 32767"), std::string::npos) << too_many.error_text();
  EXPECT_TRUE(make_schedule(PS::interleaved, 2, kMaxChunksPerRank, 2).ok());
}

TEST(PipelineSchedule, CheckScheduleFindsBrokenTables) {
  auto t = *make_schedule(PipelineSchedule::one_f_one_b, 2, 1, 2);
  auto swapped = t;  // B before its F on rank 1
  std::swap(swapped.ranks[1][0], swapped.ranks[1][1]);
  auto errors = check_schedule(swapped);
  ASSERT_FALSE(errors.empty());
  EXPECT_EQ(errors.front().field, "schedule.ranks[1]");
  EXPECT_NE(errors.front().message.find("before its F"), std::string::npos);

  auto duplicated = t;
  duplicated.ranks[0][1] = duplicated.ranks[0][0];
  errors = check_schedule(duplicated);
  ASSERT_GE(errors.size(), 2u);  // F0.0 twice, F0.1 missing
  EXPECT_NE(join_messages(errors).find("twice"), std::string::npos);
  EXPECT_NE(join_messages(errors).find("missing"), std::string::npos);

  auto stray_w = t;
  stray_w.ranks[0].push_back(ScheduleOp{OpKind::weight_grad, 0, 0});
  EXPECT_FALSE(check_schedule(stray_w).empty());

  auto too_many_chunks = t;
  too_many_chunks.v = static_cast<std::int32_t>(kMaxChunksPerRank) + 1;
  errors = check_schedule(too_many_chunks);
  ASSERT_FALSE(errors.empty());
  EXPECT_EQ(errors.front().field, "schedule");
  EXPECT_NE(errors.front().message.find("v <= 32767"), std::string::npos) << errors.front().message;
}

}  // namespace
}  // namespace plansight::estimator

namespace plansight::estimator {
namespace {

// The simulator trusts two things of every generated table (run_simulation): each (rank, chunk,
// kind) runs its micro-batches in order, from its pipeline's first (DualPipe's second pipeline
// starts at m/2) without a gap, for the steady state's skip; and only DualPipe(V) pair ops
// (ScheduleOp::pairs_with_next), for the op loop that leaves the pair's check out elsewhere.
TEST(PipelineSchedule, EveryGeneratorRunsEachChunksMicroBatchesInOrder) {
  std::vector<std::pair<Case, std::int32_t>> cases;  // with Megatron's micro-batch group (0: p)
  for (const Case& c : valid_cases()) cases.push_back({c, 0});
  cases.push_back({{PipelineSchedule::interleaved, 4, 2, 30}, 6});
  cases.push_back({{PipelineSchedule::interleaved, 8, 4, 72}, 9});
  cases.push_back({{PipelineSchedule::dualpipev, 5, 2, 23}, 0});
  cases.push_back({{PipelineSchedule::dualpipe, 6, 2, 26}, 0});
  for (const auto& [c, group] : cases) {
    SCOPED_TRACE(std::string(to_string(c.kind)) + " p=" + std::to_string(c.p) + " m=" + std::to_string(c.m));
    ScheduleOptions options;
    options.microbatch_group = group;
    auto t = make_schedule(c.kind, c.p, c.v, c.m, options);
    ASSERT_TRUE(t.ok()) << t.error_text();
    for (std::int32_t r = 0; r < t->p; ++r) {
      std::vector<std::int32_t> next(static_cast<std::size_t>(t->v) * 3, -1);
      for (const ScheduleOp& o : t->ranks[static_cast<std::size_t>(r)]) {
        auto& n = next[static_cast<std::size_t>(o.chunk) * 3 + static_cast<std::size_t>(o.kind)];
        const std::int32_t first = two_pipelines(c.kind) && o.chunk == 1 ? t->m / 2 : 0;
        EXPECT_EQ(o.micro_batch, n < 0 ? first : n + 1) << "rank " << r << " " << op_letter(o.kind) << o.chunk;
        if (!t->v_shape()) {
          EXPECT_FALSE(o.pairs_with_next) << "rank " << r << " " << op_letter(o.kind) << o.chunk;
        }
        n = o.micro_batch;
      }
    }
  }
}

}  // namespace
}  // namespace plansight::estimator
