#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (own build folder) and runs each for SECONDS (default
# 30), starting from the checked-in corpus copied to a scratch folder. Exits non-zero when a
# target finds a crash; the reproducer is left in build/fuzz/artifacts/. Usage:
#   tests/fuzz/run_fuzzers.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds="${1:-30}"
build=build/fuzz
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
  -DPLANSIGHT_BUILD_FUZZ=ON -DPLANSIGHT_BUILD_BENCH=OFF -DPLANSIGHT_ENABLE_CUDA=OFF -DPLANSIGHT_BUILD_GUI=OFF >/dev/null
cmake --build "$build" -j 2 --target fuzz_json_scanner fuzz_kineto_importer fuzz_nsys_importer fuzz_plan_json
mkdir -p "$build/artifacts"
status=0
for pair in json_scanner:json kineto_importer:kineto nsys_importer:nsys plan_json:plan; do
  target="${pair%%:*}"
  corpus="${pair##*:}"
  work="$build/corpus/$corpus"
  mkdir -p "$work"
  cp -n tests/fuzz/corpus/"$corpus"/* "$work"/ 2>/dev/null || true
  dict=()
  [ -f "tests/fuzz/$corpus.dict" ] && dict=(-dict="tests/fuzz/$corpus.dict")
  [ "$corpus" = json ] && dict=(-dict="tests/fuzz/kineto.dict")
  echo "== fuzz_$target for ${seconds}s"
  if ! "$build/tests/fuzz/fuzz_$target" "${dict[@]}" -max_total_time="$seconds" -rss_limit_mb=2048 -max_len=65536 \
      -artifact_prefix="$build/artifacts/$target-" -print_final_stats=1 "$work" 2>&1 | tail -n 12; then
    status=1
  fi
done
exit $status
