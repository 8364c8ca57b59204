"""The estimate of one plan by the CLI, for the validation scripts in bench/ (moe_throughput.sh,
megatron_h100.sh): the plan written to a temporary file, `plansight estimate --plan FILE --json`
run on it, its JSON answer returned (with "errors" when the plan is refused)."""
import json
import os
import subprocess
import tempfile


def estimate(cli, plan):
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(plan, f)
        path = f.name
    try:
        out = subprocess.run([cli, "estimate", "--plan", path, "--json"], capture_output=True, text=True)
    finally:
        os.unlink(path)
    return json.loads(out.stdout)
