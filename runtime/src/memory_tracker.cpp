// MemoryTracker and TrackedBuffer: counters under one mutex (allocations are per tensor, not
// per element, so contention is negligible next to the kernels).
#include "plansight/runtime/memory_tracker.h"

#include <algorithm>
#include <cstring>
#include <utility>

namespace plansight::runtime {

std::int64_t MemoryUsage::total() const {
  std::int64_t sum = 0;
  for (auto b : bytes) sum += b;
  return sum;
}

estimator::MemoryBreakdown MemoryUsage::breakdown() const {
  estimator::MemoryBreakdown m;
  m.weights_bytes = static_cast<double>((*this)[MemoryCategory::weights]);
  m.gradients_bytes = static_cast<double>((*this)[MemoryCategory::gradients]);
  m.optimizer_bytes = static_cast<double>((*this)[MemoryCategory::optimizer]);
  m.activations_bytes = static_cast<double>((*this)[MemoryCategory::activations]);
  m.buffers_bytes = static_cast<double>((*this)[MemoryCategory::buffers]);
  return m;
}

void MemoryTracker::allocate(MemoryCategory category, std::int64_t bytes) {
  const auto i = static_cast<std::size_t>(category);
  std::lock_guard lock(mutex_);
  current_.bytes[i] += bytes;
  allocated_.bytes[i] += bytes;
  peak_.bytes[i] = std::max(peak_.bytes[i], current_.bytes[i]);
  peak_total_ = std::max(peak_total_, current_.total());
}

void MemoryTracker::release(MemoryCategory category, std::int64_t bytes) {
  std::lock_guard lock(mutex_);
  current_.bytes[static_cast<std::size_t>(category)] -= bytes;
}

MemoryUsage MemoryTracker::current() const {
  std::lock_guard lock(mutex_);
  return current_;
}
MemoryUsage MemoryTracker::peak() const {
  std::lock_guard lock(mutex_);
  return peak_;
}
std::int64_t MemoryTracker::peak_total() const {
  std::lock_guard lock(mutex_);
  return peak_total_;
}
MemoryUsage MemoryTracker::allocated() const {
  std::lock_guard lock(mutex_);
  return allocated_;
}
void MemoryTracker::reset_peaks() {
  std::lock_guard lock(mutex_);
  peak_ = current_;
  peak_total_ = current_.total();
}

std::unique_ptr<float[]> MemoryTracker::take_block(std::size_t count) {
  {
    std::lock_guard lock(cache_mutex_);
    auto it = cache_.find(count);
    if (it != cache_.end() && !it->second.empty()) {
      std::unique_ptr<float[]> block = std::move(it->second.back());
      it->second.pop_back();
      std::memset(block.get(), 0, count * sizeof(float));
      return block;
    }
  }
  return std::unique_ptr<float[]>(new float[count]());
}

void MemoryTracker::give_back_block(std::size_t count, std::unique_ptr<float[]> block) {
  if (!block) return;
  std::lock_guard lock(cache_mutex_);
  cache_[count].push_back(std::move(block));
}

TrackedBuffer::TrackedBuffer(MemoryTracker* tracker, MemoryCategory category, std::size_t count)
    : tracker_(tracker), category_(category), count_(count) {
  if (count_ == 0) return;
  if (tracker_) {
    data_ = tracker_->take_block(count_);
    tracker_->allocate(category_, bytes());
  } else {
    data_.reset(new float[count_]());
  }
}

TrackedBuffer::TrackedBuffer(TrackedBuffer&& other) noexcept
    : tracker_(other.tracker_), category_(other.category_), count_(std::exchange(other.count_, 0)),
      data_(std::move(other.data_)) {}

TrackedBuffer& TrackedBuffer::operator=(TrackedBuffer&& other) noexcept {
  if (this != &other) {
    reset();
    tracker_ = other.tracker_;
    category_ = other.category_;
    count_ = std::exchange(other.count_, 0);
    data_ = std::move(other.data_);
  }
  return *this;
}

TrackedBuffer::~TrackedBuffer() { reset(); }

void TrackedBuffer::zero() {
  if (count_ > 0) std::memset(data_.get(), 0, count_ * sizeof(float));
}

void TrackedBuffer::reset() {
  if (tracker_ && count_ > 0) {
    tracker_->release(category_, bytes());
    tracker_->give_back_block(count_, std::move(data_));
  }
  data_.reset();
  count_ = 0;
}

}  // namespace plansight::runtime
