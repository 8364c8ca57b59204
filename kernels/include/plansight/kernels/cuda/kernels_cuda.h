// All CUDA twins of the CPU kernels (plansight::kernels::cuda), in fp32, bf16 and fp16, plus the
// mixed-precision helpers (loss scaling, conversions). Plain C++ may include this: no CUDA
// toolkit header is pulled in, only forward declarations of cudaStream_t and the 16-bit types.
#pragma once

#include "plansight/kernels/cuda/adamw.h"
#include "plansight/kernels/cuda/attention.h"
#include "plansight/kernels/cuda/blas.h"
#include "plansight/kernels/cuda/convert.h"
#include "plansight/kernels/cuda/dtypes.h"
#include "plansight/kernels/cuda/encoder.h"
#include "plansight/kernels/cuda/gelu.h"
#include "plansight/kernels/cuda/hold.h"
#include "plansight/kernels/cuda/layernorm.h"
#include "plansight/kernels/cuda/loss_scale.h"
#include "plansight/kernels/cuda/matmul.h"
#include "plansight/kernels/cuda/residual.h"
#include "plansight/kernels/cuda/softmax_crossentropy.h"
#include "plansight/kernels/cuda/status.h"
