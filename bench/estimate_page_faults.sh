#!/usr/bin/env bash
# Page faults per estimate (perf stat's software event, which a VM without hardware counters
# still counts): memory an estimate maps afresh instead of reusing is paid for page by page, and
# shows here long before it shows in wall times. Each benchmark runs twice, for a short and a
# longer time; the difference in faults over the difference in iterations is one estimate's.
# Usage: bench/estimate_page_faults.sh [BENCH] [FILTER...]
#   BENCH   default build/dev/bench/plansight_bench_estimate
#   FILTER  google-benchmark filters, each selecting one benchmark; default: the 64-stage ZeRO-3
#           plans, interleaved and DualPipeV
set -euo pipefail
source "$(dirname "$0")/estimate_common.sh"
estimate_bench_args perf linux-perf "$@"
if [ ${#filters[@]} -eq 0 ]; then
  for s in 1 2 3 4; do filters+=("Pp64M1024Zero3/schedule:$s/prefetch:1" "Pp64M1024Zero3/schedule:$s/prefetch:0"); done
  filters+=('Pp64M1024/vpp:4/parallel:1' 'Pp64M1024Schedule/schedule:4/parallel:1')
fi

# Prints "<page faults> <iterations summed over the benchmarks the filter selects>".
faults() {
  local log stat
  log=$(mktemp) stat=$(mktemp)
  perf stat -e page-faults -x, -o "$stat" "$bench" --benchmark_filter="$1" --benchmark_min_time="$2" >"$log" 2>/dev/null
  local f i
  f=$(awk -F, '/page-faults/ { print $1 }' "$stat")
  i=$(awk '$1 ~ /^BM_/ { s += $6 } END { print s + 0 }' "$log")  # name, time, unit, CPU, unit, iterations
  rm -f "$log" "$stat"
  echo "$f $i"
}

printf '%-52s %16s\n' "benchmark filter" "faults/estimate"
for f in "${filters[@]}"; do
  read -r f1 i1 < <(faults "$f" 0)
  read -r f2 i2 < <(faults "$f" 0.3)
  if [ "$i2" -le "$i1" ]; then echo "$f: no more iterations in the longer run" >&2; continue; fi
  awk -v f="$f" -v df=$((f2 - f1)) -v di=$((i2 - i1)) 'BEGIN { printf "%-52s %16.1f\n", f, df / di }'
done
