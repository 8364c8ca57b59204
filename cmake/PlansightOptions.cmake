# Build options, all prefixed PLANSIGHT_. CUDA defaults ON only when nvcc is found, the GUI only
# when Qt 6 is found, so that a plain `cmake` works on a machine with neither.
include(CheckLanguage)

option(PLANSIGHT_BUILD_TESTS "Build the test suite" ON)
option(PLANSIGHT_BUILD_BENCH "Build the benchmarks (needs Google Benchmark)" ON)

check_language(CUDA)
if(CMAKE_CUDA_COMPILER)
  set(_plansight_cuda_default ON)
else()
  set(_plansight_cuda_default OFF)
endif()
option(PLANSIGHT_ENABLE_CUDA "Build the CUDA kernels and GPU runtime" ${_plansight_cuda_default})

find_package(Qt6 6.4 QUIET COMPONENTS Core Widgets)
if(Qt6_FOUND)
  set(_plansight_gui_default ON)
else()
  set(_plansight_gui_default OFF)
endif()
option(PLANSIGHT_BUILD_GUI "Build the Qt 6 desktop application" ${_plansight_gui_default})

# The probe across processes (mpirun/srun) needs MPI; Open MPI from Debian (scripts/install-deps).
find_package(MPI QUIET COMPONENTS CXX)
option(PLANSIGHT_ENABLE_MPI "Build the MPI communicator: probe ranks as processes under mpirun or srun" ${MPI_CXX_FOUND})
if(PLANSIGHT_ENABLE_MPI AND NOT MPI_CXX_FOUND)
  find_package(MPI REQUIRED COMPONENTS CXX)
endif()
# Where the tests find the launcher (they skip, saying why, when there is none).
find_program(PLANSIGHT_MPIEXEC NAMES mpirun mpiexec HINTS ${MPIEXEC_EXECUTABLE})

option(PLANSIGHT_SANITIZE "Build with AddressSanitizer and UndefinedBehaviorSanitizer" OFF)

if(PLANSIGHT_BUILD_TESTS OR PLANSIGHT_BUILD_BENCH)
  find_package(GTest REQUIRED)
endif()
find_package(nlohmann_json 3.10 REQUIRED)
