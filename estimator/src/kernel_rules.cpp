// Kernel classification rules: the built-in rule set (as JSON, parsed by the same loader as user
// files), the loader with field-named errors, and the matcher.
#include "plansight/estimator/kernel_rules.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <iterator>

#include <nlohmann/json.hpp>

namespace plansight::estimator {
namespace {

// The built-in rules. Order matters: communication first (an NCCL kernel name can contain
// "16816"-like digits), then memory, then tensor-core GEMMs. Name sources: NCCL kernel names
// (ncclKernel_* up to 2.18, ncclDevKernel_* since 2.19); PyTorch SymmetricMemory multimem_*
// kernels (NVLink SHARP); DeepEP's namespace deep_ep and the dpsk::ep kernels in
// deepseek-ai/profile-data; cuBLAS names sm80_xmma_*/sm90_xmma_*, Hopper wgmma and the
// cuBLAS 12.8+ nvjet_* kernels (type letters first: nvjet_tst_*, nvjet_hsh_*; fp32 on TF32 tensor
// cores is nvjet_sss_tf32_*, as a published Nsight trace of an LM head shows, so an nvjet_sss_
// name without tf32 is taken for strict fp32, which tensor cores do not run); CUTLASS "tensorop" instance names; rocBLAS/hipBLASLt Tensile
// "Cijk_" kernels; pre-Ampere cuBLAS names with MMA shapes (h884/s884 Volta, 1688 Turing,
// 16816 Ampere) and "hmma".
constexpr std::string_view kDefaultRulesJson = R"json({
  "format": "plansight-kernel-rules",
  "version": 1,
  "name": "plansight-default",
  "revision": "2026.1",
  "rules": [
    {"class": "communication", "any_of": ["nccl"], "note": "NCCL kernels: ncclKernel_*, ncclDevKernel_* (any case)"},
    {"class": "communication", "any_of": ["rccl"], "architecture": "rocm", "note": "RCCL-named kernels"},
    {"class": "communication", "any_of": ["multimem_"], "architecture": "sm90", "note": "NVLS multimem all-reduce/all-gather"},
    {"class": "communication", "any_of": ["dpsk::ep", "deep_ep"], "note": "DeepEP expert-parallel dispatch/combine"},
    {"class": "memory", "starts_with": ["memcpy", "memset"], "note": "copy engine and memset activities"},
    {"class": "tensor_core_gemm", "any_of": ["sm100_xmma", "tcgen05"], "none_of": ["f32f32_f32f32"], "architecture": "sm100", "note": "Blackwell cuBLAS / tcgen05 MMA"},
    {"class": "tensor_core_gemm", "any_of": ["sm90_xmma", "wgmma"], "none_of": ["f32f32_f32f32"], "architecture": "sm90", "note": "Hopper cuBLAS xmma and warpgroup MMA"},
    {"class": "tensor_core_gemm", "all_of": ["nvjet_sss", "tf32"], "architecture": "sm90", "note": "cuBLAS nvjet fp32 GEMMs on TF32 tensor cores (nvjet_sss_tf32_*)"},
    {"class": "tensor_core_gemm", "any_of": ["nvjet"], "none_of": ["nvjet_sss"], "architecture": "sm90", "note": "cuBLAS 12.8+ nvjet GEMMs (Hopper, Blackwell); all-fp32 ones without tf32 excluded"},
    {"class": "tensor_core_gemm", "any_of": ["sm80_xmma", "sm86_xmma", "sm89_xmma"], "none_of": ["f32f32_f32f32"], "architecture": "sm80", "note": "Ampere/Ada cuBLAS xmma (pure fp32 SIMT excluded)"},
    {"class": "tensor_core_gemm", "all_of": ["cutlass", "tensorop"], "note": "CUTLASS tensor-op instances (cutlass_80_tensorop_bf16_s16816gemm_...)"},
    {"class": "tensor_core_gemm", "all_of": ["cutlass", "gemm"], "any_of": ["f16", "bf16", "half_t", "bfloat16", "e4m3", "e5m2", "fp8", "tf32"], "note": "CUTLASS GEMMs with 16-bit, fp8 or tf32 tiles (a CUTLASS type alone, as in non-GEMM kernels, is not enough)"},
    {"class": "tensor_core_gemm", "starts_with": ["Cijk_"], "case_sensitive": true, "architecture": "rocm", "note": "Tensile (rocBLAS/hipBLASLt) GEMMs"},
    {"class": "tensor_core_gemm", "any_of": ["h884", "s884", "hmma", "1688gemm", "16816", "16832"], "architecture": "sm70", "note": "MMA-shape names of Volta/Turing/Ampere cuBLAS"}
  ]
})json";

// ASCII lower case, whatever the locale (the app's is the user's): kernel names and rules are
// ASCII, and std::tolower was a call a byte.
char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

std::string fold(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = lower(c);
  return out;
}

// A set of bytes, a bit each.
using ByteSet = std::array<std::uint64_t, 4>;

void add(ByteSet& set, char c) {
  const auto b = static_cast<unsigned char>(c);
  set[b >> 6] |= std::uint64_t{1} << (b & 63);
}
bool holds(const ByteSet& set, char c) {
  const auto b = static_cast<unsigned char>(c);
  return (set[b >> 6] >> (b & 63) & 1) != 0;
}
ByteSet byte_set(std::string_view s) {
  ByteSet set{};
  for (const char c : s) add(set, c);
  return set;
}
// Whether every byte of `part` is in `whole`; whether the two share a byte.
bool within(const ByteSet& part, const ByteSet& whole) {
  return ((part[0] & ~whole[0]) | (part[1] & ~whole[1]) | (part[2] & ~whole[2]) | (part[3] & ~whole[3])) == 0;
}
bool meet(const ByteSet& a, const ByteSet& b) {
  return ((a[0] & b[0]) | (a[1] & b[1]) | (a[2] & b[2]) | (a[3] & b[3])) != 0;
}

// The name as a rule reads it: its text and the set of its bytes.
struct Name {
  std::string_view text;
  ByteSet bytes;
};

template <class Pattern>
bool contains(const Name& name, const Pattern& p) {
  return within(p.bytes, name.bytes) && name.text.find(p.text) != std::string_view::npos;
}

template <class Matcher>
bool matches(const Matcher& rule, const Name& name) {
  // What the rule needs of the name's bytes at the least (KernelClassifier::Matcher).
  if (!rule.any_of.empty() && !meet(rule.any_first, name.bytes)) return false;
  if (!within(rule.all_bytes, name.bytes)) return false;
  if (!rule.starts_with.empty() && (name.text.empty() || !holds(rule.starts_first, name.text[0]))) return false;
  for (const auto& p : rule.all_of) {
    if (!contains(name, p)) return false;
  }
  for (const auto& p : rule.none_of) {
    if (contains(name, p)) return false;
  }
  if (!rule.any_of.empty() &&
      std::none_of(rule.any_of.begin(), rule.any_of.end(), [&](const auto& p) { return contains(name, p); })) {
    return false;
  }
  if (!rule.starts_with.empty() && std::none_of(rule.starts_with.begin(), rule.starts_with.end(),
                                                [&](const auto& p) { return name.text.starts_with(p.text); })) {
    return false;
  }
  return true;
}

constexpr std::string_view kClassNames[] = {"communication", "tensor_core_gemm", "compute", "memory"};

void read_patterns(const nlohmann::json& rule, const char* key, const std::string& field,
                   std::vector<std::string>& out, std::vector<Diagnostic>& errors) {
  auto it = rule.find(key);
  if (it == rule.end()) return;
  if (!it->is_array()) {
    errors.push_back(make_error(field + "." + key, "expected an array of strings"));
    return;
  }
  for (std::size_t i = 0; i < it->size(); ++i) {
    const auto& p = (*it)[i];
    if (!p.is_string() || p.get_ref<const std::string&>().empty()) {
      errors.push_back(make_error(field + "." + key + "[" + std::to_string(i) + "]", "expected a non-empty string"));
      continue;
    }
    out.push_back(p.get<std::string>());
  }
}

KernelRule parse_rule(const nlohmann::json& j, const std::string& field, std::vector<Diagnostic>& errors) {
  KernelRule rule;
  if (!j.is_object()) {
    errors.push_back(make_error(field, "expected an object"));
    return rule;
  }
  for (const auto& [key, value] : j.items()) {
    static constexpr std::string_view known[] = {"class", "any_of", "all_of", "starts_with", "none_of",
                                                 "case_sensitive", "architecture", "note"};
    if (std::find(std::begin(known), std::end(known), key) == std::end(known)) {
      errors.push_back(make_error(field + "." + key, "unknown key; valid keys are class, any_of, all_of, "
                                                     "starts_with, none_of, case_sensitive, architecture, note"));
    }
  }
  auto cls = j.find("class");
  const auto* cls_text = cls != j.end() && cls->is_string() ? cls->get_ptr<const std::string*>() : nullptr;
  auto found = cls_text ? std::find(std::begin(kClassNames), std::end(kClassNames), *cls_text) : std::end(kClassNames);
  if (found == std::end(kClassNames)) {
    errors.push_back(make_error(field + ".class", "expected one of communication|tensor_core_gemm|compute|memory, got " +
                                                      (cls == j.end() ? std::string("nothing") : cls->dump())));
  } else {
    rule.kernel_class = static_cast<KernelClass>(found - std::begin(kClassNames));
  }
  read_patterns(j, "any_of", field, rule.any_of, errors);
  read_patterns(j, "all_of", field, rule.all_of, errors);
  read_patterns(j, "starts_with", field, rule.starts_with, errors);
  read_patterns(j, "none_of", field, rule.none_of, errors);
  if (rule.any_of.empty() && rule.all_of.empty() && rule.starts_with.empty()) {
    errors.push_back(make_error(field, "a rule needs at least one of any_of, all_of, starts_with (else it matches every kernel)"));
  }
  if (auto it = j.find("case_sensitive"); it != j.end()) {
    if (it->is_boolean()) rule.case_sensitive = it->get<bool>();
    else errors.push_back(make_error(field + ".case_sensitive", "expected true or false, got " + it->dump()));
  }
  if (auto it = j.find("architecture"); it != j.end() && it->is_string()) rule.architecture = it->get<std::string>();
  if (auto it = j.find("note"); it != j.end() && it->is_string()) rule.note = it->get<std::string>();
  return rule;
}

}  // namespace

std::string_view to_string(KernelClass v) { return kClassNames[static_cast<int>(v)]; }

std::string_view to_string(CollectiveKind v) {
  switch (v) {
    case CollectiveKind::unknown: return "unknown";
    case CollectiveKind::all_reduce: return "all_reduce";
    case CollectiveKind::all_gather: return "all_gather";
    case CollectiveKind::reduce_scatter: return "reduce_scatter";
    case CollectiveKind::broadcast: return "broadcast";
    case CollectiveKind::reduce: return "reduce";
    case CollectiveKind::all_to_all: return "all_to_all";
    case CollectiveKind::send_recv: return "send_recv";
    case CollectiveKind::send: return "send";
    case CollectiveKind::recv: return "recv";
  }
  return "?";
}

std::string_view default_kernel_rules_json() { return kDefaultRulesJson; }

const KernelRules& default_kernel_rules() {
  static const KernelRules rules = [] {
    auto parsed = parse_kernel_rules(kDefaultRulesJson);
    return parsed.ok() ? std::move(parsed).value() : KernelRules{};
  }();
  return rules;
}

Result<KernelRules> parse_kernel_rules(std::string_view json_text) {
  auto doc = nlohmann::json::parse(json_text, nullptr, false);
  if (doc.is_discarded()) return make_error("kernel_rules", "not valid JSON");
  if (!doc.is_object()) return make_error("kernel_rules", "expected a JSON object with \"version\" and \"rules\"");
  std::vector<Diagnostic> errors;
  KernelRules rules;
  auto version = doc.find("version");
  if (version == doc.end() || !version->is_number_integer() || version->get<int>() != KernelRules::kFormatVersion) {
    errors.push_back(make_error("version", "expected " + std::to_string(KernelRules::kFormatVersion) + ", got " +
                                               (version == doc.end() ? std::string("nothing") : version->dump())));
  }
  if (auto it = doc.find("format"); it != doc.end() && (!it->is_string() || *it != "plansight-kernel-rules")) {
    errors.push_back(make_error("format", "expected \"plansight-kernel-rules\", got " + it->dump()));
  }
  if (auto it = doc.find("name"); it != doc.end() && it->is_string()) rules.name = it->get<std::string>();
  if (auto it = doc.find("revision"); it != doc.end() && it->is_string()) rules.revision = it->get<std::string>();
  auto list = doc.find("rules");
  if (list == doc.end() || !list->is_array()) {
    errors.push_back(make_error("rules", "expected an array of rule objects"));
  } else {
    for (std::size_t i = 0; i < list->size(); ++i) {
      rules.rules.push_back(parse_rule((*list)[i], "rules[" + std::to_string(i) + "]", errors));
    }
  }
  if (has_errors(errors)) return errors;
  return rules;
}

Result<KernelRules> load_kernel_rules_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(path.string(), "cannot open the kernel rules file");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto rules = parse_kernel_rules(text);
  if (rules.ok()) return rules;
  std::vector<Diagnostic> errors = rules.errors();
  for (auto& e : errors) e.field = path.string() + ": " + e.field;
  return errors;
}

std::string kernel_rules_to_json(const KernelRules& rules) {
  nlohmann::json doc = {{"format", "plansight-kernel-rules"}, {"version", rules.version}, {"name", rules.name},
                        {"revision", rules.revision}, {"rules", nlohmann::json::array()}};
  for (const auto& r : rules.rules) {
    nlohmann::json j = {{"class", to_string(r.kernel_class)}};
    if (!r.any_of.empty()) j["any_of"] = r.any_of;
    if (!r.all_of.empty()) j["all_of"] = r.all_of;
    if (!r.starts_with.empty()) j["starts_with"] = r.starts_with;
    if (!r.none_of.empty()) j["none_of"] = r.none_of;
    if (r.case_sensitive) j["case_sensitive"] = true;
    if (!r.architecture.empty()) j["architecture"] = r.architecture;
    if (!r.note.empty()) j["note"] = r.note;
    doc["rules"].push_back(std::move(j));
  }
  return doc.dump(2);
}

KernelClassifier::KernelClassifier(const KernelRules& rules) : rules_(rules) {
  for (const KernelRule& r : rules.rules) {
    Matcher m;
    m.kernel_class = r.kernel_class;
    m.case_sensitive = r.case_sensitive;
    const auto patterns = [&](const std::vector<std::string>& texts) {
      std::vector<Pattern> out;
      for (const std::string& t : texts) {
        std::string text = r.case_sensitive ? t : fold(t);
        const ByteSet bytes = byte_set(text);
        out.push_back(Pattern{std::move(text), bytes});
      }
      return out;
    };
    m.any_of = patterns(r.any_of);
    m.all_of = patterns(r.all_of);
    m.starts_with = patterns(r.starts_with);
    m.none_of = patterns(r.none_of);
    // (Patterns are never empty: parse_rule refuses them.)
    for (const Pattern& p : m.any_of) add(m.any_first, p.text[0]);
    for (const Pattern& p : m.starts_with) add(m.starts_first, p.text[0]);
    for (const Pattern& p : m.all_of) {
      for (std::size_t w = 0; w < 4; ++w) m.all_bytes[w] |= p.bytes[w];
    }
    matchers_.push_back(std::move(m));
  }
}

int KernelClassifier::matching_rule(std::string_view kernel_name) const {
  // Lower-cased on the stack when short (a string a name was an allocation for each of them),
  // with both byte sets in the same pass.
  char buffer[256];
  std::string long_name;
  char* out = buffer;
  if (kernel_name.size() > sizeof buffer) {
    long_name.resize(kernel_name.size());
    out = long_name.data();
  }
  ByteSet lower_bytes{}, bytes{};
  for (std::size_t i = 0; i < kernel_name.size(); ++i) {
    const char c = kernel_name[i], l = lower(c);
    out[i] = l;
    add(bytes, c);
    add(lower_bytes, l);
  }
  const Name lower_name{std::string_view(out, kernel_name.size()), lower_bytes};
  const Name as_is{kernel_name, bytes};
  for (std::size_t i = 0; i < matchers_.size(); ++i) {
    const Matcher& m = matchers_[i];
    if (matches(m, m.case_sensitive ? as_is : lower_name)) return static_cast<int>(i);
  }
  return -1;
}

KernelClass KernelClassifier::classify(std::string_view kernel_name) const {
  const int i = matching_rule(kernel_name);
  return i < 0 ? KernelClass::compute : matchers_[static_cast<std::size_t>(i)].kernel_class;
}

CollectiveKind collective_kind_from_name(std::string_view name) {
  // Letters only, lower-cased: "ncclDevKernel_AllGather_RING_LL" -> "nccldevkernelallgatherringll",
  // "_allgather_base" -> "allgatherbase", "reduce_scatter_tensor" -> "reducescattertensor".
  std::string s;
  s.reserve(name.size());
  for (char c : name) {
    if (std::isalpha(static_cast<unsigned char>(c))) s.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  auto has = [&](std::string_view p) { return s.find(p) != std::string::npos; };
  if (has("reducescatter")) return CollectiveKind::reduce_scatter;
  if (has("allreduce")) return CollectiveKind::all_reduce;
  if (has("allgather")) return CollectiveKind::all_gather;
  if (has("alltoall")) return CollectiveKind::all_to_all;
  if (has("sendrecv")) return CollectiveKind::send_recv;
  if (has("broadcast")) return CollectiveKind::broadcast;
  // DeepEP dispatch/combine exchange tokens between all expert-parallel ranks: an all-to-all.
  if ((has("dpskep") || has("deepep")) && (has("dispatch") || has("combine"))) return CollectiveKind::all_to_all;
  if (has("reduce")) return CollectiveKind::reduce;
  if (has("send")) return CollectiveKind::send;
  if (has("recv")) return CollectiveKind::recv;
  return CollectiveKind::unknown;
}

}  // namespace plansight::estimator
