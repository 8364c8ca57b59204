# Language level, warnings, ccache and sanitizers, applied through one interface target that
# every plansight target links, never through global flags.
set(CMAKE_CXX_STANDARD 20)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
set(CMAKE_CXX_EXTENSIONS OFF)
set(CMAKE_EXPORT_COMPILE_COMMANDS ON)

find_program(PLANSIGHT_CCACHE ccache)
if(PLANSIGHT_CCACHE AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  set(CMAKE_CXX_COMPILER_LAUNCHER "${PLANSIGHT_CCACHE}")
  set(CMAKE_CUDA_COMPILER_LAUNCHER "${PLANSIGHT_CCACHE}")
endif()

add_library(plansight_build_settings INTERFACE)
add_library(plansight::build_settings ALIAS plansight_build_settings)
target_compile_options(plansight_build_settings INTERFACE
  $<$<COMPILE_LANG_AND_ID:CXX,GNU,Clang>:-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion>)
if(PLANSIGHT_SANITIZE)
  target_compile_options(plansight_build_settings INTERFACE
    $<$<COMPILE_LANGUAGE:CXX>:-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined>)
  target_link_options(plansight_build_settings INTERFACE -fsanitize=address,undefined)
endif()
