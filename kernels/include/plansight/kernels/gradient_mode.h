// How a backward kernel writes an input gradient: added to what the buffer holds (llm.c's
// convention, so that several consumers of one activation sum their gradients in place), or
// written over it (the buffer's first writer; it need not be zeroed first, which on a GPU is a
// memset launch per buffer). Shared by the CPU kernels and their CUDA twins; plain C++.
#pragma once

#include <cstdint>

namespace plansight::kernels {

enum class Gradient : std::uint8_t { accumulate, overwrite };

}  // namespace plansight::kernels
