#!/usr/bin/env bash
# Predicted vs measured step time and memory of probe runs already stored in a runs database,
# predicted again by this build's estimator: the table of bench/probe_accuracy.sh, without
# running anything. For runs measured on a machine this one is not (a GPU's runs.db from
# scripts/gpu-check, bench/results/gpu-check-*/runs.db.xz): the measurements stay as they were,
# the predictions follow the estimator. Usage:
#   bench/compare_stored_runs.sh DB [CLI]       (CLI default build/dev/app/cli/plansight)
set -euo pipefail
db="${1:?usage: bench/compare_stored_runs.sh DB [CLI]}"
cli="${2:-build/dev/app/cli/plansight}"
[ -x "$cli" ] || { echo "no $cli: build first" >&2; exit 2; }
echo "# $cli compare ID --json for every probe run of $db"
printf '%-5s %-52s %12s %12s %8s %9s %9s %9s %8s %8s %8s %8s %6s\n' "run" "name" "predicted_ms" "measured_ms" "error" "act_err" \
  "buf_err" "mem_err" "fwd_err" "bwd_err" "comm_of" "idle_of" "phases"
"$cli" runs --db "$db" --json | python3 -c '
import json, sys
for r in sorted(json.load(sys.stdin)["runs"], key=lambda r: r["id"]):
    if r.get("kind") == "probe" and r.get("status") == "complete":
        print(r["id"], r["name"])' | while read -r id name; do
  row=$("$cli" compare "$id" --db "$db" --json | python3 "$(dirname "$0")/compare_row.py")
  read -r pred meas err act buf tot fwd bwd comm idle phases <<<"$row"
  printf '%-5s %-52s %12s %12s %8s %9s %9s %9s %8s %8s %8s %8s %6s\n' "$id" "${name:0:52}" "$pred" "$meas" "$err" "$act" "$buf" \
    "$tot" "$fwd" "$bwd" "$comm" "$idle" "$phases"
done
