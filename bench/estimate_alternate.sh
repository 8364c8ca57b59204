#!/usr/bin/env bash
# Wall time of two or more estimate-benchmark binaries, alternated: on a shared VM the same binary
# measures up to 2x apart from one minute to the next, so binaries compared one after the other
# compare minutes, not code. Each round runs every binary once (5 repetitions, fastest kept); after
# ROUNDS rounds the fastest of each binary's rounds is printed, with the spread of its rounds.
# Usage: bench/estimate_alternate.sh FILTER BENCH BENCH [BENCH...]
#   FILTER  one google-benchmark filter selecting one 64-stage benchmark (its "_min" is read)
#   BENCH   plansight_bench_estimate binaries (copies of build/dev/bench/... built at each commit)
#   ROUNDS  environment, default 8
#   MIN_TIME environment, seconds per repetition, default 0.3
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: $0 FILTER BENCH BENCH [BENCH...]" >&2; exit 2; }
filter=$1
shift
for b in "$@"; do
  [ -x "$b" ] || { echo "$b is not an executable" >&2; exit 2; }
done
rounds=${ROUNDS:-8}
# Each repetition runs this long (s). Not shorter: a process's first estimates can run faster
# than its later ones (a 64-stage estimate with a new table each time: 1.92 ms in 30 ms
# repetitions, 2.30 ms in 0.3 s ones, the same binary), and a long-lived process (the app, a
# sweep) sees the later ones.
min_time=${MIN_TIME:-0.3}
declare -A runs
for ((round = 1; round <= rounds; ++round)); do
  for b in "$@"; do
    v=$("$b" --benchmark_filter="$filter" --benchmark_repetitions=5 --benchmark_report_aggregates_only=true \
          --benchmark_min_time="$min_time" 2>/dev/null | awk '$1 ~ /_min$/ { print $2 " " $3; exit }')
    [ -n "$v" ] || { echo "$b: no benchmark matches \"$filter\" (or it has no _min row)" >&2; exit 2; }
    runs[$b]="${runs[$b]:-} ${v%% *}"
    unit=${v##* }
  done
done
printf '%-50s %10s   %s\n' "binary" "fastest" "rounds (fastest of 5 each, $unit)"
for b in "$@"; do
  # shellcheck disable=SC2086
  printf '%-50s %10s  %s\n' "$b" "$(printf '%s\n' ${runs[$b]} | sort -g | head -1)" "${runs[$b]}"
done
