// CUDA twins of plansight/kernels/encoder.h: token + position embedding, same parameters plus the
// stream. Activations (out, dout) and the embedding tables read by the forward are fp32, bf16 or
// fp16; the gradients dwte/dwpe are always fp32 (mixed precision keeps parameter gradients in
// fp32, see dtypes.h). Backward accumulates with atomicAdd (see kernels/cuda/encoder.cu), so the
// order of fp32 additions into dwte/dwpe, and hence their last bits, may differ from run to run.
#pragma once

#include <cstdint>

#include "plansight/kernels/cuda/dtypes.h"
#include "plansight/kernels/cuda/status.h"

namespace plansight::kernels::cuda {

// Device pointers. out[b,t,:] = wte[tokens[b,t],:] + wpe[t,:]; tokens must lie in [0, V).
Status encoder_forward(float* out, const std::int32_t* tokens, const float* wte, const float* wpe,
                       int B, int T, int C, cudaStream_t stream);
Status encoder_forward(bfloat16* out, const std::int32_t* tokens, const bfloat16* wte, const bfloat16* wpe,
                       int B, int T, int C, cudaStream_t stream);
Status encoder_forward(float16* out, const std::int32_t* tokens, const float16* wte, const float16* wpe,
                       int B, int T, int C, cudaStream_t stream);

// dwte[tokens[b,t],:] += dout[b,t,:] and dwpe[t,:] += dout[b,t,:] (accumulates, fp32).
Status encoder_backward(float* dwte, float* dwpe, const float* dout, const std::int32_t* tokens,
                        int B, int T, int C, cudaStream_t stream);
Status encoder_backward(float* dwte, float* dwpe, const bfloat16* dout, const std::int32_t* tokens,
                        int B, int T, int C, cudaStream_t stream);
Status encoder_backward(float* dwte, float* dwpe, const float16* dout, const std::int32_t* tokens,
                        int B, int T, int C, cudaStream_t stream);

}  // namespace plansight::kernels::cuda
