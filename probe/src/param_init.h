// Parameter tensors as the serial model names and shapes them, and where a TP rank's slice of
// each lies in the whole: init values and the exported (gathered) parameters are both functions
// of the global element index, so every layout starts from, and can be compared against, the
// same serial model.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace plansight::probe {

// How a tensor is split over TP ranks (Shoeybi et al. 2019, Sec. 3).
enum class Split : std::uint8_t {
  none,        // replicated (LayerNorm, row-parallel biases, positions)
  rows,        // column-parallel output rows (fc1 weight and bias)
  rows_qkv,    // rows of each of the q, k, v blocks: a rank holds its heads of all three
  cols,        // row-parallel input columns (attention proj, fc2)
  vocab_rows,  // vocabulary-parallel embedding rows, padded to a multiple of TP
};
enum class Init : std::uint8_t { normal, ones, zeros };

struct TensorDesc {
  std::string name;     // "h.3.attn.qkv.w"
  int rows = 1;         // global shape [rows, cols]; vectors are [rows, 1]
  int cols = 1;
  int valid_rows = -1;  // vocab_rows: rows past this are padding (-1: all valid)
  Split split = Split::none;
  Init init = Init::normal;
  float stddev = 0.02f;
  std::size_t offset = 0;  // within its unit's flat buffer, in floats

  std::size_t local_count(int tp) const;
  // Global flat index (row * cols + col) of local element i on TP rank t; -1 for padding.
  std::int64_t global_index(std::size_t i, int tp, int t) const;
};

// Deterministic initial value of a tensor's element, from (seed, name, global index) alone
// (GPT-2 initialisation: normal(0, stddev) weights, ones/zeros for norms and biases).
float init_value(std::uint64_t seed, const TensorDesc& tensor, std::int64_t global_index);

}  // namespace plansight::probe
