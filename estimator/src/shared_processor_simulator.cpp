// The iteration simulator when ranks share processors (SimulationInput::shared_processors): the
// probe's ranks are threads on the cores of one machine, so when TP x PP x DP threads outnumber
// the cores, a rank computes more slowly while other ranks compute too. Unlike simulate()'s
// worklist, which may run one rank far ahead of another because its durations never depend on
// the others, this loop advances all ranks together in time order.
//
// Model: fluid processor sharing (Kleinrock 1967; the limit of round-robin with a vanishing time
// slice). The OS scheduler comes close on the probe's ranks: its wake-up preemption runs a rank
// woken by a message at once, so tensor-parallel peers stay in step. Each pipeline rank stands
// for `threads_per_rank` identical threads (its TP, DP and CP copies run the same ops at the same
// time); while n pipeline ranks run compute segments, each thread progresses at
// min(1, processors / (n * threads_per_rank)) of its dedicated speed. Communication (TP
// collectives, p2p sends, DP reductions, ZeRO-3 gathers) keeps its calibrated wall time and
// takes no processor share: calibration measured it with the ranks sharing the cores already.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <unordered_map>

#include "plansight/estimator/cancellation.h"
#include "plansight/estimator/schedule_metrics.h"
#include "shared_processor_simulator.h"

namespace plansight::estimator {
namespace {

constexpr double kUnknown = -1;
constexpr std::int64_t kNever = std::numeric_limits<std::int64_t>::max();

enum class RankState : std::uint8_t {
  idle,      // about to look at its next op
  blocked,   // the next op's input time is not known yet; a peer wakes it
  timer,     // waits until `at_` (an input arrives, a gather or a TP collective ends)
  running,   // runs a compute segment
  finished,  // optimizer step done
};

// One piece of the op a rank is running, with the span name it is drawn with.
struct Piece {
  NsSegment segment;
  std::int32_t name;
};

class SharedSimulator {
 public:
  SharedSimulator(const ScheduleTable& t, const SimulationInput& in, std::vector<NsChunkCost> costs)
      : t_(t), in_(in), costs_(std::move(costs)), m_(t.m), stages_(t.stages()),
        threads_(static_cast<double>(std::max<std::int64_t>(in.threads_per_rank, 1))),
        processors_(static_cast<double>(in.shared_processors)) {
    const auto pairs = static_cast<std::size_t>(stages_) * static_cast<std::size_t>(m_);
    fwd_ready_.assign(pairs, kUnknown);
    std::fill_n(fwd_ready_.begin(), m_, 0.0);
    bwd_ready_.assign(pairs, kUnknown);
    f_done_.assign(pairs, kUnknown);
    b_done_.assign(pairs, kUnknown);
    const auto p = static_cast<std::size_t>(t.p);
    ranks_.resize(p);
    lanes_.resize(p);
    first_f_.assign(p, std::vector<std::int64_t>(static_cast<std::size_t>(t.v), -1));
    first_b_ = first_f_;
    last_bwd_ = first_f_;
    for (std::size_t r = 0; r < p; ++r) {
      const auto& ops = t.ranks[r];
      for (std::size_t i = 0; i < ops.size(); ++i) {
        const auto c = static_cast<std::size_t>(ops[i].chunk);
        const auto si = static_cast<std::int64_t>(i);
        if (ops[i].kind == OpKind::forward && first_f_[r][c] < 0) first_f_[r][c] = si;
        if (ops[i].kind == OpKind::backward && first_b_[r][c] < 0) first_b_[r][c] = si;
        if (ops[i].kind != OpKind::forward) last_bwd_[r][c] = si;
      }
      const auto rank = static_cast<std::int32_t>(r);
      tl_.tracks.push_back(Track{rank, Lane::compute, -1, "rank " + std::to_string(r), {}});
      tl_.tracks.push_back(Track{rank, Lane::communication, -1, "rank " + std::to_string(r) + " comm", {}});
    }
    tl_.source = TimelineSource::predicted;
    tl_.title = in.title;
  }

  Result<SimulationResult> run() {
    for (std::uint32_t polls = 0;; ++polls) {
      if ((polls & 1023u) == 1023u && cancel_requested()) return make_error("estimate", kCancelledMessage);
      // Everything that can start or continue at `now` does, until nothing changes.
      bool changed = true;
      while (changed) {
        changed = false;
        for (std::int32_t r = 0; r < t_.p; ++r) changed = advance(r) || changed;
      }
      std::int64_t running = 0;
      for (const auto& s : ranks_) running += s.state == RankState::running ? 1 : 0;
      const double speed = running > 0 ? std::min(1.0, processors_ / (threads_ * static_cast<double>(running))) : 1.0;
      std::int64_t next = kNever;
      for (const auto& s : ranks_) {
        if (s.state == RankState::running) {
          next = std::min(next, now_ + std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(s.remaining / speed))));
        } else if (s.state == RankState::timer) {
          next = std::min(next, std::max(s.at, now_));
        }
      }
      if (next == kNever) break;
      const double progressed = static_cast<double>(next - now_) * speed;
      now_ = next;
      for (auto& s : ranks_) {
        if (s.state == RankState::running) s.remaining -= progressed;
      }
    }
    for (std::int32_t r = 0; r < t_.p; ++r) {
      if (ranks_[static_cast<std::size_t>(r)].state != RankState::finished) {
        std::vector<std::size_t> next;
        for (const auto& s : ranks_) next.push_back(s.next);
        return make_error("schedule", deadlock_message(t_, next));
      }
    }
    return finish();
  }

 private:
  struct Rank {
    RankState state = RankState::idle;
    std::size_t next = 0;            // next op in the rank's list (ops.size(): the optimizer)
    std::vector<Piece> pieces;       // of the running op
    std::size_t piece = 0;
    double remaining = 0;            // work of the running compute piece, ns at full speed
    std::int64_t piece_start = 0;
    std::int64_t op_start = 0;
    std::int64_t prev_start = 0;     // start of the previous op (issue time of a prefetch)
    std::int64_t at = 0;             // timer: when to go on
    bool op_begun = false;           // timer: waiting inside the op (after a collective) or before it
    std::int64_t busy = 0, compute_end = 0, reduce_end = 0, optimizer_start = 0;
    bool in_optimizer = false;
  };

  std::size_t pair(std::int32_t g, std::int32_t mb) const {
    return static_cast<std::size_t>(g) * static_cast<std::size_t>(m_) + static_cast<std::size_t>(mb);
  }
  const NsChunkCost& cost(std::int32_t g) const { return costs_[costs_.size() == 1 ? 0 : static_cast<std::size_t>(g)]; }
  Track& compute_track(std::int32_t r) { return tl_.tracks[2 * static_cast<std::size_t>(r)]; }
  Track& comm_track(std::int32_t r) { return tl_.tracks[2 * static_cast<std::size_t>(r) + 1]; }

  // The name of labelled segments (a group's collectives).
  std::int32_t label_name(std::int32_t label) { return name(in_.labels[static_cast<std::size_t>(label)]); }

  std::int32_t name(const std::string& text) {
    auto [it, fresh] = names_.try_emplace(text, static_cast<std::int32_t>(tl_.names.size()));
    if (fresh) tl_.names.push_back(text);
    return it->second;
  }
  std::int32_t op_name(const char* prefix, char letter, std::int32_t g, std::int32_t mb) {
    if (!in_.keep_timeline) return name("op");  // no timeline is returned: one shared name
    char buf[48];
    std::snprintf(buf, sizeof buf, "%s%c%d.%d", prefix, letter, g, mb);
    if (prefix[0] == 's' && in_.send_label >= 0) {  // a send: its group and link, as the other simulator names it
      return name(std::string(buf) + " · " + in_.labels[static_cast<std::size_t>(in_.send_label)]);
    }
    return name(buf);
  }

  Span span(std::int64_t start, std::int64_t end, const NsSegment& s, std::int32_t name_id, std::int32_t g, std::int32_t mb,
            SpanKind kind) const {
    Span out;
    out.start_ns = start;
    out.duration_ns = end - start;
    out.flops = s.flops;
    out.bytes = s.bytes;
    out.name_id = name_id;
    out.stage = g;
    out.micro_batch = mb;
    out.kind = kind;
    out.phase = s.phase;
    return out;
  }

  // Books communication on rank r's lane from `issue`; returns its end.
  std::int64_t communicate(std::int32_t r, std::int64_t issue, std::int64_t ns, SpanKind kind, std::int32_t name_id,
                           std::int32_t g, std::int32_t mb, double bytes = 0) {
    if (ns <= 0) return issue;
    const std::int64_t start = lanes_[static_cast<std::size_t>(r)].place(issue, ns);
    const NsSegment seg{Lane::communication, Phase::communication, ns, 0, bytes, -1};
    comm_track(r).spans.push_back(span(start, start + ns, seg, name_id, g, mb, kind));
    return start + ns;
  }

  // Moves rank r on as far as it can at `now_`; true when its state changed.
  bool advance(std::int32_t r) {
    Rank& s = ranks_[static_cast<std::size_t>(r)];
    switch (s.state) {
      case RankState::finished:
      case RankState::blocked: return false;
      case RankState::running:
        if (s.remaining > 0.5) return false;
        end_compute_piece(r);
        return true;
      case RankState::timer:
        if (s.at > now_) return false;
        if (s.in_optimizer) {
          s.state = RankState::running;  // its reductions are done: the step itself
        } else if (s.op_begun) {
          s.state = RankState::running;  // placeholder until next_piece() decides
          next_piece(r);
        } else {
          begin_op(r);
        }
        return true;
      case RankState::idle: return try_start(r);
    }
    return false;
  }

  // Looks at rank r's next op: blocked, a timer until its inputs (and gather) are there, or begun.
  bool try_start(std::int32_t r) {
    Rank& s = ranks_[static_cast<std::size_t>(r)];
    const auto ri = static_cast<std::size_t>(r);
    const auto& ops = t_.ranks[ri];
    if (s.next >= ops.size()) return start_optimizer(r);
    const ScheduleOp& o = ops[s.next];
    const std::int32_t g = t_.global_chunk(r, o.chunk);
    const std::size_t k = pair(g, o.micro_batch);
    double ready = kUnknown;
    switch (o.kind) {
      case OpKind::forward: ready = fwd_ready_[k]; break;
      case OpKind::backward: ready = f_done_[k] < 0 ? kUnknown : bwd_ready_[k]; break;
      case OpKind::weight_grad: ready = b_done_[k]; break;
    }
    if (ready < 0) {
      s.state = RankState::blocked;
      return true;
    }
    std::int64_t start = std::max(now_, static_cast<std::int64_t>(ready));
    const NsChunkCost& c = cost(g);
    const auto i = static_cast<std::int64_t>(s.next);
    const auto ci = static_cast<std::size_t>(o.chunk);
    if (c.param_gather > 0 && (first_f_[ri][ci] == i || first_b_[ri][ci] == i)) {
      const bool fwd = o.kind == OpKind::forward;
      const std::int32_t id = name((fwd ? "gather F" : "gather B") + std::to_string(g));
      const std::int64_t issue = !c.param_prefetch ? start : (i == 0 ? 0 : s.prev_start);
      start = std::max(start, communicate(r, issue, c.param_gather, SpanKind::collective, id, g, -1));
    }
    s.state = RankState::timer;
    s.op_begun = false;
    s.at = start;
    if (start <= now_) begin_op(r);
    return true;
  }

  void begin_op(std::int32_t r) {
    Rank& s = ranks_[static_cast<std::size_t>(r)];
    const ScheduleOp& o = t_.ranks[static_cast<std::size_t>(r)][s.next];
    const std::int32_t g = t_.global_chunk(r, o.chunk), mb = o.micro_batch;
    const NsChunkCost& c = cost(g);
    s.pieces.clear();
    auto add = [&](const std::vector<NsSegment>& segs, std::int32_t id) {
      for (const NsSegment& seg : segs) {
        if (seg.ns > 0) s.pieces.push_back(Piece{seg, seg.lane == Lane::communication && seg.label >= 0 ? label_name(seg.label) : id});
      }
    };
    if (o.kind == OpKind::forward) {
      add(c.forward, op_name("", 'F', g, mb));
    } else if (o.kind == OpKind::backward) {
      add(c.recompute, op_name("", 'R', g, mb));
      add(t_.split_backward ? c.backward : c.fused_backward, op_name("", 'B', g, mb));
    } else {
      add(c.weight_grad, op_name("", 'W', g, mb));
    }
    s.op_start = now_;
    s.piece = 0;
    s.op_begun = true;
    start_piece(r);
  }

  // Starts piece s.piece at now_, or ends the op when none is left.
  void start_piece(std::int32_t r) {
    Rank& s = ranks_[static_cast<std::size_t>(r)];
    if (s.piece >= s.pieces.size()) {
      end_op(r);
      return;
    }
    const Piece& p = s.pieces[s.piece];
    if (p.segment.lane == Lane::compute) {
      s.state = RankState::running;
      s.remaining = static_cast<double>(p.segment.ns);
      s.piece_start = now_;
      return;
    }
    // A collective inside the op (exposed TP/CP/DP time): the compute lane waits for it.
    const ScheduleOp& o = t_.ranks[static_cast<std::size_t>(r)][s.next];
    const std::int32_t g = t_.global_chunk(r, o.chunk);
    const std::int64_t start = lanes_[static_cast<std::size_t>(r)].place(now_, p.segment.ns);
    comm_track(r).spans.push_back(span(start, start + p.segment.ns, p.segment, p.name, g, o.micro_batch, SpanKind::collective));
    s.state = RankState::timer;
    s.at = start + p.segment.ns;
  }

  void next_piece(std::int32_t r) {
    ++ranks_[static_cast<std::size_t>(r)].piece;
    start_piece(r);
  }

  void end_compute_piece(std::int32_t r) {
    Rank& s = ranks_[static_cast<std::size_t>(r)];
    if (s.in_optimizer) {
      const NsSegment seg{Lane::compute, Phase::optimizer, 0, 0, 0, -1};
      if (now_ > s.optimizer_start) {
        compute_track(r).spans.push_back(span(s.optimizer_start, now_, seg, name("optimizer"), -1, -1, SpanKind::kernel));
      }
      s.state = RankState::finished;
      iteration_end_ = std::max(iteration_end_, now_);
      // ZeRO-1/2's parameter all-gather after the step: communication, so it keeps its time.
      const std::int64_t gather_ns = seconds_to_ns(in_.optimizer_gather_seconds);
      if (gather_ns > 0) {
        const std::int32_t id = in_.optimizer_gather_label >= 0 ? label_name(in_.optimizer_gather_label) : name("parameter all-gather");
        iteration_end_ = std::max(iteration_end_, communicate(r, now_, gather_ns, SpanKind::collective, id, -1, -1,
                                                              in_.optimizer_gather_bytes));
      }
      return;
    }
    const Piece& p = s.pieces[s.piece];
    const ScheduleOp& o = t_.ranks[static_cast<std::size_t>(r)][s.next];
    compute_track(r).spans.push_back(
        span(s.piece_start, now_, p.segment, p.name, t_.global_chunk(r, o.chunk), o.micro_batch, SpanKind::kernel));
    s.busy += now_ - s.piece_start;
    next_piece(r);
  }

  void end_op(std::int32_t r) {
    Rank& s = ranks_[static_cast<std::size_t>(r)];
    const auto ri = static_cast<std::size_t>(r);
    const ScheduleOp& o = t_.ranks[ri][s.next];
    const std::int32_t g = t_.global_chunk(r, o.chunk), mb = o.micro_batch;
    const std::size_t k = pair(g, mb);
    const NsChunkCost& c = cost(g);
    const double end = static_cast<double>(now_);
    if (o.kind == OpKind::forward) {
      f_done_[k] = end;
      if (g + 1 < stages_) {
        const std::int32_t to = t_.rank_of(g + 1);
        const std::int64_t arrive =
            to == r ? now_ : communicate(r, now_, c.send_activation, SpanKind::send, op_name("send ", 'F', g, mb), g, mb);
        fwd_ready_[pair(g + 1, mb)] = static_cast<double>(arrive);
        wake(to);
      } else {
        bwd_ready_[k] = end;  // the loss: the last chunk's backward needs only its own forward
      }
    } else if (o.kind == OpKind::backward) {
      b_done_[k] = end;
      if (g > 0) {
        const std::int32_t to = t_.rank_of(g - 1);
        const std::int64_t arrive =
            to == r ? now_ : communicate(r, now_, c.send_gradient, SpanKind::send, op_name("send ", 'B', g, mb), g, mb);
        bwd_ready_[pair(g - 1, mb)] = static_cast<double>(arrive);
        wake(to);
      }
    }
    for (std::int32_t peer = 0; peer < t_.p; ++peer) wake(peer);  // W ops wait on this rank's own B
    const auto ci = static_cast<std::size_t>(o.chunk);
    if (in_.dp_issue == DpReduceIssue::per_chunk && last_bwd_[ri][ci] == static_cast<std::int64_t>(s.next)) {
      reduce(r, g, s.op_start, now_);
    }
    s.prev_start = s.op_start;
    s.compute_end = now_;
    ++s.next;
    s.state = RankState::idle;
  }

  void wake(std::int32_t r) {
    Rank& s = ranks_[static_cast<std::size_t>(r)];
    if (s.state == RankState::blocked) s.state = RankState::idle;
  }

  // Chunk g's gradient reduction in dp_buckets buckets spread over its last backward op.
  void reduce(std::int32_t r, std::int32_t g, std::int64_t start, std::int64_t end) {
    const NsChunkCost& c = cost(g);
    if (c.dp_reduce <= 0) return;
    const std::int64_t n = in_.dp_buckets;
    const std::int32_t id = dp_name(g);
    Rank& s = ranks_[static_cast<std::size_t>(r)];
    for (std::int64_t b = 0; b < n; ++b) {
      const std::int64_t ns = c.dp_reduce / n + (b == n - 1 ? c.dp_reduce % n : 0);
      const std::int64_t issue = start + (end - start) * (b + 1) / n;
      s.reduce_end = std::max(s.reduce_end, communicate(r, issue, ns, SpanKind::collective, id, g, -1,
                                                        c.dp_reduce_bytes / static_cast<double>(n)));
    }
  }

  // Data-parallel reduction spans: the input's label, or "dp <chunk>" (as pipeline_simulator).
  std::int32_t dp_name(std::int32_t g) {
    return in_.dp_reduce_label >= 0 ? label_name(in_.dp_reduce_label) : name("dp " + std::to_string(g));
  }

  // After the rank's last op: its reductions (all of them now, without overlap), then the
  // optimizer step, which computes and so shares the processors too.
  bool start_optimizer(std::int32_t r) {
    Rank& s = ranks_[static_cast<std::size_t>(r)];
    if (in_.dp_issue == DpReduceIssue::at_end) {
      for (std::int32_t c = 0; c < t_.v; ++c) {
        const std::int32_t g = t_.global_chunk(r, c);
        s.reduce_end = std::max(s.reduce_end, communicate(r, s.compute_end, cost(g).dp_reduce, SpanKind::collective,
                                                          dp_name(g), g, -1, cost(g).dp_reduce_bytes));
      }
    }
    s.optimizer_start = std::max(s.compute_end, s.reduce_end);
    s.in_optimizer = true;
    s.remaining = static_cast<double>(optimizer_ns_);
    s.state = s.optimizer_start > now_ ? RankState::timer : RankState::running;
    s.at = s.optimizer_start;
    return true;
  }

  SimulationResult finish() {
    SimulationResult res;
    for (std::int32_t r = 0; r < t_.p; ++r) {
      const Rank& s = ranks_[static_cast<std::size_t>(r)];
      res.busy_ns.push_back(s.busy);
      res.compute_end_ns.push_back(s.compute_end);
      res.reduce_wait_ns.push_back(s.optimizer_start - s.compute_end);
      res.iteration_ns = std::max({res.iteration_ns, iteration_end_, s.optimizer_start, lanes_[static_cast<std::size_t>(r)].end()});
      if (!in_.keep_timeline) continue;
      for (auto* track : {&compute_track(r), &comm_track(r)}) {
        std::sort(track->spans.begin(), track->spans.end(), [](const Span& a, const Span& b) { return a.start_ns < b.start_ns; });
      }
    }
    // Spans are built either way here (the probe's plans are small): the bubble is the timeline's.
    set_bubbles(res, schedule_bubbles(tl_), t_.p);
    if (in_.keep_timeline) res.timeline = std::move(tl_);
    return res;
  }

  const ScheduleTable& t_;
  const SimulationInput& in_;
  std::vector<NsChunkCost> costs_;
  std::int32_t m_, stages_;
  double threads_, processors_;
  std::int64_t optimizer_ns_ = seconds_to_ns(in_.optimizer_seconds);
  std::int64_t now_ = 0, iteration_end_ = 0;
  std::vector<double> fwd_ready_, bwd_ready_, f_done_, b_done_;
  std::vector<Rank> ranks_;
  std::vector<CommLane> lanes_;
  std::vector<std::vector<std::int64_t>> first_f_, first_b_, last_bwd_;  // [rank][local chunk]
  std::unordered_map<std::string, std::int32_t> names_;
  Timeline tl_;
};

}  // namespace

Result<SimulationResult> simulate_shared(const ScheduleTable& table, const SimulationInput& input,
                                         std::vector<NsChunkCost> costs) {
  return SharedSimulator(table, input, std::move(costs)).run();
}

}  // namespace plansight::estimator
