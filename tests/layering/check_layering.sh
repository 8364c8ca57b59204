#!/usr/bin/env bash
# Fails when an include (or a link in CMake) breaks the dependency arrows of the design:
#   app -> estimator; probe -> runtime -> kernels; probe -> estimator; runtime -> estimator;
#   the app reads the probe only through its protocol (probe/protocol), which needs the
#   estimator alone; inside the app, cli -> core and gui -> core, never gui -> cli, and core
#   and the store/interop libraries below it know neither face. No CUDA in the app, no Qt
#   outside the GUI.
set -u
root="${1:?usage: check_layering.sh <source root>}"
status=0
report() { echo "layering violation: $1"; status=1; }

inc='^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]'
qt="${inc}(Q[A-Za-z]*|QtCore/|QtWidgets/|QtGui/|QtSvg/)"
cuda="${inc}(cuda|cublas|cupti|nccl|nvtx|nvToolsExt|curand|cudnn)"
sqlite="${inc}sqlite3"
ours() { echo "${inc}plansight/($1)/"; }  # includes of these plansight folders

scan() {  # scan <folder> <regex> <what> [<folder to skip>]
  local hits
  [ -d "$root/$1" ] || return 0
  hits=$(grep -rnE --include='*.h' --include='*.hpp' --include='*.cpp' --include='*.cu' --include='*.cuh' \
         ${4:+--exclude-dir="$4"} "$2" "$root/$1" 2>/dev/null)
  if [ -n "$hits" ]; then
    while IFS= read -r line; do report "$1 must not include $3: ${line#"$root"/}"; done <<<"$hits"
  fi
}

# A target's CMake file must not link `target` (comments aside).
no_link() {  # no_link <CMakeLists.txt> <target regex> <what>
  local file="$root/$1" hits
  [ -f "$file" ] || return 0
  hits=$(grep -nE "$2" "$file" | grep -vE '^[0-9]+:[[:space:]]*#')
  if [ -n "$hits" ]; then
    while IFS= read -r line; do report "$1 must not link $3: $line"; done <<<"$hits"
  fi
}

# estimator: the vocabulary and the math; nothing above it, no Qt, CUDA or SQLite.
scan estimator "$qt" "Qt"
scan estimator "$cuda" "CUDA"
scan estimator "$sqlite" "SQLite"
scan estimator "$(ours 'app|probe|runtime|kernels|store|interop|core|cli|gui')" "higher layers"

# kernels: the bottom of the probe's stack.
scan kernels "$(ours 'estimator|runtime|probe|store|interop|core|cli|gui')" "higher layers (kernels depend on nothing of ours)"
scan kernels "$qt" "Qt"

# runtime -> kernels, estimator; never the probe or the app.
scan runtime "$(ours 'probe|store|interop|core|cli|gui')" "the probe or the app"
scan runtime "$qt" "Qt"

# probe/protocol: the wire format, over the estimator's vocabulary only.
scan probe/protocol "$(ours 'runtime|kernels|store|interop|core|cli|gui')" "anything but the estimator"
scan probe/protocol "${inc}plansight/probe/(\$|[^p]|p[^r]|pr[^o]|pro[^t])" "the probe itself (only plansight/probe/protocol/)"
scan probe/protocol "$cuda" "CUDA"

# probe -> runtime, kernels, estimator; never the app.
scan probe "$(ours 'store|interop|core|cli|gui')" "the app (the app starts plansight-probe instead)"
scan probe "$qt" "Qt"

# app: never CUDA, the runtime or kernels, and of the probe only its protocol.
scan app "$cuda" "CUDA"
scan app "$(ours 'runtime|kernels')" "the runtime or kernels (talk to plansight-probe instead)"
scan app "${inc}plansight/probe/(\$|[^p]|p[^r]|pr[^o]|pro[^t])" "the probe (only its protocol: plansight/probe/protocol/)"
# Below the faces: store and interop know no face and no core; core knows no face; no Qt there.
scan app/store "$(ours 'core|cli|gui|interop')" "core, a face or interop"
scan app/interop "$(ours 'core|cli|gui|store')" "core, a face or the store"
scan app/core "$(ours 'cli|gui')" "a face (cli or gui)"
for lib in store interop core cli; do scan "app/$lib" "$qt" "Qt (only the GUI uses Qt)"; done
# The faces: gui -> core, cli -> core; never gui -> cli or cli -> gui.
scan app/gui "$(ours 'cli')" "the CLI (what both faces use lives in app/core)"
scan app/cli "$(ours 'gui')" "the GUI"
no_link app/gui/CMakeLists.txt 'plansight(::|_)cli\b' "the CLI"
no_link app/core/CMakeLists.txt 'plansight(::|_)(cli|gui)\b|Qt6::' "a face or Qt"
for lib in store interop core cli gui; do
  no_link "app/$lib/CMakeLists.txt" 'plansight(::|_)(probe|runtime|kernels)(_cuda|_gpu_host|_mpi)?\b|CUDA::' "the probe, runtime, kernels or CUDA"
done

[ $status -eq 0 ] && echo "layering ok"
exit $status
