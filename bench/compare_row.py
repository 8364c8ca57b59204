#!/usr/bin/env python3
"""One row of a predicted-vs-measured table from `plansight compare ID --json` on stdin: the
predicted and measured step in ms, the step error, and the errors of the activations, the
buffers and the total memory ("-" where neither side has any, "inf" where only the prediction
does). Shared by bench/probe_accuracy.sh and bench/compare_stored_runs.sh."""
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


print("%.2f %.2f %+.1f%% %s %s %s" % (s["predicted_s"] * 1e3, s["measured_s"] * 1e3, s["error"] * 100,
                                     err("activations"), err("buffers"), err("total")))
