// All kernels of the probe's GPT decoder, one header per op. See kernels/README.md for the
// calling conventions shared by the CPU functions and their CUDA twins.
#pragma once

#include "plansight/kernels/adamw.h"
#include "plansight/kernels/attention.h"
#include "plansight/kernels/blas_threads.h"
#include "plansight/kernels/encoder.h"
#include "plansight/kernels/gelu.h"
#include "plansight/kernels/layernorm.h"
#include "plansight/kernels/matmul.h"
#include "plansight/kernels/residual.h"
#include "plansight/kernels/softmax_crossentropy.h"
