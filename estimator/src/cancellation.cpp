// CancelScope and cancel_requested(): see cancellation.h.
#include "plansight/estimator/cancellation.h"

namespace plansight::estimator {
namespace {
thread_local const std::atomic<bool>* t_flag = nullptr;
}  // namespace

CancelScope::CancelScope(const std::atomic<bool>* flag) : previous_(t_flag) {
  if (flag) t_flag = flag;
}

CancelScope::~CancelScope() { t_flag = previous_; }

bool cancel_requested() { return t_flag && t_flag->load(std::memory_order_relaxed); }

const std::atomic<bool>* current_cancel_flag() { return t_flag; }

}  // namespace plansight::estimator
