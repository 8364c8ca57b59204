#!/usr/bin/env bash
# Predicted vs measured step time of CPU probe runs on this machine: the layouts of the probe's
# correctness matrix with 4 layers (the `small` model), each calibrated by its own run
# (`plansight probe --calibrate`), compared by `plansight compare`. Prints one table row per
# layout and the spread of the step error. Usage:
#   bench/probe_accuracy.sh [BUILD_DIR] [STEPS]      (default build/release, 20 steps)
# Environment: ACCURACY_DB (scratch database; default a temporary file), ACCURACY_LAYOUTS (a
# file of layout flag lines replacing the built-in list), ACCURACY_MPI=1 (MPI mode: each rank is
# a process under `mpirun -np TPxPPxDP`, oversubscribed, instead of a thread; the calibration then
# measures the collectives between those processes), ACCURACY_CLI (the plansight program, for a
# bundle without a build tree), ACCURACY_PROBE_ARGS (the flags every run shares; default
# "--model small"; on a GPU e.g. "--device cuda --model gpt2-124m --precision bf16 ..."),
# ACCURACY_CALIBRATION (full, the default: `--calibrate`; quick: the probe's quick sweep).
set -euo pipefail
build="${1:-build/release}"
steps="${2:-20}"
cli="${ACCURACY_CLI:-$build/app/cli/plansight}"
[ -x "$cli" ] || { echo "no $cli: build the release preset first" >&2; exit 2; }
read -r -a probe_args <<<"${ACCURACY_PROBE_ARGS:---model small}"
calibrate=(--calibrate)
case "${ACCURACY_CALIBRATION:-full}" in
  full) ;;
  quick) calibrate=() ;;
  *) echo "ACCURACY_CALIBRATION=${ACCURACY_CALIBRATION}: valid: full, quick" >&2; exit 2 ;;
esac
db="${ACCURACY_DB:-$(mktemp -d)/accuracy.db}"

default_layouts() {
  cat <<'LAYOUTS'
--tp 1 --pp 1 --dp 1
--tp 2
--dp 2
--dp 2 --zero 1
--dp 2 --zero 2
--dp 2 --zero 3
--pp 2 --schedule gpipe
--pp 2 --schedule 1f1b
--pp 2 --schedule interleaved --vpp 2
--pp 4 --schedule gpipe
--pp 4 --schedule 1f1b
--tp 2 --pp 2 --schedule 1f1b
--tp 2 --dp 2
--pp 2 --dp 2 --schedule 1f1b --zero 1
--tp 2 --pp 2 --dp 2 --schedule 1f1b
--tp 2 --pp 4 --dp 2 --schedule 1f1b
--recompute full
--recompute selective
--tp 2 --pp 2 --schedule 1f1b --recompute full
--pp 2 --dp 2 --schedule gpipe --recompute selective --zero 2
LAYOUTS
}

echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
# MPI mode: the launcher for a layout's TP x PP x DP processes.
launcher_for() {
  local tp=1 pp=1 dp=1
  set -- $1
  while [ $# -gt 0 ]; do
    case "$1" in
      --tp) tp="$2"; shift ;;
      --pp) pp="$2"; shift ;;
      --dp) dp="$2"; shift ;;
    esac
    shift
  done
  echo "mpirun --oversubscribe -np $((tp * pp * dp))"
}
if [ "${ACCURACY_MPI:-0}" = 1 ]; then
  command -v mpirun >/dev/null || { echo "ACCURACY_MPI=1 needs mpirun (scripts/install-deps installs Open MPI)" >&2; exit 2; }
  [ "$(id -u)" -eq 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  echo "# MPI mode: $(mpirun --version | head -n 1), one process per rank"
fi

echo "# $cli probe ${probe_args[*]} --steps $steps ${calibrate[*]} LAYOUT${ACCURACY_MPI:+ [--launcher \"mpirun -np N\"]}; $cli compare ID --json"
# Phases (the traced step): fwd_err, bwd_err the forward's and backward's errors; comm_of, idle_of
# their part in the step error; phases: proc (processor time: the ranks share processors) or rank.
printf '%-58s %12s %12s %8s %9s %9s %9s %8s %8s %8s %8s %6s\n' "layout" "predicted_ms" "measured_ms" "error" "act_err" "buf_err" \
  "mem_err" "fwd_err" "bwd_err" "comm_of" "idle_of" "phases"
errors=()
while IFS= read -r layout; do
  [ -z "$layout" ] && continue
  launch=()
  [ "${ACCURACY_MPI:-0}" = 1 ] && launch=(--launcher "$(launcher_for "$layout")")
  # shellcheck disable=SC2086
  if ! id=$("$cli" probe "${probe_args[@]}" --steps "$steps" "${calibrate[@]}" --db "$db" --json "${launch[@]}" $layout 2>/dev/null |
            python3 -c 'import json,sys; print(json.load(sys.stdin)["run_id"])' 2>/dev/null); then
    printf '%-58s %s\n' "$layout" "probe failed: $("$cli" probe "${probe_args[@]}" --steps 1 "${launch[@]}" $layout --db "$db" 2>&1 | tail -n 1)"
    continue
  fi
  row=$("$cli" compare "$id" --db "$db" --json | python3 "$(dirname "$0")/compare_row.py")
  read -r pred meas err act buf tot fwd bwd comm idle phases <<<"$row"
  printf '%-58s %12s %12s %8s %9s %9s %9s %8s %8s %8s %8s %6s\n' "$layout" "$pred" "$meas" "$err" "$act" "$buf" "$tot" \
    "$fwd" "$bwd" "$comm" "$idle" "$phases"
  errors+=("${err%\%}")
done < <(if [ -n "${ACCURACY_LAYOUTS:-}" ]; then cat "$ACCURACY_LAYOUTS"; else default_layouts; fi)
printf '%s\n' "${errors[@]}" | python3 -c '
import sys
e = [float(x) for x in sys.stdin if x.strip()]
inside = sum(1 for x in e if abs(x) <= 25)
within10 = sum(1 for x in e if abs(x) <= 10)
print("# %d layouts: error from %+.1f%% to %+.1f%%, mean |error| %.1f%%, %d within +-25%%, %d within +-10%%" % (len(e), min(e), max(e), sum(abs(x) for x in e) / len(e), inside, within10))'
