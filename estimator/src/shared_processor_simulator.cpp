// The iteration simulator when ranks share processors (SimulationInput::shared_processors): the
// probe's ranks are threads on the cores of one machine, so when TP x PP x DP threads outnumber
// the cores, a rank computes more slowly while other ranks compute too. Unlike the dedicated
// model's worklist (pipeline_simulator.cpp), which may run one rank far ahead of another because
// its durations never depend on the others, this loop advances all ranks together in time order;
// both drive the same engine (iteration_engine.h).
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
#include <limits>
#include <vector>

#include "plansight/estimator/cancellation.h"
#include "iteration_engine.h"
#include "shared_processor_simulator.h"

namespace plansight::estimator {
namespace {

constexpr std::int64_t kNever = std::numeric_limits<std::int64_t>::max();

enum class RankState : std::uint8_t {
  idle,      // about to look at its next op
  blocked,   // the next op's input time is not known yet; a peer wakes it
  timer,     // waits until `at` (an input arrives, a gather or a TP collective ends)
  running,   // runs a compute segment
  finished,  // optimizer step done
};

// One piece of the op a rank is running, with the span name it is drawn with.
struct Piece {
  NsSegment segment;
  std::int32_t name;
};

// Spans are always built (the bubble is the timeline's, and the probe's plans are small); the
// result keeps the timeline only when asked.
class SharedRun : IterationEngine {
 public:
  SharedRun(const ScheduleTable& t, const SimulationInput& in, NsCosts costs)
      : IterationEngine(t, nullptr, in, std::move(costs), true),
        threads_(static_cast<double>(std::max<std::int64_t>(in.threads_per_rank, 1))),
        processors_(static_cast<double>(in.shared_processors)),
        ranks_(static_cast<std::size_t>(t.p)) {}

  // Events in time order, each O(log p): a worklist of the ranks that may move at `now_`, a heap
  // of timers by real time, and a heap of running compute pieces by the virtual time at which
  // they end. Every running thread progresses alike (fluid sharing), so one virtual clock, the
  // work each has done since the run began, stands for all: it advances at the current speed,
  // and a piece of w ns started at virtual time V ends when the clock reaches V + w. (Scanning
  // every rank at each event, as this loop did first, took 850 ms for a 64-stage 1F1B estimate
  // of 1,024 micro-batches on 8 processors, this loop 270-310 ms, alternated on a 2-core machine.)
  Result<SimulationResult> run() {
    for (std::int32_t r = 0; r < t_.p; ++r) wake(r);
    for (std::uint32_t polls = 0;; ++polls) {
      if ((polls & 1023u) == 1023u && cancel_requested()) return make_error("estimate", kCancelledMessage);
      // Everything that can start or continue at `now` does, until nothing changes.
      while (!work_.empty()) {
        const std::int32_t r = work_.back();
        work_.pop_back();
        queued_[static_cast<std::size_t>(r)] = 0;
        while (advance(r)) {
        }
      }
      const double speed = running_ > 0 ? std::min(1.0, processors_ / (threads_ * static_cast<double>(running_))) : 1.0;
      std::int64_t next = kNever;
      if (!pieces_.empty()) {
        const double remaining = pieces_.front().end_work - work_done_;
        next = now_ + std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(remaining / speed)));
      }
      if (!timers_.empty()) next = std::min(next, std::max(timers_.front().at, now_));
      if (next == kNever) break;
      work_done_ += static_cast<double>(next - now_) * speed;
      now_ = next;
      // A piece within half a nanosecond of its work is done (rounding of the clock).
      while (!pieces_.empty() && pieces_.front().end_work - work_done_ <= 0.5) {
        std::pop_heap(pieces_.begin(), pieces_.end(), later_end);
        const std::int32_t r = pieces_.back().rank;
        pieces_.pop_back();
        ranks_[static_cast<std::size_t>(r)].remaining = 0;
        wake(r);
      }
      while (!timers_.empty() && timers_.front().at <= now_) {
        std::pop_heap(timers_.begin(), timers_.end(), later_timer);
        wake(timers_.back().rank);
        timers_.pop_back();
      }
    }
    for (const auto& s : ranks_) {
      if (s.state != RankState::finished) return make_error("schedule", deadlock_message(t_.p, *rows_, next_));
    }
    return results(schedule_bubbles(tl_));
  }

 private:
  struct Rank {
    RankState state = RankState::idle;
    std::vector<Piece> pieces;  // of the running op
    std::size_t piece = 0;
    double remaining = 0;       // work of the running compute piece, ns at full speed
    std::int64_t piece_start = 0;
    std::int64_t op_start = 0;
    std::size_t first_span = 0;  // the op's first span on the compute track (draw_overlapped)
    std::int64_t at = 0;        // timer: when to go on
    bool op_begun = false;      // timer: waiting inside the op (after a collective) or before it
    bool in_optimizer = false;
  };

  const ScheduleOp& op(std::int32_t r) const {
    return t_.ranks[static_cast<std::size_t>(r)][next_[static_cast<std::size_t>(r)]];
  }

  // Moves rank r on as far as it can at `now_`; true when its state changed.
  bool advance(std::int32_t r) {
    Rank& s = ranks_[static_cast<std::size_t>(r)];
    switch (s.state) {
      case RankState::finished:
      case RankState::blocked: return false;
      case RankState::running:
        if (s.remaining > 0.5) return false;  // its piece's end is on the heap
        --running_;
        end_compute_piece(r);
        return true;
      case RankState::timer:
        if (s.at > now_) return false;
        if (s.in_optimizer) {
          run_piece(r, s.remaining);  // its reductions are done: the step itself
        } else if (s.op_begun) {
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
    if (next_[static_cast<std::size_t>(r)] >= t_.ranks[static_cast<std::size_t>(r)].size()) return start_optimizer(r);
    const ScheduleOp& o = op(r);
    const std::int32_t g = global_of(r, o.chunk);
    const std::int64_t ready = input_ready(r, o, g);
    if (ready < 0) {
      s.state = RankState::blocked;
      blocked_.push_back(r);
      return false;  // until an op ends somewhere (end_op)
    }
    const std::int64_t start = gather_before(r, o, g, std::max(now_, ready));
    s.op_begun = false;
    if (start <= now_) {
      s.state = RankState::timer;
      begin_op(r);
    } else {
      set_timer(r, start);
    }
    return true;
  }

  void begin_op(std::int32_t r) {
    Rank& s = ranks_[static_cast<std::size_t>(r)];
    const ScheduleOp& o = op(r);
    const std::int32_t g = global_of(r, o.chunk);
    const NsChunkCost& c = cost(g);
    s.pieces.clear();
    auto add = [&](const std::vector<NsSegment>& segs, std::int32_t id) {
      for (const NsSegment& seg : segs) {
        if (seg.ns > 0) s.pieces.push_back(Piece{seg, seg.lane == Lane::communication ? segment_name(seg, id) : id});
      }
    };
    if (o.kind == OpKind::backward) add(c.recompute, op_name(o, g, true));
    add(op_segments(o, c), op_name(o, g));
    s.op_start = now_;
    s.first_span = keep_ ? compute_track(r).spans.size() : 0;
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
      s.piece_start = now_;
      run_piece(r, static_cast<double>(p.segment.ns));
      return;
    }
    // A collective inside the op (exposed TP/CP/EP time): the compute lane waits for it.
    const ScheduleOp& o = op(r);
    const std::int64_t start = lanes_[static_cast<std::size_t>(r)].place(now_, p.segment.ns);
    comm_track(r).spans.push_back(span(start, p.segment.ns, p.segment, p.name, global_of(r, o.chunk), o.micro_batch));
    set_timer(r, start + p.segment.ns);
  }

  void next_piece(std::int32_t r) {
    ++ranks_[static_cast<std::size_t>(r)].piece;
    start_piece(r);
  }

  void end_compute_piece(std::int32_t r) {
    Rank& s = ranks_[static_cast<std::size_t>(r)];
    if (s.in_optimizer) {
      s.state = RankState::finished;
      step_ran(r, step_start_[static_cast<std::size_t>(r)], now_);
      return;
    }
    const Piece& p = s.pieces[s.piece];
    const ScheduleOp& o = op(r);
    compute_track(r).spans.push_back(span(s.piece_start, now_ - s.piece_start, p.segment, p.name,
                                          global_of(r, o.chunk), o.micro_batch));
    busy_[static_cast<std::size_t>(r)] += now_ - s.piece_start;
    next_piece(r);
  }

  void end_op(std::int32_t r) {
    Rank& s = ranks_[static_cast<std::size_t>(r)];
    const ScheduleOp& o = op(r);
    if (keep_) draw_overlapped(r, o, global_of(r, o.chunk), s.first_span);
    op_finished(r, o, global_of(r, o.chunk), s.op_start, now_);
    // W ops wait on their own rank's B, and a blocked rank may wait on any: all look again.
    for (std::int32_t b : blocked_) {
      ranks_[static_cast<std::size_t>(b)].state = RankState::idle;
      wake(b);
    }
    blocked_.clear();
    s.state = RankState::idle;
  }

  // After the rank's last op: its reductions (all of them now, without overlap), then the
  // optimizer step, which computes and so shares the processors too.
  bool start_optimizer(std::int32_t r) {
    Rank& s = ranks_[static_cast<std::size_t>(r)];
    const std::int64_t start = step_may_start(r);
    s.in_optimizer = true;
    s.remaining = static_cast<double>(seconds_to_ns(in_.optimizer_seconds));
    if (start > now_) {
      set_timer(r, start);
    } else {
      run_piece(r, s.remaining);
    }
    return true;
  }

  // Rank r computes `work` ns at full speed from now_.
  void run_piece(std::int32_t r, double work) {
    Rank& s = ranks_[static_cast<std::size_t>(r)];
    s.state = RankState::running;
    s.remaining = work;
    ++running_;
    if (work <= 0.5) return;  // done at once: advance() ends it
    pieces_.push_back({work_done_ + work, r});
    std::push_heap(pieces_.begin(), pieces_.end(), later_end);
  }
  void set_timer(std::int32_t r, std::int64_t at) {
    Rank& s = ranks_[static_cast<std::size_t>(r)];
    s.state = RankState::timer;
    s.at = at;
    timers_.push_back({at, r});
    std::push_heap(timers_.begin(), timers_.end(), later_timer);
  }
  // Queues rank r to look at its state at now_ (once while queued).
  void wake(std::int32_t r) {
    if (queued_[static_cast<std::size_t>(r)] != 0) return;
    queued_[static_cast<std::size_t>(r)] = 1;
    work_.push_back(r);
  }

  struct PieceEnd {
    double end_work;  // the virtual clock (work_done_) at which the piece ends
    std::int32_t rank;
  };
  struct Timer {
    std::int64_t at;
    std::int32_t rank;
  };
  // Min-heaps (std::push_heap keeps the largest first: these compare the other way).
  static bool later_end(const PieceEnd& a, const PieceEnd& b) { return a.end_work > b.end_work; }
  static bool later_timer(const Timer& a, const Timer& b) { return a.at > b.at; }

  double threads_, processors_;
  std::int64_t now_ = 0;
  double work_done_ = 0;      // what each running thread has computed since the run began, ns
  std::int64_t running_ = 0;  // ranks in RankState::running
  std::vector<Rank> ranks_;
  std::vector<PieceEnd> pieces_;
  std::vector<Timer> timers_;
  std::vector<std::int32_t> work_, blocked_;
  std::vector<std::uint8_t> queued_ = std::vector<std::uint8_t>(ranks_.size(), 0);
};

}  // namespace

Result<SimulationResult> simulate_shared(const ScheduleTable& table, const SimulationInput& input,
                                         NsCosts costs) {
  return SharedRun(table, input, std::move(costs)).run();
}

}  // namespace plansight::estimator
