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
printf '%-5s %-52s %12s %12s %8s %9s %9s %9s\n' "run" "name" "predicted_ms" "measured_ms" "error" "act_err" "buf_err" "mem_err"
"$cli" runs --db "$db" --json | python3 -c '
import json, sys
for r in sorted(json.load(sys.stdin)["runs"], key=lambda r: r["id"]):
    if r.get("kind") == "probe" and r.get("status") == "complete":
        print(r["id"], r["name"])' | while read -r id name; do
  "$cli" compare "$id" --db "$db" --json | python3 -c '
import json, sys
c = json.load(sys.stdin)
s = c["step"]
mem = {m["category"]: m for m in c["memory"]}
def err(k):
    m = mem.get(k)
    if not m or not m["measured_bytes"]:
        return "-" if not m or not m["predicted_bytes"] else "inf"
    return "%+.1f%%" % ((m["predicted_bytes"] / m["measured_bytes"] - 1) * 100)
print("%-5s %-52s %12.2f %12.2f %+7.1f%% %9s %9s %9s" % (sys.argv[1], sys.argv[2][:52], s["predicted_s"]*1e3, s["measured_s"]*1e3,
      s["error"]*100, err("activations"), err("buffers"), err("total")))' "$id" "$name"
done
