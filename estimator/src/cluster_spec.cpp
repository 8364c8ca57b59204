// GpuSpec helpers.
#include "plansight/estimator/cluster_spec.h"

namespace plansight::estimator {

double GpuSpec::peak_flops(Precision p) const {
  switch (p) {
    case Precision::fp32: return peak_fp32_flops;
    case Precision::tf32: return peak_tf32_flops;
    case Precision::fp16: return peak_fp16_flops;
    case Precision::bf16: return peak_bf16_flops;
    case Precision::fp8: return peak_fp8_flops;
  }
  return 0;
}

}  // namespace plansight::estimator
