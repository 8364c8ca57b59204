// The iteration simulator: a worklist over ranks, each advancing through its op list while the
// next op's inputs are known. Work is O(ops + spans): an op is looked at again only when a
// neighbour finishes something it waits for. Communication lanes are first-fit interval lists,
// so work issued "ahead" (prefetch, mid-op gradient buckets) takes the earliest free slot.
#include "plansight/estimator/pipeline_simulator.h"

#include <algorithm>
#include <charconv>
#include <unordered_map>

#include "plansight/estimator/cancellation.h"
#include "plansight/estimator/schedule_metrics.h"
#include "shared_processor_simulator.h"
#include "simulation_costs.h"

namespace plansight::estimator {

namespace {

constexpr std::int64_t kUnknown = -1;

// The simulator's per-run arrays, kept per thread between runs: an estimate simulates twice and a
// search or a sweep thousands of times, and allocating, zeroing and freeing these arrays was a
// tenth of a small simulation's time. A run takes them (swap), resizes them and gives them back.
struct Arrays {
  std::vector<std::int64_t> fwd_ready, bwd_ready, f_done, b_done;
  std::vector<std::int64_t> free, prev_start, busy, reduce_end, collective_end;
  std::vector<std::int64_t> first_f, first_b, last_bwd;
  std::vector<std::size_t> next;
  std::vector<CommLane> lanes;
  std::vector<char> queued;
  std::vector<std::int32_t> work;
};
Arrays& thread_arrays() {
  thread_local Arrays arrays;
  return arrays;
}

class Simulator {
 public:
  Simulator(const ScheduleTable& t, const SimulationInput& in, std::vector<NsChunkCost> costs)
      : t_(t), in_(in), costs_(std::move(costs)), m_(t.m), stages_(t.stages()), keep_(in.keep_timeline) {
    swap_arrays();
    for (CommLane& lane : lanes_) lane.clear();
    const auto pairs = static_cast<std::size_t>(stages_) * static_cast<std::size_t>(m_);
    fwd_ready_.assign(pairs, kUnknown);
    std::fill_n(fwd_ready_.begin(), m_, 0);  // the first chunk's inputs are there at t = 0
    bwd_ready_.assign(pairs, kUnknown);
    f_done_.assign(pairs, kUnknown);
    b_done_.assign(pairs, kUnknown);
    if (keep_) {
      names_.assign(6 * pairs, -1);
      tl_.names.reserve(4 * pairs + 16);  // F, B, their sends (and W, R) of every pair
    }
    const auto p = static_cast<std::size_t>(t.p);
    next_.assign(p, 0);
    free_.assign(p, 0);
    prev_start_.assign(p, 0);
    busy_.assign(p, 0);
    reduce_end_.assign(p, 0);
    lanes_.resize(p);
    activity_.assign(p, RankActivity{});
    collective_end_.assign(p, 0);
    queued_.assign(p, 1);
    work_.resize(p);  // a ring: each rank is queued at most once
    work_count_ = p;
    const auto pv = p * static_cast<std::size_t>(t.v);
    first_f_.assign(pv, -1);
    first_b_.assign(pv, -1);
    last_bwd_.assign(pv, -1);
    for (std::size_t r = 0; r < p; ++r) {
      const auto& ops = t.ranks[r];
      for (std::size_t i = 0; i < ops.size(); ++i) {
        const std::size_t c = r * static_cast<std::size_t>(t.v) + static_cast<std::size_t>(ops[i].chunk);
        auto si = static_cast<std::int64_t>(i);
        if (ops[i].kind == OpKind::forward && first_f_[c] < 0) first_f_[c] = si;
        if (ops[i].kind == OpKind::backward && first_b_[c] < 0) first_b_[c] = si;
        if (ops[i].kind != OpKind::forward) last_bwd_[c] = si;
      }
      work_[r] = static_cast<std::int32_t>(r);
      activity_[r].rank = static_cast<std::int32_t>(r);
      if (!keep_) continue;
      // Reserved once: a span per compute segment, and on the communication lane a span per
      // communication segment, send, gather and reduction bucket, so no span ever reallocates.
      std::size_t compute_spans = 1, comm_spans = 2 * static_cast<std::size_t>(t.v) * (1 + in.dp_buckets);
      for (const ScheduleOp& o : ops) {
        const NsChunkCost& c = cost(t.global_chunk(static_cast<std::int32_t>(r), o.chunk));
        const auto& segs = o.kind == OpKind::forward ? c.forward : o.kind == OpKind::weight_grad ? c.weight_grad
                                                                   : t.split_backward        ? c.backward
                                                                                             : c.fused_backward;
        for (const auto* list : {&segs, o.kind == OpKind::backward ? &c.recompute : nullptr}) {
          if (list == nullptr) continue;
          for (const NsSegment& seg : *list) ++(seg.lane == Lane::compute ? compute_spans : comm_spans);
        }
        ++comm_spans;  // its send
      }
      Track compute{static_cast<std::int32_t>(r), Lane::compute, -1, "rank " + std::to_string(r), {}};
      compute.spans.reserve(compute_spans);
      Track comm{static_cast<std::int32_t>(r), Lane::communication, -1, "rank " + std::to_string(r) + " comm", {}};
      comm.spans.reserve(comm_spans);
      tl_.tracks.push_back(std::move(compute));
      tl_.tracks.push_back(std::move(comm));
    }
    tl_.source = TimelineSource::predicted;
    tl_.title = in.title;
  }

  ~Simulator() { swap_arrays(); }
  Simulator(const Simulator&) = delete;
  Simulator& operator=(const Simulator&) = delete;

  Result<SimulationResult> run() {
    std::uint32_t polls = 0;
    while (work_count_ > 0) {
      const std::int32_t r = work_[work_head_];
      work_head_ = work_head_ + 1 == work_.size() ? 0 : work_head_ + 1;
      --work_count_;
      queued_[static_cast<std::size_t>(r)] = 0;
      while (step(r)) {
        // Every 4096 operations (about 0.1 ms): a cancelled estimate stops within a frame.
        if ((++polls & 4095u) == 0 && cancel_requested()) return make_error("estimate", kCancelledMessage);
      }
    }
    if (auto stuck = deadlock_message(t_, next_); !stuck.empty()) return make_error("schedule", stuck);
    return finish();
  }

 private:
  void swap_arrays() {
    Arrays& a = thread_arrays();
    fwd_ready_.swap(a.fwd_ready), bwd_ready_.swap(a.bwd_ready), f_done_.swap(a.f_done), b_done_.swap(a.b_done);
    free_.swap(a.free), prev_start_.swap(a.prev_start), busy_.swap(a.busy), reduce_end_.swap(a.reduce_end);
    collective_end_.swap(a.collective_end);
    first_f_.swap(a.first_f), first_b_.swap(a.first_b), last_bwd_.swap(a.last_bwd);
    next_.swap(a.next), lanes_.swap(a.lanes), queued_.swap(a.queued), work_.swap(a.work);
  }

  std::size_t pair(std::int32_t global, std::int32_t mb) const {
    return static_cast<std::size_t>(global) * static_cast<std::size_t>(m_) +
           static_cast<std::size_t>(mb);
  }
  Track& compute_track(std::int32_t r) { return tl_.tracks[2 * static_cast<std::size_t>(r)]; }
  Track& comm_track(std::int32_t r) { return tl_.tracks[2 * static_cast<std::size_t>(r) + 1]; }

  // Interned names with a direct-indexed cache (Timeline::intern is linear, too slow here).
  // Without a kept timeline nothing is named.
  std::int32_t op_name(int slot, char letter, const char* prefix, std::int32_t g, std::int32_t mb) {
    return keep_ ? intern_op_name(slot, letter, prefix, g, mb) : -1;
  }
  [[gnu::noinline]] std::int32_t intern_op_name(int slot, char letter, const char* prefix, std::int32_t g,
                                                std::int32_t mb) {
    auto& id = names_[static_cast<std::size_t>(slot) * pair(stages_, 0) + pair(g, mb)];
    if (id < 0) {
      // "<prefix><letter><g>.<mb>", formatted by hand: snprintf was half of a kept simulation.
      char buf[48];
      char* out = buf;
      for (const char* c = prefix; *c != '\0'; ++c) *out++ = *c;
      *out++ = letter;
      out = std::to_chars(out, buf + 32, g).ptr;  // <= 5 + 1 + 11 characters; room left for ".<mb>"
      *out++ = '.';
      out = std::to_chars(out, buf + sizeof buf, mb).ptr;
      id = static_cast<std::int32_t>(tl_.names.size());
      tl_.names.emplace_back(buf, out);
      if (slot >= 4 && in_.send_label >= 0) {  // a send: its group and link
        tl_.names.back() += " · ";
        tl_.names.back() += in_.labels[static_cast<std::size_t>(in_.send_label)];
      }
    }
    return id;
  }
  const NsChunkCost& cost(std::int32_t g) const {
    return costs_[costs_.size() == 1 ? 0 : static_cast<std::size_t>(g)];
  }
  // The name of labelled segments (a group's collectives), interned on first use.
  std::int32_t label_name(std::int32_t label) {
    if (label_ids_.empty()) label_ids_.assign(in_.labels.size(), -1);
    auto& id = label_ids_[static_cast<std::size_t>(label)];
    if (id < 0) id = other_name(in_.labels[static_cast<std::size_t>(label)]);
    return id;
  }
  std::int32_t other_name(const std::string& text) {
    auto [it, fresh] = other_names_.try_emplace(text, static_cast<std::int32_t>(tl_.names.size()));
    if (fresh) tl_.names.push_back(text);
    return it->second;
  }

  void wake(std::int32_t r) {
    auto& q = queued_[static_cast<std::size_t>(r)];
    if (!q) {
      q = 1;
      std::size_t tail = work_head_ + work_count_;
      if (tail >= work_.size()) tail -= work_.size();
      work_[tail] = r;
      ++work_count_;
    }
  }

  Span span(std::int64_t start, std::int64_t ns, const NsSegment& s, std::int32_t name,
            std::int32_t g, std::int32_t mb) {
    Span out;
    out.start_ns = start;
    out.duration_ns = ns;
    out.flops = s.flops;
    out.bytes = s.bytes;
    out.name_id = name;
    out.stage = g;
    out.micro_batch = mb;
    out.kind = s.lane == Lane::compute ? SpanKind::kernel : SpanKind::collective;
    out.phase = s.phase;
    return out;
  }

  // Runs segments back to back from `t`; returns the end. What the bubble needs
  // (schedule_metrics.h's RankActivity) costs this loop, most of a simulation's time, nothing:
  // the rare wait of a collective for a busy lane is recorded out of line, and the first and
  // last compute (the window) only for the ops that can hold them (Record: the rank's ops until
  // its first compute, and its last op).
  template <bool Record>
  std::int64_t run_segments(std::int32_t r, std::int64_t t, const std::vector<NsSegment>& segs,
                            std::int32_t name, std::int32_t g, std::int32_t mb) {
    [[maybe_unused]] std::int64_t compute_first = -1, compute_end = -1;
    for (const NsSegment& s : segs) {
      if (s.ns == 0) continue;
      if (s.lane == Lane::compute) {
        if (keep_) compute_track(r).spans.push_back(span(t, s.ns, s, name, g, mb));
        busy_[static_cast<std::size_t>(r)] += s.ns;
        if constexpr (Record) compute_first = compute_first < 0 ? t : compute_first;
        t += s.ns;
        if constexpr (Record) compute_end = t;
      } else {
        const std::int64_t start = lanes_[static_cast<std::size_t>(r)].place(t, s.ns);
        if (keep_) comm_track(r).spans.push_back(span(start, s.ns, s, s.label >= 0 ? label_name(s.label) : name, g, mb));
        if (start > t) [[unlikely]] lane_wait(r, t, start);
        t = start + s.ns;
      }
    }
    if constexpr (Record) {
      if (compute_end >= 0) {
        RankActivity& a = activity_[static_cast<std::size_t>(r)];
        if (a.compute_begin_ns > a.compute_end_ns) a.compute_begin_ns = compute_first;
        a.compute_end_ns = compute_end;
      }
    }
    return t;
  }

  std::int64_t segments(bool record, std::int32_t r, std::int64_t t, const std::vector<NsSegment>& segs,
                        std::int32_t name, std::int32_t g, std::int32_t mb) {
    return record ? run_segments<true>(r, t, segs, name, g, mb) : run_segments<false>(r, t, segs, name, g, mb);
  }

  // Idle time of rank r over [begin, end) between its ops. Collectives placed later never start
  // before `end` (they are issued at or after the op that follows), so a gap that begins after
  // every collective placed so far has ended is clear of them all: a sum, not a list.
  void gap(std::size_t r, std::int64_t begin, std::int64_t end) {
    if (begin >= collective_end_[r]) {
      activity_[r].clear_gap_ns += end - begin;
    } else {
      activity_[r].gaps.push_back({begin, end});
    }
  }

  // A collective of an op waits for the busy lane over [t, start): a gap in the rank's work, or,
  // before its first piece of work, the later start of that work.
  [[gnu::noinline]] void lane_wait(std::int32_t r, std::int64_t t, std::int64_t start) {
    RankActivity& a = activity_[static_cast<std::size_t>(r)];
    if (a.occupied_end_ns < 0 && a.occupied_begin_ns == t) {
      a.occupied_begin_ns = start;
    } else {
      a.gaps.push_back({t, start});  // a list, not the sum: it may lie outside the window
    }
  }

  // Books a collective or send on rank r's communication lane; returns its end.
  std::int64_t communicate(std::int32_t r, std::int64_t issue, std::int64_t ns, SpanKind kind,
                           std::int32_t name, std::int32_t g, std::int32_t mb, double bytes = 0) {
    if (ns <= 0) return issue;
    const std::int64_t start = lanes_[static_cast<std::size_t>(r)].place(issue, ns);
    if (kind == SpanKind::collective) {
      activity_[static_cast<std::size_t>(r)].collectives.push_back({start, start + ns});
      collective_end_[static_cast<std::size_t>(r)] = std::max(collective_end_[static_cast<std::size_t>(r)], start + ns);
    }
    if (!keep_) return start + ns;
    Span s = span(start, ns, NsSegment{Lane::communication, Phase::communication, ns, 0, bytes, -1}, name,
                  g, mb);
    s.kind = kind;
    comm_track(r).spans.push_back(s);
    return start + ns;
  }

  // Runs rank r's next op if its inputs are known; false when blocked or finished.
  bool step(std::int32_t r) {
    const auto ri = static_cast<std::size_t>(r);
    const auto& ops = t_.ranks[ri];
    const auto i = static_cast<std::int64_t>(next_[ri]);
    if (next_[ri] >= ops.size()) return false;
    const ScheduleOp& o = ops[next_[ri]];
    const std::int32_t g = t_.global_chunk(r, o.chunk);
    const std::size_t k = pair(g, o.micro_batch);
    std::int64_t ready = 0;
    switch (o.kind) {
      case OpKind::forward:
        ready = fwd_ready_[k];
        break;
      case OpKind::backward:
        ready = f_done_[k] < 0 ? kUnknown : bwd_ready_[k];
        break;
      case OpKind::weight_grad:
        ready = b_done_[k];
        break;
    }
    if (ready < 0) return false;
    const NsChunkCost& c = cost(g);
    std::int64_t start = std::max(free_[ri], ready);
    const std::size_t ci = ri * static_cast<std::size_t>(t_.v) + static_cast<std::size_t>(o.chunk);
    const bool gather = c.param_gather > 0 && (first_f_[ci] == i || first_b_[ci] == i);
    if (gather) {  // ZeRO-3 prefetch: issued when the previous op on this rank started
      const bool fwd = o.kind == OpKind::forward;
      const std::int32_t name = keep_ ? other_name((fwd ? "gather F" : "gather B") + std::to_string(g)) : -1;
      const std::int64_t issue = !c.param_prefetch ? start : (i == 0 ? 0 : prev_start_[ri]);
      start = std::max(start, communicate(r, issue, c.param_gather,
                                          SpanKind::collective, name, g, -1));
    }
    RankActivity& a = activity_[ri];
    if (i == 0) {
      a.occupied_begin_ns = start;
      a.occupied_end_ns = -1;  // until the op ends: lane_wait() knows the rank's first work
    } else if (start > free_[ri]) {
      gap(ri, free_[ri], start);
    }
    const bool record = a.compute_begin_ns > a.compute_end_ns || next_[ri] + 1 == ops.size();
    std::int64_t end = start;
    const std::int32_t mb = o.micro_batch;
    if (o.kind == OpKind::forward) {
      end = segments(record, r, end, c.forward, op_name(0, 'F', "", g, mb), g, mb);
    } else if (o.kind == OpKind::backward) {
      end = segments(record, r, end, c.recompute, op_name(3, 'R', "", g, mb), g, mb);
      const std::int32_t name = op_name(1, 'B', "", g, mb);
      end = segments(record, r, end, t_.split_backward ? c.backward : c.fused_backward, name, g, mb);
    } else {
      end = segments(record, r, end, c.weight_grad, op_name(2, 'W', "", g, mb), g, mb);
    }
    if (i == 0) a.occupied_end_ns = end;
    prev_start_[ri] = start;
    free_[ri] = end;
    ++next_[ri];
    if (o.kind == OpKind::forward) {
      f_done_[k] = end;
      if (g + 1 < stages_) {
        const std::int32_t to = r + 1 == t_.p ? 0 : r + 1;  // rank_of(g + 1) without a division
        const std::int64_t arrive = to == r ? end
                                            : communicate(r, end, c.send_activation, SpanKind::send,
                                                          op_name(4, 'F', "send ", g, mb), g, mb);
        fwd_ready_[pair(g + 1, mb)] = arrive;
        wake(to);
      } else {
        bwd_ready_[k] = end;  // the loss: the last chunk's backward needs only its own forward
      }
    } else if (o.kind == OpKind::backward) {
      b_done_[k] = end;
      if (g > 0) {
        const std::int32_t to = r == 0 ? t_.p - 1 : r - 1;  // rank_of(g - 1)
        const std::int64_t arrive = to == r ? end
                                            : communicate(r, end, c.send_gradient, SpanKind::send,
                                                          op_name(5, 'B', "send ", g, mb), g, mb);
        bwd_ready_[pair(g - 1, mb)] = arrive;
        wake(to);
      }
    }
    if (in_.dp_issue == DpReduceIssue::per_chunk && last_bwd_[ci] == i)
      reduce(r, g, start, end);
    return true;
  }

  // Issues chunk g's gradient reduction in buckets spread over [start, end] (see header).
  void reduce(std::int32_t r, std::int32_t g, std::int64_t start, std::int64_t end) {
    const NsChunkCost& c = cost(g);
    if (c.dp_reduce <= 0) return;
    const std::int64_t n = in_.dp_buckets;
    const std::int32_t name = dp_name(g);
    for (std::int64_t b = 0; b < n; ++b) {
      const std::int64_t ns = c.dp_reduce / n + (b == n - 1 ? c.dp_reduce % n : 0);
      const std::int64_t issue = start + (end - start) * (b + 1) / n;
      auto& done = reduce_end_[static_cast<std::size_t>(r)];
      done = std::max(done, communicate(r, issue, ns, SpanKind::collective, name, g, -1,
                                        c.dp_reduce_bytes / static_cast<double>(n)));
    }
  }

  // Data-parallel reduction spans: the input's label ("DP all-reduce · dp x cp 16 · across
  // nodes"), or "dp <chunk>".
  std::int32_t dp_name(std::int32_t g) {
    if (!keep_) return -1;
    return in_.dp_reduce_label >= 0 ? label_name(in_.dp_reduce_label) : other_name("dp " + std::to_string(g));
  }

  SimulationResult finish() {
    SimulationResult res;
    const auto p = static_cast<std::size_t>(t_.p);
    const std::int32_t opt_name = keep_ ? other_name("optimizer") : -1;
    const std::int64_t opt_ns = seconds_to_ns(in_.optimizer_seconds);
    const std::int64_t gather_ns = seconds_to_ns(in_.optimizer_gather_seconds);
    const std::int32_t gather_name = !keep_ || gather_ns <= 0 ? -1
                                     : in_.optimizer_gather_label >= 0 ? label_name(in_.optimizer_gather_label)
                                                                       : other_name("parameter all-gather");
    for (std::size_t r = 0; r < p; ++r) {
      const auto rank = static_cast<std::int32_t>(r);
      if (in_.dp_issue == DpReduceIssue::at_end) {
        for (std::int32_t local = 0; local < t_.v; ++local) {
          const std::int32_t g = t_.global_chunk(rank, local);
          const NsChunkCost& c = cost(g);
          reduce_end_[r] = std::max(
              reduce_end_[r], communicate(rank, free_[r], c.dp_reduce, SpanKind::collective, dp_name(g), g, -1,
                                          c.dp_reduce_bytes));
        }
      }
      const std::int64_t opt_start = std::max(free_[r], reduce_end_[r]);
      if (opt_ns > 0 && keep_) {
        compute_track(rank).spans.push_back(
            span(opt_start, opt_ns, NsSegment{Lane::compute, Phase::optimizer, opt_ns, 0, 0, -1},
                 opt_name, -1, -1));
      }
      communicate(rank, opt_start + opt_ns, gather_ns, SpanKind::collective, gather_name, -1, -1,
                  in_.optimizer_gather_bytes);  // ends the iteration through the lane's end
      res.busy_ns.push_back(busy_[r]);
      res.compute_end_ns.push_back(free_[r]);
      res.reduce_wait_ns.push_back(opt_start - free_[r]);
      res.iteration_ns = std::max({res.iteration_ns, opt_start + opt_ns, lanes_[r].end()});
      if (!keep_) continue;
      auto& comm = comm_track(rank).spans;
      std::sort(comm.begin(), comm.end(),
                [](const Span& a, const Span& b) { return a.start_ns < b.start_ns; });
    }
    for (std::size_t r = 0; r < p; ++r) {
      if (!t_.ranks[r].empty()) activity_[r].occupied_end_ns = free_[r];
    }
    set_bubbles(res, schedule_bubbles(std::move(activity_)), t_.p);
    if (keep_) res.timeline = std::move(tl_);
    return res;
  }

  const ScheduleTable& t_;
  const SimulationInput& in_;
  std::vector<NsChunkCost> costs_;
  std::int32_t m_, stages_;
  bool keep_;  // SimulationInput::keep_timeline
  // Per (global chunk, micro-batch): when F's input / B's output-gradient arrived, F/B ended.
  std::vector<std::int64_t> fwd_ready_, bwd_ready_, f_done_, b_done_;
  std::vector<std::int32_t> names_;
  std::unordered_map<std::string, std::int32_t> other_names_;
  std::vector<std::int32_t> label_ids_;  // name ids of SimulationInput::labels, -1 until used
  std::vector<std::size_t> next_;
  std::vector<std::int64_t> free_, prev_start_, busy_, reduce_end_;
  // Per (rank, local chunk), index r * v + c: positions of its first F, first B, last B/W op.
  std::vector<std::int64_t> first_f_, first_b_, last_bwd_;
  std::vector<CommLane> lanes_;
  std::vector<RankActivity> activity_;      // per rank, for the bubble
  std::vector<std::int64_t> collective_end_;  // per rank: the latest end of its collectives so far
  std::vector<char> queued_;  // rank is in work_
  std::vector<std::int32_t> work_;  // ranks to step, a ring of capacity p from work_head_
  std::size_t work_head_ = 0, work_count_ = 0;
  Timeline tl_;
};

}  // namespace

Result<SimulationResult> simulate(const ScheduleTable& table, const SimulationInput& input) {
  if (auto errors = check_schedule(table); !errors.empty()) return errors;
  return simulate_well_formed(table, input);
}

Result<SimulationResult> simulate_well_formed(const ScheduleTable& table, const SimulationInput& input) {
  auto costs = to_ns_costs(input, static_cast<std::size_t>(table.stages()));
  if (!costs.ok()) return costs.errors();
  if (input.shared_processors > 0 && input.threads_per_rank * table.p > input.shared_processors) {
    return simulate_shared(table, input, std::move(costs).value());
  }
  return Simulator(table, input, std::move(costs).value()).run();
}

}  // namespace plansight::estimator
