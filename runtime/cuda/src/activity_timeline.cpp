// ActivityTimeline::build (activity_timeline.h). Ranges are kept per thread sorted by start; the
// innermost range containing a launch is the latest-starting one that contains it.
#include "plansight/runtime/cuda/activity_timeline.h"

#include <algorithm>
#include <cctype>
#include <tuple>
#include <unordered_map>

namespace plansight::runtime::cuda {
namespace {

namespace est = plansight::estimator;

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// The collectives' names as range names spell them (NCCL, PyTorch, ours).
constexpr std::string_view kCollectiveWords[] = {"allreduce",     "all_reduce",     "all-reduce", "allgather",
                                                 "all_gather",    "all-gather",     "reducescatter",
                                                 "reduce_scatter", "reduce-scatter", "broadcast",  "all_to_all",
                                                 "alltoall",      "all-to-all"};

bool contains_collective(const std::string& s) {
  return std::any_of(std::begin(kCollectiveWords), std::end(kCollectiveWords),
                     [&](std::string_view w) { return s.find(w) != std::string::npos; });
}

bool contains_any(const std::string& s, std::initializer_list<std::string_view> words) {
  return std::any_of(words.begin(), words.end(), [&](std::string_view w) { return s.find(w) != std::string::npos; });
}

struct Range {
  std::int64_t start_ns, end_ns;
  const std::string* name;
};

// Innermost range of `ranges` (sorted by start) containing t, or null.
const Range* enclosing(const std::vector<Range>& ranges, std::int64_t t) {
  auto it = std::upper_bound(ranges.begin(), ranges.end(), t, [](std::int64_t v, const Range& r) { return v < r.start_ns; });
  while (it != ranges.begin()) {
    --it;
    if (it->end_ns >= t) return &*it;
  }
  return nullptr;
}

}  // namespace

std::int32_t number_after(std::string_view name, std::string_view word) {
  // "<word> <digits>" as a separate word of the range name; -1 when absent.
  for (std::size_t at = name.find(word); at != std::string_view::npos; at = name.find(word, at + 1)) {
    const bool starts_word = at == 0 || name[at - 1] == ' ';
    std::size_t i = at + word.size();
    if (!starts_word || i >= name.size() || name[i] != ' ') continue;
    ++i;
    std::int32_t value = 0;
    bool digits = false;
    while (i < name.size() && name[i] >= '0' && name[i] <= '9' && value < 100000000) {
      value = value * 10 + (name[i++] - '0');
      digits = true;
    }
    if (digits) return value;
  }
  return -1;
}

est::Phase phase_from_range_name(std::string_view name) {
  const std::string s = lower(name);
  // Weight gradients before backward ("backward wgrad" is a weight-gradient range).
  if (contains_any(s, {"wgrad", "weight_grad", "weight-grad"})) return est::Phase::weight_grad;
  if (contains_any(s, {"recompute"})) return est::Phase::recompute;
  if (contains_any(s, {"backward", "bwd"})) return est::Phase::backward;
  if (contains_any(s, {"forward", "fwd"})) return est::Phase::forward;
  if (contains_any(s, {"optimizer", "adamw"})) return est::Phase::optimizer;
  if (contains_collective(s) || contains_any(s, {"send", "recv"})) {
    return est::Phase::communication;
  }
  return est::Phase::none;
}

std::optional<est::SpanKind> comm_kind_from_range_name(std::string_view name) {
  const std::string first = lower(name.substr(0, name.find(' ')));
  if (contains_any(first, {"send"})) return est::SpanKind::send;
  if (contains_any(first, {"recv"})) return est::SpanKind::recv;
  if (contains_collective(first)) {
    return est::SpanKind::collective;
  }
  return std::nullopt;
}

std::string_view operator_from_range_name(std::string_view name) {
  const std::string_view first = name.substr(0, name.find(' '));
  // A phase's own range ("forward stage 0 mb 1", "recompute block 2") names no operator.
  if (first.empty() || first == name || comm_kind_from_range_name(name) ||
      phase_from_range_name(first) != est::Phase::none) {
    return {};
  }
  return first;
}

void ActivityTimeline::assign_stream(std::uint32_t device, std::uint32_t stream_id, const StreamRole& role) {
  streams_[{device, stream_id}] = role;
}

void ActivityTimeline::assign_thread(std::uint32_t thread_id, std::int32_t rank) { threads_[thread_id] = rank; }

est::Timeline ActivityTimeline::build(const std::vector<ActivityRecord>& records, const std::string& title,
                                      const est::KernelClassifier& classifier) const {
  // Launches by correlation id, ranges by thread.
  std::unordered_map<std::uint32_t, const ActivityRecord*> launches;
  std::unordered_map<std::uint32_t, std::vector<Range>> ranges;
  for (const ActivityRecord& r : records) {
    if (r.kind == ActivityKind::api_call) launches[r.correlation] = &r;
    if (r.kind == ActivityKind::range) ranges[r.thread].push_back({r.start_ns, r.end_ns, &r.name});
  }
  for (auto& [thread, list] : ranges) {
    std::sort(list.begin(), list.end(), [](const Range& a, const Range& b) { return a.start_ns < b.start_ns; });
  }
  auto rank_of_thread = [&](std::uint32_t thread) {
    auto it = threads_.find(thread);
    return it == threads_.end() ? std::int32_t{0} : it->second;
  };

  est::Timeline out;
  out.source = est::TimelineSource::measured;
  out.title = title;
  std::map<std::tuple<std::int32_t, est::Lane, std::int32_t>, std::size_t> track_of;
  auto track = [&](std::int32_t rank, est::Lane lane, std::int32_t stream) -> est::Track& {
    auto [it, added] = track_of.emplace(std::make_tuple(rank, lane, stream), out.tracks.size());
    if (added) {
      est::Track t;
      t.rank = rank;
      t.lane = lane;
      t.stream = stream;
      t.label = "rank " + std::to_string(rank) + " " + std::string(est::to_string(lane));
      if (stream != 0) t.label += " (stream " + std::to_string(stream) + ")";
      out.tracks.push_back(std::move(t));
    }
    return out.tracks[it->second];
  };

  for (const ActivityRecord& r : records) {
    if (r.kind == ActivityKind::api_call) continue;
    est::Span span;
    span.start_ns = r.start_ns + offset_ns_;
    span.duration_ns = std::max<std::int64_t>(r.end_ns - r.start_ns, 0);
    span.bytes = r.bytes;
    span.name_id = out.intern(r.name);
    if (r.kind == ActivityKind::range || r.kind == ActivityKind::synchronization) {
      span.kind = r.kind == ActivityKind::range ? est::SpanKind::annotation : est::SpanKind::idle;
      if (r.kind == ActivityKind::range) span.phase = phase_from_range_name(r.name);
      // CUPTI's synchronisation records carry no thread; the API call they belong to does.
      std::uint32_t thread = r.thread;
      if (auto call = launches.find(r.correlation); r.kind == ActivityKind::synchronization && call != launches.end()) {
        thread = call->second->thread;
      }
      track(rank_of_thread(thread), est::Lane::host, 0).spans.push_back(span);
      continue;
    }
    const est::KernelClass kernel_class =
        r.kind == ActivityKind::kernel ? classifier.classify(r.name) : est::KernelClass::memory;
    if (r.kind == ActivityKind::kernel) {
      span.kind = kernel_class == est::KernelClass::communication ? est::SpanKind::collective : est::SpanKind::kernel;
      span.tensor_core = kernel_class == est::KernelClass::tensor_core_gemm;
    } else {
      span.kind = r.kind == ActivityKind::memcpy ? est::SpanKind::memcpy : est::SpanKind::memset;
    }
    if (auto launch = launches.find(r.correlation); launch != launches.end()) {
      if (auto it = ranges.find(launch->second->thread); it != ranges.end()) {
        if (const Range* range = enclosing(it->second, launch->second->start_ns)) {
          span.phase = phase_from_range_name(*range->name);
          span.stage = number_after(*range->name, "stage");
          span.micro_batch = number_after(*range->name, "mb");
          if (const auto comm = comm_kind_from_range_name(*range->name)) {
            span.kind = *comm;
            span.tensor_core = false;
          } else if (const std::string_view op = operator_from_range_name(*range->name); !op.empty()) {
            span.operator_id = out.intern(std::string(op));
          }
        }
      }
    }
    if (span.phase == est::Phase::none && span.kind == est::SpanKind::collective) span.phase = est::Phase::communication;
    StreamRole role;
    if (auto it = streams_.find({r.device, r.stream}); it != streams_.end()) {
      role = it->second;
    } else {
      role.rank = static_cast<std::int32_t>(r.device);
      role.stream = static_cast<std::int32_t>(r.stream);
      role.lane = r.kind != ActivityKind::kernel                       ? est::Lane::copy
                  : kernel_class == est::KernelClass::communication ? est::Lane::communication
                                                                    : est::Lane::compute;
    }
    track(role.rank, role.lane, role.stream).spans.push_back(span);
  }
  out.sort_spans();
  return out;
}

}  // namespace plansight::runtime::cuda
