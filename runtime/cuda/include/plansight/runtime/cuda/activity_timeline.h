// Device activity (what CUPTI's Activity API reports: kernels, copies, memsets, synchronisations,
// NVTX ranges, runtime API calls) as plain records, and their mapping into a measured
// estimator::Timeline. Plain C++: activity_tracer.cpp converts CUPTI's structs into these
// records, and the mapping is tested without a GPU.
//
// Tracks: a stream assigned to a role (a virtual rank's compute or communication stream) goes to
// that rank and lane; an unassigned stream to rank = device (one rank per GPU), lane by what ran
// (copies and memsets: copy; communication kernels: communication; other kernels: compute).
// NVTX ranges become annotation spans and synchronisations idle spans on the host lane of the
// rank whose thread made them. A kernel, copy or memset inherits the phase of the innermost
// NVTX range open on the thread that launched it (found through the launch's correlation id),
// so device spans carry "forward"/"backward"/... as the CPU tracer's spans do, the model chunk
// and micro-batch the range names ("stage 2 mb 5") and the operator (its first word, "qkv").
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "plansight/estimator/kernel_rules.h"
#include "plansight/estimator/timeline.h"

namespace plansight::runtime::cuda {

enum class ActivityKind : std::uint8_t { kernel, memcpy, memset, synchronization, range, api_call };

struct ActivityRecord {
  ActivityKind kind = ActivityKind::kernel;
  std::int64_t start_ns = 0;  // the tracer's clock (see set_clock_offset_ns)
  std::int64_t end_ns = 0;
  std::uint32_t device = 0;
  std::uint32_t stream = 0;       // stream id: kernels, copies, memsets, stream synchronisations
  std::uint32_t thread = 0;       // calling thread: api calls, ranges (synchronisations: through
                                  // the correlation id of their api call)
  std::uint32_t correlation = 0;  // ties a kernel/copy/memset to the api call that launched it
  double bytes = 0;               // copies and memsets
  std::string name;               // kernel name, "memcpy HtoD", range text, API function
};

struct StreamRole {
  std::int32_t rank = 0;
  estimator::Lane lane = estimator::Lane::compute;
  std::int32_t stream = 0;  // the rank's stream index, as the CPU tracer's SpanInfo::stream
};

// "forward", "backward", ... from words in an NVTX range name: forward/fwd, backward/bwd,
// wgrad/weight_grad, recompute, optimizer/adamw, allreduce/all_reduce/all-reduce and the other
// collectives (communication); none otherwise. Case-insensitive.
estimator::Phase phase_from_range_name(std::string_view name);
// What a range names, when its first word is a collective or a transfer ("tp.all_reduce forward
// stage 0 mb 1", "pp.send ...", "zero3.all_gather ..."): collective, send or recv; nullopt for
// compute. The kernels and copies a probe collective launches among virtual ranks on one GPU
// (the device communicator's copies and sums) take this kind: they are communication, though
// they run on the compute stream and their phase is the op's.
std::optional<estimator::SpanKind> comm_kind_from_range_name(std::string_view name);
// The operator a compute range names: its first word ("qkv forward stage 2 mb 5": "qkv"), as the
// probe names its operators' ranges; empty for a range of one word, a collective's or transfer's
// (comm_kind_from_range_name) or one whose first word is a phase ("forward stage 0 mb 1"). A kernel, copy or memset launched inside takes it as its
// Span::operator_id, so a GPU step's time adds up per operator as the CPU probe's spans do.
std::string_view operator_from_range_name(std::string_view name);
// The number after the word `word` in a range name ("qkv forward stage 2 mb 5": "stage" -> 2,
// "mb" -> 5), as the probe's spans name their NVTX ranges; -1 when absent.
std::int32_t number_after(std::string_view name, std::string_view word);

class ActivityTimeline {
 public:
  void assign_stream(std::uint32_t device, std::uint32_t stream_id, const StreamRole& role);
  void assign_thread(std::uint32_t thread_id, std::int32_t rank);
  // Added to every record's times (from clock_alignment.h: cpu = other + offset).
  void set_clock_offset_ns(std::int64_t offset_ns) { offset_ns_ = offset_ns; }

  // Tracks for each (rank, lane, stream) with spans, spans sorted by start, names interned.
  estimator::Timeline build(const std::vector<ActivityRecord>& records, const std::string& title,
                            const estimator::KernelClassifier& classifier) const;

 private:
  std::map<std::pair<std::uint32_t, std::uint32_t>, StreamRole> streams_;
  std::map<std::uint32_t, std::int32_t> threads_;
  std::int64_t offset_ns_ = 0;
};

}  // namespace plansight::runtime::cuda
