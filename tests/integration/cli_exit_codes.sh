#!/usr/bin/env bash
# The plansight binary's exit codes: 0 on success, 2 on invalid input with the field on stderr.
set -u
bin="${1:?usage: cli_exit_codes.sh <plansight>}"
fail() { echo "FAIL: $*"; exit 1; }
"$bin" estimate >/dev/null || fail "default estimate should exit 0"
err=$("$bin" estimate --tp 5 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] || fail "invalid tp should exit 2, got $rc"
grep -q "layout.tp" <<<"$err" || fail "stderr should name layout.tp: $err"
"$bin" estimate --json | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["memory"]["fits"] is True' \
  || fail "--json output is not the expected JSON"
"$bin" >/dev/null 2>&1; [ $? -eq 2 ] || fail "no command should exit 2"
echo "cli exit codes ok"
