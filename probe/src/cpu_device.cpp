// The CPU run device and the registry of the GPU one. The CPU's name is the processor's
// (/proc/cpuinfo), with the hardware threads this machine has.
#include "cpu_device.h"

#include <fstream>
#include <mutex>
#include <thread>

#include "backend.h"
#include "plansight/runtime/communicator.h"

namespace plansight::probe {
namespace {

std::string cpu_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) != 0) continue;
    const auto colon = line.find(':');
    if (colon != std::string::npos) return line.substr(line.find_first_not_of(' ', colon + 1));
  }
  return "unknown CPU";
}

class CpuDevice final : public RunDevice {
 public:
  explicit CpuDevice(int world_size) : world_(world_size) {}

  std::string name() const override {
    return "cpu: " + cpu_name() + " (" + std::to_string(std::thread::hardware_concurrency()) + " threads)";
  }
  bool ranks_share_device() const override { return true; }
  Result<std::unique_ptr<Backend>> make_backend(int) override { return make_cpu_backend(); }
  Result<std::unique_ptr<runtime::Communicator>> world(int rank, Backend&) override { return world_.world(rank); }
  Result<std::unique_ptr<runtime::Communicator>> split(runtime::Communicator& parent, int colour, int key,
                                                      const std::string& name, Backend&, bool) override {
    return runtime::split(parent, colour, key, name);
  }
  void abort(const std::string& reason) override { world_.abort(reason); }

 private:
  runtime::InProcessWorld world_;
};

std::mutex g_registry_mutex;
RunDeviceFactory g_cuda_factory;
RunDeviceFactory g_process_factory;

}  // namespace

std::unique_ptr<RunDevice> make_cpu_device(int world_size) { return std::make_unique<CpuDevice>(world_size); }

Result<bool> check_cpu_precision(const ProbeRequest& request) {
  if (request.precision == Precision::fp32) return true;
  return make_error("precision", std::string("value ") + to_string(request.precision) +
                                     ": no GPU answered, and the CPU computes in fp32; valid on the CPU: fp32");
}

void register_cuda_device(RunDeviceFactory factory) {
  std::lock_guard lock(g_registry_mutex);
  g_cuda_factory = std::move(factory);
}

bool cuda_device_registered() {
  std::lock_guard lock(g_registry_mutex);
  return static_cast<bool>(g_cuda_factory);
}

void register_process_device(RunDeviceFactory factory) {
  std::lock_guard lock(g_registry_mutex);
  g_process_factory = std::move(factory);
}

RunDeviceFactory registered_process_factory() {
  std::lock_guard lock(g_registry_mutex);
  return g_process_factory;
}

// engine.cpp's access to the registered factory.
RunDeviceFactory registered_cuda_factory() {
  std::lock_guard lock(g_registry_mutex);
  return g_cuda_factory;
}

}  // namespace plansight::probe
