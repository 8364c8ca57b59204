#!/usr/bin/env bash
# Builds a fake tree with a Qt include in estimator/ and a CUDA include in app/ and expects the
# layering check to fail naming both.
set -u
check="${1:?}"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/estimator/src" "$tmp/app/cli"
echo '#include <QString>' > "$tmp/estimator/src/bad.cpp"
echo '#include <cuda_runtime.h>' > "$tmp/app/cli/bad.cpp"
out=$(bash "$check" "$tmp"); rc=$?
[ $rc -ne 0 ] || { echo "expected failure, got success"; exit 1; }
grep -q "estimator must not include Qt" <<<"$out" || { echo "Qt violation not named: $out"; exit 1; }
grep -q "app must not include CUDA" <<<"$out" || { echo "CUDA violation not named: $out"; exit 1; }
echo "self-test ok"
