// Counter-based initial values: splitmix64 (Steele et al. 2014, "Fast splittable pseudorandom
// number generators") of (seed, FNV-1a of the tensor name, element index), then Box-Muller.
// No generator state is shared, so a rank initialises exactly its slice, in any order.
#include "param_init.h"

#include <cmath>
#include <numbers>

namespace plansight::probe {
namespace {

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

std::uint64_t fnv1a(const std::string& s) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

// Uniform in (0, 1]: 53 random bits, never 0 (Box-Muller takes its log).
double uniform(std::uint64_t bits) { return (static_cast<double>(bits >> 11) + 1.0) * 0x1.0p-53; }

}  // namespace

std::size_t TensorDesc::local_count(int tp) const {
  const auto n = static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
  return split == Split::none ? n : n / static_cast<std::size_t>(tp);
}

std::int64_t TensorDesc::global_index(std::size_t i, int tp, int t) const {
  const auto idx = static_cast<std::int64_t>(i);
  switch (split) {
    case Split::none: return idx;
    case Split::rows:
    case Split::vocab_rows: {
      const std::int64_t local_rows = rows / tp;
      const std::int64_t row = t * local_rows + idx / cols;
      if (split == Split::vocab_rows && valid_rows >= 0 && row >= valid_rows) return -1;
      return row * cols + idx % cols;
    }
    case Split::rows_qkv: {
      const std::int64_t width = rows / 3;        // C
      const std::int64_t local_width = width / tp;  // C / tp
      const std::int64_t local_row = idx / cols;
      const std::int64_t block = local_row / local_width, within = local_row % local_width;
      return (block * width + t * local_width + within) * cols + idx % cols;
    }
    case Split::cols: {
      const std::int64_t local_cols = cols / tp;
      return (idx / local_cols) * cols + t * local_cols + idx % local_cols;
    }
  }
  return idx;
}

float init_value(std::uint64_t seed, const TensorDesc& tensor, std::int64_t global_index) {
  if (global_index < 0) return 0.0f;
  if (tensor.init == Init::ones) return 1.0f;
  if (tensor.init == Init::zeros) return 0.0f;
  const std::uint64_t stream = splitmix64(seed ^ fnv1a(tensor.name));
  const std::uint64_t a = splitmix64(stream + 2 * static_cast<std::uint64_t>(global_index));
  const std::uint64_t b = splitmix64(stream + 2 * static_cast<std::uint64_t>(global_index) + 1);
  const double z = std::sqrt(-2.0 * std::log(uniform(a))) * std::cos(2.0 * std::numbers::pi * uniform(b));
  return static_cast<float>(z * tensor.stddev);
}

}  // namespace plansight::probe
