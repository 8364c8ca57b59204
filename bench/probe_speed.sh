#!/usr/bin/env bash
# CPU probe step time of two plansight-probe builds, side by side: for each layout (the `small`
# model, the layouts of bench/probe_accuracy.sh that fit 2 to 8 ranks), runs A and B in turn
# REPEATS times and prints the median of each run's median step time, and B / A. Taking turns
# spreads a busy machine's noise over both programs alike. Usage:
#   bench/probe_speed.sh PROBE_A PROBE_B [REPEATS] [STEPS]     (default 3 repeats, 20 steps)
# e.g. a build of the commit before a change against one of the change.
set -euo pipefail
a="${1:?usage: bench/probe_speed.sh PROBE_A PROBE_B [REPEATS] [STEPS]}"
b="${2:?usage: bench/probe_speed.sh PROBE_A PROBE_B [REPEATS] [STEPS]}"
repeats="${3:-3}"
steps="${4:-20}"
for p in "$a" "$b"; do [ -x "$p" ] || { echo "$p is not an executable" >&2; exit 2; }; done

layouts=(
  '{}'
  '{"tp":2}'
  '{"dp":2,"zero_stage":1}'
  '{"dp":2,"zero_stage":3}'
  '{"pp":2,"schedule":"1f1b"}'
  '{"pp":2,"vpp":2,"schedule":"interleaved"}'
  '{"tp":2,"pp":2,"schedule":"1f1b"}'
  '{"tp":2,"pp":2,"dp":2,"schedule":"1f1b"}'
  '{"recompute":"full"}'
)

# step_time PROBE LAYOUT: the run's median step time in ms (steps after the warm-up).
step_time() {
  local request="{\"model\":\"small\",\"steps\":$steps,\"layout\":$2,\"trace\":true,\"calibrate\":false}"
  echo "$request" | "$1" - --device cpu 2>/dev/null |
    sed -n '/"event":"result"/ s/.*"step_time_s":\([0-9.e+-]*\).*/\1/p' |
    head -n 1 | awk '{printf "%.3f", $1 * 1000}'
}
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

echo "# bench/probe_speed.sh $a $b $repeats $steps"
echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-48s %10s %10s %8s\n' layout A_ms B_ms B/A
ratios=()
for layout in "${layouts[@]}"; do
  ta=() tb=()
  for ((i = 0; i < repeats; ++i)); do
    ta+=("$(step_time "$a" "$layout")")
    tb+=("$(step_time "$b" "$layout")")
  done
  ma=$(echo "${ta[*]}" | median)
  mb=$(echo "${tb[*]}" | median)
  ratio=$(awk -v a="$ma" -v b="$mb" 'BEGIN {printf "%.3f", b / a}')
  ratios+=("$ratio")
  printf '%-48s %10.2f %10.2f %8s\n' "$layout" "$ma" "$mb" "$ratio"
done
echo "# B/A: median $(echo "${ratios[*]}" | median), range $(printf '%s\n' "${ratios[@]}" | sort -g | head -n 1) to $(printf '%s\n' "${ratios[@]}" | sort -g | tail -n 1)"
