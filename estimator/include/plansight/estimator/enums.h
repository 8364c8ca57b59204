// The small closed vocabularies of a plan (precision, optimizer, recomputation, schedule, ...),
// each with its canonical spelling and a parser that lists the valid spellings on failure.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>

namespace plansight::estimator {

enum class Precision { fp32, tf32, fp16, bf16, fp8 };
enum class MasterPrecision { none, fp32 };
enum class Optimizer { adam, adam8bit, sgd_momentum, sgd };
enum class Recompute { none, selective, full };
enum class PipelineSchedule { gpipe, one_f_one_b, interleaved, zb_h1, dualpipev, dualpipe };
enum class NormKind { layer_norm, rms_norm };
enum class PositionKind { learned, rope, alibi, none };
enum class AttentionKernel { standard, flash };

std::string_view to_string(Precision v);
std::string_view to_string(MasterPrecision v);
std::string_view to_string(Optimizer v);
std::string_view to_string(Recompute v);
std::string_view to_string(PipelineSchedule v);
std::string_view to_string(NormKind v);
std::string_view to_string(PositionKind v);
std::string_view to_string(AttentionKernel v);

// parse_enum<E>("bf16") -> Precision::bf16; nullopt when the text is not a known spelling.
template <class E>
std::optional<E> parse_enum(std::string_view text);

// "fp32|tf32|fp16|bf16|fp8": the valid spellings, for error messages.
template <class E>
std::string valid_spellings();

// Storage size of one element, in bytes. tf32 is stored as fp32; fp8 as one byte.
int bytes_per_element(Precision p);
int bytes_per_element(MasterPrecision p);

}  // namespace plansight::estimator
