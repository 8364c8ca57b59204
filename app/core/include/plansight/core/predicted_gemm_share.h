// The GEMM share of each predicted phase's compute time, from the operator model the time model
// sums (operator_costs.h through estimator::operator_report): per pass, the seconds of the GEMM
// operators over the seconds of all operators of the model's layers and LM head. GEMMs are what
// the kernel-name rules put on tensor cores (cuBLAS and CUTLASS GEMMs); fused attention kernels
// match no rule, so their time counts as other compute on both sides of a comparison.
// One share per phase for the whole model (not per pipeline stage: the head makes the last
// stage's a little higher), and the embedding's small element-wise work is left out.
#pragma once

#include "plansight/core/tensor_core_rows.h"
#include "plansight/estimator/diagnostic.h"
#include "plansight/estimator/hardware_profile.h"
#include "plansight/estimator/plan.h"

namespace plansight::core {

// `profile`: the one the prediction was made with (null for the plan's own GPU). All zero in fp32:
// fp32 GEMMs run on CUDA cores (the rules leave out cuBLAS's f32f32_f32f32 kernels). Errors: the
// operator model's (the plan's validation errors).
Result<PhaseGemmShares> predicted_gemm_shares(const estimator::Plan& plan, const estimator::HardwareProfile* profile);

}  // namespace plansight::core
