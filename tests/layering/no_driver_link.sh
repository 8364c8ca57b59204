#!/usr/bin/env bash
# Fails when a program or library of the build needs the CUDA driver library (libcuda.so) at
# load time. The app, the CLI and the probe must start on a machine without an NVIDIA driver
# (they say "no CUDA device" and use the CPU instead): the runtime (libcudart) loads the driver
# when it is first asked for a device, and the code that needs driver entry points takes them
# through cudaGetDriverEntryPointByVersion (runtime/cuda/src/driver_context.h), so no ELF file of
# ours may list libcuda.so.* among its NEEDED entries.
set -u
build="${1:?usage: no_driver_link.sh <build dir>}"
command -v readelf > /dev/null || { echo "no_driver_link: readelf (binutils) is needed"; exit 2; }
checked=0
status=0
while IFS= read -r -d '' file; do
  # ELF files only: programs and shared libraries (static archives are linked into those).
  [ "$(head -c 4 "$file" 2>/dev/null | od -An -c | tr -d ' ')" = '177ELF' ] || continue
  checked=$((checked + 1))
  if readelf -d "$file" 2>/dev/null | grep -qE 'NEEDED.*\[libcuda\.so'; then
    echo "no_driver_link: ${file#"$build"/} needs libcuda.so: it would not start without an NVIDIA driver"
    status=1
  fi
done < <(find "$build" -type f \( -perm -u+x -o -name '*.so' -o -name '*.so.*' \) \
           ! -path '*/CMakeFiles/*' ! -path '*/_deps/*' -print0)
if [ "$checked" -eq 0 ]; then
  echo "no_driver_link: no ELF program or library under $build (build first)"
  exit 1
fi
[ "$status" -eq 0 ] && echo "no_driver_link: $checked programs and libraries, none needs libcuda.so"
exit "$status"
