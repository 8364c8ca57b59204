// plan_transfers (pipeline_transfers.h). The groups are found by running them in NCCL's worst
// case: a message completes only when the sender's and the receiver's groups holding it both
// run (no buffering, as for messages above NCCL's buffers), a pair's messages complete in call
// order, a group ends when all its messages have, and each rank's stream runs its groups one
// after another (compute never waits on another rank). When every unfinished rank waits, a
// rank whose group sends the next message of a pair gets it received early: the receive moves
// into the receiver's group that is running, which it then completes at once. That adds no new
// wait, so it is repeated until every rank finishes, or nothing can move (then the table
// itself waits in a cycle, which make_schedule never produces).
#include "pipeline_transfers.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>

namespace plansight::probe {
namespace {

namespace est = plansight::estimator;

using Groups = std::vector<TransferGroup>;  // [i < ops]: before op i; [ops]: at the end
using Pair = std::pair<int, int>;            // (sender, receiver)

// A message with the groups of its two ends (indices into the two ranks' Groups).
struct Placed {
  PipelineMessage message;
  std::size_t send_group = 0, recv_group = 0;
};

std::string describe(const PipelineMessage& m) {
  return std::string(m.backward ? "the gradient" : "the activation") + " of micro-batch " +
         std::to_string(m.micro_batch) + " for chunk " + std::to_string(m.to_chunk);
}

// Each op's receive before it, each send in the group before the next op (or at the end).
std::vector<Groups> first_groups(const est::ScheduleTable& t) {
  std::vector<Groups> ranks(static_cast<std::size_t>(t.p));
  for (int r = 0; r < t.p; ++r) {
    const auto& row = t.ranks[static_cast<std::size_t>(r)];
    Groups& groups = ranks[static_cast<std::size_t>(r)];
    groups.resize(row.size() + 1);
    for (std::size_t i = 0; i < row.size(); ++i) {
      const OpMessages m = op_messages(t, r, row[i]);
      if (m.recv) groups[i].recvs.push_back(*m.recv);
      if (m.send) groups[i + 1].sends.push_back(*m.send);
    }
  }
  return ranks;
}

// Per pair, its messages in the order the sender sends them, with where the receiver posts
// each; an error when the receiver posts them in another order.
Result<std::map<Pair, std::vector<Placed>>> place(const std::vector<Groups>& ranks) {
  std::map<Pair, std::vector<Placed>> pairs;
  for (const Groups& groups : ranks) {
    for (std::size_t g = 0; g < groups.size(); ++g) {
      for (const PipelineMessage& s : groups[g].sends) pairs[{s.from, s.to}].push_back({s, g, 0});
    }
  }
  std::map<Pair, std::size_t> posted;
  for (const Groups& groups : ranks) {
    for (std::size_t g = 0; g < groups.size(); ++g) {
      for (const PipelineMessage& r : groups[g].recvs) {
        auto& list = pairs[{r.from, r.to}];
        const std::size_t k = posted[{r.from, r.to}]++;
        if (k >= list.size() || !(list[k].message == r)) {
          return make_error("layout.schedule",
                            "pipeline rank " + std::to_string(r.to) + " receives " + describe(r) + " as message " +
                                std::to_string(k + 1) + " from rank " + std::to_string(r.from) + ", which sends " +
                                (k < list.size() ? describe(list[k].message) : std::string("fewer messages")) +
                                " there: NCCL pairs a rank pair's messages in call order, so this schedule's order "
                                "cannot run on NCCL; valid: Megatron's default micro-batch group (pp)");
        }
        list[k].recv_group = g;
      }
    }
  }
  return pairs;
}

Result<bool> make_progress(std::vector<Groups>& ranks, std::map<Pair, std::vector<Placed>>& pairs) {
  const std::size_t p = ranks.size();
  std::vector<std::size_t> at(p, 0), waiting_for(p, 0);  // running group; its messages not yet done
  std::map<Pair, std::size_t> done;                       // per pair, messages completed (in order)
  auto size = [&](std::size_t r) { return ranks[r][at[r]].sends.size() + ranks[r][at[r]].recvs.size(); };
  for (std::size_t r = 0; r < p; ++r) waiting_for[r] = size(r);
  for (;;) {
    bool progress = false;
    for (auto& [pair, list] : pairs) {
      std::size_t& k = done[pair];
      const auto from = static_cast<std::size_t>(pair.first), to = static_cast<std::size_t>(pair.second);
      while (k < list.size() && at[from] == list[k].send_group && at[to] == list[k].recv_group) {
        --waiting_for[from];
        --waiting_for[to];
        ++k;
        progress = true;
      }
    }
    bool finished = true;
    for (std::size_t r = 0; r < p; ++r) {
      while (at[r] < ranks[r].size() && waiting_for[r] == 0) {
        if (++at[r] < ranks[r].size()) waiting_for[r] = size(r);
        progress = true;
      }
      finished = finished && at[r] == ranks[r].size();
    }
    if (finished) return true;
    if (progress) continue;
    // Every unfinished rank waits: receive early the first message a running group sends.
    bool moved = false;
    for (auto& [pair, list] : pairs) {
      const std::size_t k = done[pair];
      const auto from = static_cast<std::size_t>(pair.first), to = static_cast<std::size_t>(pair.second);
      if (k == list.size() || at[from] != list[k].send_group || at[to] >= list[k].recv_group) continue;
      auto& later = ranks[to][list[k].recv_group].recvs;
      later.erase(std::find(later.begin(), later.end(), list[k].message));
      ranks[to][at[to]].recvs.push_back(list[k].message);
      list[k].recv_group = at[to];
      ++waiting_for[to];
      moved = true;
      break;
    }
    if (!moved) {
      return make_error("layout.schedule", "the pipeline ranks' transfers wait for each other in a cycle; the schedule "
                                           "table is not one that make_schedule produces");
    }
  }
}

}  // namespace

OpMessages op_messages(const est::ScheduleTable& table, int rank, const est::ScheduleOp& op) {
  OpMessages out;
  if (op.kind == est::OpKind::weight_grad) return out;
  const int g = table.global_chunk(rank, op.chunk), last = table.stages() - 1;
  const bool backward = op.kind == est::OpKind::backward;
  // Activations flow from chunk g to g + 1, gradients from g + 1 back to g.
  const int upstream = backward ? g + 1 : g - 1, downstream = backward ? g - 1 : g + 1;
  if (upstream >= 0 && upstream <= last) {
    out.recv = PipelineMessage{table.rank_of(upstream), rank, upstream, g, op.micro_batch, backward};
  }
  if (downstream >= 0 && downstream <= last) {
    out.send = PipelineMessage{rank, table.rank_of(downstream), g, downstream, op.micro_batch, backward};
  }
  return out;
}

Result<std::vector<TransferPlan>> plan_transfers(const est::ScheduleTable& table) {
  if (table.ranks.size() != static_cast<std::size_t>(table.p)) {
    return make_error("layout.schedule", "a table of " + std::to_string(table.ranks.size()) + " rows for pp " +
                                             std::to_string(table.p));
  }
  std::vector<Groups> ranks = first_groups(table);
  auto pairs = place(ranks);
  if (!pairs) return pairs.errors();
  if (auto s = make_progress(ranks, *pairs); !s) return s.errors();
  std::vector<TransferPlan> plans(ranks.size());
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    plans[r].at_end = std::move(ranks[r].back());
    ranks[r].pop_back();
    plans[r].before = std::move(ranks[r]);
  }
  return plans;
}

}  // namespace plansight::probe
