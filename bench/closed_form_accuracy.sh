#!/usr/bin/env bash
# How far the search's closed form is from the simulation that re-ranks it: for each search
# below, the layouts `plansight search` re-ranks by simulation (its best 100), the closed form's
# iteration time against the simulated one, |closed / simulated - 1| by schedule (mean, worst).
# The searches: the default plan (GPT-3 175B on 1024 A100s), the 1T model on 3072 A100s
# (Narayanan et al. 2021's), and GPT-3 175B on 256 H100s with 4 GPUs a node and micro-batch 1,
# where pipeline transfers cross nodes and weigh most against a stage's pass, with every schedule
# and with 1F1B only.
# Usage: bench/closed_form_accuracy.sh [CLI]   (default build/dev/app/cli/plansight)
set -euo pipefail
cli=${1:-build/dev/app/cli/plansight}
[ -x "$cli" ] || { echo "$cli is not built (cmake --build --preset dev)" >&2; exit 2; }
searches=(
  "default plan, GPT-3 175B on 1024 A100|"
  "1T on 3072 A100|--model narayanan-1008b --gpus 3072 --global-batch 3072"
  "GPT-3 175B on 256 H100, 4 a node, micro-batch 1|--gpu h100-sxm --gpus 256 --gpus-per-node 4 --micro-batch 1"
  "the same, 1F1B only|--gpu h100-sxm --gpus 256 --gpus-per-node 4 --micro-batch 1 --schedule 1f1b"
)
printf '%-52s %-12s %6s %9s %9s\n' "search" "schedule" "count" "mean" "worst"
for s in "${searches[@]}"; do
  name=${s%%|*}
  flags=${s#*|}
  # shellcheck disable=SC2086  # the flags are a word list on purpose
  "$cli" search $flags --top 100 --json | python3 -c '
import json, sys, collections
name = sys.argv[1]
rows = collections.defaultdict(list)
for l in json.load(sys.stdin)["layouts"]:
    if not l.get("simulated"):
        continue
    rows[l["layout"]["schedule"]].append(abs(l["closed_form_iteration_s"] / l["iteration_s"] - 1))
for schedule, errors in sorted(rows.items()):
    print("%-52s %-12s %6d %8.2f%% %8.2f%%" % (name, schedule, len(errors), 100 * sum(errors) / len(errors), 100 * max(errors)))
' "$name"
done
