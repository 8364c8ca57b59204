# Sourced by the scripts that measure the estimate benchmarks (estimate_instructions.sh,
# estimate_page_faults.sh): their arguments [BENCH] [FILTER...] and the tool they measure with.
# estimate_bench_args TOOL PACKAGE "$@" sets `bench` (default build/dev/bench/plansight_bench_estimate,
# checked to be an executable) and `filters` (the rest), or exits 2 saying what is missing.
estimate_bench_args() {
  local tool=$1 package=$2
  shift 2
  bench="${1:-build/dev/bench/plansight_bench_estimate}"
  shift || true
  [ -x "$bench" ] || { echo "$bench is not an executable (build first: cmake --build --preset dev)" >&2; exit 2; }
  command -v "$tool" >/dev/null || { echo "needs $tool (Debian package: $package)" >&2; exit 2; }
  filters=("$@")
}
