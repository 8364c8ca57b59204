# Optional GPU libraries of runtime/cuda, each behind its own option that defaults ON when the
# library is found (nvbench's habit: PLANSIGHT_ENABLE_CUPTI, PLANSIGHT_ENABLE_NCCL). Included
# only when PLANSIGHT_ENABLE_CUDA is ON (after PlansightCuda.cmake found the toolkit).
#   CUPTI: CUDA::cupti from FindCUDAToolkit (libcupti also carries the profiler host API).
#   NCCL:  NCCL::NCCL from our FindNCCL.cmake, at least 2.18 (ncclCommSplit).
if(TARGET CUDA::cupti)
  set(_plansight_cupti_default ON)
else()
  set(_plansight_cupti_default OFF)
endif()
option(PLANSIGHT_ENABLE_CUPTI "Build the CUPTI activity tracer and metric configuration" ${_plansight_cupti_default})
if(PLANSIGHT_ENABLE_CUPTI AND NOT TARGET CUDA::cupti)
  message(FATAL_ERROR "PLANSIGHT_ENABLE_CUPTI is ON but the CUDA toolkit has no CUPTI (CUDA::cupti)")
endif()

find_package(NCCL 2.18 QUIET)
option(PLANSIGHT_ENABLE_NCCL "Build the NCCL communicator" ${NCCL_FOUND})
if(PLANSIGHT_ENABLE_NCCL AND NOT NCCL_FOUND)
  message(FATAL_ERROR "PLANSIGHT_ENABLE_NCCL is ON but NCCL >= 2.18 was not found (set NCCL_ROOT)")
endif()
message(STATUS "Plansight GPU libraries: CUPTI ${PLANSIGHT_ENABLE_CUPTI}, NCCL ${PLANSIGHT_ENABLE_NCCL} (${NCCL_VERSION})")
