// LayerNorm over the last dimension (Ba, Kiros & Hinton 2016, "Layer Normalization", §3):
// out = (x - mean) * rstd * weight + bias, rstd = 1/sqrt(var + eps), var the biased variance.
// Shapes: inp/out [N,C] (N = B*T rows), weight/bias [C], mean/rstd [N] saved for backward.
#pragma once

namespace plansight::kernels::cpu {

// GPT-2's layer_norm_epsilon (Hugging Face GPT2Config default).
inline constexpr float kLayerNormEps = 1e-5f;

void layernorm_forward(float* out, float* mean, float* rstd, const float* inp, const float* weight,
                       const float* bias, int N, int C);

// Accumulates dinp [N,C], dweight [C], dbias [C] from dout [N,C] and the saved mean/rstd.
void layernorm_backward(float* dinp, float* dweight, float* dbias, const float* dout,
                        const float* inp, const float* weight, const float* mean, const float* rstd,
                        int N, int C);

}  // namespace plansight::kernels::cpu
