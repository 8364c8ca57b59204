// All CUDA twins of the fp32 CPU kernels (plansight::kernels::cuda). Plain C++ may include this:
// no CUDA toolkit header is pulled in, only a forward declaration of cudaStream_t.
#pragma once

#include "plansight/kernels/cuda/adamw.h"
#include "plansight/kernels/cuda/encoder.h"
#include "plansight/kernels/cuda/gelu.h"
#include "plansight/kernels/cuda/layernorm.h"
#include "plansight/kernels/cuda/residual.h"
#include "plansight/kernels/cuda/softmax_crossentropy.h"
#include "plansight/kernels/cuda/status.h"
