// A process's part of a run spread over processes (process_parts.h): the timeline its GPU
// measured arrives on the writer's names and clock, each kernel still with its operator.
#include <gtest/gtest.h>

#include "probe_config.h"
#include "process_parts.h"
#include "rank_worker.h"

namespace plansight::probe {
namespace {

namespace est = plansight::estimator;

// The other process's names are in another order than the writer's: every name index, the
// operators' among them, is looked up again; unnamed spans and spans without an operator stay
// so; the clock offset moves every span.
TEST(ProcessParts, DeviceTimelineArrivesOnTheWritersNamesWithItsOperators) {
  ProbeConfig cfg;
  RunState state(cfg, false, nullptr);
  est::Timeline theirs;
  est::Span kernel;
  kernel.start_ns = 1'000;
  kernel.duration_ns = 50;
  kernel.name_id = theirs.intern("nvjet_sm90_tst_64x128");
  kernel.operator_id = theirs.intern("fc2");
  est::Span unnamed;
  unnamed.start_ns = 1'100;
  unnamed.duration_ns = 5;
  theirs.tracks.push_back({1, est::Lane::compute, 0, "rank 1 compute", {kernel, unnamed}});
  const std::string part = encode_process_part(state, {}, &theirs);

  est::Timeline mine;
  mine.intern("fc2");  // the writer's own names, in another order
  mine.intern("qkv");
  auto merged = merge_process_part(state, part, 400, &mine);
  ASSERT_TRUE(merged.ok()) << merged.error_text();
  ASSERT_EQ(mine.tracks.size(), 1u);
  const auto& spans = mine.tracks[0].spans;
  ASSERT_EQ(spans.size(), 2u);
  EXPECT_EQ(mine.name_of(spans[0]), "nvjet_sm90_tst_64x128");
  EXPECT_EQ(mine.operator_of(spans[0]), "fc2");
  EXPECT_EQ(spans[0].operator_id, 0);
  EXPECT_EQ(spans[0].start_ns, 600);
  EXPECT_EQ(spans[1].name_id, -1);
  EXPECT_EQ(spans[1].operator_id, -1);
}

}  // namespace
}  // namespace plansight::probe
