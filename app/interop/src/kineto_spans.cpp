// Kineto events to spans: the category decides the lane and kind, the kernel rules decide
// communication vs compute, and NCCL metadata becomes CollectiveCalls.
#include <algorithm>

#include "kineto_reader_impl.h"

namespace plansight::interop::detail {

void Reader::finish_event() {
  ++out_.events;
  if (ev_.metadata) {
    if (ev_.name == "thread_name" && !ev_.meta_name.empty() && ev_.tid >= 0) thread_names_[ev_.tid] = ev_.meta_name;
    return;
  }
  if (!ev_.complete || !ev_.has_ts || !ev_.has_dur || ev_.dur_ns < 0) return;
  const std::int64_t device = ev_.device >= 0 ? ev_.device : (ev_.pid >= 0 ? ev_.pid : 0);
  const std::int64_t stream = ev_.stream >= 0 ? ev_.stream : ev_.tid;
  if (options_.drop_last_profiler_step) {
    if (ev_.cat == Cat::runtime && ev_.correlation >= 0) launch_ns_[ev_.correlation] = ev_.ts_ns;
    // Step annotations are user_annotation in current traces, Operator (cpu_op) in 2021 ones.
    if ((ev_.cat == Cat::user_annotation || ev_.cat == Cat::cpu_op) && ev_.name.starts_with("ProfilerStep#")) {
      auto [it, fresh] = step_start_ns_.try_emplace(ev_.name, ev_.ts_ns);
      if (!fresh) it->second = std::max(it->second, ev_.ts_ns);
    }
  }
  switch (ev_.cat) {
    case Cat::kernel: add_kernel(device, stream); break;
    case Cat::memcpy:
    case Cat::memset: {
      const std::size_t track = track_index(Lane::copy, false, device, stream);
      add_span(track, intern(ev_.name), ev_.cat == Cat::memcpy ? SpanKind::memcpy : SpanKind::memset,
               ev_.bytes > 0 ? double(ev_.bytes) : 0, false);
      note_for_step_filter(track, -1);
      break;
    }
    case Cat::gpu_annotation:
      if (options_.include_annotations) {
        const std::size_t track = track_index(Lane::compute, true, device, stream);
        add_span(track, intern(ev_.name), SpanKind::annotation, 0, false);
        note_for_step_filter(track, -1);
      }
      break;
    case Cat::cpu_op:
      // record_param_comms carries the collective's metadata in traces whose NCCL kernels do not.
      if (ev_.comm.present && ev_.external_id >= 0) comm_by_external_id_[ev_.external_id] = ev_.comm;
      if (options_.include_cpu_ops) add_span(track_index(Lane::host, false, -1, ev_.tid), intern(ev_.name), SpanKind::host, 0, false);
      break;
    case Cat::user_annotation:
      if (options_.include_annotations) {
        add_span(track_index(Lane::host, false, -1, ev_.tid), intern(ev_.name), SpanKind::annotation, 0, false);
      }
      break;
    case Cat::runtime:
      if (options_.include_runtime) add_span(track_index(Lane::host, false, -1, ev_.tid), intern(ev_.name), SpanKind::host, 0, false);
      break;
    case Cat::python:
      if (options_.include_python) add_span(track_index(Lane::host, false, -1, ev_.tid), intern(ev_.name), SpanKind::host, 0, false);
      break;
    case Cat::other: break;
  }
}

void Reader::add_kernel(std::int64_t device, std::int64_t stream) {
  const std::int32_t id = intern(ev_.name);
  const KernelClass cls = class_of_name_[static_cast<std::size_t>(id)];
  if (cls != KernelClass::communication) {
    const Lane lane = cls == KernelClass::memory ? Lane::copy : Lane::compute;
    const std::size_t track = track_index(lane, false, device, stream);
    add_span(track, id, SpanKind::kernel, 0, cls == KernelClass::tensor_core_gemm);
    note_for_step_filter(track, -1);
    return;
  }
  const auto kind = estimator::collective_kind_from_name(ev_.name);
  const SpanKind span_kind = kind == estimator::CollectiveKind::send   ? SpanKind::send
                             : kind == estimator::CollectiveKind::recv ? SpanKind::recv
                                                                       : SpanKind::collective;
  const std::size_t track = track_index(Lane::communication, false, device, stream);
  add_span(track, id, span_kind, 0, false);
  estimator::CollectiveCall call;
  call.kind = kind;
  call.start_ns = ev_.ts_ns;
  call.duration_ns = ev_.dur_ns;
  call.name = ev_.name;
  out_.collectives.push_back(std::move(call));
  out_.collective_device.push_back(static_cast<std::int32_t>(device));
  note_for_step_filter(track, static_cast<std::int64_t>(out_.collectives.size()) - 1);
  auto& span = out_.tracks[track].spans.back();
  if (ev_.comm.present) {
    fill_call(out_.collectives.back(), ev_.comm, span);
  } else if (ev_.external_id >= 0) {
    pending_.push_back({out_.collectives.size() - 1, track, out_.tracks[track].spans.size() - 1, ev_.external_id});
  }
}

// Bytes as nccl-tests' S (see CollectiveCall::bytes): the gathered output for all-gather, the
// input for everything else (PyTorch records whole-tensor element counts).
void Reader::fill_call(estimator::CollectiveCall& call, const CommArgs& comm, estimator::Span& span) {
  const auto from_args = estimator::collective_kind_from_name(comm.collective);
  if (from_args != estimator::CollectiveKind::unknown) call.kind = from_args;
  if (comm.group_size > 0 && comm.group_size < (1 << 30)) call.group_size = static_cast<std::int32_t>(comm.group_size);
  call.dtype = comm.dtype;
  call.process_group = comm.process_group;
  const int element = estimator::dtype_size_bytes(comm.dtype);
  std::int64_t count = call.kind == estimator::CollectiveKind::all_gather ? comm.out_nelems : comm.in_nelems;
  if (count < 0) count = std::max(comm.in_nelems, comm.out_nelems);
  if (count > 0 && element > 0) call.bytes = double(count) * element;
  span.bytes = call.bytes;
}

void Reader::resolve_pending() {
  for (const auto& p : pending_) {
    auto it = comm_by_external_id_.find(p.external_id);
    if (it == comm_by_external_id_.end()) continue;
    fill_call(out_.collectives[p.call], it->second, out_.tracks[p.track].spans[p.span]);
  }
}

}  // namespace plansight::interop::detail
