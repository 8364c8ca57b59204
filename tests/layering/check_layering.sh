#!/usr/bin/env bash
# Fails when an include breaks the dependency arrows of the design:
#   estimator/ may not include Qt, CUDA or SQLite; app/ may not include CUDA headers;
#   estimator/ may not include anything from app/, probe/, runtime/ or kernels/.
set -u
root="${1:?usage: check_layering.sh <source root>}"
status=0
report() { echo "layering violation: $1"; status=1; }

scan() {  # scan <folder> <regex> <what>
  local hits
  hits=$(grep -rnE --include='*.h' --include='*.hpp' --include='*.cpp' --include='*.cu' --include='*.cuh' \
         "$2" "$root/$1" 2>/dev/null)
  if [ -n "$hits" ]; then
    while IFS= read -r line; do report "$1 must not include $3: ${line#"$root"/}"; done <<<"$hits"
  fi
}

scan estimator '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"](Q[A-Za-z]*|QtCore/|QtWidgets/|QtGui/)' "Qt"
scan estimator '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"](cuda|cublas|cupti|nccl|nvtx|nvToolsExt|curand|cudnn)' "CUDA"
scan estimator '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]sqlite3' "SQLite"
scan estimator '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]plansight/(app|probe|runtime|kernels|store|interop|gui)/' "higher layers"
scan app '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"](cuda|cublas|cupti|nccl|nvtx|nvToolsExt|curand|cudnn)' "CUDA"
scan app '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]plansight/(runtime|kernels)/' "the runtime or kernels (talk to plansight-probe instead)"
[ $status -eq 0 ] && echo "layering ok"
exit $status
