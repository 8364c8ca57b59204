// split_any (split_any.h): the first split function whose communicator type matches.
#include "plansight/runtime/cuda/split_any.h"

#include "plansight/runtime/cuda/device_communicator.h"
#if defined(PLANSIGHT_HAVE_NCCL)
#include "plansight/runtime/cuda/nccl_communicator.h"
#endif

namespace plansight::runtime::cuda {

Result<std::unique_ptr<Communicator>> split_any(Communicator& parent, int colour, int key, const std::string& name) {
  if (is_device_communicator(parent)) return split_device(parent, colour, key, name);
#if defined(PLANSIGHT_HAVE_NCCL)
  if (is_nccl_communicator(parent)) return split_nccl(parent, colour, key, name);
#endif
  return split(parent, colour, key, name);
}

}  // namespace plansight::runtime::cuda
