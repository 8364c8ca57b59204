// Typed transfers: fp32 through the float functions every communicator has; 16-bit elements
// only where an implementation overrides these (a CPU communicator moves fp32 only). The default
// point-to-point group: sends that never wait, then the receive.
#include "plansight/runtime/communicator.h"

namespace plansight::runtime {
namespace {

Status unsupported(const Communicator& c, Element e) {
  return make_error("communicator." + c.name(),
                    std::string("moves fp32 only; a ") + element_name(e) + " transfer needs a GPU communicator");
}

}  // namespace

Status Communicator::all_reduce_typed(void* data, std::size_t count, Element element) {
  if (element != Element::f32) return unsupported(*this, element);
  return all_reduce(static_cast<float*>(data), count);
}

Status Communicator::all_gather_typed(const void* in, void* out, std::size_t count, Element element) {
  if (element != Element::f32) return unsupported(*this, element);
  return all_gather(static_cast<const float*>(in), static_cast<float*>(out), count);
}

Status Communicator::send_typed(const void* data, std::size_t count, Element element, int peer, int tag) {
  if (element != Element::f32) return unsupported(*this, element);
  return send(static_cast<const float*>(data), count, peer, tag);
}

Status Communicator::recv_typed(void* data, std::size_t count, Element element, int peer, int tag) {
  if (element != Element::f32) return unsupported(*this, element);
  return recv(static_cast<float*>(data), count, peer, tag);
}

Status Communicator::send_recv_group(const std::vector<PeerSend>& sends, const std::vector<PeerRecv>& recvs,
                                     const TransferHook& hook) {
  for (std::size_t i = 0; i < sends.size() + recvs.size(); ++i) {
    if (hook) hook(i, true);
    Status status = ok_status();
    if (i < sends.size()) {
      const PeerSend& s = sends[i];
      status = send_typed(s.data, s.count, s.element, s.peer, s.tag);
    } else {
      const PeerRecv& r = recvs[i - sends.size()];
      status = recv_typed(r.data, r.count, r.element, r.peer, r.tag);
    }
    if (hook) hook(i, false);
    if (!status) return status;
  }
  return ok_status();
}

}  // namespace plansight::runtime
