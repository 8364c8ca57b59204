#!/usr/bin/env bash
# scripts/gpu_check_report.py, the reader of gpu-check's raw outputs, on small fixtures: the
# accuracy table in both of bench/probe_accuracy.sh's layouts (before and after its phase
# columns), a GPT-2 row's "GPU busy" (the union of device spans against the traced window), and
# the CLI phase's compare row.
set -euo pipefail
repo="${1:?usage: gpu_check_report_test.sh REPO}"
report="$repo/scripts/gpu_check_report.py"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

cat >"$work/accuracy.txt" <<'TABLE'
# a comment
layout                                                     predicted_ms  measured_ms    error   act_err   buf_err   mem_err  fwd_err  bwd_err  comm_of  idle_of phases
--tp 2 --pp 2 --schedule 1f1b                                     32.84        41.96   -21.7%     -3.7%     +0.0%     -1.8%   +11.7%    -4.1%    -3.2%   -11.0%   proc
--tp 1 --pp 1 --dp 1                                              14.41        16.56   -13.0%     -1.2%         -     -0.4%   -18.0%   -22.4%    -0.1%    -4.4%   rank
--dp 2                                                            10.00        11.00    -9.1%     -1.0%         -     +2.0%
--pp 4                                                            probe failed: out of time
TABLE
got=$(python3 "$report" accuracy "$work/accuracy.txt")
want="3 layouts: step error -21.7% to -9.1%, mean |error| 14.6%, 1 within +-10%; memory total -1.8% to +2.0%; 1 failed"
[ "$got" = "$want" ] || fail "accuracy: got '$got', want '$want'"

# Two kernels overlapping on two streams (0-10 and 5-20 ms) and one at 30-40 ms, beside a host
# annotation over all of it (not device work): busy 30 of 40 ms.
cat >"$work/run.jsonl" <<'JSONL'
{"event":"started","request":{"global_batch":1,"seq_len":8}}
{"event":"result","step_time_s":0.04,"steps":[{"step":1,"loss":1.0,"seconds":0.04}],"timeline":{"tracks":[{"rank":0,"lane":"compute","stream":0,"spans":[[0,10000000,0,"kernel","forward",0,0,0,0,false],[30000000,10000000,0,"kernel","backward",0,0,0,0,false]]},{"rank":0,"lane":"compute","stream":1,"spans":[[5000000,15000000,0,"kernel","forward",0,0,0,0,true]]},{"rank":0,"lane":"host","stream":0,"spans":[[0,50000000,0,"annotation","forward",0,0,0,0,false]]}]}}
JSONL
got=$(cd "$repo/scripts" && python3 -c "import sys; import gpu_check_report as g; print(g.describe(sys.argv[1]))" "$work/run.jsonl")
case "$got" in
  *"GPU busy 30.0 of 40.0 ms"*) ;;
  *) fail "describe: want 'GPU busy 30.0 of 40.0 ms' in: $got" ;;
esac
# The compare row: the step's line and the operators' total, not the table's header.
cat >"$work/cli.txt" <<'CLI'
$ plansight compare 14 --operators
run 14: probe gpt2-124m tp1 pp1 dp1 1f1b on cuda

time               predicted    measured     error   of step
forward              21.9 ms     21.9 ms     -0.3%     -0.1%
step                 23.6 ms     28.0 ms    -16.0%         -

operator        phase         predicted    measured     error  calls   the operator model's
qkv             forward          1.2 ms      1.1 ms     +9.1%     24   QKV
operators                       20.1 ms     19.0 ms     +5.8%
$ plansight analyze 14
rank    window      busy
CLI
got=$(python3 "$report" cli compare "$work/cli.txt")
want="step 23.6 ms 28.0 ms -16.0% -; operators 20.1 ms 19.0 ms +5.8%"
[ "$got" = "$want" ] || fail "cli compare: got '$got', want '$want'"
echo "gpu_check_report: ok"
