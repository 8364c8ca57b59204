// plan_transfers (probe/src/pipeline_transfers.h) over the schedules the probe runs (GPipe,
// 1F1B, interleaved; make_schedule's tables for several p, v, m) under NCCL's rules:
//  - matching: NCCL ignores tags and pairs a (sender, receiver) pair's messages in call order,
//    so each receiver must post a pair's receives in the order its sender sends them, or an
//    activation would land in the wrong micro-batch's buffer (every message has the same size,
//    so nothing would fail). Megatron's non-default micro-batch groups break it: refused;
//  - progress: a send completes only when its receiver's group runs (no buffering, NCCL's worst
//    case for messages above its buffers), transfers of one group progress independently, a
//    pair's messages complete in order, and a rank's stream runs its groups one after another.
//    The simulation below (written apart from the planner's) must finish every rank's groups.
//    The same simulation of the old executor (every transfer alone, in op order) deadlocks on
//    1F1B, as it did on GPUs, and of sends fused with the next op's receive but without
//    receives posted early deadlocks on interleaved 1F1B.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "pipeline_transfers.h"
#include "plansight/estimator/pipeline_schedule.h"

namespace plansight::probe {
namespace {

namespace est = plansight::estimator;

struct Case {
  est::PipelineSchedule kind;
  int p, v, m, group;  // group: the interleaved schedule's micro-batch group (0: p)
};

std::string name_of(const Case& c) {
  return std::string(est::to_string(c.kind)) + " p=" + std::to_string(c.p) + " v=" + std::to_string(c.v) +
         " m=" + std::to_string(c.m) + (c.group ? " group=" + std::to_string(c.group) : "");
}

std::vector<Case> cases() {
  std::vector<Case> out;
  for (int p : {2, 3, 4, 8}) {
    for (int m : {1, 2, 3, 4, 5, 8, 16}) {
      out.push_back({est::PipelineSchedule::gpipe, p, 1, m, 0});
      out.push_back({est::PipelineSchedule::one_f_one_b, p, 1, m, 0});
    }
    for (int v : {2, 3, 4}) {
      for (int m : {p, 2 * p, 3 * p, 4 * p}) out.push_back({est::PipelineSchedule::interleaved, p, v, m, 0});
    }
  }
  // Megatron's other micro-batch groups whose orders NCCL can pair (AnOrderNcclWouldMismatch
  // covers one it cannot). The probe itself always runs the default group.
  out.push_back({est::PipelineSchedule::interleaved, 4, 2, 12, 6});
  out.push_back({est::PipelineSchedule::interleaved, 4, 2, 10, 6});
  return out;
}

est::ScheduleTable table_of(const Case& c) {
  est::ScheduleOptions options;
  options.microbatch_group = c.group;
  auto t = est::make_schedule(c.kind, c.p, c.v, c.m, options);
  EXPECT_TRUE(t.ok()) << name_of(c) << ": " << t.error_text();
  return t.ok() ? *t : est::ScheduleTable{};
}

// A rank's groups in stream order (empty ones dropped).
using Groups = std::vector<TransferGroup>;
Groups groups_of(const TransferPlan& plan) {
  Groups out;
  for (const TransferGroup& g : plan.before) {
    if (!g.empty()) out.push_back(g);
  }
  if (!plan.at_end.empty()) out.push_back(plan.at_end);
  return out;
}

std::vector<TransferPlan> plans_of(const est::ScheduleTable& t) {
  auto plans = plan_transfers(t);
  EXPECT_TRUE(plans.ok()) << plans.error_text();
  return plans.ok() ? *plans : std::vector<TransferPlan>{};
}

std::vector<Groups> all_groups(const est::ScheduleTable& t) {
  std::vector<Groups> ranks;
  for (const TransferPlan& plan : plans_of(t)) ranks.push_back(groups_of(plan));
  return ranks;
}

// The old executor: each op's receive alone before it, its send alone after it.
Groups unfused_groups(const est::ScheduleTable& t, int rank) {
  Groups out;
  for (const est::ScheduleOp& op : t.ranks[static_cast<std::size_t>(rank)]) {
    const OpMessages m = op_messages(t, rank, op);
    if (m.recv) out.push_back({{}, {*m.recv}});
    if (m.send) out.push_back({{*m.send}, {}});
  }
  return out;
}

// Sends fused with the next op's receive, no receive posted early.
Groups fused_groups(const est::ScheduleTable& t, int rank) {
  Groups out;
  std::vector<PipelineMessage> pending;
  for (const est::ScheduleOp& op : t.ranks[static_cast<std::size_t>(rank)]) {
    const OpMessages m = op_messages(t, rank, op);
    TransferGroup g{pending, {}};
    if (m.recv) g.recvs.push_back(*m.recv);
    if (!g.empty()) out.push_back(g);
    pending.clear();
    if (m.send) pending.push_back(*m.send);
  }
  if (!pending.empty()) out.push_back({pending, {}});
  return out;
}

using Pair = std::pair<int, int>;  // (from, to)

// Per pair, the messages in the order the sender issues them and the receiver posts them.
void orders(const std::vector<Groups>& ranks, std::map<Pair, std::vector<PipelineMessage>>& sent,
            std::map<Pair, std::vector<PipelineMessage>>& received) {
  for (const Groups& groups : ranks) {
    for (const TransferGroup& g : groups) {
      for (const PipelineMessage& s : g.sends) sent[{s.from, s.to}].push_back(s);
      for (const PipelineMessage& r : g.recvs) received[{r.from, r.to}].push_back(r);
    }
  }
}

// Runs the groups under NCCL's rules without buffering; "" when every rank finishes, else
// where each stuck rank waits.
std::string simulate(const std::vector<Groups>& ranks) {
  using Key = std::tuple<int, int, std::size_t>;  // message k of pair (from, to)
  struct Ends {
    std::size_t send_group = 0, recv_group = 0;
  };
  std::map<Key, Ends> messages;
  std::vector<std::vector<std::vector<Key>>> members(ranks.size());  // [rank][group]: its messages
  std::map<Pair, std::size_t> sends_so_far, recvs_so_far;
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    members[r].resize(ranks[r].size());
    for (std::size_t gi = 0; gi < ranks[r].size(); ++gi) {
      const TransferGroup& g = ranks[r][gi];
      for (const PipelineMessage& s : g.sends) {
        const Key key{s.from, s.to, sends_so_far[{s.from, s.to}]++};
        messages[key].send_group = gi;
        members[r][gi].push_back(key);
      }
      for (const PipelineMessage& m : g.recvs) {
        const Key key{m.from, m.to, recvs_so_far[{m.from, m.to}]++};
        messages[key].recv_group = gi;
        members[r][gi].push_back(key);
      }
    }
  }
  std::vector<std::size_t> at(ranks.size(), 0);  // each rank's running group
  std::map<Pair, std::size_t> done;              // messages completed per pair, in order
  auto completed = [&](const Key& key) { return done[{std::get<0>(key), std::get<1>(key)}] > std::get<2>(key); };
  for (bool progress = true; progress;) {
    progress = false;
    // A message completes when both its groups run and its pair's earlier messages completed.
    for (const auto& [key, ends] : messages) {
      const auto [from, to, k] = key;
      if (done[{from, to}] != k) continue;
      if (at[static_cast<std::size_t>(from)] == ends.send_group && at[static_cast<std::size_t>(to)] == ends.recv_group) {
        ++done[{from, to}];
        progress = true;
      }
    }
    // A group ends when all its messages completed; the rank's stream moves to its next.
    for (std::size_t r = 0; r < ranks.size(); ++r) {
      while (at[r] < ranks[r].size()) {
        const auto& mine = members[r][at[r]];
        if (!std::all_of(mine.begin(), mine.end(), completed)) break;
        ++at[r];
        progress = true;
      }
    }
  }
  std::string stuck;
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    if (at[r] == ranks[r].size()) continue;
    const TransferGroup& g = ranks[r][at[r]];
    stuck += " rank " + std::to_string(r) + " in group " + std::to_string(at[r]) + " (" + std::to_string(g.sends.size()) +
             " sends, " + std::to_string(g.recvs.size()) + " receives);";
  }
  return stuck;
}

TEST(PipelineTransfers, EveryPairReceivesInTheOrderItsSenderSends) {
  for (const Case& c : cases()) {
    const est::ScheduleTable t = table_of(c);
    if (t.ranks.empty()) continue;
    const std::vector<Groups> ranks = all_groups(t);
    ASSERT_EQ(ranks.size(), static_cast<std::size_t>(t.p)) << name_of(c);
    std::map<Pair, std::vector<PipelineMessage>> sent, received;
    orders(ranks, sent, received);
    EXPECT_EQ(sent.size(), received.size()) << name_of(c);
    std::size_t messages = 0;
    for (const auto& [pair, list] : sent) {
      messages += list.size();
      EXPECT_EQ(list, received[pair]) << name_of(c) << " pair " << pair.first << "->" << pair.second;
    }
    // Every chunk boundary carries m activations forward and m gradients back.
    EXPECT_EQ(messages, static_cast<std::size_t>(2 * (t.stages() - 1) * t.m)) << name_of(c);
  }
}

TEST(PipelineTransfers, GroupsFinishWhenEverySendWaitsForItsReceiver) {
  for (const Case& c : cases()) {
    const est::ScheduleTable t = table_of(c);
    if (t.ranks.empty()) continue;
    const std::vector<Groups> ranks = all_groups(t);
    ASSERT_EQ(ranks.size(), static_cast<std::size_t>(t.p)) << name_of(c);
    EXPECT_EQ(simulate(ranks), "") << name_of(c);
  }
}

// The bugs this plan fixes; the simulation must see them, or it proves nothing. Every transfer
// alone (the old executor) deadlocks 1F1B once messages exceed NCCL's buffers; sends fused with
// the next receive but no receive posted early still deadlock interleaved 1F1B.
TEST(PipelineTransfers, WithoutGroupsOrEarlyReceivesTheSimulationDeadlocks) {
  for (int p : {2, 4}) {
    const est::ScheduleTable t = table_of({est::PipelineSchedule::one_f_one_b, p, 1, 2 * p, 0});
    std::vector<Groups> ranks;
    for (int r = 0; r < t.p; ++r) ranks.push_back(unfused_groups(t, r));
    EXPECT_NE(simulate(ranks), "") << "1f1b p=" << p;
    const est::ScheduleTable u = table_of({est::PipelineSchedule::interleaved, p, 2, 2 * p, 0});
    std::vector<Groups> fused;
    for (int r = 0; r < u.p; ++r) fused.push_back(fused_groups(u, r));
    EXPECT_NE(simulate(fused), "") << "interleaved p=" << p;
  }
}

// 1F1B on two stages, stage 0: F0, F1, B0, ... Its F1's activation goes out together with B0's
// gradient receive; stage 1 sends B0's gradient with F1's activation receive.
TEST(PipelineTransfers, OneFOneBSendsWithTheNextReceive) {
  const est::ScheduleTable t = table_of({est::PipelineSchedule::one_f_one_b, 2, 1, 4, 0});
  const std::vector<TransferPlan> plans = plans_of(t);
  ASSERT_EQ(plans.size(), 2u);
  ASSERT_EQ(t.ranks[0][2].kind, est::OpKind::backward);
  const TransferGroup& g = plans[0].before[2];
  const PipelineMessage act{0, 1, 0, 1, 1, false}, grad{1, 0, 1, 0, 0, true};
  EXPECT_EQ(g.sends, std::vector<PipelineMessage>{act});
  EXPECT_EQ(g.recvs, std::vector<PipelineMessage>{grad});
  ASSERT_EQ(t.ranks[1][2].kind, est::OpKind::forward);
  const TransferGroup& h = plans[1].before[2];
  EXPECT_EQ(h.sends, std::vector<PipelineMessage>{grad});
  EXPECT_EQ(h.recvs, std::vector<PipelineMessage>{act});
  // The last backward's gradient leaves at the end of the step, never later.
  ASSERT_EQ(plans[1].at_end.sends.size(), 1u);
  EXPECT_EQ(plans[1].at_end.sends[0].micro_batch, 3);
  EXPECT_TRUE(plans[0].at_end.empty());  // stage 0 sends no gradient
}

// GPipe's first stage receives nothing in its forwards: each activation still leaves at the
// start of the next forward (not at the first backward), so the pipeline fills as it should.
// Every receive is posted once, in its op's group or earlier, never later.
TEST(PipelineTransfers, SendsWaitOneOpAndReceivesComeNoLaterThanTheirOp) {
  for (const Case& c : cases()) {
    const est::ScheduleTable t = table_of(c);
    if (t.ranks.empty()) continue;
    const std::vector<TransferPlan> plans = plans_of(t);
    for (int r = 0; r < static_cast<int>(plans.size()); ++r) {
      const TransferPlan& plan = plans[static_cast<std::size_t>(r)];
      const auto& row = t.ranks[static_cast<std::size_t>(r)];
      ASSERT_EQ(plan.before.size(), row.size());
      std::vector<PipelineMessage> posted;
      for (std::size_t i = 0; i < row.size(); ++i) {
        const auto previous = i == 0 ? std::nullopt : op_messages(t, r, row[i - 1]).send;
        EXPECT_EQ(plan.before[i].sends, previous ? std::vector<PipelineMessage>{*previous} : std::vector<PipelineMessage>{})
            << name_of(c) << " rank " << r << " op " << i;
        posted.insert(posted.end(), plan.before[i].recvs.begin(), plan.before[i].recvs.end());
        const auto own = op_messages(t, r, row[i]).recv;
        if (own) {
          EXPECT_EQ(std::count(posted.begin(), posted.end(), *own), 1) << name_of(c) << " rank " << r << " op " << i;
        }
      }
      EXPECT_TRUE(plan.at_end.recvs.empty());
    }
  }
}

// Interleaved 1F1B needs early receives (as Megatron's schedule receives ahead); GPipe and
// 1F1B need none.
TEST(PipelineTransfers, OnlyInterleavedPostsReceivesEarly) {
  for (const Case& c : cases()) {
    const est::ScheduleTable t = table_of(c);
    if (t.ranks.empty()) continue;
    std::size_t early = 0;
    const std::vector<TransferPlan> plans = plans_of(t);
    for (int r = 0; r < static_cast<int>(plans.size()); ++r) {
      const auto& row = t.ranks[static_cast<std::size_t>(r)];
      for (std::size_t i = 0; i < row.size(); ++i) {
        const auto own = op_messages(t, r, row[i]).recv;
        for (const PipelineMessage& m : plans[static_cast<std::size_t>(r)].before[i].recvs) early += own && m == *own ? 0 : 1;
      }
    }
    if (c.kind == est::PipelineSchedule::interleaved) continue;
    EXPECT_EQ(early, 0u) << name_of(c);
  }
}

// Megatron's other micro-batch groups interleave a pair's activations and gradients in an order
// the receiver does not post: refused, naming the field, before any rank runs.
TEST(PipelineTransfers, AnOrderNcclWouldMismatchIsRefused) {
  const est::ScheduleTable t = table_of({est::PipelineSchedule::interleaved, 2, 2, 6, 3});
  auto plans = plan_transfers(t);
  ASSERT_FALSE(plans.ok());
  EXPECT_NE(plans.error_text().find("layout.schedule"), std::string::npos) << plans.error_text();
  EXPECT_NE(plans.error_text().find("call order"), std::string::npos) << plans.error_text();
}

TEST(PipelineTransfers, TagsNameTheDestinationMicroBatchAndDirection) {
  const PipelineMessage a{0, 1, 0, 1, 3, false}, b{1, 0, 1, 0, 3, true};
  EXPECT_EQ(a.tag(4), (3 * 4 + 1) * 2);
  EXPECT_EQ(b.tag(4), (3 * 4 + 0) * 2 + 1);
  EXPECT_NE(a.tag(4), PipelineMessage({0, 1, 0, 1, 2, false}).tag(4));
}

}  // namespace
}  // namespace plansight::probe
