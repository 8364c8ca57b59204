// Collectives and point-to-point transfers of a virtual rank (device_communicator_impl.h).
// Chunks of an all-reduce: chunk i of n elements over p ranks starts at n*i/p, so sizes differ by
// at most one element (as the in-process ring). Buffers travel as bytes plus an element type:
// copies move bytes, and only the reduction kernel needs the type.
#include "device_communicator_impl.h"

#include <cstddef>
#include <cstring>
#include <string>

#include "cuda_status.h"
#include "reduce_kernels.h"

namespace plansight::runtime::cuda {
namespace {

std::size_t chunk_begin(std::size_t n, int i, int p) {
  return n * static_cast<std::size_t>(i) / static_cast<std::size_t>(p);
}

void* advance(void* ptr, std::size_t bytes) { return static_cast<std::byte*>(ptr) + bytes; }
const void* advance(const void* ptr, std::size_t bytes) { return static_cast<const std::byte*>(ptr) + bytes; }

// "100 floats" for fp32 (the wording of the float functions' errors), "7 bf16 elements" else.
std::string counted(std::size_t count, Element element) {
  if (element == Element::f32) return std::to_string(count) + " floats";
  return std::to_string(count) + " " + element_name(element) + " elements";
}

template <class T>
kernels::cuda::Status sum_as(void* dst, const std::vector<const void*>& srcs, std::size_t n, cudaStream_t stream) {
  std::vector<const T*> typed(srcs.size());
  for (std::size_t q = 0; q < srcs.size(); ++q) typed[q] = static_cast<const T*>(srcs[q]);
  return sum_buffers(static_cast<T*>(dst), typed.data(), static_cast<int>(typed.size()), n, stream);
}

kernels::cuda::Status sum_elements(void* dst, const std::vector<const void*>& srcs, std::size_t n, Element element,
                                   cudaStream_t stream) {
  switch (element) {
    case Element::f32: return sum_as<float>(dst, srcs, n, stream);
    case Element::bf16: return sum_as<kernels::cuda::bfloat16>(dst, srcs, n, stream);
    case Element::f16: return sum_as<kernels::cuda::float16>(dst, srcs, n, stream);
  }
  return kernels::cuda::Status(static_cast<int>(cudaErrorInvalidValue),
                               "sum_buffers: element type " + std::to_string(static_cast<int>(element)) +
                                   "; valid: fp32, bf16, fp16");
}

}  // namespace

Result<std::unique_ptr<DeviceCommunicator>> DeviceCommunicator::create(std::shared_ptr<DeviceWorld::Impl> world,
                                                                       std::shared_ptr<DeviceGroup> group, int rank,
                                                                       cudaStream_t stream) {
  std::unique_ptr<DeviceCommunicator> comm(new DeviceCommunicator(std::move(world), std::move(group), rank, stream));
  for (cudaEvent_t& event : comm->events_) {
    if (auto s = cuda_check(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "cudaEventCreateWithFlags");
        !s) {
      return s.errors();
    }
  }
  return comm;
}

DeviceCommunicator::DeviceCommunicator(std::shared_ptr<DeviceWorld::Impl> world, std::shared_ptr<DeviceGroup> group,
                                       int rank, cudaStream_t stream)
    : world_(std::move(world)), group_(std::move(group)), rank_(rank), stream_(stream) {}

DeviceCommunicator::~DeviceCommunicator() {
  // Not destroyed here: after the group's last collective a slower member may not yet have
  // called cudaStreamWaitEvent on this member's event (the two-event scheme guards round k only
  // through round k + 1), and waiting on a destroyed event is an invalid handle. The group
  // destroys them once no member is left (device_world_impl.h).
  const std::lock_guard lock(group_->retired_mutex);
  for (cudaEvent_t event : events_) {
    if (event != nullptr) group_->retired.push_back(event);
  }
}

Result<std::vector<PhaseSlot>> DeviceCommunicator::phase(const char* op, const void* ptr, std::size_t count,
                                                         Element element, int root) {
  if (world_->aborted.load(std::memory_order_acquire)) return world_->abort_status().errors();
  cudaEvent_t event = events_[rounds_++ % 2];
  const std::string where = std::string(op) + " \"" + name() + "\"";
  if (auto s = cuda_check(cudaEventRecord(event, stream_), "cudaEventRecord (" + where + ")"); !s) {
    world_->abort(s.error_text());
    return s.errors();
  }
  auto slots = group_->phases.exchange(rank_, PhaseSlot{ptr, event, count, element, root, op});
  if (!slots) return slots.errors();
  for (int q = 0; q < size(); ++q) {
    const PhaseSlot& slot = (*slots)[static_cast<std::size_t>(q)];
    // Collectives of different phase counts would pair their phases wrongly: silent corruption,
    // or a hang at the next one.
    if (std::strcmp(slot.op, op) != 0) {
      return make_error("communicator", where + ": rank " + std::to_string(q) + " called " + slot.op + " at the same time; " +
                                            "every member of a group must call the same collectives in the same order");
    }
    if (slot.element != element) {
      return make_error("communicator", where + ": rank " + std::to_string(q) + " passed " +
                                            counted(slot.count, slot.element) + ", rank " + std::to_string(rank_) +
                                            " passed " + counted(count, element) + "; the element types (" +
                                            element_name(slot.element) + ", " + element_name(element) +
                                            ") must agree");
    }
    if (slot.count != count || slot.root != root) {
      return make_error("communicator", where + ": rank " + std::to_string(q) + " passed " +
                                            counted(slot.count, element) + " (root " + std::to_string(slot.root) +
                                            "), rank " + std::to_string(rank_) + " passed " + counted(count, element) +
                                            " (root " + std::to_string(root) + ")");
    }
    if (q == rank_) continue;
    if (auto s = cuda_check(cudaStreamWaitEvent(stream_, slot.event, 0), "cudaStreamWaitEvent (" + where + ")"); !s) {
      world_->abort(s.error_text());
      return s.errors();
    }
  }
  return slots;
}

Status DeviceCommunicator::fail(Status status) {
  world_->abort(status.error_text());
  return status;
}

Status DeviceCommunicator::copy(void* dst, const void* src, std::size_t bytes, const char* op) {
  if (bytes == 0 || dst == src) return ok_status();
  return cuda_check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream_),
                    std::string("cudaMemcpyAsync (") + op + " \"" + name() + "\")");
}

Status DeviceCommunicator::all_reduce(float* data, std::size_t count) {
  return all_reduce_typed(data, count, Element::f32);
}

Status DeviceCommunicator::all_reduce_typed(void* data, std::size_t count, Element element) {
  const int p = size();
  if (p == 1) return world_->aborted.load() ? world_->abort_status() : ok_status();
  auto peers = phase("all_reduce", data, count, element);
  if (!peers) return peers.errors();
  const std::size_t width = element_bytes(element);
  // Reduce-scatter: this rank sums its chunk over every rank's buffer, in rank order.
  const std::size_t begin = chunk_begin(count, rank_, p), n = chunk_begin(count, rank_ + 1, p) - begin;
  std::vector<const void*> sources(static_cast<std::size_t>(p));
  for (int q = 0; q < p; ++q) {
    sources[static_cast<std::size_t>(q)] = advance((*peers)[static_cast<std::size_t>(q)].ptr, begin * width);
  }
  if (auto s = kernel_check(sum_elements(advance(data, begin * width), sources, n, element, stream_)); !s) {
    return fail(s);
  }
  // Every chunk is final once every rank passed this phase; gather the others' chunks.
  if (auto done = phase("all_reduce", data, count, element); !done) return done.errors();
  for (int q = 0; q < p; ++q) {
    if (q == rank_) continue;
    const std::size_t b = chunk_begin(count, q, p), len = chunk_begin(count, q + 1, p) - b;
    const void* theirs = advance((*peers)[static_cast<std::size_t>(q)].ptr, b * width);
    if (auto s = copy(advance(data, b * width), theirs, len * width, "all_reduce"); !s) return fail(s);
  }
  // Nobody may write its buffer before every other rank has copied from it.
  if (auto done = phase("all_reduce", data, count, element); !done) return done.errors();
  return ok_status();
}

Status DeviceCommunicator::reduce_scatter(const float* in, float* out, std::size_t count) {
  const int p = size();
  if (p == 1) {
    if (auto s = copy(out, in, count * sizeof(float), "reduce_scatter"); !s) return s;
    return world_->aborted.load() ? world_->abort_status() : ok_status();
  }
  auto peers = phase("reduce_scatter", in, count, Element::f32);
  if (!peers) return peers.errors();
  const std::size_t begin_bytes = static_cast<std::size_t>(rank_) * count * sizeof(float);
  std::vector<const void*> sources(static_cast<std::size_t>(p));
  for (int q = 0; q < p; ++q) {
    sources[static_cast<std::size_t>(q)] = advance((*peers)[static_cast<std::size_t>(q)].ptr, begin_bytes);
  }
  if (auto s = kernel_check(sum_elements(out, sources, count, Element::f32, stream_)); !s) return fail(s);
  if (auto done = phase("reduce_scatter", in, count, Element::f32); !done) return done.errors();
  return ok_status();
}

Status DeviceCommunicator::all_gather(const float* in, float* out, std::size_t count) {
  return all_gather_typed(in, out, count, Element::f32);
}

Status DeviceCommunicator::all_gather_typed(const void* in, void* out, std::size_t count, Element element) {
  const int p = size();
  const std::size_t bytes = count * element_bytes(element);
  if (auto s = copy(advance(out, static_cast<std::size_t>(rank_) * bytes), in, bytes, "all_gather"); !s) return s;
  if (p == 1) return world_->aborted.load() ? world_->abort_status() : ok_status();
  auto peers = phase("all_gather", in, count, element);
  if (!peers) return peers.errors();
  for (int q = 0; q < p; ++q) {
    if (q == rank_) continue;
    void* dst = advance(out, static_cast<std::size_t>(q) * bytes);
    if (auto s = copy(dst, (*peers)[static_cast<std::size_t>(q)].ptr, bytes, "all_gather"); !s) return fail(s);
  }
  if (auto done = phase("all_gather", in, count, element); !done) return done.errors();
  return ok_status();
}

Status DeviceCommunicator::broadcast(float* data, std::size_t count, int root) {
  const int p = size();
  if (root < 0 || root >= p) {
    return make_error("communicator", "broadcast root " + std::to_string(root) + " in group \"" + name() +
                                          "\"; valid: 0.." + std::to_string(p - 1));
  }
  if (p == 1) return world_->aborted.load() ? world_->abort_status() : ok_status();
  auto peers = phase("broadcast", data, count, Element::f32, root);
  if (!peers) return peers.errors();
  if (rank_ != root) {
    const void* theirs = (*peers)[static_cast<std::size_t>(root)].ptr;
    if (auto s = copy(data, theirs, count * sizeof(float), "broadcast"); !s) return fail(s);
  }
  if (auto done = phase("broadcast", data, count, Element::f32, root); !done) return done.errors();
  return ok_status();
}

Status DeviceCommunicator::send(const float* data, std::size_t count, int peer, int tag) {
  return send_typed(data, count, Element::f32, peer, tag);
}

Status DeviceCommunicator::send_typed(const void* data, std::size_t count, Element element, int peer, int tag) {
  if (peer < 0 || peer >= size() || peer == rank_) {
    return make_error("communicator", "send to peer " + std::to_string(peer) + " in group \"" + name() + "\" of " +
                                          std::to_string(size()) + " ranks; valid: 0.." + std::to_string(size() - 1) +
                                          " other than " + std::to_string(rank_));
  }
  if (tag < 0) return make_error("communicator", "send tag " + std::to_string(tag) + "; valid: >= 0");
  if (world_->aborted.load(std::memory_order_acquire)) return world_->abort_status();
  DeviceMessage message;
  message.count = count;
  message.element = element;
  const std::size_t bytes = count * element_bytes(element);
  const std::string where = "send to " + std::to_string(peer) + " \"" + name() + "\"";
  if (bytes > 0) {
    if (auto s = cuda_check(cudaMallocAsync(&message.staging, bytes, stream_), "cudaMallocAsync (" + where + ")"); !s) {
      return s;
    }
    if (auto s = copy(message.staging, data, bytes, "send"); !s) {
      cudaFreeAsync(message.staging, stream_);
      return s;
    }
  }
  if (auto s = cuda_check(cudaEventCreateWithFlags(&message.ready, cudaEventDisableTiming),
                          "cudaEventCreateWithFlags (" + where + ")");
      !s) {
    if (message.staging != nullptr) cudaFreeAsync(message.staging, stream_);
    return s;
  }
  if (auto s = cuda_check(cudaEventRecord(message.ready, stream_), "cudaEventRecord (" + where + ")"); !s) {
    if (message.staging != nullptr) cudaFreeAsync(message.staging, stream_);
    cudaEventDestroy(message.ready);
    return s;
  }
  world_->post(group_->world_ranks[static_cast<std::size_t>(peer)], DeviceMessageKey{group_->id, rank_, tag}, message);
  return ok_status();
}

Status DeviceCommunicator::recv(float* data, std::size_t count, int peer, int tag) {
  return recv_typed(data, count, Element::f32, peer, tag);
}

Status DeviceCommunicator::recv_typed(void* data, std::size_t count, Element element, int peer, int tag) {
  if (peer < 0 || peer >= size() || peer == rank_) {
    return make_error("communicator", "recv from peer " + std::to_string(peer) + " in group \"" + name() + "\" of " +
                                          std::to_string(size()) + " ranks; valid: 0.." + std::to_string(size() - 1) +
                                          " other than " + std::to_string(rank_));
  }
  if (tag < 0) return make_error("communicator", "recv tag " + std::to_string(tag) + "; valid: >= 0");
  auto message = world_->take(world_rank(), DeviceMessageKey{group_->id, peer, tag});
  if (!message) return message.errors();
  const std::string where = "recv from " + std::to_string(peer) + " \"" + name() + "\"";
  Status status = ok_status();
  if (message->element != element) {
    status = make_error("communicator", where + ": receive of " + counted(count, element) + " matched a send of " +
                                            counted(message->count, message->element) + " (tag " +
                                            std::to_string(tag) + "); the element types (" + element_name(element) +
                                            ", " + element_name(message->element) + ") must agree");
  } else if (message->count != count) {
    status = make_error("communicator", where + ": receive of " + counted(count, element) + " matched a send of " +
                                            std::to_string(message->count) + " (tag " + std::to_string(tag) + ")");
  }
  if (status) status = cuda_check(cudaStreamWaitEvent(stream_, message->ready, 0), "cudaStreamWaitEvent (" + where + ")");
  if (status) status = copy(data, message->staging, count * element_bytes(element), "recv");
  // The staging buffer is freed in this stream's order, after the copy (and after the sender's
  // copy into it, through the event wait above). After a failure this stream may not have waited
  // for the sender, so the host waits for the sender's copy before freeing.
  if (message->staging != nullptr) {
    if (status) {
      status = cuda_check(cudaFreeAsync(message->staging, stream_), "cudaFreeAsync (" + where + ")");
    } else {
      cudaEventSynchronize(message->ready);
      cudaStreamSynchronize(stream_);
      cudaFree(message->staging);
    }
  }
  cudaEventDestroy(message->ready);
  return status;
}

}  // namespace plansight::runtime::cuda
