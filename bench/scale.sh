#!/usr/bin/env bash
# Every command at the scale limits people plan for: 100,000 GPUs, 1,000 layers, 10,000
# micro-batches, 1 M tokens of sequence. Prints, per command, its wall time, peak memory
# (maximum resident set) and exit status, and the first line of what it refused, if it did.
# A command should answer in under a second with bounded memory, or refuse by name.
# Usage: bench/scale.sh [PLANSIGHT]   (default build/dev/app/cli/plansight)
set -euo pipefail
cli="${1:-build/dev/app/cli/plansight}"
[ -x "$cli" ] || { echo "$cli is not an executable (build first: cmake --build --preset dev)" >&2; exit 2; }
command -v /usr/bin/time >/dev/null || { echo "needs /usr/bin/time (Debian package: time)" >&2; exit 2; }

cases=(
  "estimate --gpus 102400 --global-batch 102400"
  "estimate --gpus 98304 --tp 8 --pp 96 --global-batch 1966080"
  "estimate --layers 1000 --pp 100 --gpus 102400 --global-batch 1280000"
  "estimate --model llama-3.1-8b --seq-len 1048576 --cp 64 --tp 8 --pp 1 --gpus 4096 --global-batch 64 --attention flash"
  "search --gpus 102400 --global-batch 102400"
  "search --layers 1000 --gpus 102400 --global-batch 1280000"
  "search --model llama-3.1-8b --seq-len 1048576 --gpus 4096 --global-batch 64 --attention flash"
  "sweep micro_batches=1000..10000*10 --metric iteration_s --layers 1000 --pp 100 --gpus 102400"
  "placement --gpus 102400 --global-batch 102400"
  "timeline --ascii --pp 8 --gpus 1024 --global-batch 160000"
  "timeline --out /tmp/plansight-scale-timeline.json --pp 8 --gpus 1024 --global-batch 160000"
  "timeline --ascii --layers 1000 --pp 100 --gpus 102400 --global-batch 1280000"
)

printf '%-8s %-10s %-4s  %s\n' "wall s" "peak MiB" "exit" "command"
for c in "${cases[@]}"; do
  # The program's messages and then time's line, last, go to one file.
  # shellcheck disable=SC2086  # the case is a word list on purpose
  /usr/bin/time -f '%e %M %x' "$cli" $c >/dev/null 2>/tmp/plansight-scale-err || true
  read -r wall kib status <<<"$(tail -1 /tmp/plansight-scale-err)"
  refused=$(grep -m1 '^error' /tmp/plansight-scale-err || true)
  printf '%-8s %-10s %-4s  plansight %s\n' "$wall" "$((kib / 1024))" "$status" "$c"
  if [ -n "$refused" ]; then printf '%24s%s\n' "" "$refused"; fi
done
rm -f /tmp/plansight-scale-timeline.json /tmp/plansight-scale-err
