// Chrome trace-event writer. Timestamps are written as exact decimal microseconds with three
// fractional digits (nanoseconds), never through a double, so nothing is rounded on the way out.
#include "plansight/interop/perfetto_exporter.h"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>

namespace plansight::interop {
namespace {

using estimator::Span;
using estimator::SpanKind;
using estimator::Timeline;

// JSON string with control characters escaped and invalid UTF-8 replaced by U+FFFD, so any
// imported name yields a valid document.
void append_json_string(std::string& out, std::string_view s) {
  out += '"';
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
      ++i;
    } else if (c < 0x20) {
      static constexpr char hex[] = "0123456789abcdef";
      out += "\\u00";
      out += hex[c >> 4];
      out += hex[c & 15];
      ++i;
    } else if (c < 0x80) {
      out += static_cast<char>(c);
      ++i;
    } else {
      const int len = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 && c <= 0xDF ? 2 : 0;
      bool ok = len > 0 && i + static_cast<std::size_t>(len) <= s.size() && c < 0xF5;
      for (int k = 1; ok && k < len; ++k) ok = (static_cast<unsigned char>(s[i + k]) & 0xC0) == 0x80;
      if (ok && len == 3) {  // no overlongs or surrogates
        const auto c1 = static_cast<unsigned char>(s[i + 1]);
        ok = !(c == 0xE0 && c1 < 0xA0) && !(c == 0xED && c1 >= 0xA0);
      }
      if (ok && len == 4) {
        const auto c1 = static_cast<unsigned char>(s[i + 1]);
        ok = !(c == 0xF0 && c1 < 0x90) && !(c == 0xF4 && c1 >= 0x90);
      }
      if (ok) {
        out.append(s.data() + i, static_cast<std::size_t>(len));
        i += static_cast<std::size_t>(len);
      } else {
        out += "\xEF\xBF\xBD";
        ++i;
      }
    }
  }
  out += '"';
}

void append_int(std::string& out, std::int64_t v) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, end);
}

// ns -> "µs.nnn"
void append_us(std::string& out, std::int64_t ns) {
  if (ns < 0) {
    out += '-';
    // -INT64_MIN overflows; such a time cannot come from a real trace, clamp it.
    ns = ns == std::numeric_limits<std::int64_t>::min() ? std::numeric_limits<std::int64_t>::max() : -ns;
  }
  append_int(out, ns / 1000);
  const auto frac = static_cast<int>(ns % 1000);
  out += '.';
  out += static_cast<char>('0' + frac / 100);
  out += static_cast<char>('0' + frac / 10 % 10);
  out += static_cast<char>('0' + frac % 10);
}

// Sub-thread of every span of a track such that on each sub-thread spans are disjoint or nested:
// a span joins the first sub-thread whose open span (after closing those that ended) encloses it.
std::vector<int> assign_sub_threads(const std::vector<Span>& spans, int& sub_threads) {
  std::vector<std::size_t> order(spans.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return spans[a].start_ns != spans[b].start_ns ? spans[a].start_ns < spans[b].start_ns
                                                  : spans[a].end_ns() > spans[b].end_ns();
  });
  std::vector<std::vector<std::int64_t>> open;  // per sub-thread: ends of enclosing spans
  std::vector<int> out(spans.size(), 0);
  for (std::size_t i : order) {
    const Span& s = spans[i];
    std::size_t k = 0;
    for (; k < open.size(); ++k) {
      auto& stack = open[k];
      while (!stack.empty() && stack.back() <= s.start_ns) stack.pop_back();
      if (stack.empty() || stack.back() >= s.end_ns()) break;
    }
    if (k == open.size()) open.emplace_back();
    open[k].push_back(s.end_ns());
    out[i] = static_cast<int>(k);
  }
  sub_threads = std::max<int>(1, static_cast<int>(open.size()));
  return out;
}

std::string_view lane_name(estimator::Lane lane) { return estimator::to_string(lane); }

}  // namespace

void write_chrome_trace(std::ostream& os, const std::vector<const Timeline*>& timelines, const ChromeTraceOptions& options) {
  std::string out;
  out.reserve(1 << 20);
  auto flush = [&](bool force) {
    if (force || out.size() > (1 << 20)) {
      os.write(out.data(), static_cast<std::streamsize>(out.size()));
      out.clear();
    }
  };
  bool first_event = true;
  auto begin_event = [&] {
    out += first_event ? "\n" : ",\n";
    first_event = false;
  };
  out += "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"producer\":\"plansight\"},\"traceEvents\":[";

  std::int64_t common_origin = std::numeric_limits<std::int64_t>::max();
  for (const Timeline* t : timelines) {
    if (t) common_origin = std::min(common_origin, t->begin_ns());
  }
  if (common_origin == std::numeric_limits<std::int64_t>::max()) common_origin = 0;

  std::map<std::int32_t, bool> ranks;
  std::int64_t next_tid = 1;
  std::int64_t next_flow = 1;
  for (std::size_t ti = 0; ti < timelines.size(); ++ti) {
    const Timeline* t = timelines[ti];
    if (!t) continue;
    const std::int64_t origin = options.origin == TimeOrigin::per_timeline ? t->begin_ns()
                                : options.origin == TimeOrigin::common      ? common_origin : 0;
    const std::string source(estimator::to_string(t->source));
    // tid of every span, for the flow arrows.
    std::vector<std::vector<std::int64_t>> span_tid(t->tracks.size());
    for (std::size_t k = 0; k < t->tracks.size(); ++k) {
      const auto& track = t->tracks[k];
      ranks[track.rank] = true;
      int subs = 1;
      const auto sub_of = assign_sub_threads(track.spans, subs);
      const std::int64_t first_tid = next_tid;
      next_tid += subs;
      for (int j = 0; j < subs; ++j) {
        std::string name = source + ": " + std::string(lane_name(track.lane)) + " \xC2\xB7 " + track.label;
        if (j > 0) name += " #" + std::to_string(j + 1);
        begin_event();
        out += "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":";
        append_int(out, track.rank);
        out += ",\"tid\":";
        append_int(out, first_tid + j);
        out += ",\"args\":{\"name\":";
        append_json_string(out, name);
        out += "}}";
        begin_event();
        out += "{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":";
        append_int(out, track.rank);
        out += ",\"tid\":";
        append_int(out, first_tid + j);
        out += ",\"args\":{\"sort_index\":";
        append_int(out, first_tid + j);
        out += "}}";
      }
      span_tid[k].resize(track.spans.size());
      for (std::size_t i = 0; i < track.spans.size(); ++i) {
        const Span& s = track.spans[i];
        const std::int64_t tid = first_tid + sub_of[i];
        span_tid[k][i] = tid;
        begin_event();
        out += "{\"ph\":\"X\",\"pid\":";
        append_int(out, track.rank);
        out += ",\"tid\":";
        append_int(out, tid);
        out += ",\"ts\":";
        append_us(out, s.start_ns - origin);
        out += ",\"dur\":";
        append_us(out, std::max<std::int64_t>(0, s.duration_ns));
        out += ",\"cat\":\"";
        out += estimator::to_string(s.kind);
        out += "\",\"name\":";
        append_json_string(out, t->name_of(s));
        out += ",\"args\":{";
        bool first_arg = true;
        auto arg = [&](const char* key) {
          out += first_arg ? "\"" : ",\"";
          first_arg = false;
          out += key;
          out += "\":";
        };
        if (s.phase != estimator::Phase::none) arg("phase"), out += '"', out += estimator::to_string(s.phase), out += '"';
        if (s.stage >= 0) arg("stage"), append_int(out, s.stage);
        if (s.micro_batch >= 0) arg("micro_batch"), append_int(out, s.micro_batch);
        if (s.bytes > 0) arg("bytes"), append_int(out, static_cast<std::int64_t>(s.bytes));
        if (s.flops > 0) arg("flops"), out += std::to_string(s.flops);
        if (s.tensor_core) arg("tensor_core"), out += "true";
        // The thread's processor time in the span, where the CPU probe measured it: Perfetto
        // shows args beside the slice, so a span that waited reads as such.
        if (s.cpu_ns >= 0) arg("cpu_us"), out += std::to_string(static_cast<double>(s.cpu_ns) * 1e-3);
        // The operator a GPU kernel ran for (the probe's NVTX range), beside its kernel name.
        if (s.operator_id >= 0) arg("operator"), append_json_string(out, t->operator_of(s));
        out += "}}";
        flush(false);
      }
    }
    if (!options.flows) continue;
    // Pipeline arrows: a send of micro-batch m in phase p to the next recv of the same m and p on
    // another rank; forward activations go to stage + 1, backward gradients to stage - 1.
    struct P2p {
      std::size_t k, i;
    };
    std::vector<P2p> sends, recvs;
    for (std::size_t k = 0; k < t->tracks.size(); ++k) {
      for (std::size_t i = 0; i < t->tracks[k].spans.size(); ++i) {
        const Span& s = t->tracks[k].spans[i];
        if (s.micro_batch < 0 || s.stage < 0) continue;
        if (s.kind == SpanKind::send) sends.push_back({k, i});
        if (s.kind == SpanKind::recv) recvs.push_back({k, i});
      }
    }
    std::vector<bool> used(recvs.size(), false);
    for (const auto& snd : sends) {
      const Span& s = t->tracks[snd.k].spans[snd.i];
      const std::int32_t want_stage = s.phase == estimator::Phase::forward ? s.stage + 1 : s.stage - 1;
      std::ptrdiff_t best = -1;
      for (std::size_t r = 0; r < recvs.size(); ++r) {
        const auto& tr = t->tracks[recvs[r].k];
        const Span& v = tr.spans[recvs[r].i];
        if (used[r] || tr.rank == t->tracks[snd.k].rank || v.micro_batch != s.micro_batch || v.phase != s.phase ||
            v.stage != want_stage || v.end_ns() < s.start_ns) {
          continue;
        }
        if (best < 0 || v.start_ns < t->tracks[recvs[static_cast<std::size_t>(best)].k].spans[recvs[static_cast<std::size_t>(best)].i].start_ns) {
          best = static_cast<std::ptrdiff_t>(r);
        }
      }
      if (best < 0) continue;
      used[static_cast<std::size_t>(best)] = true;
      const auto& rv = recvs[static_cast<std::size_t>(best)];
      const Span& v = t->tracks[rv.k].spans[rv.i];
      const char* what = s.phase == estimator::Phase::forward ? "activations" : "gradients";
      for (int end = 0; end < 2; ++end) {
        begin_event();
        out += end == 0 ? "{\"ph\":\"s\"" : "{\"ph\":\"f\",\"bp\":\"e\"";
        out += ",\"cat\":\"p2p\",\"name\":\"";
        out += what;
        out += "\",\"id\":";
        append_int(out, next_flow);
        out += ",\"pid\":";
        append_int(out, end == 0 ? t->tracks[snd.k].rank : t->tracks[rv.k].rank);
        out += ",\"tid\":";
        append_int(out, end == 0 ? span_tid[snd.k][snd.i] : span_tid[rv.k][rv.i]);
        out += ",\"ts\":";
        append_us(out, (end == 0 ? s.start_ns : v.start_ns) - origin);
        out += '}';
      }
      ++next_flow;
    }
  }
  for (const auto& [rank, unused] : ranks) {
    begin_event();
    out += "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":";
    append_int(out, rank);
    out += ",\"args\":{\"name\":\"rank ";
    append_int(out, rank);
    out += "\"}}";
    begin_event();
    out += "{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":";
    append_int(out, rank);
    out += ",\"args\":{\"sort_index\":";
    append_int(out, rank);
    out += "}}";
  }
  out += "\n]}\n";
  flush(true);
}

std::string chrome_trace_json(const std::vector<const Timeline*>& timelines, const ChromeTraceOptions& options) {
  std::ostringstream os;
  write_chrome_trace(os, timelines, options);
  return os.str();
}

Result<std::int64_t> write_chrome_trace_file(const std::filesystem::path& path, const std::vector<const Timeline*>& timelines,
                                             const ChromeTraceOptions& options) {
  std::ofstream f(path, std::ios::binary);
  if (!f) return make_error(path.string(), "cannot open for writing");
  write_chrome_trace(f, timelines, options);
  f.flush();
  if (!f) return make_error(path.string(), "write failed (disk full?)");
  return static_cast<std::int64_t>(f.tellp());
}

}  // namespace plansight::interop
