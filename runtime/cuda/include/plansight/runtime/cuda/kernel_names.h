// The name a kernel shows in a measured timeline, from the (mangled) name CUPTI reports. Plain
// C++: tested without a GPU (gpu_host_test).
#pragma once

#include <string>

namespace plansight::runtime::cuda {

// "nvjet_hsh_128x256_..." (unmangled: as reported); a mangled C++ kernel demangled without its
// parameter list and without "(anonymous namespace)::", which nvcc gives every kernel in an
// unnamed namespace ("_ZN9plansight7kernels4cuda39_GLOBAL__N__..._7_gelu_cu_..19gelu_forward_kernelIfEEvPT_PKS4_m"
// -> "void plansight::kernels::cuda::gelu_forward_kernel<float>"); "kernel" for none.
std::string kernel_display_name(const char* name);

}  // namespace plansight::runtime::cuda
