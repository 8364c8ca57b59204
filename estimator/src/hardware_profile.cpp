// JSON of a HardwareProfile, with the same typed, path-named error reporting as plan files.
#include "plansight/estimator/hardware_profile.h"

#include "plansight/estimator/json_reader.h"

namespace plansight::estimator {
namespace {

const char* collective_name(Collective op) {
  switch (op) {
    case Collective::all_reduce: return "all_reduce";
    case Collective::all_gather: return "all_gather";
    case Collective::reduce_scatter: return "reduce_scatter";
    case Collective::broadcast: return "broadcast";
    case Collective::send_recv: return "send_recv";
  }
  return "?";
}

}  // namespace

nlohmann::json to_json(const HardwareProfile& p) {
  nlohmann::json gemms = nlohmann::json::array();
  for (const auto& g : p.gemms) {
    gemms.push_back({{"m", g.m}, {"n", g.n}, {"k", g.k}, {"batch", g.batch}, {"precision", to_string(g.precision)},
                     {"seconds", g.seconds}, {"tflops", g.seconds > 0 ? g.flops() / g.seconds / 1e12 : 0.0}});
  }
  nlohmann::json collectives = nlohmann::json::array();
  for (const auto& c : p.collectives) {
    collectives.push_back({{"op", collective_name(c.op)}, {"ranks", c.ranks}, {"bytes", c.bytes}, {"seconds", c.seconds},
                           {"crosses_nodes", c.crosses_nodes},
                           {"bus_gb_per_s", c.seconds > 0 ? c.bytes * bus_factor(c.op, c.ranks) / c.seconds / 1e9 : 0.0}});
  }
  nlohmann::json attention = nlohmann::json::array();
  for (const auto& a : p.attention) {
    attention.push_back({{"batch_heads", a.batch_heads}, {"seq", a.seq}, {"head_dim", a.head_dim},
                         {"forward_s", a.forward_s}, {"backward_s", a.backward_s}});
  }
  return {{"device", p.device},
          {"created_at", p.created_at},
          {"peak_flops", p.peak_flops},
          {"memory_bandwidth_bytes_per_s", p.memory_bandwidth_bytes_per_s},
          {"kernel_overhead_s", p.kernel_overhead_s},
          {"gemms", std::move(gemms)},
          {"collectives", std::move(collectives)},
          {"elementwise_bytes_per_s", p.elementwise_bytes_per_s},
          {"attention", std::move(attention)},
          {"optimizer_bytes_per_s", p.optimizer_bytes_per_s}};
}

Result<HardwareProfile> hardware_profile_from_json(const nlohmann::json& json) {
  std::vector<Diagnostic> errors;
  if (!json.is_object()) return make_error("hardware_profile", "expected an object, got " + describe_json(json));
  HardwareProfile p;
  JsonReader in(json, "hardware_profile", errors);
  in.reject_unknown({"device", "created_at", "peak_flops", "memory_bandwidth_bytes_per_s", "kernel_overhead_s", "gemms",
                     "collectives", "elementwise_bytes_per_s", "attention", "optimizer_bytes_per_s"});
  in.read("device", p.device);
  in.read("created_at", p.created_at);
  in.read("peak_flops", p.peak_flops, 0.0);
  in.read("memory_bandwidth_bytes_per_s", p.memory_bandwidth_bytes_per_s, 0.0);
  in.read("kernel_overhead_s", p.kernel_overhead_s, -1.0, 1.0);
  if (const auto* gemms = in.get("gemms")) {
    if (!gemms->is_array()) {
      in.error("gemms", "expected an array");
    } else {
      for (std::size_t i = 0; i < gemms->size(); ++i) {
        JsonReader g((*gemms)[i], in.field("gemms") + "[" + std::to_string(i) + "]", errors);
        g.reject_unknown({"m", "n", "k", "batch", "precision", "seconds", "tflops"});
        GemmSample s;
        g.read("m", s.m, 1);
        g.read("n", s.n, 1);
        g.read("k", s.k, 1);
        g.read("batch", s.batch, 1);
        g.read_enum("precision", s.precision);
        g.read("seconds", s.seconds, 0.0);
        p.gemms.push_back(s);
      }
    }
  }
  if (const auto* list = in.get("collectives")) {
    if (!list->is_array()) {
      in.error("collectives", "expected an array");
    } else {
      for (std::size_t i = 0; i < list->size(); ++i) {
        JsonReader c((*list)[i], in.field("collectives") + "[" + std::to_string(i) + "]", errors);
        c.reject_unknown({"op", "ranks", "bytes", "seconds", "crosses_nodes", "bus_gb_per_s"});
        CollectiveSample s;
        std::string op = "all_reduce";
        c.read("op", op);
        bool known = false;
        for (Collective k : {Collective::all_reduce, Collective::all_gather, Collective::reduce_scatter,
                             Collective::broadcast, Collective::send_recv}) {
          if (op == collective_name(k)) {
            s.op = k;
            known = true;
          }
        }
        if (!known) c.error("op", "unknown collective \"" + op + "\"; valid: all_reduce|all_gather|reduce_scatter|broadcast|send_recv");
        c.read("ranks", s.ranks, 1);
        c.read("bytes", s.bytes, 0.0);
        c.read("seconds", s.seconds, 0.0);
        c.read("crosses_nodes", s.crosses_nodes);
        p.collectives.push_back(s);
      }
    }
  }
  // Absent in profiles written before element-wise calibration: they stay readable.
  if (const auto* rates = in.get("elementwise_bytes_per_s")) {
    if (!rates->is_object()) {
      in.error("elementwise_bytes_per_s", "expected an object of kernel kind -> bytes per second, got " + describe_json(*rates));
    } else {
      for (const auto& [kind, value] : rates->items()) {
        if (!value.is_number() || !(value.get<double>() > 0)) {
          in.error("elementwise_bytes_per_s." + kind, "expected a positive number of bytes per second, got " + describe_json(value));
        } else {
          p.elementwise_bytes_per_s[kind] = value.get<double>();
        }
      }
    }
  }
  // Absent in profiles written before attention and optimizer calibration.
  if (const auto* list = in.get("attention")) {
    if (!list->is_array()) {
      in.error("attention", "expected an array, got " + describe_json(*list));
    } else {
      for (std::size_t i = 0; i < list->size(); ++i) {
        JsonReader a((*list)[i], in.field("attention") + "[" + std::to_string(i) + "]", errors);
        a.reject_unknown({"batch_heads", "seq", "head_dim", "forward_s", "backward_s"});
        AttentionSample s;
        a.read("batch_heads", s.batch_heads, 1);
        a.read("seq", s.seq, 1);
        a.read("head_dim", s.head_dim, 1);
        a.read("forward_s", s.forward_s, 0.0, 1e6);
        a.read("backward_s", s.backward_s, 0.0, 1e6);
        p.attention.push_back(s);
      }
    }
  }
  in.read("optimizer_bytes_per_s", p.optimizer_bytes_per_s, 0.0);
  if (!errors.empty()) return errors;
  return p;
}

}  // namespace plansight::estimator
