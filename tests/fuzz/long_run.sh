#!/usr/bin/env bash
# A long fuzzing run: each target for SECONDS (default 900), one after another, in libFuzzer's
# fork mode with crashes, timeouts and OOMs ignored, so that a finding is saved and fuzzing goes
# on for the whole time instead of stopping at the first.
# Per target: the log in build/fuzz/long-run/<target>.log, findings in build/fuzz/long-run/
# artifacts/, and one line of build/fuzz/long-run/summary.tsv. Usage (see tests/fuzz/README.md):
#   mkdir -p build/fuzz/long-run && nohup nice -n 19 tests/fuzz/long_run.sh [SECONDS] [TARGET...] > build/fuzz/long-run/run.log 2>&1 &
set -euo pipefail
cd "$(dirname "$0")/../.."
source tests/fuzz/fuzz_common.sh
seconds="${1:-900}"
shift || true
only=("$@")
out="$fuzz_build/long-run"
mkdir -p "$out/artifacts"
fuzz_build_all
[ -f "$out/summary.tsv" ] ||
  printf 'target\tstarted\tseconds\texecutions\tcov\tft\tcorpus_files\toom/timeout/crash\tfindings\tslow_units\n' >"$out/summary.tsv"
for pair in "${fuzz_pairs[@]}"; do
  target="${pair%%:*}"
  corpus="${pair##*:}"
  if [ ${#only[@]} -gt 0 ] && [[ ! " ${only[*]} " == *" $target "* ]]; then continue; fi
  work="$(fuzz_work_corpus "$corpus")"
  dict="$(fuzz_dict_flag "$corpus")"
  log="$out/$target.log"
  started="$(date -u +%FT%TZ)"
  t0=$SECONDS
  echo "== fuzz_$target for ${seconds}s from $started"
  "$fuzz_build/tests/fuzz/fuzz_$target" ${dict:+"$dict"} -fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
    -max_total_time="$seconds" -rss_limit_mb=2048 -max_len=65536 -artifact_prefix="$out/artifacts/$target-" \
    "$work" >"$log" 2>&1 || echo "fuzz_$target exited with $? (see $log)"
  # Fork mode's progress line: "#EXECS: cov: C ft: F corp: N exec/s E oom/timeout/crash: a/b/c time: Ts ...".
  last="$(grep -ao '#[0-9]*: cov: .*' "$log" | tail -n 1 || true)"
  field() { sed -n "s|.*$1 \([^ ]*\).*|\1|p" <<<"$last"; }
  execs="$(sed -n 's/^#\([0-9]*\):.*/\1/p' <<<"$last")"
  # Crash, leak, timeout and OOM inputs are findings; slow-unit files are inputs that took longer
  # than -report_slow_units, which at nice 19 on a busy machine usually means the job was starved.
  findings="$(find "$out/artifacts" -name "$target-*" ! -name "$target-slow-unit-*" | wc -l)"
  slow="$(find "$out/artifacts" -name "$target-slow-unit-*" | wc -l)"
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$target" "$started" "$((SECONDS - t0))" "$execs" "$(field 'cov:')" \
    "$(field 'ft:')" "$(find "$work" -type f | wc -l)" "$(field 'oom/timeout/crash:')" "$findings" "$slow" >>"$out/summary.tsv"
  tail -n 1 "$out/summary.tsv"
done
