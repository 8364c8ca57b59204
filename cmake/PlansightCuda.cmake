# CUDA language and toolkit, only when PLANSIGHT_ENABLE_CUDA is ON (see PlansightOptions.cmake).
# Architectures default to 80;90 (A100, H100) so CI builds are the same everywhere; the `gpu`
# preset passes CMAKE_CUDA_ARCHITECTURES=native. Only kernels/cuda and tests/device use CUDA.
if(NOT PLANSIGHT_ENABLE_CUDA)
  return()
endif()

if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
  set(CMAKE_CUDA_ARCHITECTURES 80 90)
endif()
# C++17 for .cu files: CMake 3.25 (Debian 12) knows no CUDA20 flags for nvcc. The kernels and
# the headers they include use nothing newer; plain C++ callers stay C++20.
set(CMAKE_CUDA_STANDARD 17)
set(CMAKE_CUDA_STANDARD_REQUIRED ON)
set(CMAKE_CUDA_EXTENSIONS OFF)
enable_language(CUDA)
find_package(CUDAToolkit REQUIRED)

# The runtime comes from linking CUDA::cudart explicitly. CMake's default (Static) would add
# -lcudart_static -lcudadevrt to C++ executables that link a CUDA static library, without the
# toolkit's library folder (CMake 3.25 finds no implicit CUDA link directories for CUDA 13's
# targets/x86_64-linux layout), and no kernel here needs relocatable device code (cudadevrt).
set(CMAKE_CUDA_RUNTIME_LIBRARY None)
