// Token + learned position embedding of the GPT input (Radford et al. 2019, GPT-2; the
// position table as in Vaswani et al. 2017 §3.5, learned instead of sinusoidal).
// Shapes: tokens [B,T], wte [V,C], wpe [maxT,C] with T <= maxT, out [B,T,C].
#pragma once

#include <cstdint>

namespace plansight::kernels::cpu {

// out[b,t,:] = wte[tokens[b,t],:] + wpe[t,:]. Tokens must lie in [0, V).
void encoder_forward(float* out, const std::int32_t* tokens, const float* wte, const float* wpe,
                     int B, int T, int C);

// dwte[tokens[b,t],:] += dout[b,t,:] and dwpe[t,:] += dout[b,t,:] (accumulates).
void encoder_backward(float* dwte, float* dwpe, const float* dout, const std::int32_t* tokens,
                      int B, int T, int C);

}  // namespace plansight::kernels::cpu
