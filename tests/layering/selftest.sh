#!/usr/bin/env bash
# Builds fake trees and expects the layering check to pass the allowed arrows and to fail each
# forbidden one, naming it: one violation per rule, so a rule that stops matching fails here.
set -u
check="${1:?}"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
failures=0

# The allowed arrows: the check must pass this tree.
ok="$tmp/ok"
mkdir -p "$ok"/{estimator/src,kernels/cpu,runtime/src,probe/src,probe/protocol/src} "$ok"/app/{store,interop,core,cli,gui}/src
echo '#include <nlohmann/json.hpp>' > "$ok/estimator/src/a.cpp"
echo '#include <cuda_runtime.h>' > "$ok/kernels/cpu/a.cu"
printf '#include "plansight/kernels/matmul.h"\n#include "plansight/estimator/timeline.h"\n#include <nccl.h>\n' > "$ok/runtime/src/a.cpp"
printf '#include "plansight/estimator/plan.h"\n' > "$ok/probe/protocol/src/a.cpp"
printf '#include "plansight/runtime/tracer.h"\n#include "plansight/probe/protocol/events.h"\n#include "plansight/probe/engine.h"\n' > "$ok/probe/src/a.cpp"
printf '#include "plansight/estimator/plan.h"\n#include <sqlite3.h>\n' > "$ok/app/store/src/a.cpp"
printf '#include "plansight/probe/protocol/events.h"\n#include "plansight/store/store.h"\n' > "$ok/app/core/src/a.cpp"
printf '#include "plansight/core/probe_events.h"\n' > "$ok/app/cli/src/a.cpp"
printf '#include "plansight/core/probe_events.h"\n#include <QWidget>\n' > "$ok/app/gui/src/a.cpp"
printf 'target_link_libraries(x PUBLIC plansight::app_core plansight::probe_protocol)\n# never plansight::cli\n' > "$ok/app/gui/CMakeLists.txt"
out=$(bash "$check" "$ok"); rc=$?
if [ $rc -ne 0 ]; then echo "allowed arrows were refused: $out"; failures=$((failures + 1)); fi

# One forbidden arrow per tree: <file> <content> <expected words in the report>.
expect() {
  local file="$1" content="$2" words="$3" t
  t=$(mktemp -d -p "$tmp")
  mkdir -p "$t/$(dirname "$file")"
  printf '%s\n' "$content" > "$t/$file"
  out=$(bash "$check" "$t"); rc=$?
  if [ $rc -eq 0 ]; then echo "not caught: $file: $content"; failures=$((failures + 1)); return; fi
  if ! grep -qF "$words" <<<"$out"; then echo "caught but not named \"$words\": $out"; failures=$((failures + 1)); fi
}
expect estimator/src/bad.cpp '#include <QString>' "estimator must not include Qt"
expect estimator/src/bad.cpp '#include <cuda_runtime.h>' "estimator must not include CUDA"
expect estimator/src/bad.cpp '#include <sqlite3.h>' "estimator must not include SQLite"
expect estimator/src/bad.cpp '#include "plansight/probe/engine.h"' "estimator must not include higher layers"
expect kernels/cpu/bad.cpp '#include "plansight/estimator/plan.h"' "kernels must not include higher layers"
expect runtime/src/bad.cpp '#include "plansight/probe/engine.h"' "runtime must not include the probe or the app"
expect runtime/src/bad.cpp '#include "plansight/core/probe_events.h"' "runtime must not include the probe or the app"
expect probe/protocol/src/bad.cpp '#include "plansight/runtime/tracer.h"' "probe/protocol must not include anything but the estimator"
expect probe/protocol/src/bad.cpp '#include "plansight/probe/engine.h"' "probe/protocol must not include the probe itself"
expect probe/src/bad.cpp '#include "plansight/store/store.h"' "probe must not include the app"
expect app/cli/src/bad.cpp '#include <cuda_runtime.h>' "app must not include CUDA"
expect app/core/src/bad.cpp '#include "plansight/runtime/tracer.h"' "app must not include the runtime or kernels"
expect app/gui/src/bad.cpp '#include "plansight/probe/engine.h"' "app must not include the probe (only its protocol"
expect app/store/src/bad.cpp '#include "plansight/core/probe_events.h"' "app/store must not include core, a face or interop"
expect app/interop/src/bad.cpp '#include "plansight/store/store.h"' "app/interop must not include core, a face or the store"
expect app/core/src/bad.cpp '#include "plansight/cli/args.h"' "app/core must not include a face"
expect app/core/src/bad.cpp '#include <QObject>' "app/core must not include Qt"
expect app/cli/src/bad.cpp '#include <QString>' "app/cli must not include Qt"
expect app/gui/src/bad.cpp '#include "plansight/cli/args.h"' "app/gui must not include the CLI"
expect app/cli/src/bad.cpp '#include "plansight/gui/theme.h"' "app/cli must not include the GUI"
expect app/gui/CMakeLists.txt 'target_link_libraries(plansight_gui PRIVATE plansight::cli)' "app/gui/CMakeLists.txt must not link the CLI"
expect app/core/CMakeLists.txt 'target_link_libraries(plansight_app_core PUBLIC Qt6::Core)' "app/core/CMakeLists.txt must not link a face or Qt"
expect app/cli/CMakeLists.txt 'target_link_libraries(plansight_cli PRIVATE plansight::probe)' "app/cli/CMakeLists.txt must not link the probe, runtime, kernels or CUDA"

[ $failures -eq 0 ] || { echo "$failures layering rules failed their self-test"; exit 1; }
echo "self-test ok: the allowed arrows pass and every forbidden one is caught and named"
