// Kernel classification: which GPU kernels are communication, tensor-core GEMMs, other compute or
// memory traffic, decided by an ordered, versioned list of name rules (first match wins) that can
// be loaded from a JSON file, so a new library's kernel names need a rules file, not a rebuild.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "plansight/estimator/diagnostic.h"

namespace plansight::estimator {

enum class KernelClass : std::uint8_t { communication, tensor_core_gemm, compute, memory };

// The collective a communication kernel or call performs, for bus-bandwidth factors.
enum class CollectiveKind : std::uint8_t {
  unknown, all_reduce, all_gather, reduce_scatter, broadcast, reduce, all_to_all, send_recv, send, recv
};

std::string_view to_string(KernelClass v);
std::string_view to_string(CollectiveKind v);

// A rule matches a kernel name when the name contains every `all_of` pattern, at least one
// `any_of` pattern (when any are given), starts with one `starts_with` pattern (when any are
// given) and contains no `none_of` pattern.
struct KernelRule {
  KernelClass kernel_class = KernelClass::compute;
  std::vector<std::string> any_of;
  std::vector<std::string> all_of;
  std::vector<std::string> starts_with;
  std::vector<std::string> none_of;
  bool case_sensitive = false;
  std::string architecture;  // informational: "sm80", "sm90", "rocm", ...
  std::string note;          // why the rule exists / where the names come from
};

struct KernelRules {
  static constexpr int kFormatVersion = 1;
  int version = kFormatVersion;  // version of the file format
  std::string name;              // "plansight-default"
  std::string revision;          // revision of the rule set itself, reported with results
  std::vector<KernelRule> rules;  // ordered; a name no rule matches is KernelClass::compute
};

// The built-in rules (the JSON text is in kernel_rules.cpp and goes through the same parser).
const KernelRules& default_kernel_rules();
std::string_view default_kernel_rules_json();

// Parses a rules file. Errors name the field ("rules[3].class") and list valid values.
Result<KernelRules> parse_kernel_rules(std::string_view json_text);
// Reads and parses a rules file; an unreadable file is an error naming the path.
Result<KernelRules> load_kernel_rules_file(const std::filesystem::path& path);
std::string kernel_rules_to_json(const KernelRules& rules);

// Rules compiled for matching (case-folded patterns). Cheap to copy; build once per analysis.
class KernelClassifier {
 public:
  explicit KernelClassifier(const KernelRules& rules = default_kernel_rules());
  KernelClass classify(std::string_view kernel_name) const;
  // Index of the first matching rule, -1 when none matches.
  int matching_rule(std::string_view kernel_name) const;
  const KernelRules& rules() const { return rules_; }

 private:
  // A rule's pattern as matching_rule() tests it (lower-cased where the rule is case-insensitive),
  // with the set of bytes it holds: a pattern holding a byte the name lacks cannot be in it, and
  // is passed over without a search. A predicted timeline names each op ("F3.17"): thousands of
  // names, of which most are tested against every rule and match none.
  struct Pattern {
    std::string text;
    std::array<std::uint64_t, 4> bytes{};
  };
  struct Matcher {
    KernelClass kernel_class = KernelClass::compute;
    bool case_sensitive = false;
    std::vector<Pattern> any_of, all_of, starts_with, none_of;
    // What a name must hold for the rule to match at all: a byte of `any_first` (the any_of
    // patterns' first bytes), every byte of `all_bytes` (the all_of patterns'), and a first byte
    // in `starts_first`; tested before any pattern (the built-in set has 17 rules, most with
    // several patterns).
    std::array<std::uint64_t, 4> any_first{}, all_bytes{}, starts_first{};
  };
  KernelRules rules_;
  std::vector<Matcher> matchers_;
};

// Collective kind from a kernel name ("ncclDevKernel_AllGather_RING_LL", "ncclKernel_SendRecv_...")
// or a PyTorch collective name ("allreduce", "_allgather_base", "reduce_scatter_tensor_coalesced").
CollectiveKind collective_kind_from_name(std::string_view name);

}  // namespace plansight::estimator
