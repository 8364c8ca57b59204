// CuptiRecordConverter (cupti_records.h). Field meanings: cupti_activity.h of CUDA 13.0
// (CUpti_ActivityKernel10, CUpti_ActivityMemcpy6, CUpti_ActivityMemset4, CUpti_ActivityAPI,
// CUpti_ActivityMarker2, CUpti_ActivitySynchronization2).
#include "cupti_records.h"

#include <cupti_activity.h>

namespace plansight::runtime::cuda {
namespace {

std::int64_t ns(std::uint64_t t) { return static_cast<std::int64_t>(t); }

const char* memcpy_name(std::uint8_t kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return "memcpy HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return "memcpy DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return "memcpy DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return "memcpy PtoP";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return "memcpy HtoH";
    default: return "memcpy";
  }
}

const char* synchronization_name(CUpti_ActivitySynchronizationType type) {
  switch (type) {
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE: return "cudaEventSynchronize";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT: return "cudaStreamWaitEvent";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE: return "cudaStreamSynchronize";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE: return "cudaDeviceSynchronize";
    default: return "synchronize";
  }
}

}  // namespace

void CuptiRecordConverter::add(const CUpti_Activity* record, std::vector<ActivityRecord>& out) {
  ActivityRecord r;
  switch (record->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
      r.kind = ActivityKind::kernel;
      r.start_ns = ns(k->start);
      r.end_ns = ns(k->end);
      r.device = k->deviceId;
      r.stream = k->streamId;
      r.correlation = k->correlationId;
      r.name = kernel_display_name(k->name);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(record);
      r.kind = ActivityKind::memcpy;
      r.start_ns = ns(m->start);
      r.end_ns = ns(m->end);
      r.device = m->deviceId;
      r.stream = m->streamId;
      r.correlation = m->correlationId;
      r.bytes = static_cast<double>(m->bytes);
      r.name = memcpy_name(m->copyKind);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(record);
      r.kind = ActivityKind::memset;
      r.start_ns = ns(m->start);
      r.end_ns = ns(m->end);
      r.device = m->deviceId;
      r.stream = m->streamId;
      r.correlation = m->correlationId;
      r.bytes = static_cast<double>(m->bytes);
      r.name = "memset";
      break;
    }
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
      const auto* s = reinterpret_cast<const CUpti_ActivitySynchronization2*>(record);
      r.kind = ActivityKind::synchronization;
      r.start_ns = ns(s->start);
      r.end_ns = ns(s->end);
      r.stream = s->streamId;
      r.correlation = s->correlationId;
      r.name = synchronization_name(s->type);
      break;
    }
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: {
      const auto* a = reinterpret_cast<const CUpti_ActivityAPI*>(record);
      r.kind = ActivityKind::api_call;
      r.start_ns = ns(a->start);
      r.end_ns = ns(a->end);
      r.thread = a->threadId;
      r.correlation = a->correlationId;
      const char* name = nullptr;
      const CUpti_CallbackDomain domain =
          record->kind == CUPTI_ACTIVITY_KIND_RUNTIME ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API;
      r.name = cuptiGetCallbackName(domain, a->cbid, &name) == CUPTI_SUCCESS && name != nullptr ? name : "api call";
      break;
    }
    case CUPTI_ACTIVITY_KIND_MARKER: {
      const auto* m = reinterpret_cast<const CUpti_ActivityMarker2*>(record);
      const std::uint32_t thread =
          m->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD ? m->objectId.pt.threadId : 0;
      if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_START) {
        open_[m->id] = OpenRange{m->timestamp, thread, m->name != nullptr ? m->name : ""};
        return;
      }
      if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_END) {
        auto it = open_.find(m->id);
        if (it == open_.end()) return;  // its start was dropped (buffer overflow)
        r.kind = ActivityKind::range;
        r.start_ns = ns(it->second.start_ns);
        r.end_ns = ns(m->timestamp);
        r.thread = it->second.thread;
        r.name = std::move(it->second.name);
        open_.erase(it);
        break;
      }
      return;  // instantaneous markers: not spans
    }
    default:
      return;
  }
  out.push_back(std::move(r));
}

}  // namespace plansight::runtime::cuda
