// JsonReader: typed, path-aware field reads that never throw.
#include "plansight/estimator/json_reader.h"

#include <cmath>
#include <limits>

namespace plansight::estimator {

JsonReader::JsonReader(const nlohmann::json& object, std::string path, std::vector<Diagnostic>& errors)
    : object_(object), path_(std::move(path)), errors_(errors) {}

bool JsonReader::has(std::string_view key) const { return get(key) != nullptr; }

const nlohmann::json* JsonReader::get(std::string_view key) const {
  if (!object_.is_object()) return nullptr;
  auto it = object_.find(key);
  if (it == object_.end() || it->is_null()) return nullptr;
  return &*it;
}

std::string JsonReader::field(std::string_view key) const {
  if (path_.empty()) return std::string(key);
  return path_ + "." + std::string(key);
}

void JsonReader::error(std::string_view key, std::string message) {
  errors_.push_back(make_error(field(key), std::move(message)));
}

void JsonReader::read(std::string_view key, std::string& out) {
  const auto* v = get(key);
  if (!v) return;
  if (!v->is_string()) {
    error(key, "expected a string, got " + describe_json(*v));
    return;
  }
  out = v->get<std::string>();
}

void JsonReader::read(std::string_view key, bool& out) {
  const auto* v = get(key);
  if (!v) return;
  if (!v->is_boolean()) {
    error(key, "expected true or false, got " + describe_json(*v));
    return;
  }
  out = v->get<bool>();
}

void JsonReader::read(std::string_view key, double& out, double min, double max) {
  const auto* v = get(key);
  if (!v) return;
  if (!v->is_number()) {
    error(key, "expected a number, got " + describe_json(*v));
    return;
  }
  const double x = v->get<double>();
  if (!std::isfinite(x) || x < min || x > max) {
    error(key, "value " + describe_json(*v) + " is out of range; valid: " + describe_range(min, max));
    return;
  }
  out = x;
}

void JsonReader::read(std::string_view key, std::int64_t& out, std::int64_t min, std::int64_t max) {
  const auto* v = get(key);
  if (!v) return;
  std::int64_t x = 0;
  if (v->is_number_unsigned() && v->get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX)) {
    error(key, "value " + describe_json(*v) + " is too large");
    return;
  }
  if (v->is_number_integer()) {
    x = v->get<std::int64_t>();
  } else if (v->is_number_float() && std::nearbyint(v->get<double>()) == v->get<double>() &&
             std::fabs(v->get<double>()) < 9.0e15) {
    x = static_cast<std::int64_t>(v->get<double>());  // 1e9 written as a float is still a whole count
  } else {
    error(key, "expected a whole number, got " + describe_json(*v));
    return;
  }
  if (x < min || x > max) {
    std::string valid = max == INT64_MAX ? ("at least " + std::to_string(min))
                                         : (std::to_string(min) + " to " + std::to_string(max));
    error(key, "value " + std::to_string(x) + " is out of range; valid: " + valid);
    return;
  }
  out = x;
}

void JsonReader::read(std::string_view key, std::vector<std::int64_t>& out, std::int64_t min) {
  const auto* v = get(key);
  if (!v) return;
  if (!v->is_array()) {
    error(key, "expected an array of whole numbers, got " + describe_json(*v));
    return;
  }
  std::vector<std::int64_t> values;
  for (std::size_t i = 0; i < v->size(); ++i) {
    const auto& item = (*v)[i];
    if (!item.is_number_integer() || item.get<std::int64_t>() < min) {
      error(std::string(key) + "[" + std::to_string(i) + "]",
            "expected a whole number of at least " + std::to_string(min) + ", got " + describe_json(item));
      return;
    }
    values.push_back(item.get<std::int64_t>());
  }
  out = std::move(values);
}

template <class E>
void JsonReader::read_enum(std::string_view key, E& out) {
  const auto* v = get(key);
  if (!v) return;
  if (!v->is_string()) {
    error(key, "expected one of " + valid_spellings<E>() + ", got " + describe_json(*v));
    return;
  }
  auto parsed = parse_enum<E>(v->get<std::string>());
  if (!parsed) {
    error(key, "unknown value " + describe_json(*v) + "; valid: " + valid_spellings<E>());
    return;
  }
  out = *parsed;
}

template void JsonReader::read_enum(std::string_view, Precision&);
template void JsonReader::read_enum(std::string_view, MasterPrecision&);
template void JsonReader::read_enum(std::string_view, Optimizer&);
template void JsonReader::read_enum(std::string_view, Recompute&);
template void JsonReader::read_enum(std::string_view, PipelineSchedule&);
template void JsonReader::read_enum(std::string_view, NormKind&);
template void JsonReader::read_enum(std::string_view, PositionKind&);
template void JsonReader::read_enum(std::string_view, AttentionKernel&);

void JsonReader::reject_unknown(std::initializer_list<std::string_view> known) {
  if (!object_.is_object()) return;
  for (auto it = object_.begin(); it != object_.end(); ++it) {
    bool found = false;
    for (auto k : known) found = found || k == it.key();
    if (found) continue;
    std::string valid;
    for (auto k : known) valid += (valid.empty() ? "" : ", ") + std::string(k);
    error(it.key(), "unknown key; valid keys here: " + valid);
  }
}

std::optional<JsonReader> JsonReader::child(std::string_view key) {
  const auto* v = get(key);
  if (!v) return std::nullopt;
  if (!v->is_object()) {
    error(key, "expected an object, got " + describe_json(*v));
    return std::nullopt;
  }
  return JsonReader(*v, field(key), errors_);
}

namespace {

// nlohmann's parse_error echoes the bytes it last read ("last read: '\x90'") verbatim; a message
// must stay UTF-8 because the CLI writes it into JSON (--json), so bytes outside ASCII are
// spelled as \xNN, which also names the offending byte.
std::string ascii_only(const std::string& text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x80) {
      out += c;
    } else {
      out += "\\x";
      out += kHex[byte >> 4];
      out += kHex[byte & 0xF];
    }
  }
  return out;
}

}  // namespace

Result<nlohmann::json> parse_json_text(std::string_view text, std::string_view what) {
  try {
    return nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::parse_error& e) {
    // e.byte is the 1-based position of the offending byte (or text length + 1 at end of input).
    const std::string detail = ascii_only(e.what());
    const auto colon = detail.find(": ");
    return make_error(std::string(what), "not valid JSON at byte " + std::to_string(e.byte) + ": " +
                                             (colon == std::string::npos ? detail : detail.substr(colon + 2)));
  } catch (const nlohmann::json::exception& e) {
    // e.g. out_of_range for a number such as 1e400 that does not fit a double.
    return make_error(std::string(what), std::string("not valid JSON: ") + e.what());
  }
}

std::string describe_json(const nlohmann::json& value) {
  // Strings from the command line may not be UTF-8; they are shown with U+FFFD rather than
  // making dump() throw (type_error 316).
  std::string text = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (text.size() > 40) {
    // Cut before a character, never inside one: dump() wrote UTF-8, and the cut text goes into
    // messages that are written as JSON again. Continuation bytes are 10xxxxxx.
    std::size_t cut = 37;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
    text = text.substr(0, cut) + "...";
  }
  return text;
}

std::string describe_number(double value) {
  // nlohmann writes the shortest text that reads back as the same double: 0.99, 1e+308.
  return nlohmann::json(value).dump();
}

std::string describe_range(double min, double max) {
  // The readers' open ends are +-1e308 (the largest doubles): an "at least"/"at most" bound,
  // not 309 printed digits.
  constexpr double kOpen = 1e308;
  if (min <= -kOpen && max >= kOpen) return "a finite number";
  if (max >= kOpen) return "at least " + describe_number(min);
  if (min <= -kOpen) return "at most " + describe_number(max);
  return describe_number(min) + " to " + describe_number(max);
}

}  // namespace plansight::estimator
