// The probe's ranks as processes under mpirun or srun (plansight::probe_mpi): the run device
// whose ranks are the launched processes (one rank each, the CPU backend, the MPI communicator),
// and calibration of the collectives between those processes.
#pragma once

#include <atomic>
#include <vector>

#include "plansight/probe/calibration.h"
#include "plansight/probe/run_device.h"
#include "plansight/probe/run_device.h"
#include "plansight/runtime/launch.h"
#include "plansight/runtime/mpi/mpi_world.h"

namespace plansight::probe::mpi {

// Registers the device (register_process_device) for the runs of this process: train() then
// runs this process's rank and hands its part of the result to rank 0. `world` outlives the runs.
// Every process calls it (it measures the clock offsets). `gpu` (a CUDA build's): the device of
// one process's GPU, for requests with device cuda or auto; without it those train on the CPU
// (auto) or are refused (cuda).
runtime::Status register_mpi_probe_device(runtime::mpi::MpiWorld& world, const runtime::LaunchInfo& launch,
                                          const ProcessGpu& gpu = {});

// The CPUs that the launched processes on rank 0's host may run on together: the union of their
// affinity masks (mpirun binds each of a few processes to a core of its own). Every process
// calls it and gets the same list. A request without `cores` runs on that many: the estimator
// then shares these cores among the host's ranks as they were shared.
Result<std::vector<int>> host_cpus(runtime::mpi::MpiWorld& world);
// Lets the calling thread (and the threads it starts later) run on `cpus`: rank 0's calibration
// measures its concurrent copies on the cores the run's processes had, not on its own one.
void run_on(const std::vector<int>& cpus);

// Collective calibration between the processes. On rank 0: the sweep for calibrate()'s
// CalibrationOptions::collectives, run by every process together (the others are in
// serve_calibration). The slowest member's median per case, as on rank threads.
CollectiveSweep mpi_collective_sweep(runtime::mpi::MpiWorld& world);
// On every other rank: runs the sweeps rank 0 asks for until it says it is done.
runtime::Status serve_calibration(runtime::mpi::MpiWorld& world, const std::atomic<bool>* stop);
// On rank 0, after calibrating or instead of it: tells the others they are done.
runtime::Status end_calibration(runtime::mpi::MpiWorld& world);

}  // namespace plansight::probe::mpi
