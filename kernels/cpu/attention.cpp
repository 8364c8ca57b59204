// Causal multi-head attention, CPU backend. Each (batch, head) is four or five GEMMs read
// straight out of the packed qkv with leading dimension 3C, so no permuted copies are made;
// the full T×T score block is computed and the part above the diagonal is masked to zero.
#include "plansight/kernels/attention.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>

namespace plansight::kernels::cpu {
namespace {

void check_heads(int C, int NH) {
  if (NH <= 0 || C % NH != 0) {
    throw std::invalid_argument("attention: NH = " + std::to_string(NH) +
                                " must be positive and divide C = " + std::to_string(C));
  }
}

// Row-wise causal softmax in place on a T×T block: row t keeps columns 0..t.
void causal_softmax_rows(float* block, int T) {
  for (int t = 0; t < T; ++t) {
    float* row = block + static_cast<std::size_t>(t) * T;
    float row_max = row[0];
    for (int s = 1; s <= t; ++s) row_max = std::max(row_max, row[s]);
    float sum = 0.0f;
    for (int s = 0; s <= t; ++s) {
      row[s] = std::exp(row[s] - row_max);
      sum += row[s];
    }
    const float inv_sum = 1.0f / sum;
    for (int s = 0; s <= t; ++s) row[s] *= inv_sum;
    for (int s = t + 1; s < T; ++s) row[s] = 0.0f;
  }
}

}  // namespace

void attention_forward(float* out, float* att, const float* qkv, int B, int T, int C, int NH) {
  check_heads(C, NH);
  const int hs = C / NH;
  const int ld_qkv = 3 * C;
  // Scaled dot-product attention: scores divided by sqrt(d_k) (Vaswani et al. 2017, eq. 1).
  const float scale = 1.0f / std::sqrt(static_cast<float>(hs));
  for (int b = 0; b < B; ++b) {
    const float* qkv_b = qkv + static_cast<std::size_t>(b) * T * ld_qkv;
    float* out_b = out + static_cast<std::size_t>(b) * T * C;
    for (int h = 0; h < NH; ++h) {
      const float* q = qkv_b + h * hs;
      const float* k = q + C;
      const float* v = q + 2 * C;
      float* block = att + (static_cast<std::size_t>(b) * NH + h) * T * T;
      // scores[T,T] = scale * q[T,hs] · k[T,hs]^T
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, T, T, hs, scale, q, ld_qkv, k, ld_qkv,
                  0.0f, block, T);
      causal_softmax_rows(block, T);
      // out_h[T,hs] = att[T,T] · v[T,hs], written into columns h*hs.. of out [T,C]
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, T, hs, T, 1.0f, block, T, v, ld_qkv,
                  0.0f, out_b + h * hs, C);
    }
  }
}

void attention_backward(float* dqkv, float* scratch, const float* dout, const float* qkv,
                        const float* att, int B, int T, int C, int NH) {
  check_heads(C, NH);
  const int hs = C / NH;
  const int ld_qkv = 3 * C;
  const float scale = 1.0f / std::sqrt(static_cast<float>(hs));
  for (int b = 0; b < B; ++b) {
    const std::size_t qkv_offset = static_cast<std::size_t>(b) * T * ld_qkv;
    const float* dout_b = dout + static_cast<std::size_t>(b) * T * C;
    for (int h = 0; h < NH; ++h) {
      const float* q = qkv + qkv_offset + h * hs;
      const float* k = q + C;
      const float* v = q + 2 * C;
      float* dq = dqkv + qkv_offset + h * hs;
      float* dk = dq + C;
      float* dv = dq + 2 * C;
      const float* dout_h = dout_b + h * hs;
      const std::size_t block_offset = (static_cast<std::size_t>(b) * NH + h) * T * T;
      const float* a = att + block_offset;
      float* da = scratch + block_offset;
      // datt[T,T] = dout_h[T,hs] · v[T,hs]^T ; dv[T,hs] += att^T · dout_h
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, T, T, hs, 1.0f, dout_h, C, v, ld_qkv,
                  0.0f, da, T);
      cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, T, hs, T, 1.0f, a, T, dout_h, C, 1.0f,
                  dv, ld_qkv);
      // Softmax backward per row (Jacobian diag(p) - p p^T): dscore = p * (datt - <p, datt>).
      // Masked entries have p = 0 and so get zero gradient.
      for (int t = 0; t < T; ++t) {
        const float* p = a + static_cast<std::size_t>(t) * T;
        float* g = da + static_cast<std::size_t>(t) * T;
        float dot = 0.0f;
        for (int s = 0; s <= t; ++s) dot += p[s] * g[s];
        for (int s = 0; s <= t; ++s) g[s] = p[s] * (g[s] - dot);
        for (int s = t + 1; s < T; ++s) g[s] = 0.0f;
      }
      // scores = scale * q k^T:  dq += scale * dscore · k ; dk += scale * dscore^T · q
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, T, hs, T, scale, da, T, k, ld_qkv,
                  1.0f, dq, ld_qkv);
      cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, T, hs, T, scale, da, T, q, ld_qkv, 1.0f,
                  dk, ld_qkv);
    }
  }
}

}  // namespace plansight::kernels::cpu
