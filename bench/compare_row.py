#!/usr/bin/env python3
"""One row of a predicted-vs-measured table from `plansight compare ID --json` on stdin: the
predicted and measured step in ms, the step error, and the errors of the activations, the
buffers and the total memory ("-" where neither side has any, "inf" where only the prediction
does); then the phases of the step: the forward and backward errors, the communication's and
idle time's part in the step error ("of step", as `plansight compare` prints it), and what the
phases count ("proc": processor time, the ranks sharing processors; "rank": per-rank averages).
Shared by bench/probe_accuracy.sh and bench/compare_stored_runs.sh."""
import json
import sys

c = json.load(sys.stdin)
s = c["step"]
mem = {m["category"]: m for m in c["memory"]}


def err(k):
    m = mem.get(k)
    if not m or not m["measured_bytes"]:
        return "-" if not m or not m["predicted_bytes"] else "inf"
    return "%+.1f%%" % ((m["predicted_bytes"] / m["measured_bytes"] - 1) * 100)


phases = {p["phase"]: p for p in c.get("phases", [])}


def phase(name, key):
    v = phases.get(name, {}).get(key)
    return "-" if v is None else "%+.1f%%" % (v * 100)


print("%.2f %.2f %+.1f%% %s %s %s %s %s %s %s %s" % (
    s["predicted_s"] * 1e3, s["measured_s"] * 1e3, s["error"] * 100, err("activations"), err("buffers"), err("total"),
    phase("forward", "error"), phase("backward", "error"), phase("communication", "error_of_step"),
    phase("idle", "error_of_step"), "proc" if c.get("phases_shared_processors", 0) > 0 else "rank"))
