#!/usr/bin/env bash
# Instructions per estimate, counted by cachegrind: a measure of the time core's work that a busy
# or shared machine does not blur (wall times on a 2-core VM vary by 20-50 % from hour to hour).
# Each benchmark runs once with one repetition and once with two (one estimate each, the presets
# parsed once per process), so the difference is one estimate with its setup (copying the plan).
# Both simulations of an estimate are counted, on whichever thread they ran.
# Usage: bench/estimate_instructions.sh [BENCH] [FILTER...]
#   BENCH   default build/dev/bench/plansight_bench_estimate
#   FILTER  google-benchmark filters, default: the default plan and the 64-stage plans, serial
set -euo pipefail
source "$(dirname "$0")/estimate_common.sh"
estimate_bench_args valgrind valgrind "$@"
if [ ${#filters[@]} -eq 0 ]; then
  filters=('EstimateDefaultPlan$' 'Pp64M1024/vpp:1/parallel:0' 'Pp64M1024/vpp:4/parallel:0')
  for s in 0 3 4 5; do filters+=("Pp64M1024Schedule/schedule:$s/parallel:0"); done
fi

# Prints "<all instructions> <of them in memset>" for one run of the bench process with $2
# repetitions of filter $1. memset is counted apart: cachegrind counts its `rep stosb` once per
# byte, so clearing the simulator's pair times (6 MB a simulation at 64 x 4 x 1024) shows as
# millions of instructions that take about 0.07 ms.
refs() {
  local out
  out=$(mktemp)
  valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file="$out" "$bench" \
    --benchmark_filter="$1" --benchmark_min_time=0 --benchmark_repetitions="$2" >/dev/null 2>&1
  cg_annotate "$out" 2>/dev/null | awk '
    /PROGRAM TOTALS/ { gsub(",", "", $1); total = $1 }
    /:__memset_/ && $2 ~ /^\(/ { gsub(",", "", $1); memset += $1 }
    END { printf "%d %d\n", total, memset }'
  rm -f "$out"
}

printf '%-48s %14s %12s\n' "benchmark" "instructions" "in memset"
for f in "${filters[@]}"; do
  read -r one one_memset < <(refs "$f" 1)
  read -r two two_memset < <(refs "$f" 2)
  printf '%-48s %14d %12d\n' "$f" $((two - one)) $((two_memset - one_memset))
done
