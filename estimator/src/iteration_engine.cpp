// The iteration's event engine, shared by the processor models (iteration_engine.h).
#include "iteration_engine.h"

#include <algorithm>
#include <climits>
#include <charconv>
#include <cstring>

namespace plansight::estimator {
namespace {

// The engine's per-run arrays, kept per thread between runs: a search or a sweep simulates
// thousands of times, and allocating, zeroing and freeing these arrays was a
// tenth of a small simulation's time. A run takes them (swap), resizes them and gives them back.
struct Arrays {
  std::vector<std::int64_t> times;
  std::vector<std::size_t> next;
  std::vector<std::int64_t> free, prev_start, busy, reduce_end, step_start, end, collective_end;
  std::vector<std::int64_t> first_f, first_b, last_bwd;
  std::vector<std::int32_t> rank_of, global_of;
  std::vector<CommLane> lanes;
  std::vector<RankActivity> activity;  // their gap and collective lists too
  std::vector<Interval> first_idle, first_sends;
};
Arrays& thread_arrays() {
  thread_local Arrays arrays;
  return arrays;
}

// Arrays larger than this are freed after their run instead of kept: an estimate of a 1000-stage
// pipeline of 10,000 micro-batches fills hundreds of MB, which a long-lived thread (the app's
// estimate worker, the side thread) would otherwise hold until the process ends. A 64-stage,
// 4-chunk, 1024-micro-batch run keeps its 8 MB of pair times.
constexpr std::size_t kKeptArrayBytes = std::size_t{64} << 20;

}  // namespace

std::size_t thread_kept_array_bytes() {
  const Arrays& a = thread_arrays();
  std::size_t bytes = a.times.capacity() * sizeof(a.times[0]);
  for (const CommLane& lane : a.lanes) bytes += lane.capacity_bytes();
  return bytes;
}

IterationEngine::IterationEngine(const ScheduleTable& t, const ScheduleRows* rows, const SimulationInput& in,
                                 NsCosts costs, bool keep_spans)
    : t_(t),
      own_rows_(rows == nullptr ? ScheduleRows(t) : ScheduleRows()),
      rows_(rows == nullptr ? &own_rows_ : rows),
      in_(in),
      costs_(std::move(costs)),
      m_(t.m),
      stages_(t.stages()),
      keep_(keep_spans),
      second_start_(two_pipelines(t.kind) ? t.p : -1),
      shape_index_{NsChunkCost::kShapeForward,
                   t.split_backward ? NsChunkCost::kShapeBackward : NsChunkCost::kShapeFusedBackward,
                   NsChunkCost::kShapeWeightGrad} {
  swap_arrays();
  margins_.clear();
  for (CommLane& lane : lanes_) lane.clear();
  const auto pairs = static_cast<std::size_t>(stages_) * static_cast<std::size_t>(m_);
  plane_ = pairs;
  times_.resize((t.split_backward ? 3 : 2) * pairs);
  times_ready_.clear();
  if (!rows_->sparse() || keep_) ensure_times(0, m_);
  if (keep_) {
    names_.assign(6 * pairs, -1);
    tl_.names.reserve(4 * pairs + 16);  // F, B, their sends (and W, R) of every pair
  }
  const auto p = static_cast<std::size_t>(t.p);
  ran_.assign(static_cast<std::size_t>(stages_) * 3, 0);
  next_.assign(p, 0);
  for (auto* v : {&free_, &prev_start_, &busy_, &reduce_end_, &step_start_, &end_, &collective_end_}) v->assign(p, 0);
  lanes_.resize(p);
  activity_.assign(p, RankActivity{});
  first_idle_.clear();
  first_sends_.clear();
  const auto pv = p * static_cast<std::size_t>(t.v);
  first_f_.assign(pv, -1);
  first_b_.assign(pv, -1);
  last_bwd_.assign(pv, -1);
  rank_of_.resize(static_cast<std::size_t>(stages_));
  for (std::int32_t g = 0; g < stages_; ++g) rank_of_[static_cast<std::size_t>(g)] = t.rank_of(g);
  global_of_.resize(p * static_cast<std::size_t>(t.v));
  for (std::int32_t r = 0; r < t.p; ++r) {
    for (std::int32_t c = 0; c < t.v; ++c) global_of_[static_cast<std::size_t>(r * t.v + c)] = t.global_chunk(r, c);
  }
  const auto v = static_cast<std::size_t>(t.v);
  const ScheduleRows::ChunkOps* const known = rows_->chunk_ops();
  if (known != nullptr) {
    first_f_ = known->first_f;
    first_b_ = known->first_b;
    last_bwd_ = known->last_bwd;
  }
  for (std::size_t r = 0; r < p; ++r) {
    const std::size_t n = rows_->size(r);
    const auto op = [&](std::size_t i) { return rows_->at(r, i); };
    // Each chunk's first F and first B, its last B or W: found by the table's maker, or here. A
    // whole table's ops straight from its list: ScheduleRows::at's check per op cost GPipe's walk
    // through its forwards a third more.
    if (known == nullptr) {
      const std::size_t at = r * v;
      find_chunk_ops([ops = rows_->data(r)](std::size_t i) { return ops[i]; }, n, v, &first_f_[at], &first_b_[at],
                     &last_bwd_[at]);
    }
    activity_[r].rank = static_cast<std::int32_t>(r);
    if (!keep_) continue;
    // Reserved once: a span per compute segment, and on the communication lane a span per
    // communication segment, send, gather and reduction bucket, so no span ever reallocates.
    std::size_t compute_spans = 1, comm_spans = 2 * static_cast<std::size_t>(t.v) * (1 + in.dp_buckets) + 1;
    for (std::size_t i = 0; i < n; ++i) {
      const ScheduleOp o = op(i);
      const NsChunkCost& c = cost(t.global_chunk(static_cast<std::int32_t>(r), o.chunk));
      for (const auto* list : {&op_segments(o, c), o.kind == OpKind::backward ? &c.recompute : nullptr}) {
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
  // Ranks whose ops have collectives hidden under their compute get a track for them, like the
  // stream NCCL runs them on beside the compute stream (FSDP's all-gather stream, CP's ring).
  // Those labelled in.own_track_label (the time model's TP collectives, layout.tp_overlap) run at
  // the same time as the others: when a plan hides both, they get a track of their own, so that
  // neither is cut to fit the other.
  bool tp_hidden = false, other_hidden = false;
  for (const NsChunkCost& c : costs_.distinct) {
    for (const auto* list : {&c.overlapped.forward, &c.overlapped.backward, &c.overlapped.weight_grad,
                             &c.overlapped.recompute, &c.overlapped.fused_backward}) {
      for (const NsSegment& s : *list) (s.label >= 0 && s.label == in.own_track_label ? tp_hidden : other_hidden) = true;
    }
  }
  if (keep_ && (tp_hidden || other_hidden)) {
    overlapped_tracks_ = static_cast<std::int32_t>(tl_.tracks.size());
    for (std::size_t r = 0; r < p; ++r) {
      tl_.tracks.push_back(Track{static_cast<std::int32_t>(r), Lane::communication, 2,
                                 "rank " + std::to_string(r) + " comm overlapped", {}});
    }
  }
  if (keep_ && tp_hidden && other_hidden) {
    tp_overlapped_tracks_ = static_cast<std::int32_t>(tl_.tracks.size());
    for (std::size_t r = 0; r < p; ++r) {
      tl_.tracks.push_back(Track{static_cast<std::int32_t>(r), Lane::communication, 3,
                                 "rank " + std::to_string(r) + " TP comm overlapped", {}});
    }
  }
  tl_.source = TimelineSource::predicted;
  tl_.title = in.title;
}

void IterationEngine::ensure_times(std::int32_t begin, std::int32_t end) {
  begin = std::max(begin, 0);
  end = std::min(end, m_);
  // Sets up [from, to): every time unknown, -1 in every byte, written by memset (a fill of
  // three-word elements was element by element); the first chunk's inputs there at t = 0 (and
  // those of DualPipe's second pipeline).
  static_assert(kUnknown == -1);
  const auto set_up = [&](std::int32_t from, std::int32_t to) {
    const auto count = static_cast<std::size_t>(to - from);
    for (std::size_t which = 0; which < times_.size() / plane_; ++which) {
      for (std::int32_t g = 0; g < stages_; ++g) std::memset(&time(which, pair(g, from)), 0xFF, count * sizeof(std::int64_t));
    }
    for (std::int32_t mb = from; mb < to; ++mb) {
      time(kFwdReady, pair(0, mb)) = 0;
      if (second_start_ >= 0) time(kFwdReady, pair(second_start_, mb)) = 0;
    }
  };
  if (begin >= end) return;
  // The parts of [begin, end) not set up yet, then the ranges merged.
  std::int32_t at = begin;
  for (const Interval& ready : times_ready_) {
    const auto b = static_cast<std::int32_t>(ready.begin_ns), e = static_cast<std::int32_t>(ready.end_ns);
    if (e <= at) continue;
    if (b >= end) break;
    if (b > at) set_up(at, b);
    at = std::max(at, e);
    if (at >= end) break;
  }
  if (at < end) set_up(at, end);
  times_ready_.push_back({begin, end});
  times_ready_ = merge_intervals(std::move(times_ready_));
}

void IterationEngine::draw_overlapped_spans(std::int32_t r, const ScheduleOp& o, std::int32_t g, std::size_t first_span) {
  const NsChunkCost::Overlapped& ov = cost(g).overlapped;
  const std::vector<Span>& compute = compute_track(r).spans;
  // One pass per hidden track: everything on the first, or with a TP track of its own, TP's
  // collectives there (run from the op's start as well: they overlap the others).
  const bool tp_apart = tp_overlapped_tracks_ >= 0;
  for (int pass = 0; pass < (tp_apart ? 2 : 1); ++pass) {
    const bool tp_track = pass == 1;
    Track& track = tl_.tracks[static_cast<std::size_t>((tp_track ? tp_overlapped_tracks_ : overlapped_tracks_) + r)];
    std::size_t at = first_span;
    std::int64_t t = at < compute.size() ? compute[at].start_ns : 0;
    const auto draw = [&](const std::vector<NsSegment>& segments, std::int32_t op) {
      for (const NsSegment& s : segments) {
        if (tp_apart && (s.label == in_.own_track_label) != tp_track) continue;
        const std::int32_t name = segment_name(s, op);
        const double bytes_per_ns = s.ns > 0 ? s.bytes / static_cast<double>(s.ns) : 0.0;
        // What the op's compute cannot hold (EP's all-to-all hidden under the paired
        // micro-batch's longer backward) is cut: drawn only as long as this op computes.
        for (std::int64_t left = s.ns; left > 0;) {
          while (at < compute.size() && compute[at].end_ns() <= t) ++at;
          if (at == compute.size()) return;
          t = std::max(t, compute[at].start_ns);
          const std::int64_t ns = std::min(left, compute[at].end_ns() - t);
          Span out = span(t, ns, s, name, g, o.micro_batch);
          out.bytes = bytes_per_ns * static_cast<double>(ns);
          track.spans.push_back(out);
          t += ns;
          left -= ns;
        }
      }
    };
    if (o.kind == OpKind::backward) {
      draw(ov.recompute, op_name(o, g, true));
      // The backward's own collectives run under its own compute, after the recomputation's.
      while (at < compute.size() && compute[at].phase == Phase::recompute) ++at;
      if (at < compute.size()) t = std::max(t, compute[at].start_ns);
    }
    draw(o.kind == OpKind::forward       ? ov.forward
         : o.kind == OpKind::weight_grad ? ov.weight_grad
         : t_.split_backward             ? ov.backward
                                         : ov.fused_backward,
         op_name(o, g));
  }
}

IterationEngine::~IterationEngine() {
  if (times_.capacity() * sizeof(std::int64_t) > kKeptArrayBytes) std::vector<std::int64_t>().swap(times_);
  std::size_t lane_bytes = 0;
  for (const CommLane& lane : lanes_) lane_bytes += lane.capacity_bytes();
  if (lane_bytes > kKeptArrayBytes) std::vector<CommLane>().swap(lanes_);
  std::size_t activity_bytes = 0;
  for (const RankActivity& a : activity_) activity_bytes += (a.gaps.capacity() + a.collectives.capacity()) * sizeof(Interval);
  if (activity_bytes > kKeptArrayBytes) std::vector<RankActivity>().swap(activity_);
  std::size_t snapshot_bytes = 0;
  for (const SteadySnapshot& s : snapshots_) snapshot_bytes += s.bytes();
  if (snapshot_bytes > kKeptArrayBytes) std::vector<SteadySnapshot>().swap(snapshots_);
  margins_.clear();
  if (margins_.capacity() * sizeof(Margin) > kKeptArrayBytes) std::vector<Margin>().swap(margins_);
  swap_arrays();
}

void IterationEngine::swap_arrays() {
  Arrays& a = thread_arrays();
  times_.swap(a.times);
  next_.swap(a.next);
  free_.swap(a.free), prev_start_.swap(a.prev_start), busy_.swap(a.busy), reduce_end_.swap(a.reduce_end);
  step_start_.swap(a.step_start), end_.swap(a.end), collective_end_.swap(a.collective_end);
  first_f_.swap(a.first_f), first_b_.swap(a.first_b), last_bwd_.swap(a.last_bwd);
  rank_of_.swap(a.rank_of), global_of_.swap(a.global_of);
  lanes_.swap(a.lanes);
  activity_.swap(a.activity);
  first_idle_.swap(a.first_idle), first_sends_.swap(a.first_sends);
  thread_local std::vector<SteadySnapshot> snapshots;  // here: the snapshot type is the engine's own
  snapshots_.swap(snapshots);
  thread_local std::vector<Margin> margins;  // the steady state's decisions (record_margins_)
  margins_.swap(margins);
  thread_local std::vector<WindowSpec> plain_windows, marks_windows;  // prepare_windows()
  plain_windows_.swap(plain_windows);
  marks_windows_.swap(marks_windows);
}

std::int32_t IterationEngine::intern_op_name(int slot, char letter, const char* prefix, std::int32_t g,
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

std::int32_t IterationEngine::label_name(std::int32_t label) {
  if (label_ids_.empty()) label_ids_.assign(in_.labels.size(), -1);
  auto& id = label_ids_[static_cast<std::size_t>(label)];
  if (id < 0) id = other_name(in_.labels[static_cast<std::size_t>(label)]);
  return id;
}

std::int32_t IterationEngine::other_name(const std::string& text) {
  auto [it, fresh] = other_names_.try_emplace(text, static_cast<std::int32_t>(tl_.names.size()));
  if (fresh) tl_.names.push_back(text);
  return it->second;
}

Span IterationEngine::span(std::int64_t start, std::int64_t ns, const NsSegment& s, std::int32_t name, std::int32_t g,
                           std::int32_t mb) const {
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

// Chunk g's gradient reduction in dp_buckets buckets, bucket i issued at (i+1)/n of its last
// backward op [start, end] (SimulationInput::dp_buckets).
void IterationEngine::reduce(std::int32_t r, std::int32_t g, std::int64_t start, std::int64_t end) {
  const NsChunkCost& c = cost(g);
  if (c.dp_reduce <= 0) return;
  const std::int64_t n = in_.dp_buckets;
  const std::int32_t name = dp_name(g);
  auto& done = reduce_end_[static_cast<std::size_t>(r)];
  for (std::int64_t b = 0; b < n; ++b) {
    const std::int64_t ns = c.dp_reduce / n + (b == n - 1 ? c.dp_reduce % n : 0);
    const std::int64_t issue = start + (end - start) * (b + 1) / n;
    done = std::max(done, communicate(r, issue, ns, SpanKind::collective, name, g, -1,
                                      c.dp_reduce_bytes / static_cast<double>(n)));
  }
}

// Data-parallel reduction spans: the input's label ("DP all-reduce · dp x cp 16 · across
// nodes"), or "dp <chunk>".
std::int32_t IterationEngine::dp_name(std::int32_t g) {
  if (!keep_) return -1;
  return in_.dp_reduce_label >= 0 ? label_name(in_.dp_reduce_label) : other_name("dp " + std::to_string(g));
}

std::int64_t IterationEngine::step_may_start(std::int32_t r) {
  const auto ri = static_cast<std::size_t>(r);
  if (in_.dp_issue == DpReduceIssue::at_end) {
    for (std::int32_t local = 0; local < t_.v; ++local) {
      const std::int32_t g = global_of(r, local);
      const NsChunkCost& c = cost(g);
      reduce_end_[ri] = std::max(reduce_end_[ri], communicate(r, free_[ri], c.dp_reduce, SpanKind::collective,
                                                              dp_name(g), g, -1, c.dp_reduce_bytes));
    }
  }
  step_start_[ri] = std::max(free_[ri], reduce_end_[ri]);
  return step_start_[ri];
}

void IterationEngine::step_ran(std::int32_t r, std::int64_t start, std::int64_t end) {
  const auto ri = static_cast<std::size_t>(r);
  if (end > start && keep_) {
    compute_track(r).spans.push_back(span(start, end - start, NsSegment{Lane::compute, Phase::optimizer, end - start, 0, 0, -1},
                                          other_name("optimizer"), -1, -1));
  }
  const std::int64_t gather_ns = seconds_to_ns(in_.optimizer_gather_seconds);
  const std::int32_t gather_name = !keep_ || gather_ns <= 0 ? -1
                                   : in_.optimizer_gather_label >= 0 ? label_name(in_.optimizer_gather_label)
                                                                     : other_name("parameter all-gather");
  end_[ri] = std::max(end, communicate(r, end, gather_ns, SpanKind::collective, gather_name, -1, -1,
                                       in_.optimizer_gather_bytes));
}

std::int64_t IterationEngine::exposed_first_sends() {
  if (first_sends_.empty()) return 0;
  // Sorted and joined where they are (a send the lane books into an earlier gap comes later in
  // the list); in order, as they mostly are, nothing is allocated.
  first_sends_ = merge_intervals(std::move(first_sends_));
  std::int64_t total = 0;
  for (const Interval& s : first_sends_) total += s.length_ns();
  if (keep_) {
    // Its compute spans, the optimizer's included (a send's lane holds its other communication).
    std::vector<Interval> work;
    for (const Span& s : tl_.tracks[0].spans) work.push_back({s.start_ns, s.start_ns + s.duration_ns});
    return total - intersection_length(first_sends_, merge_intervals(std::move(work)));
  }
  // Its stretches without work between its first op and its last (sorted, disjoint: listed in the
  // order it ran), then after its last op all but its optimizer step.
  const auto overlap = [](const Interval& a, std::int64_t begin, std::int64_t end) {
    return std::max<std::int64_t>(0, std::min(a.end_ns, end) - std::max(a.begin_ns, begin));
  };
  // (The step starts at or after the last op's end: step_may_start.)
  const std::int64_t last = free_[0], step_begin = step_start_[0],
                     step_end = step_begin + seconds_to_ns(in_.optimizer_seconds);
  std::int64_t exposed = 0;
  std::size_t i = 0;
  for (const Interval& s : first_sends_) {
    while (i < first_idle_.size() && first_idle_[i].end_ns <= s.begin_ns) ++i;
    for (std::size_t j = i; j < first_idle_.size() && first_idle_[j].begin_ns < s.end_ns; ++j) {
      exposed += overlap(s, first_idle_[j].begin_ns, first_idle_[j].end_ns);
    }
    exposed += overlap(s, last, INT64_MAX) - overlap(s, step_begin, step_end);
  }
  return std::min(exposed, total);
}

SimulationResult IterationEngine::results(const ScheduleBubbles& bubbles) {
  SimulationResult res;
  res.first_rank_exposed_send_ns = exposed_first_sends();
  for (std::size_t r = 0; r < static_cast<std::size_t>(t_.p); ++r) {
    res.busy_ns.push_back(busy_[r]);
    res.compute_end_ns.push_back(free_[r]);
    res.reduce_wait_ns.push_back(step_start_[r] - free_[r]);
    res.iteration_ns = std::max({res.iteration_ns, end_[r], lanes_[r].end()});
    if (!keep_) continue;
    for (auto* track : {&compute_track(static_cast<std::int32_t>(r)), &comm_track(static_cast<std::int32_t>(r))}) {
      if (!std::is_sorted(track->spans.begin(), track->spans.end(),
                          [](const Span& a, const Span& b) { return a.start_ns < b.start_ns; })) {
        std::sort(track->spans.begin(), track->spans.end(),
                  [](const Span& a, const Span& b) { return a.start_ns < b.start_ns; });
      }
    }
  }
  set_bubbles(res, bubbles, t_.p);
  res.skipped_ops = skipped_ops_;
  for (std::size_t r = 0; r < rows_->ranks(); ++r) res.simulated_ops += static_cast<std::int64_t>(rows_->size(r));
  res.simulated_ops -= skipped_ops_;
  if (keep_ && in_.keep_timeline) res.timeline = std::move(tl_);
  return res;
}

}  // namespace plansight::estimator
