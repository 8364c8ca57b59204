// Timeline <-> JSON. Enumerations are written as their names so files stay readable and
// survive reordering of the enums.
#include "plansight/estimator/timeline_json.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <string>

#include "plansight/estimator/json_reader.h"

namespace plansight::estimator {
namespace {

template <class E, std::size_t N>
bool parse_name(const std::string& text, const std::array<E, N>& all, E& out) {
  for (E v : all) {
    if (to_string(v) == text) {
      out = v;
      return true;
    }
  }
  return false;
}

constexpr std::array kLanes = {Lane::compute, Lane::communication, Lane::copy, Lane::host};
constexpr std::array kKinds = {SpanKind::kernel, SpanKind::collective, SpanKind::send, SpanKind::recv, SpanKind::memcpy,
                               SpanKind::memset, SpanKind::host, SpanKind::annotation, SpanKind::idle};
constexpr std::array kPhases = {Phase::none, Phase::forward, Phase::backward, Phase::weight_grad,
                                Phase::recompute, Phase::optimizer, Phase::communication};
constexpr std::array kSources = {TimelineSource::predicted, TimelineSource::measured, TimelineSource::imported};

}  // namespace

nlohmann::json to_json(const Timeline& t) {
  nlohmann::json tracks = nlohmann::json::array();
  for (const auto& track : t.tracks) {
    nlohmann::json spans = nlohmann::json::array();
    for (const auto& s : track.spans) {
      nlohmann::json a = {s.start_ns, s.duration_ns, s.name_id, to_string(s.kind), to_string(s.phase), s.stage,
                          s.micro_batch, s.flops, s.bytes, s.tensor_core};
      // Measured only: predicted and imported spans keep 10. A 12th, the operator, follows the
      // CPU time (-1 there when not measured: a GPU kernel's).
      if (s.cpu_ns >= 0 || s.operator_id >= 0) a.push_back(s.cpu_ns);
      if (s.operator_id >= 0) a.push_back(s.operator_id);
      spans.push_back(std::move(a));
    }
    tracks.push_back({{"rank", track.rank},
                      {"lane", to_string(track.lane)},
                      {"stream", track.stream},
                      {"label", track.label},
                      {"spans", std::move(spans)}});
  }
  return {{"format", "plansight-timeline"}, {"version", 1},          {"source", to_string(t.source)},
          {"title", t.title},               {"names", t.names},      {"tracks", std::move(tracks)}};
}

namespace {

// The compact text of write_json(), in a buffer handed to the stream a megabyte at a time.
class TextOut {
 public:
  explicit TextOut(std::ostream& os) : os_(os) { buf_.reserve(kFlushBytes + 4096); }
  ~TextOut() { flush(); }
  TextOut(const TextOut&) = delete;
  TextOut& operator=(const TextOut&) = delete;
  TextOut& raw(std::string_view s) {
    buf_ += s;
    return *this;
  }
  TextOut& integer(std::int64_t v) {
    char text[24];
    const auto end = std::to_chars(text, text + sizeof text, v).ptr;
    buf_.append(text, end);
    return *this;
  }
  TextOut& number(double v) {
    if (!std::isfinite(v)) return raw("null");
    char text[32];
    const auto end = std::to_chars(text, text + sizeof text, v).ptr;  // shortest round trip
    buf_.append(text, end);
    // An integral double as nlohmann writes it, "5.0": read back as a double ("-0" would read
    // as the integer 0, losing its sign).
    if (std::find_if(text, end, [](char c) { return c == '.' || c == 'e'; }) == end) buf_ += ".0";
    return *this;
  }
  // Any JSON value (strings, with invalid UTF-8 replaced), written as nlohmann dumps it.
  TextOut& value(const nlohmann::json& j) {
    buf_ += j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    return *this;
  }
  void maybe_flush() {
    if (buf_.size() >= kFlushBytes) flush();
  }
  void flush() {
    os_.write(buf_.data(), static_cast<std::streamsize>(buf_.size()));
    buf_.clear();
  }

 private:
  static constexpr std::size_t kFlushBytes = std::size_t{1} << 20;
  std::ostream& os_;
  std::string buf_;
};

}  // namespace

void write_json(std::ostream& out, const Timeline& t, const nlohmann::json& extra) {
  TextOut o(out);
  o.raw("{\"format\":\"plansight-timeline\",\"version\":1,\"source\":\"").raw(to_string(t.source)).raw("\"");
  o.raw(",\"title\":").value(t.title).raw(",\"names\":[");
  for (std::size_t i = 0; i < t.names.size(); ++i) {
    if (i > 0) o.raw(",");
    o.value(t.names[i]);
    o.maybe_flush();
  }
  o.raw("],\"tracks\":[");
  for (std::size_t k = 0; k < t.tracks.size(); ++k) {
    const Track& track = t.tracks[k];
    o.raw(k > 0 ? ",{\"rank\":" : "{\"rank\":").integer(track.rank);
    o.raw(",\"lane\":\"").raw(to_string(track.lane)).raw("\",\"stream\":").integer(track.stream);
    o.raw(",\"label\":").value(track.label).raw(",\"spans\":[");
    for (std::size_t i = 0; i < track.spans.size(); ++i) {
      const Span& s = track.spans[i];
      o.raw(i > 0 ? ",[" : "[").integer(s.start_ns).raw(",").integer(s.duration_ns).raw(",").integer(s.name_id);
      o.raw(",\"").raw(to_string(s.kind)).raw("\",\"").raw(to_string(s.phase)).raw("\",");
      o.integer(s.stage).raw(",").integer(s.micro_batch).raw(",").number(s.flops).raw(",").number(s.bytes);
      o.raw(s.tensor_core ? ",true" : ",false");
      if (s.cpu_ns >= 0 || s.operator_id >= 0) o.raw(",").integer(s.cpu_ns);
      if (s.operator_id >= 0) o.raw(",").integer(s.operator_id);
      o.raw("]");
      o.maybe_flush();
    }
    o.raw("]}");
  }
  o.raw("]");
  if (extra.is_object()) {
    for (const auto& [key, value] : extra.items()) {
      if (key == "format" || key == "version" || key == "source" || key == "title" || key == "names" || key == "tracks") continue;
      o.raw(",").value(key).raw(":").value(value);
    }
  }
  o.raw("}");
}

Result<Timeline> timeline_from_json(const nlohmann::json& json) {
  std::vector<Diagnostic> errors;
  if (!json.is_object() || json.value("format", "") != "plansight-timeline") {
    return make_error("timeline", "not a Plansight timeline (expected \"format\": \"plansight-timeline\")");
  }
  if (json.value("version", 0) != 1) return make_error("timeline.version", "unsupported version; valid: 1");
  Timeline t;
  JsonReader in(json, "timeline", errors);
  std::string source = "predicted";
  in.read("source", source);
  if (!parse_name(source, kSources, t.source)) in.error("source", "unknown source \"" + source + "\"");
  in.read("title", t.title);
  if (const auto* names = in.get("names")) {
    if (!names->is_array()) {
      in.error("names", "expected an array of strings");
    } else {
      for (const auto& n : *names) {
        if (!n.is_string()) { in.error("names", "expected strings"); break; }
        t.names.push_back(n.get<std::string>());
      }
    }
  }
  const auto* tracks = in.get("tracks");
  if (tracks && !tracks->is_array()) in.error("tracks", "expected an array");
  for (std::size_t i = 0; tracks && tracks->is_array() && i < tracks->size(); ++i) {
    const std::string path = "timeline.tracks[" + std::to_string(i) + "]";
    JsonReader tr((*tracks)[i], path, errors);
    Track track;
    std::int64_t rank = 0, stream = -1;
    tr.read("rank", rank, 0, INT32_MAX);
    tr.read("stream", stream, -1, INT32_MAX);
    track.rank = static_cast<std::int32_t>(rank);
    track.stream = static_cast<std::int32_t>(stream);
    tr.read("label", track.label);
    std::string lane = "compute";
    tr.read("lane", lane);
    if (!parse_name(lane, kLanes, track.lane)) tr.error("lane", "unknown lane \"" + lane + "\"");
    const auto* spans = tr.get("spans");
    for (std::size_t j = 0; spans && spans->is_array() && j < spans->size(); ++j) {
      const auto& a = (*spans)[j];
      Span s;
      // An 11th element, the span's thread CPU time, where it was measured (-1 where a 12th, its
      // operator's name index, follows without one).
      const bool shape = a.is_array() && (a.size() >= 10 && a.size() <= 12) && a[0].is_number_integer() &&
                         a[1].is_number_integer() && a[2].is_number_integer() && a[3].is_string() && a[4].is_string() &&
                         a[5].is_number_integer() && a[6].is_number_integer() && a[7].is_number() && a[8].is_number() &&
                         a[9].is_boolean() &&
                         (a.size() == 10 || (a[10].is_number_integer() && a[10].get<std::int64_t>() >= (a.size() == 12 ? -1 : 0))) &&
                         (a.size() < 12 || a[11].is_number_integer());
      if (!shape || !parse_name(a[3].get<std::string>(), kKinds, s.kind) || !parse_name(a[4].get<std::string>(), kPhases, s.phase)) {
        errors.push_back(make_error(path + ".spans[" + std::to_string(j) + "]",
                                    "expected [start_ns, duration_ns, name, kind, phase, stage, micro_batch, flops, bytes, tensor_core] "
                                    "and optionally cpu_ns (>= 0; -1 before an operator) and operator (a name index)"));
        break;
      }
      s.start_ns = a[0].get<std::int64_t>();
      s.duration_ns = a[1].get<std::int64_t>();
      const auto name = a[2].get<std::int64_t>();
      if (name < -1 || name >= static_cast<std::int64_t>(t.names.size())) {
        errors.push_back(make_error(path + ".spans[" + std::to_string(j) + "]", "name index out of range"));
        break;
      }
      s.name_id = static_cast<std::int32_t>(name);
      s.stage = static_cast<std::int32_t>(a[5].get<std::int64_t>());
      s.micro_batch = static_cast<std::int32_t>(a[6].get<std::int64_t>());
      s.flops = a[7].get<double>();
      s.bytes = a[8].get<double>();
      s.tensor_core = a[9].get<bool>();
      if (a.size() >= 11) s.cpu_ns = a[10].get<std::int64_t>();
      if (a.size() == 12) {
        const auto op = a[11].get<std::int64_t>();
        if (op < 0 || op >= static_cast<std::int64_t>(t.names.size())) {
          errors.push_back(make_error(path + ".spans[" + std::to_string(j) + "]",
                                      "operator index " + std::to_string(op) + " out of range; valid: 0 to " +
                                          std::to_string(static_cast<std::int64_t>(t.names.size()) - 1)));
          break;
        }
        s.operator_id = static_cast<std::int32_t>(op);
      }
      track.spans.push_back(s);
    }
    t.tracks.push_back(std::move(track));
  }
  if (!errors.empty()) return errors;
  return t;
}

}  // namespace plansight::estimator
