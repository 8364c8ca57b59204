// kernel_display_name(): the names CUPTI reports for our kernels, cuBLAS's and plain C++ ones, as a
// measured timeline shows them. No GPU needed.
#include <gtest/gtest.h>

#include "plansight/runtime/cuda/kernel_names.h"

namespace plansight::runtime::cuda {
namespace {

TEST(KernelNames, OurKernelsKeepTheirNameInsideAnUnnamedNamespace) {
  // The device symbol nvcc gives kernels/cuda/gelu.cu's gelu_forward_kernel<float> (from
  // libplansight_kernels_cuda.a): the unnamed namespace demangles as "(anonymous namespace)",
  // whose "(" is not the parameter list's.
  EXPECT_EQ(kernel_display_name("_ZN9plansight7kernels4cuda39_GLOBAL__N__e8aef991_7_gelu_cu_6d2388a419gelu_forward_kernelIfEEvPT_PKS4_m"),
            "void plansight::kernels::cuda::gelu_forward_kernel<float>");
}

TEST(KernelNames, ParametersDropAndUnmangledNamesStay) {
  EXPECT_EQ(kernel_display_name("_Z19gelu_forward_kernelIfEvPT_PKS0_m"), "void gelu_forward_kernel<float>");
  EXPECT_EQ(kernel_display_name("_Z3fooPfi"), "foo");
  // A parameter of function-pointer type has parentheses of its own.
  EXPECT_EQ(kernel_display_name("_Z3barPFviE"), "bar");
  EXPECT_EQ(kernel_display_name("nvjet_hsh_128x256_64x4_2x1_v_bz_coopA_NNT"), "nvjet_hsh_128x256_64x4_2x1_v_bz_coopA_NNT");
  EXPECT_EQ(kernel_display_name(nullptr), "kernel");
}

}  // namespace
}  // namespace plansight::runtime::cuda
