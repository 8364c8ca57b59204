// Subcommand dispatch, `estimate`, `import-model`, and the preset listings.
#include "plansight/cli/commands.h"

#include <nlohmann/json.hpp>

#include "command_util.h"

#include "plansight/cli/estimate_report.h"
#include "plansight/cli/format.h"
#include "plansight/cli/plan_args.h"
#include "plansight/estimator/estimator.h"
#include "plansight/estimator/hf_config.h"
#include "plansight/estimator/json_io.h"
#include "plansight/estimator/parameters.h"
#include "plansight/estimator/plan_fields.h"
#include "plansight/estimator/presets.h"

namespace plansight::cli {
namespace {

namespace est = plansight::estimator;

// Prints every error on stderr and, with --json, as {"errors": [...]} on stdout.
Status report_errors(const std::vector<Diagnostic>& errors, bool json, std::ostream& out, std::ostream& err) {
  return report_command_errors(errors, json, out, err);
}

bool wants_json(const std::vector<std::string>& args) {
  for (const auto& a : args) if (a == "--json") return true;
  return false;
}

std::vector<FlagSpec> with_json(std::vector<FlagSpec> flags) {
  flags.push_back({"--json", false, ""});
  return flags;
}

const char* kUsage =
    "usage: plansight <command> [options]\n"
    "\n"
    "commands:\n"
    "  estimate       parameters, memory per GPU, FLOPs, time and cost of a plan\n"
    "  models         list model presets\n"
    "  gpus           list GPU presets\n"
    "  systems        list system presets\n"
    "  import-model   read a Hugging Face config.json into a model description\n"
    "  examples       worked examples of lectures and papers, ours beside the published value:\n"
    "                 examples [NAME] [--row N --write-plan FILE.json] [--json]\n"
    "  placement      which GPU of which node holds which TP/CP/DP/PP rank, and each group's link\n"
    "                 [--nodes N] [--json] and the estimate options\n"
    "  operators      one transformer layer's and the LM head's operators on one GPU, as the time model costs\n"
    "                 them: GEMM shapes, FLOPs, bytes, FLOP/byte, time, compute or memory bound (roofline)\n"
    "                 [--layer dense|moe] [--json] and the estimate options\n"
    "  sweep          one plan field over a range: sweep FIELD=A..B|A..B*F|a,b,c --metric M[,M2] [--csv|--json]\n"
    "                 and the estimate options (FIELD: tp, pp, vpp, dp, cp, ep, etp, zero, gpus, micro_batch,\n"
    "                 global_batch, micro_batches, seq_len, tokens or a plan-file path)\n"
    "  search         best layouts for a plan (the estimate options; layout options fix that dimension)\n"
    "                 [--top K] [--threads N] [--json]\n"
    "  timeline       the predicted timeline of a plan's iteration: --out FILE.json, --ascii [--width N], --json;\n"
    "                 --per-layer: every op layer by layer, each collective its own span;\n"
    "                 --format perfetto --out FILE.json: Chrome trace-event JSON (ui.perfetto.dev)\n"
    "  import         store a trace: PyTorch profiler/Kineto JSON (.gz), a directory of ranks, nsys SQLite;\n"
    "                 --drop-last-step drops the last ProfilerStep as Holistic Trace Analysis does on load\n"
    "  analyze RUN    breakdown, overlap (ours and HTA's), bubbles, bus bandwidth [--rules FILE] [--align MODE]\n"
    "  export RUN     --format perfetto --out FILE.json (Chrome trace-event JSON)\n"
    "  diff A B       per-phase and per-kernel-class deltas of two runs; of two plan files (A.json B.json):\n"
    "                 the fields that differ, memory per GPU, time breakdown, days and cost side by side\n"
    "  probe          run real training steps of a small GPT in plansight-probe and store them:\n"
    "                 [--model tiny|small|gpt2-124m] [--tp --pp --vpp --dp --zero --recompute --schedule\n"
    "                 --micro-batch --global-batch --seq-len] [--steps N] [--device cpu|cuda|auto]\n"
    "                 [--precision fp32|tf32|bf16|fp16 (GPU; bf16/fp16 keep fp32 master weights)]\n"
    "                 [--calibrate] [--db PATH] [--json]\n"
    "  runs           stored runs: runs [--json], runs show ID, runs delete ID  [--db PATH]\n"
    "  compare        predicted vs measured time per phase and memory of a probe run: compare ID [--operators] [--json]\n"
    "                 (--operators: also per operator of the layer and the head: a CPU run's spans, a GPU\n"
    "                 run's kernels by the operator that launched them);\n"
    "                 any measured or imported run beside a plan's prediction: compare ID --plan FILE.json\n"
    "                 and/or the estimate options [--json]\n"
    "\n"
    "\n";

// The usage text: the commands above, then the plan options, made from the estimator's field
// table so that every flag a plan command takes is listed with its help.
std::string usage() {
  return std::string(kUsage) +
         "plan options of estimate, search, timeline, sweep, placement, operators and compare (all optional; the default plan is\n"
         "GPT-3 175B on 1024 A100-80GB; each sets the plan-file field of its name, so --tp 4 = {\"layout\": {\"tp\": 4}}):\n"
         "  --plan FILE.json  --model NAME|config.json|FOLDER  --params N (a GPT-shaped model of N parameters)\n"
         "  --gpu NAME  --system NAME  --json\n" +
         est::plan_fields_help();
}

}  // namespace

int exit_code(Status status) {
  switch (status) {
    case Status::ok: return 0;
    case Status::invalid_input: return 2;
    case Status::failure: return 1;
  }
  return 1;
}

Status run_estimate(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
  const bool json = wants_json(argv);
  auto args = Args::parse(argv, plan_command_flags());
  if (!args) return report_errors(args.errors(), json, out, err);
  if (!args->positionals().empty()) {
    return report_errors({make_error(args->positionals().front(), "unexpected argument; see plansight --help")}, json, out, err);
  }
  std::vector<Diagnostic> adjustments;
  auto plan = plan_from_args(*args, &adjustments);
  if (!plan) return report_errors(plan.errors(), json, out, err);
  print_adjustments(adjustments, err);
  auto estimate = est::estimate(*plan);
  if (!estimate) return report_errors(estimate.errors(), json, out, err);
  if (json) {
    nlohmann::json j = est::to_json(*estimate);
    j["adjustments"] = nlohmann::json::array();
    for (const auto& a : adjustments) j["adjustments"].push_back({{"field", a.field}, {"message", a.message}});
    j["plan"] = est::to_json(*plan);
    out << json_text(j) << "\n";
  } else {
    print_estimate(out, *plan, *estimate);
  }
  return Status::ok;
}

Status run_import_model(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
  const bool json = wants_json(argv);
  auto args = Args::parse(argv, with_json({{"--name", true, "NAME"}}));
  if (!args) return report_errors(args.errors(), json, out, err);
  if (args->positionals().size() != 1) {
    return report_errors({make_error("config.json", "give exactly one Hugging Face config.json path")}, json, out, err);
  }
  const std::string path = args->positionals().front();
  auto text = read_text_file(path, "config.json");
  if (!text) return report_errors(text.errors(), json, out, err);
  auto model = est::model_from_hf_config(*text, args->value("--name").value_or("imported"));
  if (!model) return report_errors(model.errors(), json, out, err);
  const double params = est::count_parameters(*model).total;
  if (json) {
    out << json_text(nlohmann::json{{"model", est::to_json(*model)}, {"parameters", params}}) << "\n";
  } else {
    out << json_text(est::to_json(*model)) << "\n";
    out << "parameters: " << format_count(params) << " (" << format_large_count(params) << ")\n";
  }
  return Status::ok;
}

// `models` and `gpus` print tables that fit an 80-column terminal; each preset's source (a
// paragraph) is behind `models show NAME`, `gpus show NAME` or --json.
Status run_list_models(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
  const bool json = wants_json(argv);
  auto args = Args::parse(argv, with_json({}));
  if (!args) return report_errors(args.errors(), json, out, err);
  const auto& words = args->positionals();
  if (!words.empty()) {
    if (words[0] != "show" || words.size() != 2) {
      return report_errors({make_error(words[0], "unexpected argument; valid: models [show NAME] [--json]")}, json, out, err);
    }
    auto m = est::find_model(words[1]);
    if (!m) return report_errors(m.errors(), json, out, err);
    auto j = est::to_json(*m);
    j["parameters"] = est::count_parameters(*m).total;
    if (json) {
      out << json_text(j) << "\n";
    } else {
      out << m->name << ": " << format_large_count(est::count_parameters(*m).total) << " parameters, " << m->layers
          << " layers, hidden " << m->hidden << ", " << m->heads << " heads (" << m->kv_heads << " KV), MLP "
          << m->ffn_hidden << ", vocabulary " << m->vocab << "\nsource: " << m->source << "\n";
    }
    return Status::ok;
  }
  if (json) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& m : est::model_presets()) {
      auto j = est::to_json(m);
      j["parameters"] = est::count_parameters(m).total;
      list.push_back(std::move(j));
    }
    out << json_text(list) << "\n";
    return Status::ok;
  }
  out << pad_right("name", 22) << pad_left("params", 10) << pad_left("layers", 8) << pad_left("hidden", 8)
      << pad_left("heads", 7) << pad_left("kv", 5) << pad_left("ffn", 8) << pad_left("vocab", 8) << "\n";
  for (const auto& m : est::model_presets()) {
    out << pad_right(m.name, 22) << pad_left(format_large_count(est::count_parameters(m).total), 10)
        << pad_left(std::to_string(m.layers), 8) << pad_left(std::to_string(m.hidden), 8)
        << pad_left(std::to_string(m.heads), 7) << pad_left(std::to_string(m.kv_heads), 5)
        << pad_left(std::to_string(m.ffn_hidden), 8) << pad_left(std::to_string(m.vocab), 8) << "\n";
  }
  out << "sources: plansight models show NAME, or --json\n";
  return Status::ok;
}

namespace {

// A peak in TFLOP/s, or "—" where the GPU has no such precision (a 0 in the preset).
std::string tflops_cell(double flops, std::size_t width) {
  if (flops <= 0) return std::string(width - 1, ' ') + "\u2014";  // one column wide on a terminal
  return pad_left(format_fixed(flops / 1e12, flops >= 1e15 ? 0 : 1), width);
}

}  // namespace

Status run_list_gpus(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
  const bool json = wants_json(argv);
  auto args = Args::parse(argv, with_json({}));
  if (!args) return report_errors(args.errors(), json, out, err);
  const auto& words = args->positionals();
  if (!words.empty()) {
    if (words[0] != "show" || words.size() != 2) {
      return report_errors({make_error(words[0], "unexpected argument; valid: gpus [show NAME] [--json]")}, json, out, err);
    }
    auto g = est::find_gpu(words[1]);
    if (!g) return report_errors(g.errors(), json, out, err);
    if (json) {
      out << json_text(est::to_json(*g)) << "\n";
    } else {
      out << g->name << ": " << format_gib(static_cast<double>(g->memory_bytes)) << ", HBM "
          << format_fixed(g->hbm_bandwidth_bytes_per_s / 1e9, 0) << " GB/s\n";
      const std::pair<const char*, double> peaks[] = {{"fp32", g->peak_fp32_flops}, {"tf32", g->peak_tf32_flops},
                                                      {"fp16", g->peak_fp16_flops}, {"bf16", g->peak_bf16_flops},
                                                      {"fp8", g->peak_fp8_flops}};
      for (const auto& [name, flops] : peaks) {
        out << "  " << pad_right(name, 6)
            << (flops > 0 ? format_fixed(flops / 1e12, 1) + " TFLOP/s" : std::string("not supported")) << "\n";
      }
      out << "source: " << g->source << "\n";
    }
    return Status::ok;
  }
  if (json) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& g : est::gpu_presets()) list.push_back(est::to_json(g));
    out << json_text(list) << "\n";
    return Status::ok;
  }
  out << pad_right("name", 18) << pad_left("GiB", 5) << pad_left("HBM GB/s", 10) << pad_left("fp32", 7)
      << pad_left("tf32", 7) << pad_left("fp16", 7) << pad_left("bf16", 7) << pad_left("fp8", 7) << pad_left("NVLink GB/s", 12)
      << "\n";
  out << pad_right("", 33) << "peak TFLOP/s\n";
  for (const auto& g : est::gpu_presets()) {
    out << pad_right(g.name, 18) << pad_left(format_fixed(static_cast<double>(g.memory_bytes) / (1 << 30), 0), 5)
        << pad_left(format_fixed(g.hbm_bandwidth_bytes_per_s / 1e9, 0), 10) << tflops_cell(g.peak_fp32_flops, 7)
        << tflops_cell(g.peak_tf32_flops, 7) << tflops_cell(g.peak_fp16_flops, 7) << tflops_cell(g.peak_bf16_flops, 7)
        << tflops_cell(g.peak_fp8_flops, 7)
        << (g.nvlink_bandwidth_bytes_per_s > 0 ? pad_left(format_fixed(g.nvlink_bandwidth_bytes_per_s / 1e9, 0), 12)
                                                : std::string(11, ' ') + "\u2014")
        << "\n";
  }
  out << "sources: plansight gpus show NAME, or --json\n";
  return Status::ok;
}

Status run_list_systems(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
  const bool json = wants_json(argv);
  auto args = Args::parse(argv, with_json({}));
  if (!args) return report_errors(args.errors(), json, out, err);
  if (json) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& s : est::system_presets()) {
      auto j = est::to_json(s.cluster);
      j["description"] = s.description;
      list.push_back(std::move(j));
    }
    out << json_text(list) << "\n";
    return Status::ok;
  }
  out << pad_right("name", 20) << pad_right("gpu", 16) << pad_left("GPUs/node", 10) << pad_left("intra GB/s", 12)
      << pad_left("inter GB/s", 12) << pad_left("$/GPU-h", 9) << "  description\n";
  for (const auto& s : est::system_presets()) {
    const auto& c = s.cluster;
    out << pad_right(s.name, 20) << pad_right(c.gpu.name, 16) << pad_left(std::to_string(c.gpus_per_node), 10)
        << pad_left(format_fixed(c.intra_node_bandwidth_bytes_per_s / 1e9, 1), 12)
        << pad_left(format_fixed(c.inter_node_bandwidth_bytes_per_s / 1e9, 2), 12)
        << pad_left(format_fixed(c.price_per_gpu_hour, 2), 9) << "  " << s.description << "\n";
  }
  return Status::ok;
}

Status run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    out << usage();
    return args.empty() ? Status::invalid_input : Status::ok;
  }
  // `plansight estimate --help`: the same text (the options are shared by the plan commands).
  for (std::size_t i = 1; i < args.size(); ++i) {
    if (args[i] == "--help" || args[i] == "-h") {
      out << usage();
      return Status::ok;
    }
  }
  const std::string command = args[0];
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  if (command == "estimate") return run_estimate(rest, out, err);
  if (command == "models") return run_list_models(rest, out, err);
  if (command == "gpus") return run_list_gpus(rest, out, err);
  if (command == "systems") return run_list_systems(rest, out, err);
  if (command == "import-model") return run_import_model(rest, out, err);
  if (command == "search") return run_search(rest, out, err);
  if (command == "timeline") return run_timeline(rest, out, err);
  if (command == "import") return run_import(rest, out, err);
  if (command == "analyze") return run_analyze(rest, out, err);
  if (command == "export") return run_export(rest, out, err);
  if (command == "diff") return run_diff(rest, out, err);
  if (command == "probe") return run_probe_command(rest, out, err);
  if (command == "runs") return run_runs(rest, out, err);
  if (command == "compare") return run_compare(rest, out, err);
  if (command == "examples") return run_examples(rest, out, err);
  if (command == "sweep") return run_sweep(rest, out, err);
  if (command == "placement") return run_placement(rest, out, err);
  if (command == "operators") return run_operators(rest, out, err);
  err << "error: unknown command \"" << command << "\"; valid: estimate, timeline, search, import, analyze, export, diff, probe, runs, compare, models, gpus, systems, import-model, examples, sweep, placement, operators\n";
  return Status::invalid_input;
}

}  // namespace plansight::cli
