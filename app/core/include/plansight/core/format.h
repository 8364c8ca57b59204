// Human formatting with units: GiB (2^30 B), billions of parameters, FLOPs, durations; and the
// one way the CLI writes JSON.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace plansight::core {

std::string format_gib(double bytes);               // "12.35 GiB", "158.07 TiB" from 1024 GiB
std::string format_count(double n);                 // "174,604,259,328"
std::string format_large_count(double n);              // "174.60 B"
std::string format_flops(double flops);             // "4.31e+18 FLOP"
std::string format_seconds(double seconds);         // "850 ms", "12.3 s", "4.2 min", "34.7 days"
std::string format_fixed(double value, int decimals);
std::string pad_left(const std::string& text, std::size_t width);
std::string pad_right(const std::string& text, std::size_t width);

// JSON text of `j` (indent -1: one line). Text from the command line or a file may hold bytes
// that are not UTF-8 (a model name, a path); they are written as U+FFFD instead of making
// nlohmann::json throw (type_error 316) and the command fail as an internal error.
std::string json_text(const nlohmann::json& j, int indent = 2);

}  // namespace plansight::core
