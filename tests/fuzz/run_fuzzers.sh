#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (own build folder) and runs each for SECONDS (default
# 30), starting from the checked-in corpus copied to a scratch folder. Exits non-zero when a
# target finds a crash; the reproducer is left in build/fuzz/artifacts/. Usage:
#   tests/fuzz/run_fuzzers.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/../.."
source tests/fuzz/fuzz_common.sh
seconds="${1:-30}"
fuzz_build_all
mkdir -p "$fuzz_build/artifacts"
status=0
for pair in "${fuzz_pairs[@]}"; do
  target="${pair%%:*}"
  corpus="${pair##*:}"
  work="$(fuzz_work_corpus "$corpus")"
  dict="$(fuzz_dict_flag "$corpus")"
  echo "== fuzz_$target for ${seconds}s"
  if ! "$fuzz_build/tests/fuzz/fuzz_$target" ${dict:+"$dict"} -max_total_time="$seconds" -rss_limit_mb=2048 \
      -max_len=65536 -artifact_prefix="$fuzz_build/artifacts/$target-" -print_final_stats=1 "$work" 2>&1 | tail -n 12; then
    status=1
  fi
done
exit $status
