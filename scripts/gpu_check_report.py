#!/usr/bin/env python3
"""One-line figures for scripts/gpu-check's summary, read from plansight-probe's JSON lines and
the CLI's output. Standard library only (the GPU machines' images have python3).

  gpu_check_report.py describe RUN.jsonl           step time, tokens/s, loss, tensor cores, memory, timeline
  gpu_check_report.py losses CPU.jsonl GPU.jsonl TOL  "equal ..." when every step's loss agrees within TOL (relative)
  gpu_check_report.py cli COMMAND CLI.txt            the line of a CLI command's output worth a summary row
  gpu_check_report.py overhead TRACED.jsonl PLAIN.jsonl  step time with the CUPTI tracer against without it
  gpu_check_report.py throughput COMPARE.json       step, tokens/s and MFU from `plansight compare --json`
  gpu_check_report.py counters RUN.jsonl             tensor-core share by hardware counters against the name rules
  gpu_check_report.py accuracy TABLE.txt            the spread of bench/probe_accuracy.sh's rows (those printed
                                                    so far, when it was stopped)
"""
import json
import math
import sys


def events(path):
    out = {}
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.strip()
            if not line.startswith("{"):
                continue
            try:
                e = json.loads(line)
            except json.JSONDecodeError:
                continue
            out.setdefault(e.get("event"), []).append(e)
    return out


def result_of(path):
    ev = events(path)
    if "result" not in ev:
        errors = ev.get("error", [{}])[0].get("errors", [])
        raise SystemExit("no result: " + "; ".join(f"{e.get('field')}: {e.get('message')}" for e in errors))
    request = ev.get("started", [{}])[0].get("request", {})
    return ev["result"][0], request


def losses(result):
    return [s.get("loss") for s in result.get("steps", [])]


def describe(path):
    result, request = result_of(path)
    step = result.get("step_time_s") or 0.0
    tokens = request.get("global_batch", 0) * request.get("seq_len", 0)
    parts = [f"step {step * 1e3:.1f} ms"]
    if step > 0 and tokens:
        parts.append(f"{tokens / step:,.0f} tok/s")
    ls = [x for x in losses(result) if x is not None]
    if ls:
        parts.append(f"loss {ls[0]:.3f}->{ls[-1]:.3f}")
    scaled = [s for s in result.get("steps", []) if "loss_scale" in s]
    if scaled:
        skipped = sum(1 for s in scaled if s.get("skipped"))
        parts.append(f"loss scale {scaled[-1]['loss_scale']:g}, {skipped} skipped")
    report = result.get("device_report", {})
    tc = report.get("tensor_cores")
    if tc:
        share = tc.get("step", {}).get("share", 0.0)
        parts.append(f"tensor cores {share * 100:.0f}% of kernel time ({tc.get('source', '?')})")
    peaks = [m.get("peak_total_bytes", 0) for m in result.get("memory", [])]
    if peaks:
        parts.append(f"peak {max(peaks) / 2**20:,.0f} MiB/rank")
    timeline = result.get("timeline") or {}
    spans = sum(len(t.get("spans", [])) for t in timeline.get("tracks", []))
    phases = sorted({s[4] for t in timeline.get("tracks", []) for s in t.get("spans", []) if s[4] != "none"})
    if spans:
        parts.append(f"{spans} spans [{','.join(phases)}]")
        # Spans are [start, duration, name, kind, phase, stage, micro-batch, flops, bytes, tensor core].
        kernels = [s for t in timeline.get("tracks", []) if t.get("lane") != "host" for s in t.get("spans", [])]
        gemm = sum(s[1] for s in kernels if len(s) > 9 and s[9])
        placed = sum(s[1] for s in kernels if len(s) > 9 and s[9] and s[4] != "none")
        if gemm > 0:  # a GEMM without a phase found no launching thread (driver-API launches)
            parts.append(f"GEMM time with a phase {placed / gemm * 100:.0f}%")
        comm = sum(1 for s in kernels if s[3] in ("collective", "send", "recv"))
        parts.append(f"{comm} communication spans")
        # How long the GPU was busy in the traced step (the union of its device spans) against
        # the step's window: well under it, the step waited on the host threads, not the GPU.
        device = sorted((s[0], s[0] + s[1]) for s in kernels if s[3] not in ("annotation", "host", "idle") and s[1] > 0)
        if device:
            busy, start, end = 0, device[0][0], device[0][1]
            first, last = device[0][0], max(e for _, e in device)
            for a, b in device[1:]:
                if a > end:
                    busy, start, end = busy + end - start, a, b
                else:
                    end = max(end, b)
            busy += end - start
            parts.append(f"GPU busy {busy / 1e6:.1f} of {(last - first) / 1e6:.1f} ms")
    elif request.get("trace", True):
        parts.append("NO TIMELINE: " + str(report.get("timeline", "?")))
    return ", ".join(parts)


def compare_losses(cpu_path, gpu_path, tolerance):
    cpu, _ = result_of(cpu_path)
    gpu, _ = result_of(gpu_path)
    a, b = losses(cpu), losses(gpu)
    if len(a) != len(b) or not a:
        return f"different step counts: cpu {len(a)}, gpu {len(b)}"
    worst = 0.0
    for x, y in zip(a, b):
        if x is None or y is None or not math.isfinite(x) or not math.isfinite(y):
            return f"non-finite loss: cpu {a}, gpu {b}"
        worst = max(worst, abs(x - y) / max(abs(x), 1e-12))
    verdict = "equal" if worst <= tolerance else "DIFFERENT"
    return f"{verdict}: {len(a)} steps, largest relative loss difference {worst:.1e} (tolerance {tolerance:g})"


def tracing_overhead(traced_path, plain_path):
    traced, _ = result_of(traced_path)
    plain, _ = result_of(plain_path)
    a, b = traced.get("step_time_s") or 0.0, plain.get("step_time_s") or 0.0
    if a <= 0 or b <= 0:
        return f"no step time: traced {a}, untraced {b}"
    steps = len(plain.get("steps", []))
    return f"step {a * 1e3:.2f} ms traced vs {b * 1e3:.2f} ms untraced: {(a / b - 1) * 100:+.1f}% ({steps} steps each)"


def throughput(compare_path):
    try:
        c = json.load(open(compare_path, encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as e:
        return f"no compare output: {e}"
    t = c.get("throughput") or {}
    step = c.get("step") or {}
    if not t or not step.get("measured_s"):
        return "no throughput in the compare output"
    parts = [f"step {step['measured_s'] * 1e3:.1f} ms (predicted {step['predicted_s'] * 1e3:.1f})",
             f"{t['measured_tokens_per_s']:,.0f} tok/s"]
    if t.get("measured_mfu") is not None:
        parts.append(f"MFU {t['measured_mfu'] * 100:.1f}% (predicted {t['predicted_mfu'] * 100:.1f}%; {t['peak_source']})")
    else:
        parts.append(t.get("mfu_note", "no MFU"))
    return ", ".join(parts)


def counters(path):
    # An untraced run (tensor_core_counters needs trace false): kernel time is the counters' own
    # per-kernel durations; c["share"] weighs them by the tensor pipe's activity, tc["step"] (and
    # c["names_share"]) by the kernel-name rules, on the same launches.
    result, _ = result_of(path)
    tc = (result.get("device_report") or {}).get("tensor_cores") or {}
    c = tc.get("counters")
    names = (tc.get("step") or {}).get("share")
    if names is None and isinstance(c, dict):
        names = c.get("names_share")
    if not isinstance(c, dict):
        return f"no counters block: {c!r}"[:200]
    if not c.get("used"):
        return "counters not used: " + str(c.get("note", "?"))[:160]
    parts = [f"counters {c.get('share', 0) * 100:.1f}% vs names {names * 100 if names is not None else float('nan'):.1f}% of kernel time (counters' durations)",
             f"{c.get('ranges')} kernels profiled ({c.get('dropped_ranges')} dropped, {c.get('passes')} passes, chip {c.get('chip')})",
             f"tensor pipe {c.get('tensor_core_active_pct', c.get('tensor_active_pct', 0)):.0f}% active in tensor-core kernels"]
    dis = c.get("disagreements") or []
    if dis:
        parts.append(f"{len(dis)} disagree, e.g. " + "; ".join(
            f"{d.get('name', '?')[:40]} (names {'TC' if d.get('rules_tensor_core') else 'no'}, counters {'TC' if d.get('counters_tensor_core') else 'no'})"
            for d in dis[:2]))
    else:
        parts.append("names and counters agree on every kernel")
    if c.get("names_note"):
        parts.append("names: " + str(c["names_note"])[:80])
    return ", ".join(parts)


def accuracy(table_path):
    steps, memory, failed = [], [], 0
    for line in open(table_path, encoding="utf-8", errors="replace"):
        if line.startswith("#") or line.startswith("layout"):
            continue
        if "probe failed" in line:
            failed += 1
            continue
        cols = line.split()
        # --flags... predicted_ms measured_ms error act_err buf_err mem_err, then (since the
        # phases were added) fwd_err bwd_err comm_of idle_of phases, "proc" or "rank" last.
        if cols and cols[-1] in ("proc", "rank"):
            cols = cols[:-5]
        if len(cols) < 7 or not cols[-4].endswith("%"):
            continue
        try:
            steps.append(float(cols[-4].rstrip("%")))
            if cols[-1].endswith("%"):
                memory.append(float(cols[-1].rstrip("%")))
        except ValueError:
            continue
    if not steps:
        return f"no layout compared ({failed} failed)"
    within = sum(1 for e in steps if abs(e) <= 10)
    text = (f"{len(steps)} layouts: step error {min(steps):+.1f}% to {max(steps):+.1f}%, "
            f"mean |error| {sum(abs(e) for e in steps) / len(steps):.1f}%, {within} within +-10%")
    if memory:
        text += f"; memory total {min(memory):+.1f}% to {max(memory):+.1f}%"
    if failed:
        text += f"; {failed} failed"
    return text


def cli_line(command, path):
    text = open(path, encoding="utf-8", errors="replace").read()
    section = text[text.rfind("$ plansight " + command):]
    lines = [l.strip() for l in section.splitlines()[1:] if l.strip()]
    if command == "compare":
        # The step's row and, with --operators, the operators' total: "step 23.6 ms 28.0 ms -16.0%".
        rows = [" ".join(l.split()) for l in lines if l.startswith("step ") or l.startswith("operators ")]
        if rows:
            return "; ".join(rows)[:140]
    keys = {"compare": ("step", "total", "iteration"), "analyze": ("bubble", "compute", "exposed"), "export": ("wrote", "spans")}
    for line in lines:
        if any(k in line.lower() for k in keys.get(command, ())):
            return line[:100]
    return (lines[0] if lines else "(no output)")[:100]


def main(argv):
    try:
        return run(argv)
    except SystemExit as e:  # result_of's "no result: ..." belongs in the summary row
        print(e)
        return 1


def run(argv):
    if len(argv) >= 3 and argv[1] == "describe":
        print(describe(argv[2]))
    elif len(argv) >= 5 and argv[1] == "losses":
        print(compare_losses(argv[2], argv[3], float(argv[4])))
    elif len(argv) >= 4 and argv[1] == "overhead":
        print(tracing_overhead(argv[2], argv[3]))
    elif len(argv) >= 3 and argv[1] == "counters":
        print(counters(argv[2]))
    elif len(argv) >= 3 and argv[1] == "accuracy":
        print(accuracy(argv[2]))
    elif len(argv) >= 3 and argv[1] == "throughput":
        print(throughput(argv[2]))
    elif len(argv) >= 4 and argv[1] == "cli":
        print(cli_line(argv[2], argv[3]))
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
