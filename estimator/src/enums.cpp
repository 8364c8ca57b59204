// Spellings of the plan's enumerations. One table per enum drives to_string, parsing and the
// list of valid spellings, so the three can never disagree.
#include "plansight/estimator/enums.h"

#include <algorithm>
#include <cctype>
#include <utility>
#include <vector>

namespace plansight::estimator {
namespace {

template <class E>
struct Spellings;

// Each table: canonical spelling first; aliases follow with the same value.
template <>
struct Spellings<Precision> {
  static constexpr std::pair<std::string_view, Precision> table[] = {
      {"fp32", Precision::fp32}, {"tf32", Precision::tf32}, {"fp16", Precision::fp16},
      {"bf16", Precision::bf16}, {"fp8", Precision::fp8}, {"float32", Precision::fp32},
      {"float16", Precision::fp16}, {"bfloat16", Precision::bf16}};
};
template <>
struct Spellings<MasterPrecision> {
  static constexpr std::pair<std::string_view, MasterPrecision> table[] = {
      {"none", MasterPrecision::none}, {"fp32", MasterPrecision::fp32}};
};
template <>
struct Spellings<Optimizer> {
  static constexpr std::pair<std::string_view, Optimizer> table[] = {
      {"adam", Optimizer::adam}, {"adam8bit", Optimizer::adam8bit},
      {"sgd-momentum", Optimizer::sgd_momentum}, {"sgd", Optimizer::sgd},
      {"adamw", Optimizer::adam}, {"adamw8bit", Optimizer::adam8bit}};
};
template <>
struct Spellings<Recompute> {
  static constexpr std::pair<std::string_view, Recompute> table[] = {
      {"none", Recompute::none}, {"selective", Recompute::selective}, {"full", Recompute::full}};
};
template <>
struct Spellings<PipelineSchedule> {
  static constexpr std::pair<std::string_view, PipelineSchedule> table[] = {
      {"gpipe", PipelineSchedule::gpipe}, {"1f1b", PipelineSchedule::one_f_one_b},
      {"interleaved", PipelineSchedule::interleaved}, {"zb-h1", PipelineSchedule::zb_h1},
      {"dualpipev", PipelineSchedule::dualpipev}, {"interleaved-1f1b", PipelineSchedule::interleaved},
      {"zbh1", PipelineSchedule::zb_h1}, {"dualpipe-v", PipelineSchedule::dualpipev},
      {"dualpipe", PipelineSchedule::dualpipe}};
};
template <>
struct Spellings<NormKind> {
  static constexpr std::pair<std::string_view, NormKind> table[] = {
      {"layernorm", NormKind::layer_norm}, {"rmsnorm", NormKind::rms_norm}};
};
template <>
struct Spellings<PositionKind> {
  static constexpr std::pair<std::string_view, PositionKind> table[] = {
      {"learned", PositionKind::learned}, {"rope", PositionKind::rope},
      {"alibi", PositionKind::alibi}, {"none", PositionKind::none}};
};
template <>
struct Spellings<AttentionKernel> {
  static constexpr std::pair<std::string_view, AttentionKernel> table[] = {
      {"standard", AttentionKernel::standard}, {"flash", AttentionKernel::flash}};
};

template <class E>
std::string_view name_of(E v) {
  for (const auto& [text, value] : Spellings<E>::table) {
    if (value == v) return text;
  }
  return "?";
}

bool equal_ignoring_case(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

}  // namespace

std::string_view to_string(Precision v) { return name_of(v); }
std::string_view to_string(MasterPrecision v) { return name_of(v); }
std::string_view to_string(Optimizer v) { return name_of(v); }
std::string_view to_string(Recompute v) { return name_of(v); }
std::string_view to_string(PipelineSchedule v) { return name_of(v); }
std::string_view to_string(NormKind v) { return name_of(v); }
std::string_view to_string(PositionKind v) { return name_of(v); }
std::string_view to_string(AttentionKernel v) { return name_of(v); }

template <class E>
std::optional<E> parse_enum(std::string_view text) {
  for (const auto& [spelling, value] : Spellings<E>::table) {
    if (equal_ignoring_case(spelling, text)) return value;
  }
  return std::nullopt;
}

template <class E>
std::string valid_spellings() {
  std::string out;
  std::vector<E> seen;
  for (const auto& [spelling, value] : Spellings<E>::table) {
    if (std::find(seen.begin(), seen.end(), value) != seen.end()) continue;  // skip aliases
    seen.push_back(value);
    if (!out.empty()) out += '|';
    out += spelling;
  }
  return out;
}

#define PLANSIGHT_INSTANTIATE(E)                                   \
  template std::optional<E> parse_enum<E>(std::string_view text); \
  template std::string valid_spellings<E>();
PLANSIGHT_INSTANTIATE(Precision)
PLANSIGHT_INSTANTIATE(MasterPrecision)
PLANSIGHT_INSTANTIATE(Optimizer)
PLANSIGHT_INSTANTIATE(Recompute)
PLANSIGHT_INSTANTIATE(PipelineSchedule)
PLANSIGHT_INSTANTIATE(NormKind)
PLANSIGHT_INSTANTIATE(PositionKind)
PLANSIGHT_INSTANTIATE(AttentionKernel)
#undef PLANSIGHT_INSTANTIATE

int bytes_per_element(Precision p) {
  switch (p) {
    case Precision::fp32:
    case Precision::tf32: return 4;
    case Precision::fp16:
    case Precision::bf16: return 2;
    case Precision::fp8: return 1;
  }
  return 4;
}

int bytes_per_element(MasterPrecision p) { return p == MasterPrecision::fp32 ? 4 : 0; }

}  // namespace plansight::estimator
