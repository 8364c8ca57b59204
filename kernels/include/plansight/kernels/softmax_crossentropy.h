// Softmax over the vocabulary fused with cross-entropy against target tokens.
// Shapes: logits/probs [N,V] (N = B*T), targets/losses [N]. A position whose target equals
// ignore_index has loss 0 and gets no gradient (as PyTorch's CrossEntropyLoss ignore_index).
#pragma once

#include <cstdint>

namespace plansight::kernels::cpu {

// PyTorch's default ignore_index. Token ids are >= 0, so it ignores nothing unless the caller
// sets some targets to it (e.g. padding).
inline constexpr std::int32_t kDefaultIgnoreIndex = -100;

// probs = softmax(logits) row-wise (max-subtracted), losses[n] = -log probs[n, targets[n]].
// Targets other than ignore_index must lie in [0, V).
void softmax_crossentropy_forward(float* losses, float* probs, const float* logits,
                                  const std::int32_t* targets, int N, int V,
                                  std::int32_t ignore_index);

// Accumulates dlogits [N,V] += (probs - onehot(target)) * dlosses[n], the gradient of
// Σ_n dlosses[n] * losses[n]; for a mean loss pass dlosses[n] = 1 / (number not ignored).
void softmax_crossentropy_backward(float* dlogits, const float* dlosses, const float* probs,
                                   const std::int32_t* targets, int N, int V,
                                   std::int32_t ignore_index);

}  // namespace plansight::kernels::cpu
