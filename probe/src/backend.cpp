// Buf: an array allocated and released through its rank's backend.
#include "backend.h"

#include <utility>

namespace plansight::probe {

const char* to_string(Elem e) {
  switch (e) {
    case Elem::f32: return "fp32";
    case Elem::bf16: return "bf16";
    case Elem::f16: return "fp16";
    case Elem::i32: return "int32";
  }
  return "?";
}

Buf::Buf(Backend& backend, runtime::MemoryCategory category, std::size_t count, Elem elem, Fill fill)
    : backend_(&backend), category_(category), count_(count), elem_(elem) {
  if (count_ > 0) ptr_ = backend.allocate(category_, bytes(), fill);
}

Buf::Buf(Buf&& other) noexcept
    : backend_(other.backend_), category_(other.category_), count_(std::exchange(other.count_, 0)), elem_(other.elem_),
      ptr_(std::exchange(other.ptr_, nullptr)) {}

Buf& Buf::operator=(Buf&& other) noexcept {
  if (this != &other) {
    reset();
    backend_ = other.backend_;
    category_ = other.category_;
    elem_ = other.elem_;
    count_ = std::exchange(other.count_, 0);
    ptr_ = std::exchange(other.ptr_, nullptr);
  }
  return *this;
}

Buf::~Buf() { reset(); }

void Buf::zero(Queue queue) {
  if (count_ > 0) backend_->zero(ptr_, bytes(), queue);
}

void Buf::reset() {
  if (count_ > 0 && ptr_) backend_->release(category_, ptr_, bytes());
  ptr_ = nullptr;
  count_ = 0;
}

void Buf::reset(Queue queue) {
  if (count_ > 0 && ptr_) backend_->release_in(queue, category_, ptr_, bytes());
  ptr_ = nullptr;
  count_ = 0;
}

}  // namespace plansight::probe
