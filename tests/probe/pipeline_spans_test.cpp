// The pipeline's traced transfers after the grouping (probe/src/pipeline_transfers.h): a CPU run
// of PP 2 (1F1B, GPipe and interleaved) records one "pp.send" span per message it sends and one
// "pp.recv" per message it receives, each naming the chunk of its op, the micro-batch and the
// direction, exactly the plan's messages; the spans on a rank's communication track never
// overlap (one transfer of a group at a time); and the run trains like the serial one.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <tuple>
#include <vector>

#include "pipeline_transfers.h"
#include "plansight/estimator/pipeline_schedule.h"
#include "plansight/probe/engine.h"
#include "probe_test_util.h"

namespace plansight::probe {
namespace {

namespace est = plansight::estimator;

using Named = std::tuple<bool, int, int, est::Phase>;  // (is a send, chunk, micro-batch, phase)

std::multiset<Named> planned(const est::ScheduleTable& t, int rank) {
  std::multiset<Named> out;
  for (const est::ScheduleOp& op : t.ranks[static_cast<std::size_t>(rank)]) {
    const OpMessages m = op_messages(t, rank, op);
    auto phase = [](const PipelineMessage& x) { return x.backward ? est::Phase::backward : est::Phase::forward; };
    if (m.send) out.insert({true, m.send->from_chunk, m.send->micro_batch, phase(*m.send)});
    if (m.recv) out.insert({false, m.recv->to_chunk, m.recv->micro_batch, phase(*m.recv)});
  }
  return out;
}

void check_layout(est::PipelineSchedule schedule, int vpp) {
  ProbeRequest r = testing::matrix_request();
  r.layout.pp = 2;
  r.layout.vpp = vpp;
  r.layout.schedule = schedule;
  r.steps = 2;
  r.trace = true;
  auto out = run_probe(r, {});
  ASSERT_TRUE(out) << out.error_text();
  const int m = static_cast<int>(r.global_batch / r.micro_batch);
  auto table = est::make_schedule(r.layout, m);
  ASSERT_TRUE(table) << table.error_text();
  const est::Timeline& t = out->timeline;
  std::map<int, std::multiset<Named>> seen;
  for (const est::Track& track : t.tracks) {
    if (track.lane != est::Lane::communication || track.stream != 0) continue;
    std::int64_t previous_end = std::numeric_limits<std::int64_t>::min();
    for (const est::Span& s : track.spans) {
      EXPECT_GE(s.start_ns, previous_end) << "rank " << track.rank << ": " << t.name_of(s) << " overlaps the span before";
      previous_end = std::max(previous_end, s.end_ns());
      const auto name = t.name_of(s);
      if (name != "pp.send" && name != "pp.recv") continue;
      EXPECT_EQ(s.kind, name == "pp.send" ? est::SpanKind::send : est::SpanKind::recv);
      EXPECT_GT(s.bytes, 0);
      seen[track.rank].insert({name == "pp.send", s.stage, s.micro_batch, s.phase});
    }
  }
  for (int rank = 0; rank < 2; ++rank) {
    EXPECT_EQ(seen[rank], planned(*table, rank)) << est::to_string(schedule) << " rank " << rank;
  }
}

TEST(PipelineSpans, OneFOneBSpansNameEveryMessage) { check_layout(est::PipelineSchedule::one_f_one_b, 1); }
TEST(PipelineSpans, GpipeSpansNameEveryMessage) { check_layout(est::PipelineSchedule::gpipe, 1); }
TEST(PipelineSpans, InterleavedSpansNameEveryMessage) { check_layout(est::PipelineSchedule::interleaved, 2); }

}  // namespace
}  // namespace plansight::probe
