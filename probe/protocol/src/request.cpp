// ProbeRequest <-> JSON and the named probe models. The rules a layout must obey are the
// estimator's own validate() on the Plan the request describes, so that the probe refuses
// exactly what the estimator would refuse, with the same messages; only the probe's extra
// limits (no context parallelism, a bounded number of rank threads) are checked here.
#include "plansight/probe/protocol/request.h"

#include <algorithm>
#include <utility>

#include "plansight/estimator/json_io.h"
#include "plansight/estimator/json_reader.h"
#include "plansight/estimator/plan.h"
#include "plansight/estimator/presets.h"

namespace plansight::probe {
namespace {

namespace est = plansight::estimator;

// Ranks are threads: beyond this many, a CPU run measures the scheduler, not the layout.
constexpr std::int64_t kMaxWorldSize = 64;
// The longest sequence a request gets by default: gpt2-124m's 1024 positions would make a CPU
// step take minutes, and the probe's point is the layout, not the context length.
constexpr std::int64_t kDefaultSeqLenCap = 128;

// A GPT-2 style decoder as the probe's kernels implement it (llm.c's train_gpt2.c): LayerNorm
// with bias, GeLU MLP of 4 x hidden, learned positions, tied LM head, biases everywhere and no
// dropout (the kernels have none, so the estimator must not count dropout masks).
est::ModelSpec gpt2_style(std::string name, std::int64_t layers, std::int64_t hidden, std::int64_t heads,
                          std::int64_t vocab, std::int64_t seq) {
  est::ModelSpec m;
  m.name = std::move(name);
  m.source = "plansight probe model (GPT-2 architecture, llm.c kernels)";
  m.layers = layers;
  m.hidden = hidden;
  m.heads = heads;
  m.kv_heads = heads;
  m.ffn_hidden = 4 * hidden;
  m.vocab = vocab;
  m.max_seq_len = seq;
  m.dropout = false;
  return m;
}

}  // namespace

const char* to_string(Precision p) {
  switch (p) {
    case Precision::fp32: return "fp32";
    case Precision::tf32: return "tf32";
    case Precision::bf16: return "bf16";
    case Precision::fp16: return "fp16";
  }
  return "fp32";
}

namespace {

const char* data_name(DataSource d) { return d == DataSource::corpus ? "corpus" : "synthetic"; }
const char* device_name(Device d) {
  switch (d) {
    case Device::cpu: return "cpu";
    case Device::cuda: return "cuda";
    case Device::automatic: return "auto";
  }
  return "cpu";
}

// The model: a name ("small"), or an object of ModelSpec fields on top of an optional "preset".
void read_model_field(est::JsonReader& in, est::ModelSpec& out) {
  const auto* v = in.get("model");
  if (!v) return;
  if (v->is_string()) {
    auto m = probe_model(v->get<std::string>());
    if (m) {
      out = *m;
    } else {
      in.error("model", m.errors().front().message);
    }
    return;
  }
  if (!v->is_object()) {
    in.error("model", "expected a model name (tiny, small, gpt2-124m) or an object, got " + est::describe_json(*v));
    return;
  }
  auto model = in.child("model");
  if (const auto* preset = model->get("preset")) {
    auto base = preset->is_string() ? probe_model(preset->get<std::string>()) : Result<est::ModelSpec>(make_error("", ""));
    if (base) {
      out = *base;
    } else {
      model->error("preset", "unknown value " + est::describe_json(*preset) + "; valid: tiny, small, gpt2-124m");
    }
  }
  est::read_model(*model, out);
  // The kernels implement one architecture; a request for another must not silently run GPT-2.
  if (out.gated_mlp) model->error("gated_mlp", "the probe's kernels have a GeLU MLP; valid: false");
  if (out.norm != est::NormKind::layer_norm) model->error("norm", "the probe's kernels use LayerNorm; valid: layer_norm");
  if (out.position != est::PositionKind::learned) model->error("position", "the probe's kernels use learned positions; valid: learned");
  if (out.kv_heads != out.heads) model->error("kv_heads", "the probe's attention is multi-head; valid: kv_heads = heads");
  if (out.ffn_hidden != 4 * out.hidden) {
    model->error("ffn_hidden", "the probe's MLP is 4 x hidden; valid: " + std::to_string(4 * out.hidden));
  }
}

// The estimator names batch fields "training.x"; in a request they sit at the top level.
Diagnostic rename_field(Diagnostic d) {
  constexpr std::string_view prefix = "training.";
  if (d.field.rfind(prefix, 0) == 0) d.field = d.field.substr(prefix.size());
  return d;
}

// The estimator's rules on the Plan this request describes (see the file header).
void validate_as_plan(const ProbeRequest& r, std::vector<Diagnostic>& errors) {
  est::Plan plan;
  plan.model = r.model;
  plan.layout = r.layout;
  plan.cluster.name = "probe";
  plan.cluster.gpu.name = "cpu";
  plan.cluster.gpu.memory_bytes = std::int64_t{1} << 40;  // memory is measured, never a reason to refuse
  plan.cluster.gpu.peak_fp32_flops = 1e12;
  plan.cluster.gpus = r.layout.tp * r.layout.pp * std::max<std::int64_t>(r.layout.dp, 1);
  plan.cluster.gpus_per_node = plan.cluster.gpus;
  plan.training.micro_batch = r.micro_batch;
  plan.training.global_batch = r.global_batch;
  plan.training.seq_len = r.seq_len;
  plan.training.precision = est::Precision::fp32;
  for (auto& d : est::validate(plan)) {
    if (d.severity == Severity::error) errors.push_back(rename_field(std::move(d)));
  }
}

}  // namespace

Result<estimator::ModelSpec> probe_model(const std::string& name) {
  if (name == "tiny") return gpt2_style("tiny", 2, 64, 4, 256, 64);
  if (name == "small") return gpt2_style("small", 4, 128, 4, 256, 128);
  if (name == "gpt2-124m") {
    auto m = est::find_model("gpt2-124m");
    if (!m) return m.errors();
    est::ModelSpec out = *m;
    out.dropout = false;  // as gpt2_style: the probe's kernels have no dropout
    return out;
  }
  return make_error("model", "unknown model \"" + name + "\"; valid: tiny, small, gpt2-124m");
}

nlohmann::json to_json(const ProbeRequest& r) {
  nlohmann::json layout = est::to_json(r.layout);
  layout.erase("stage_layers");  // empty by default; kept only when given
  if (!r.layout.stage_layers.empty()) layout["stage_layers"] = r.layout.stage_layers;
  nlohmann::json out = {{"model", est::to_json(r.model)},
                        {"layout", std::move(layout)},
                        {"micro_batch", r.micro_batch},
                        {"global_batch", r.global_batch},
                        {"seq_len", r.seq_len},
                        {"steps", r.steps},
                        {"warmup_steps", r.warmup_steps},
                        {"learning_rate", r.learning_rate},
                        {"lr_warmup_steps", r.lr_warmup_steps},
                        {"weight_decay", r.weight_decay},
                        {"seed", r.seed},
                        {"data", data_name(r.data)},
                        {"device", device_name(r.device)},
                        {"precision", to_string(r.precision)},
                        {"threads_per_rank", r.threads_per_rank},
                        {"cores", r.cores},
                        {"trace", r.trace},
                        {"calibrate", r.calibrate}};
  // Written only when asked for, so that readers built before the field (which refuse unknown
  // keys) still read every other request, and stored requests stay as they were.
  if (r.tensor_core_counters) out["tensor_core_counters"] = true;
  return out;
}

Result<ProbeRequest> probe_request_from_json(const nlohmann::json& json) {
  if (!json.is_object()) return make_error("request", "expected a JSON object, got " + est::describe_json(json));
  std::vector<Diagnostic> errors;
  est::JsonReader in(json, "", errors);
  in.reject_unknown({"model", "layout", "micro_batch", "global_batch", "seq_len", "steps", "warmup_steps",
                     "learning_rate", "lr_warmup_steps", "weight_decay", "seed", "data", "device", "precision", "threads_per_rank",
                     "cores", "trace", "calibrate", "tensor_core_counters"});
  ProbeRequest r;
  r.model = *probe_model("tiny");
  read_model_field(in, r.model);
  if (auto layout = in.child("layout")) est::read_layout(*layout, r.layout);
  if (r.layout.dp == 0) r.layout.dp = 1;  // no GPU count to derive it from

  in.read("micro_batch", r.micro_batch, 1, 1 << 16);
  // A field counts as given only when it was read: a bad one keeps its default, so that the
  // checks below still run (every error at once) without repeating its error.
  std::size_t before = errors.size();
  in.read("global_batch", r.global_batch, 1, 1 << 20);
  const bool global_given = in.has("global_batch") && errors.size() == before;
  before = errors.size();
  in.read("seq_len", r.seq_len, 1, 1 << 20);
  const bool seq_given = in.has("seq_len") && errors.size() == before;
  in.read("steps", r.steps, 1, 1'000'000);
  in.read("warmup_steps", r.warmup_steps, 0, 1000);
  in.read("learning_rate", r.learning_rate, 0.0, 10.0);
  in.read("lr_warmup_steps", r.lr_warmup_steps, 0, 1'000'000);
  in.read("weight_decay", r.weight_decay, 0.0, 10.0);
  std::int64_t seed = static_cast<std::int64_t>(r.seed);
  in.read("seed", seed, 0);
  r.seed = static_cast<std::uint64_t>(seed);
  std::string text;
  if (in.has("data")) {
    in.read("data", text);
    if (text == "synthetic") r.data = DataSource::synthetic;
    else if (text == "corpus") r.data = DataSource::corpus;
    else if (!text.empty()) in.error("data", "unknown value \"" + text + "\"; valid: synthetic, corpus");
  }
  if (in.has("device")) {
    text.clear();
    in.read("device", text);
    if (text == "cpu") r.device = Device::cpu;
    else if (text == "cuda") r.device = Device::cuda;
    else if (text == "auto") r.device = Device::automatic;
    else if (!text.empty()) in.error("device", "unknown value \"" + text + "\"; valid: cpu, cuda, auto");
  }
  if (in.has("precision")) {
    text.clear();
    in.read("precision", text);
    if (text == "fp32") r.precision = Precision::fp32;
    else if (text == "tf32") r.precision = Precision::tf32;
    else if (text == "bf16") r.precision = Precision::bf16;
    else if (text == "fp16") r.precision = Precision::fp16;
    else if (!text.empty()) in.error("precision", "unknown value \"" + text + "\"; valid: fp32, tf32, bf16, fp16");
  }
  if (r.device == Device::cpu && r.precision != Precision::fp32) {
    in.error("precision", std::string("value ") + to_string(r.precision) +
                              ": the CPU computes in fp32; valid with device cpu: fp32 (tf32, bf16 and fp16 need device cuda)");
  }
  in.read("threads_per_rank", r.threads_per_rank, 1, 256);
  in.read("cores", r.cores, 0, 4096);
  in.read("trace", r.trace);
  in.read("calibrate", r.calibrate);
  in.read("tensor_core_counters", r.tensor_core_counters);
  // Machine-free checks; whether the GPU permits counters is only known when it runs.
  if (r.tensor_core_counters && r.device == Device::cpu) {
    in.error("tensor_core_counters", "value true: tensor-core counters are read from an NVIDIA GPU; valid with device cpu: false "
                                     "(use device cuda or auto)");
  }
  // The counters' kernel replay (CUPTI range profiler, with a launch-callback subscriber) and the
  // CUPTI activity tracer are never used in one process: a GPT-2 run with both died (SIGSEGV)
  // after its last step on an H200, while the counters alone ran. The counters carry each
  // kernel's duration, so they need no traced timeline.
  if (r.tensor_core_counters && r.trace) {
    in.error("tensor_core_counters", "runs with trace false: the counters' kernel replay and the CUPTI activity tracer "
                                     "are not used in one process; run the traced step and the counters as two runs");
  }

  if (!seq_given) r.seq_len = std::min(r.model.max_seq_len, kDefaultSeqLenCap);
  if (!global_given) {
    // Two micro-batches per stage keeps a pipeline busy (1F1B needs m >= pp; interleaved m % pp == 0).
    const std::int64_t micro_batches = r.layout.pp > 1 ? 2 * r.layout.pp : 1;
    r.global_batch = r.micro_batch * std::max<std::int64_t>(r.layout.dp, 1) * micro_batches;
  }
  if (r.layout.cp != 1) in.error("layout.cp", "value " + std::to_string(r.layout.cp) + ": the probe does not run context parallelism; valid: 1");
  const std::int64_t world = r.layout.tp * r.layout.pp * r.layout.dp;
  if (r.layout.tp >= 1 && r.layout.pp >= 1 && r.layout.dp >= 1 && world > kMaxWorldSize) {
    in.error("layout", "tp*pp*dp = " + std::to_string(world) + " rank threads; valid: at most " + std::to_string(kMaxWorldSize));
  }
  validate_as_plan(r, errors);
  if (!errors.empty()) return errors;
  return r;
}

double learning_rate_at(const ProbeRequest& request, std::int64_t step) {
  if (request.lr_warmup_steps <= 0 || step >= request.lr_warmup_steps) return request.learning_rate;
  return request.learning_rate * static_cast<double>(std::max<std::int64_t>(step, 1)) /
         static_cast<double>(request.lr_warmup_steps);
}

}  // namespace plansight::probe
