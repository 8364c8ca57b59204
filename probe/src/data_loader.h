// DataLoader: the tokens of sample k of step s, the same for every layout, so that a parallel
// run sees exactly the global batch the serial run sees. Synthetic samples are arithmetic
// sequences modulo the vocabulary (start and stride drawn from the seed), which a model can
// learn in context; corpus samples are byte windows of the shipped public-domain text
// (assets/corpus, a byte-level tokenizer with vocabulary 256).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "probe_config.h"

namespace plansight::probe {

// The text of assets/corpus/alice.txt, embedded at build time.
std::string_view corpus_text();

class DataLoader {
 public:
  explicit DataLoader(const ProbeConfig& config);

  // Inputs and next-token targets, [B*T] each, of micro-batch `micro_batch` of DP rank
  // `dp_rank` at `step`: samples (dp_rank * m + micro_batch) * B + b of the step's global batch.
  void micro_batch(std::int64_t step, int dp_rank, int micro_batch, std::vector<std::int32_t>& inputs,
                   std::vector<std::int32_t>& targets) const;

 private:
  void sample(std::int64_t step, std::int64_t index, std::int32_t* tokens) const;  // T + 1 tokens

  const ProbeConfig& cfg_;
  std::string_view corpus_;
};

}  // namespace plansight::probe
