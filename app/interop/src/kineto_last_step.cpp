// KinetoImportOptions::drop_last_profiler_step: Holistic Trace Analysis's load-time filter
// (HolisticTraceAnalysis, hta/common/trace.py, _filter_irrelevant_gpu_kernels). HTA keeps, per
// rank, the CPU events that start before the last ProfilerStep annotation starts and the GPU
// events whose launch (matched by correlation id) is among them; a trace with fewer than two
// distinct step names is kept whole. Here the rank is the file, and a host span is a CPU event.
#include <algorithm>

#include "kineto_reader_impl.h"

namespace plansight::interop::detail {

void Reader::note_for_step_filter(std::size_t track, std::int64_t collective) {
  if (!options_.drop_last_profiler_step) return;
  device_spans_.push_back({track, out_.tracks[track].spans.size() - 1, ev_.correlation, collective});
}

void Reader::drop_last_profiler_step() {
  if (step_start_ns_.size() < 2) {
    out_.warnings.push_back(make_warning("trace", "fewer than two ProfilerStep# annotations in " + out_.source +
                                                      ": nothing dropped (Holistic Trace Analysis keeps such a trace whole)"));
    return;
  }
  std::int64_t cutoff = INT64_MIN;
  for (const auto& [name, start] : step_start_ns_) cutoff = std::max(cutoff, start);

  // Spans are kept in file time (before any base shift), the same clock as the cutoff.
  std::vector<std::vector<char>> keep(out_.tracks.size());
  for (std::size_t t = 0; t < out_.tracks.size(); ++t) {
    const bool host = out_.track_device[t] < 0;
    keep[t].assign(out_.tracks[t].spans.size(), 1);
    if (!host) continue;
    for (std::size_t i = 0; i < keep[t].size(); ++i) keep[t][i] = out_.tracks[t].spans[i].start_ns < cutoff;
  }
  std::vector<char> keep_call(out_.collectives.size(), 1);
  for (const DeviceSpanRef& ref : device_spans_) {
    const auto launch = launch_ns_.find(ref.correlation);
    const bool kept = launch != launch_ns_.end() && launch->second < cutoff;
    keep[ref.track][ref.span] = kept;
    if (ref.collective >= 0) keep_call[static_cast<std::size_t>(ref.collective)] = kept;
  }
  std::int64_t dropped = 0;
  for (std::size_t t = 0; t < out_.tracks.size(); ++t) {
    auto& spans = out_.tracks[t].spans;
    std::size_t w = 0;
    for (std::size_t i = 0; i < spans.size(); ++i) {
      if (keep[t][i]) spans[w++] = spans[i];
      else ++dropped;
    }
    spans.resize(w);
  }
  std::size_t w = 0;
  for (std::size_t i = 0; i < out_.collectives.size(); ++i) {
    if (!keep_call[i]) continue;
    out_.collectives[w] = std::move(out_.collectives[i]);
    out_.collective_device[w] = out_.collective_device[i];
    ++w;
  }
  out_.collectives.resize(w);
  out_.collective_device.resize(w);
  out_.warnings.push_back(make_warning("trace", "dropped the last profiler step of " + out_.source + " as Holistic Trace Analysis does: " +
                                                    std::to_string(dropped) + " spans launched or starting at or after " +
                                                    "its start, or launched by no runtime call in the trace"));
}

}  // namespace plansight::interop::detail
