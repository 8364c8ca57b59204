// DataLoader: counter-based sampling (splitmix64 of seed, step, sample), so no state is shared
// between ranks and any rank can produce any sample.
#include "data_loader.h"

namespace plansight::probe {
namespace {

std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace

DataLoader::DataLoader(const ProbeConfig& config) : cfg_(config) {
  if (config.request.data == DataSource::corpus) corpus_ = corpus_text();
}

void DataLoader::sample(std::int64_t step, std::int64_t index, std::int32_t* tokens) const {
  const int T = cfg_.dims.T;
  const std::uint64_t r = mix(mix(cfg_.request.seed ^ 0x5eedull) ^ mix(static_cast<std::uint64_t>(step) * 0x100000001b3ull + static_cast<std::uint64_t>(index)));
  if (!corpus_.empty() && corpus_.size() > static_cast<std::size_t>(T) + 1) {
    const std::size_t offset = r % (corpus_.size() - static_cast<std::size_t>(T) - 1);
    for (int t = 0; t <= T; ++t) tokens[t] = static_cast<unsigned char>(corpus_[offset + static_cast<std::size_t>(t)]);
    return;
  }
  const auto V = static_cast<std::uint64_t>(cfg_.dims.V);
  const std::uint64_t start = r % V;
  const std::uint64_t stride = 1 + (r >> 32) % (V > 1 ? V - 1 : 1);
  for (int t = 0; t <= T; ++t) tokens[t] = static_cast<std::int32_t>((start + stride * static_cast<std::uint64_t>(t)) % V);
}

void DataLoader::micro_batch(std::int64_t step, int dp_rank, int mb, std::vector<std::int32_t>& inputs,
                             std::vector<std::int32_t>& targets) const {
  const int B = cfg_.dims.B, T = cfg_.dims.T;
  inputs.resize(static_cast<std::size_t>(B) * T);
  targets.resize(static_cast<std::size_t>(B) * T);
  std::vector<std::int32_t> seq(static_cast<std::size_t>(T) + 1);
  for (int b = 0; b < B; ++b) {
    const std::int64_t index = (static_cast<std::int64_t>(dp_rank) * cfg_.micro_batches + mb) * B + b;
    sample(step, index, seq.data());
    for (int t = 0; t < T; ++t) {
      inputs[static_cast<std::size_t>(b) * T + t] = seq[static_cast<std::size_t>(t)];
      targets[static_cast<std::size_t>(b) * T + t] = seq[static_cast<std::size_t>(t) + 1];
    }
  }
}

}  // namespace plansight::probe
