// Causal multi-head self-attention (Vaswani et al. 2017, §3.2.1–3.2.2) from a packed qkv.
// qkv [B,T,3C] holds q | k | v per position, head h using columns h*hs .. h*hs+hs-1 of each
// (hs = C/NH); out [B,T,C] has the heads side by side. att [B,NH,T,T] keeps the softmax
// probabilities (zero above the diagonal) for backward.
#pragma once

namespace plansight::kernels::cpu {

// out = softmax(q k^T / sqrt(hs) + causal mask) v per (b, head). Throws std::invalid_argument
// unless NH > 0 divides C (both functions).
void attention_forward(float* out, float* att, const float* qkv, int B, int T, int C, int NH);

// Accumulates dqkv [B,T,3C]. scratch [B,NH,T,T] is overwritten (the gradient of att).
void attention_backward(float* dqkv, float* scratch, const float* dout, const float* qkv,
                        const float* att, int B, int T, int C, int NH);

}  // namespace plansight::kernels::cpu
