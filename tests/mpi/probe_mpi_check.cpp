// An MPI program run by ctest under `mpirun -np N`: the probe's correctness-matrix model trains
// 3 AdamW steps of one layout with its ranks in processes (one each, or several rank threads
// each when N divides tp x pp x dp; MPI between the processes), and rank 0 checks
// the loss at every step and the parameters afterwards (gathered from every TP/PP/ZeRO shard of
// every process) against the serial run, with the threaded matrix's tolerances
// (probe_correctness_test.cpp: 1e-5 in the loss, 1e-6 in the parameters). Exit 0 when equal.
//   mpirun -np N probe_mpi_check [--tp N] [--pp N] [--vpp N] [--schedule gpipe|1f1b|interleaved]
//                                [--dp N] [--zero 0..3] [--recompute none|selective|full]
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "plansight/estimator/enums.h"
#include "plansight/probe/mpi/mpi_probe.h"
#include "plansight/probe/run_device.h"
#include "plansight/runtime/launch.h"
#include "probe_test_util.h"

namespace {

namespace pr = plansight::probe;
namespace est = plansight::estimator;

constexpr double kLossTolerance = 1e-5;
constexpr double kParamTolerance = 1e-6;

bool parse(int argc, char** argv, pr::ProbeRequest& r) {
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--tp") r.layout.tp = std::stoi(value);
    else if (flag == "--pp") r.layout.pp = std::stoi(value);
    else if (flag == "--vpp") r.layout.vpp = std::stoi(value);
    else if (flag == "--dp") r.layout.dp = std::stoi(value);
    else if (flag == "--zero") r.layout.zero_stage = std::stoi(value);
    else if (flag == "--schedule") {
      auto s = est::parse_enum<est::PipelineSchedule>(value);
      if (!s) return false;
      r.layout.schedule = *s;
    } else if (flag == "--recompute") {
      auto c = est::parse_enum<est::Recompute>(value);
      if (!c) return false;
      r.layout.recompute = *c;
    } else {
      return false;
    }
  }
  return argc % 2 == 1;
}

}  // namespace

int main(int argc, char** argv) {
  pr::ProbeRequest request = pr::testing::matrix_request();
  if (!parse(argc, argv, request)) {
    std::fprintf(stderr, "usage: probe_mpi_check [--tp N] [--pp N] [--vpp N] [--schedule S] [--dp N] [--zero N] [--recompute R]\n");
    return 2;
  }
  auto launch = plansight::runtime::detect_launch();
  if (!launch || !launch->launched() || launch->size < 2) {
    std::fprintf(stderr, "probe_mpi_check: start it with mpirun -np N (N >= 2 dividing tp x pp x dp)\n");
    return 2;
  }
  auto world = plansight::runtime::mpi::MpiWorld::initialize(argc, argv);
  if (!world) {
    std::fprintf(stderr, "probe_mpi_check: %s\n", world.error_text().c_str());
    return 1;
  }
  auto& mpi = **world;
  if (auto s = pr::mpi::register_mpi_probe_device(mpi, *launch); !s) {
    std::fprintf(stderr, "probe_mpi_check: %s\n", s.error_text().c_str());
    mpi.abort_job(1);
  }
  auto run = pr::train(request, pr::testing::comparison_options());
  if (!run) {
    if (mpi.rank() == 0) std::fprintf(stderr, "probe_mpi_check: the MPI run failed: %s\n", run.error_text().c_str());
    mpi.abort_job(1);
  }

  // Rank 0 runs the serial reference (rank threads; the process device is set aside) while the
  // others wait for its verdict.
  std::string verdict;
  if (mpi.rank() == 0) {
    pr::register_process_device({});
    pr::ProbeRequest serial_request = pr::testing::matrix_request();
    auto serial = pr::train(serial_request, pr::testing::comparison_options());
    bool ok = serial.ok();
    std::string report;
    if (!serial) {
      report = "the serial run failed: " + serial.error_text();
    } else {
      double loss_diff = 0;
      const auto& a = run->result.steps;
      const auto& b = serial->result.steps;
      ok = a.size() == b.size();
      for (std::size_t i = 0; ok && i < a.size(); ++i) loss_diff = std::max(loss_diff, std::fabs(a[i].loss - b[i].loss));
      const auto diff = pr::testing::compare(serial->parameters, run->parameters);
      ok = ok && loss_diff <= kLossTolerance && diff.same_tensors && diff.max_abs <= kParamTolerance;
      char line[512];
      std::snprintf(line, sizeof line,
                    "%d processes: %zu steps (serial %zu), loss max |diff| %.3g (tolerance %.0e), parameters max |diff| "
                    "%.3g at %s (tolerance %.0e), same tensors %s",
                    mpi.size(), a.size(), b.size(), loss_diff, kLossTolerance, diff.max_abs,
                    diff.where.empty() ? "-" : diff.where.c_str(), kParamTolerance, diff.same_tensors ? "yes" : "no");
      report = line;
    }
    verdict = (ok ? "PASS " : "FAIL ") + report;
    std::printf("%s\n", verdict.c_str());
  }
  if (auto s = mpi.broadcast_text(verdict); !s) mpi.abort_job(1);
  return verdict.rfind("PASS", 0) == 0 ? 0 : 1;
}
