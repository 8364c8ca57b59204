# Shared by run_fuzzers.sh and long_run.sh (sourced, from the repository root), so that the short
# CI run and the long run build and fuzz the same targets with the same corpus and dictionaries.

fuzz_build=build/fuzz

# target:corpus, where tests/fuzz/corpus/<corpus> holds the checked-in seeds and reproducers.
fuzz_pairs=(json_scanner:json kineto_importer:kineto nsys_importer:nsys plan_json:plan hf_config:hf)

# Configures the clang build folder and builds every libFuzzer binary.
fuzz_build_all() {
  cmake -S . -B "$fuzz_build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
    -DPLANSIGHT_BUILD_FUZZ=ON -DPLANSIGHT_BUILD_BENCH=OFF -DPLANSIGHT_ENABLE_CUDA=OFF -DPLANSIGHT_BUILD_GUI=OFF >/dev/null
  local targets=() pair
  for pair in "${fuzz_pairs[@]}"; do targets+=("fuzz_${pair%%:*}"); done
  cmake --build "$fuzz_build" -j 2 --target "${targets[@]}"
}

# Prints the scratch corpus folder of CORPUS after adding any checked-in file it lacks; libFuzzer
# grows this folder, and the checked-in one stays small.
fuzz_work_corpus() {
  local work="$fuzz_build/corpus/$1"
  mkdir -p "$work"
  cp -n tests/fuzz/corpus/"$1"/* "$work"/ 2>/dev/null || true
  echo "$work"
}

# Prints the -dict= flag for CORPUS, or nothing. The scanner's corpus is Kineto JSON, so it
# shares the Kineto dictionary.
fuzz_dict_flag() {
  local dict="tests/fuzz/$1.dict"
  [ "$1" = json ] && dict=tests/fuzz/kineto.dict
  if [ -f "$dict" ]; then echo "-dict=$dict"; fi
}
