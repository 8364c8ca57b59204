// Conversion of the simulator's input to integer nanoseconds, with every duration checked once
// so that the event loop never meets a negative or non-finite time.
#include "simulation_costs.h"

#include <cmath>
#include <string>

#include "plansight/estimator/schedule_metrics.h"
#include "schedule_rows.h"

namespace plansight::estimator {

double OpCost::seconds() const {
  double total = 0;
  for (const auto& s : segments) total += s.overlapped ? 0.0 : s.seconds;
  return total;
}

OpCost compute_cost(double seconds) { return OpCost{{OpSegment{Lane::compute, seconds, 0, 0}}}; }

std::int64_t seconds_to_ns(double seconds) { return std::llround(seconds * 1e9); }

namespace {

// The field of chunk i's `part`, e.g. "simulation.chunks[3].forward"; made only for an error.
std::string chunk_field(std::size_t i, const char* part) {
  return "simulation.chunks[" + std::to_string(i) + "]." + part;
}

// Converts one op cost of chunk `chunk`; errors name e.g. "simulation.chunks[3].forward".
void convert(const OpCost& cost, Phase phase, std::size_t chunk, const char* part, std::size_t labels,
             std::vector<NsSegment>& out, std::vector<NsSegment>& overlapped, std::vector<Diagnostic>& errors) {
  out.reserve(cost.segments.size());
  for (const auto& s : cost.segments) {
    if (s.label < -1 || s.label >= static_cast<std::int32_t>(labels)) {
      errors.push_back(make_error(chunk_field(chunk, part), "segment label " + std::to_string(s.label) +
                                                                "; valid: -1 (none) or an index of the " +
                                                                std::to_string(labels) + " simulation.labels"));
      continue;
    }
    if (!std::isfinite(s.seconds) || s.seconds < 0 || (s.lane != Lane::compute && s.lane != Lane::communication) ||
        (s.overlapped && s.lane != Lane::communication)) {
      errors.push_back(
          make_error(chunk_field(chunk, part), "segment of " + std::to_string(s.seconds) + " s on lane " +
                                                   std::string(to_string(s.lane)) +
                                                   (s.overlapped ? std::string(" (overlapped)") : std::string()) +
                                                   "; need a finite time >= 0 on compute or communication "
                                                   "(overlapped: on communication)"));
      continue;
    }
    (s.overlapped ? overlapped : out)
        .push_back(NsSegment{s.lane, s.lane == Lane::compute ? phase : Phase::communication, seconds_to_ns(s.seconds),
                             s.flops, s.bytes, s.label});
  }
}

std::int64_t checked_ns(double seconds, const std::string& field, std::vector<Diagnostic>& errors) {
  if (std::isfinite(seconds) && seconds >= 0) return seconds_to_ns(seconds);
  errors.push_back(make_error(field, std::to_string(seconds) + " s; need a finite time >= 0"));
  return 0;
}

std::int64_t checked_ns(double seconds, std::size_t chunk, const char* part, std::vector<Diagnostic>& errors) {
  if (std::isfinite(seconds) && seconds >= 0) return seconds_to_ns(seconds);
  return checked_ns(seconds, chunk_field(chunk, part), errors);
}

}  // namespace

NsRunShape run_shape(const std::vector<NsSegment>& segments) {
  NsRunShape out;
  for (const NsSegment& s : segments) {
    if (s.ns == 0) continue;  // the simulator skips empty segments: they book nothing
    if (s.lane == Lane::compute) {
      if (out.compute_first < 0) out.compute_first = out.ns;
      out.compute_ns += s.ns;
      out.compute_end = out.ns + s.ns;
    } else if (out.first_lane == NsRunShape::kNone) {
      out.first_lane = out.ns;
    }
    out.ns += s.ns;
  }
  return out;
}

NsRunShape then(const NsRunShape& first, const NsRunShape& second) {
  NsRunShape out;
  out.ns = first.ns + second.ns;
  out.compute_ns = first.compute_ns + second.compute_ns;
  out.first_lane = first.first_lane != NsRunShape::kNone    ? first.first_lane
                   : second.first_lane != NsRunShape::kNone ? first.ns + second.first_lane
                                                            : NsRunShape::kNone;
  out.compute_first = first.compute_first >= 0 ? first.compute_first
                      : second.compute_first >= 0 ? first.ns + second.compute_first
                                                  : -1;
  out.compute_end = second.compute_end >= 0 ? first.ns + second.compute_end : first.compute_end;
  return out;
}

void set_bubbles(SimulationResult& result, const ScheduleBubbles& bubbles, std::int32_t ranks) {
  result.bubble_ns.assign(static_cast<std::size_t>(ranks), 0);
  for (std::size_t i = 0; i < bubbles.ranks.size(); ++i) {
    result.bubble_ns[static_cast<std::size_t>(bubbles.ranks[i])] = bubbles.bubble_ns[i];
  }
  result.bubble_fraction = bubbles.mean_fraction;
  result.bubble_fraction_max = bubbles.max_fraction;
}

std::string deadlock_message(std::int32_t ranks, const ScheduleRows& rows, const std::vector<std::size_t>& next) {
  std::string out;
  for (std::int32_t r = 0; r < ranks; ++r) {
    const auto ri = static_cast<std::size_t>(r);
    const std::size_t i = next[ri];
    if (i >= rows.size(ri)) continue;
    const ScheduleOp o = rows.at(ri, i);
    out += (out.empty() ? "deadlock: " : "; ") + std::string("rank ") + std::to_string(r) + " waits at op " +
           std::to_string(i) + " (" + op_letter(o.kind) + " chunk " + std::to_string(o.chunk) +
           " micro-batch " + std::to_string(o.micro_batch) + ")";
  }
  return out;
}

Result<NsCosts> to_ns_costs(const SimulationInput& input, std::size_t stages) {
  std::vector<Diagnostic> errors;
  NsCosts costs;
  if (!input.chunk_of.empty()) {
    if (input.chunk_of.size() != stages) {
      errors.push_back(make_error("simulation.chunk_of", std::to_string(input.chunk_of.size()) +
                                                             " entries for pp * vpp = " + std::to_string(stages) +
                                                             " chunks; give one per chunk, or none"));
      return errors;
    }
    costs.of.resize(stages);
    for (std::size_t g = 0; g < stages; ++g) {
      const std::int32_t i = input.chunk_of[g];
      if (i < 0 || static_cast<std::size_t>(i) >= input.chunks.size()) {
        errors.push_back(make_error("simulation.chunk_of", "entry " + std::to_string(g) + " is " + std::to_string(i) +
                                                               "; valid: an index of the " +
                                                               std::to_string(input.chunks.size()) + " simulation.chunks"));
        return errors;
      }
      costs.of[g] = static_cast<std::uint32_t>(i);
    }
  } else if (input.chunks.size() != 1 && input.chunks.size() != stages) {
    errors.push_back(make_error("simulation.chunks",
                                std::to_string(input.chunks.size()) +
                                    " chunk costs for pp * vpp = " + std::to_string(stages) +
                                    " chunks; give 1 (all alike) or " + std::to_string(stages) +
                                    ", or simulation.chunk_of"));
    return errors;
  } else {
    costs.of.resize(stages);
    if (input.chunks.size() == stages) {
      for (std::size_t g = 0; g < stages; ++g) costs.of[g] = static_cast<std::uint32_t>(g);
    }
  }
  if (input.dp_buckets < 1) {
    errors.push_back(
        make_error("simulation.dp_buckets", std::to_string(input.dp_buckets) + "; need >= 1"));
  }
  checked_ns(input.optimizer_seconds, "simulation.optimizer_seconds", errors);
  checked_ns(input.optimizer_gather_seconds, "simulation.optimizer_gather_seconds", errors);
  if (input.shared_processors < 0) {
    errors.push_back(make_error("simulation.shared_processors", std::to_string(input.shared_processors) + "; need >= 0 (0: none shared)"));
  }
  if (input.threads_per_rank < 1) {
    errors.push_back(make_error("simulation.threads_per_rank", std::to_string(input.threads_per_rank) + "; need >= 1"));
  }
  const std::size_t labels = input.labels.size();
  if (input.dp_reduce_label < -1 || input.dp_reduce_label >= static_cast<std::int32_t>(labels)) {
    errors.push_back(make_error("simulation.dp_reduce_label", std::to_string(input.dp_reduce_label) +
                                                                  "; valid: -1 (\"dp <chunk>\") or an index of the " +
                                                                  std::to_string(labels) + " simulation.labels"));
  }
  for (const auto& [label, field] : {std::pair{input.optimizer_gather_label, "simulation.optimizer_gather_label"},
                                      std::pair{input.send_label, "simulation.send_label"}}) {
    if (label < -1 || label >= static_cast<std::int32_t>(labels)) {
      errors.push_back(make_error(field, std::to_string(label) + "; valid: -1 (none) or an index of the " +
                                             std::to_string(labels) + " simulation.labels"));
    }
  }
  costs.distinct.resize(input.chunks.size());
  for (std::size_t i = 0; i < input.chunks.size(); ++i) {
    const ChunkCost& in = input.chunks[i];
    NsChunkCost& c = costs.distinct[i];
    convert(in.forward, Phase::forward, i, "forward", labels, c.forward, c.overlapped.forward, errors);
    convert(in.backward, Phase::backward, i, "backward", labels, c.backward, c.overlapped.backward, errors);
    convert(in.weight_grad, Phase::weight_grad, i, "weight_grad", labels, c.weight_grad, c.overlapped.weight_grad, errors);
    convert(in.recompute, Phase::recompute, i, "recompute", labels, c.recompute, c.overlapped.recompute, errors);
    c.send_activation = checked_ns(in.send_activation_seconds, i, "send_activation_seconds", errors);
    c.send_gradient = checked_ns(in.send_gradient_seconds, i, "send_gradient_seconds", errors);
    c.dp_reduce = checked_ns(in.dp_reduce_seconds, i, "dp_reduce_seconds", errors);
    c.dp_reduce_bytes = in.dp_reduce_bytes;
    c.param_gather = checked_ns(in.param_gather_seconds, i, "param_gather_seconds", errors);
    c.param_prefetch = in.param_prefetch;
    c.fused_backward.reserve(c.backward.size() + c.weight_grad.size());
    c.fused_backward = c.backward;
    for (NsSegment s : c.weight_grad) {
      if (s.lane == Lane::compute) s.phase = Phase::backward;
      c.fused_backward.push_back(s);
    }
    const NsRunShape recompute = run_shape(c.recompute);
    c.shapes[NsChunkCost::kShapeForward] = run_shape(c.forward);
    c.shapes[NsChunkCost::kShapeBackward] = then(recompute, run_shape(c.backward));
    c.shapes[NsChunkCost::kShapeWeightGrad] = run_shape(c.weight_grad);
    c.shapes[NsChunkCost::kShapeFusedBackward] = then(recompute, run_shape(c.fused_backward));
    c.overlapped.fused_backward = c.overlapped.backward;
    c.overlapped.fused_backward.insert(c.overlapped.fused_backward.end(), c.overlapped.weight_grad.begin(),
                                       c.overlapped.weight_grad.end());
  }
  if (!errors.empty()) return errors;
  return costs;
}

}  // namespace plansight::estimator
