// Process parts (see process_parts.h).
#include "process_parts.h"

#include <algorithm>
#include <cstring>

#include <nlohmann/json.hpp>

#include "plansight/estimator/timeline_json.h"

namespace plansight::probe {
namespace {

namespace est = plansight::estimator;
using nlohmann::json;

json breakdown(const est::MemoryBreakdown& m) {
  return json::array({m.weights_bytes, m.gradients_bytes, m.optimizer_bytes, m.activations_bytes, m.buffers_bytes,
                      m.reserve_bytes});
}

est::MemoryBreakdown breakdown_of(const json& j) {
  est::MemoryBreakdown m;
  m.weights_bytes = j.at(0).get<double>();
  m.gradients_bytes = j.at(1).get<double>();
  m.optimizer_bytes = j.at(2).get<double>();
  m.activations_bytes = j.at(3).get<double>();
  m.buffers_bytes = j.at(4).get<double>();
  m.reserve_bytes = j.at(5).get<double>();
  return m;
}

json float_bytes(const std::vector<float>& values) {
  std::vector<std::uint8_t> bytes(values.size() * sizeof(float));
  if (!bytes.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  return json::binary(std::move(bytes));
}

std::vector<float> floats_of(const json& j) {
  const auto& bytes = j.get_binary();
  std::vector<float> values(bytes.size() / sizeof(float));
  if (!values.empty()) std::memcpy(values.data(), bytes.data(), values.size() * sizeof(float));
  return values;
}

}  // namespace

std::string encode_process_part(const RunState& state, const std::vector<int>& ranks,
                                const est::Timeline* device_timeline) {
  json part = {{"ranks", json::array()}};
  if (device_timeline) part["timeline"] = est::to_json(*device_timeline);
  const std::int64_t origin = state.tracer ? state.tracer->origin_ns() : 0;
  for (int r : ranks) {
    const auto i = static_cast<std::size_t>(r);
    const RankMemory& m = state.memory[i];
    json rank = {{"rank", r},
                 {"current", breakdown(m.current)},
                 {"peak", breakdown(m.peak)},
                 {"peak_total", m.peak_total_bytes},
                 {"parameters", json::object()},
                 {"spans", json::array()}};
    for (const auto& [name, values] : state.parameters[i]) rank["parameters"][name] = float_bytes(values);
    if (state.tracer && !device_timeline) {
      for (const auto& s : state.tracer->spans(r)) {
        rank["spans"].push_back(json::array({s.name, static_cast<int>(s.info.lane), static_cast<int>(s.info.kind),
                                             static_cast<int>(s.info.phase), s.info.stage, s.info.micro_batch,
                                             s.info.flops, s.info.bytes, s.info.stream, origin + s.start_ns,
                                             origin + s.end_ns, s.cpu_ns}));
      }
    }
    part["ranks"].push_back(std::move(rank));
  }
  const std::vector<std::uint8_t> cbor = json::to_cbor(part);
  return std::string(cbor.begin(), cbor.end());
}

Result<bool> merge_process_part(RunState& state, const std::string& bytes, std::int64_t clock_offset_ns,
                                est::Timeline* device_timeline) {
  try {
    const json part = json::from_cbor(bytes);
    if (device_timeline && part.contains("timeline")) {
      auto theirs = est::timeline_from_json(part["timeline"]);
      if (!theirs) return theirs.errors();
      for (auto& track : theirs->tracks) {
        // Their name indices, the operators' too, into this timeline's names (-1: none).
        auto ours = [&](std::int32_t id) {
          return id < 0 ? id : device_timeline->intern(theirs->names[static_cast<std::size_t>(id)]);
        };
        for (auto& span : track.spans) {
          span.name_id = ours(span.name_id);
          span.operator_id = ours(span.operator_id);
          span.start_ns -= clock_offset_ns;
        }
        device_timeline->tracks.push_back(std::move(track));
      }
      std::stable_sort(device_timeline->tracks.begin(), device_timeline->tracks.end(),
                       [](const est::Track& a, const est::Track& b) { return a.rank < b.rank; });
    }
    const std::int64_t origin = state.tracer ? state.tracer->origin_ns() : 0;
    for (const auto& rank : part.at("ranks")) {
      const int r = rank.at("rank").get<int>();
      if (r < 0 || r >= state.cfg.world()) {
        return make_error("probe", "a process reported rank " + std::to_string(r) + " of a world of " + std::to_string(state.cfg.world()));
      }
      const auto i = static_cast<std::size_t>(r);
      RankMemory& m = state.memory[i];
      m.rank = r;
      m.current = breakdown_of(rank.at("current"));
      m.peak = breakdown_of(rank.at("peak"));
      m.peak_total_bytes = rank.at("peak_total").get<double>();
      for (const auto& [name, values] : rank.at("parameters").items()) state.parameters[i][name] = floats_of(values);
      if (!state.tracer) continue;
      for (const auto& s : rank.at("spans")) {
        runtime::SpanInfo info;
        info.lane = static_cast<est::Lane>(s.at(1).get<int>());
        info.kind = static_cast<est::SpanKind>(s.at(2).get<int>());
        info.phase = static_cast<est::Phase>(s.at(3).get<int>());
        info.stage = s.at(4).get<std::int32_t>();
        info.micro_batch = s.at(5).get<std::int32_t>();
        info.flops = s.at(6).get<double>();
        info.bytes = s.at(7).get<double>();
        info.stream = s.at(8).get<std::int32_t>();
        const std::int64_t start = s.at(9).get<std::int64_t>() - clock_offset_ns - origin;
        const std::int64_t end = s.at(10).get<std::int64_t>() - clock_offset_ns - origin;
        // Element 11, the thread's processor time (-1: not measured), from a program that has it.
        const std::int64_t cpu_ns = s.size() > 11 ? s.at(11).get<std::int64_t>() : -1;
        state.tracer->record(r, s.at(0).get<std::string>(), info, start, end, cpu_ns);
      }
    }
  } catch (const std::exception& e) {
    return make_error("probe", std::string("a process's part of the result is malformed: ") + e.what());
  }
  return true;
}

}  // namespace plansight::probe
