// Parsing of search constraints (see search_constraints.h). Numbers are plain decimal digits:
// the same rule as the CLI's flags (no signs, hexadecimal or blanks), so "0x10" never means 16.
#include "plansight/estimator/search_constraints.h"

#include <charconv>

#include "plansight/estimator/enums.h"

namespace plansight::estimator {
namespace {

constexpr const char* kIntegerSyntax = "valid: any, a whole number (8), a list (2,4,8) or a range (2..8, ..8, 4..)";

std::string trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(" \t");
  return std::string(text.substr(first, last - first + 1));
}

std::vector<std::string> split(const std::string& text, char by) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || text[i] == by) {
      out.push_back(trim(std::string_view(text).substr(start, i - start)));
      start = i + 1;
    }
  }
  return out;
}

bool whole(const std::string& text, std::int64_t& out) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) return false;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size();
}

struct IntegerDimension {
  std::vector<std::int64_t>* list;
  SearchBound* bound;  // null: lists only (zero_stage)
  std::int64_t min, max;
};

IntegerDimension integer_dimension(SearchSpace& s, std::string_view d) {
  constexpr std::int64_t kDegree = std::int64_t{1} << 20;  // validate()'s bound on parallel degrees
  if (d == "tp") return {&s.tp, &s.tp_bound, 1, kDegree};
  if (d == "pp") return {&s.pp, &s.pp_bound, 1, kDegree};
  if (d == "vpp") return {&s.vpp, &s.vpp_bound, 1, kDegree};
  if (d == "dp") return {&s.dp, &s.dp_bound, 1, kDegree};
  if (d == "cp") return {&s.cp, &s.cp_bound, 1, kDegree};
  if (d == "micro_batch") return {&s.micro_batch, &s.micro_batch_bound, 1, std::int64_t{1} << 30};
  if (d == "zero_stage") return {&s.zero_stage, nullptr, 0, 3};
  return {nullptr, nullptr, 0, 0};
}

std::vector<Diagnostic> set_integer(const IntegerDimension& d, const std::string& text, const std::string& field) {
  const std::string range = "from " + std::to_string(d.min) + " to " + std::to_string(d.max);
  auto bad = [&](const std::string& why) {
    return std::vector<Diagnostic>{make_error(field, "\"" + text + "\" " + why + "; " + kIntegerSyntax + ", each " + range)};
  };
  if (const auto dots = text.find(".."); dots != std::string::npos) {
    const std::string lo_text = trim(std::string_view(text).substr(0, dots));
    const std::string hi_text = trim(std::string_view(text).substr(dots + 2));
    std::int64_t lo = d.min, hi = d.max;
    if ((lo_text.empty() && hi_text.empty()) || (!lo_text.empty() && !whole(lo_text, lo)) ||
        (!hi_text.empty() && !whole(hi_text, hi))) {
      return bad("is not a range");
    }
    if (lo < d.min || hi > d.max || lo > hi) return bad("is out of range");
    d.list->clear();
    if (d.bound) {
      // An open end stays open, so describe_constraints() prints what was typed.
      *d.bound = {};
      if (!lo_text.empty()) d.bound->min = lo;
      if (!hi_text.empty()) d.bound->max = hi;
    } else {
      for (std::int64_t v = lo; v <= hi; ++v) d.list->push_back(v);
    }
    return {};
  }
  std::vector<std::int64_t> values;
  for (const auto& item : split(text, ',')) {
    std::int64_t v = 0;
    if (!whole(item, v)) return bad("is not a whole number or a list of them");
    if (v < d.min || v > d.max) return bad("is out of range");
    values.push_back(v);
  }
  *d.list = std::move(values);
  if (d.bound) *d.bound = {};
  return {};
}

template <class E>
std::vector<Diagnostic> set_enum(std::vector<E>& into, const std::string& text, const std::string& field) {
  std::vector<E> values;
  for (const auto& item : split(text, ',')) {
    const auto v = parse_enum<E>(item);
    if (!v) {
      return {make_error(field, "\"" + item + "\" is invalid; valid: any or a list of " + valid_spellings<E>())};
    }
    values.push_back(*v);
  }
  into = std::move(values);
  return {};
}

std::string join(const std::vector<std::int64_t>& values) {
  std::string out;
  for (auto v : values) out += (out.empty() ? "" : ",") + std::to_string(v);
  return out;
}

std::string bound_text(const SearchBound& b) {
  const SearchBound any;
  return (b.min == any.min ? "" : std::to_string(b.min)) + ".." + (b.max == any.max ? "" : std::to_string(b.max));
}

}  // namespace

std::vector<Diagnostic> set_search_constraint(SearchSpace& space, std::string_view dimension, std::string_view raw,
                                              const std::string& field) {
  const std::string text = trim(raw);
  const bool any = text.empty() || text == "any";
  if (dimension == "recompute") {
    if (any) return space.recompute.clear(), std::vector<Diagnostic>{};
    return set_enum(space.recompute, text, field);
  }
  if (dimension == "schedule") {
    if (any) return space.schedule.clear(), std::vector<Diagnostic>{};
    return set_enum(space.schedule, text, field);
  }
  if (dimension == "precision") {
    // Unlike the layout dimensions, nothing keeps the plan's precision (a numerics choice, not a
    // layout); "any" tries the 16-bit and 8-bit ones (the GPU's own peaks decide which run).
    if (text.empty()) return space.precision.clear(), std::vector<Diagnostic>{};
    if (text == "any") return space.precision = {Precision::bf16, Precision::fp16, Precision::fp8}, std::vector<Diagnostic>{};
    return set_enum(space.precision, text, field);
  }
  if (dimension == "offload") {
    // Like precision, nothing keeps the plan's own; "any" tries none and the common offloadings.
    if (text.empty()) return space.offload.clear(), std::vector<Diagnostic>{};
    if (text == "any") {
      space.offload = {{}, {.optimizer = true}, {.activations = true}, {.optimizer = true, .activations = true},
                       {.optimizer = true, .params = true}};
      return {};
    }
    std::vector<OffloadChoice> choices;
    for (const auto& item : split(text, ',')) {
      OffloadChoice c;
      if (item != "none") {
        for (const auto& part : split(item, '+')) {
          if (part == "optimizer") c.optimizer = true;
          else if (part == "params") c.params = true;
          else if (part == "activations") c.activations = true;
          else return {make_error(field, "\"" + item + "\" is invalid; valid: any, or a list of none or optimizer, params, "
                                                         "activations joined by + (e.g. none,optimizer,optimizer+params)")};
        }
      }
      choices.push_back(c);
    }
    space.offload = std::move(choices);
    return {};
  }
  if (dimension == "sequence_parallel") {
    if (any) space.sequence_parallel.reset();
    else if (text == "on" || text == "true") space.sequence_parallel = true;
    else if (text == "off" || text == "false") space.sequence_parallel = false;
    else return {make_error(field, "\"" + text + "\" is invalid; valid: any, on or off")};
    return {};
  }
  const IntegerDimension d = integer_dimension(space, dimension);
  if (!d.list) {
    std::string valid;
    for (const char* name : kSearchDimensions) valid += (valid.empty() ? "" : ", ") + std::string(name);
    return {make_error(field, "\"" + std::string(dimension) + "\" is not a search dimension; valid: " + valid)};
  }
  if (any) {
    d.list->clear();
    if (d.bound) *d.bound = {};
    return {};
  }
  return set_integer(d, text, field);
}

std::string describe_constraints(const SearchSpace& s) {
  std::string out;
  auto add = [&](const std::string& part) { out += (out.empty() ? "" : ", ") + part; };
  SearchSpace copy = s;
  for (const char* name : kSearchDimensions) {
    const IntegerDimension d = integer_dimension(copy, name);
    if (!d.list) continue;
    if (!d.list->empty()) add(std::string(name) + " " + join(*d.list));
    if (d.bound && (d.bound->min != SearchBound{}.min || d.bound->max != SearchBound{}.max)) {
      add(std::string(name) + " " + bound_text(*d.bound));
    }
  }
  auto names = [](const auto& values) {
    std::string t;
    for (auto v : values) t += (t.empty() ? "" : ",") + std::string(to_string(v));
    return t;
  };
  if (!s.recompute.empty()) add("recompute " + names(s.recompute));
  if (!s.schedule.empty()) add("schedule " + names(s.schedule));
  if (!s.precision.empty()) add("precision " + names(s.precision));
  if (!s.offload.empty()) {
    std::string t;
    for (const OffloadChoice& c : s.offload) {
      std::string one;
      for (auto [on, name] : {std::pair{c.optimizer, "optimizer"}, std::pair{c.params, "params"}, std::pair{c.activations, "activations"}}) {
        if (on) one += (one.empty() ? "" : "+") + std::string(name);
      }
      t += (t.empty() ? "" : ",") + (one.empty() ? std::string("none") : one);
    }
    add("offload " + t);
  }
  if (s.sequence_parallel) add(std::string("sequence parallel ") + (*s.sequence_parallel ? "on" : "off"));
  if (!s.framework_rules) add("framework rules off");
  return out.empty() ? "none" : out;
}

}  // namespace plansight::estimator
