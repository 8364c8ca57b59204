#!/usr/bin/env bash
# Proves no_driver_link.sh catches a program linked against libcuda.so: builds a stand-in
# libcuda.so.1 and a program that needs it in a scratch folder, and expects the check to fail
# there and to pass on a program that does not need it.
set -u
check="${1:?usage: no_driver_link_selftest.sh <no_driver_link.sh>}"
cc=$(command -v cc || command -v gcc || command -v clang) || { echo "selftest: no C compiler"; exit 1; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/clean" "$dir/linked"
echo 'int cuInit(unsigned flags) { return (int)flags; }' > "$dir/cuda.c"
echo 'int main(void) { return 0; }' > "$dir/plain.c"
echo 'int cuInit(unsigned); int main(void) { return cuInit(0); }' > "$dir/uses.c"
"$cc" -shared -fPIC -Wl,-soname,libcuda.so.1 -o "$dir/libcuda.so.1" "$dir/cuda.c" || exit 1
"$cc" -o "$dir/clean/plain" "$dir/plain.c" || exit 1
"$cc" -o "$dir/linked/uses" "$dir/uses.c" "$dir/libcuda.so.1" || exit 1
if ! bash "$check" "$dir/clean" > /dev/null; then echo "selftest: a program without libcuda was reported"; exit 1; fi
if bash "$check" "$dir/linked" > /dev/null; then echo "selftest: a program needing libcuda.so.1 passed"; exit 1; fi
echo "selftest: no_driver_link.sh catches a program that needs libcuda.so"
