// Status of a CUDA kernel launch, and the forward declaration of cudaStream_t that lets plain C++
// include the CUDA twins' headers without the CUDA toolkit's headers (cuda_runtime.h declares the
// same alias, `typedef struct CUstream_st* cudaStream_t`, so both may be included together).
#pragma once

#include <string>
#include <utility>

struct CUstream_st;
using cudaStream_t = CUstream_st*;

namespace plansight::kernels::cuda {

// What a launcher returns: ok, or the cudaError_t value and a message naming the kernel and
// cudaGetErrorString's text. Launches are asynchronous, so ok means "launched": an error
// during execution shows up at the caller's next synchronising call on the stream.
class [[nodiscard]] Status {
 public:
  Status() = default;  // ok
  Status(int cuda_error, std::string message) : code_(cuda_error), message_(std::move(message)) {}

  bool ok() const { return code_ == 0; }
  explicit operator bool() const { return ok(); }
  int cuda_error() const { return code_; }  // a cudaError_t value; 0 is cudaSuccess
  const std::string& message() const { return message_; }

 private:
  int code_ = 0;
  std::string message_;
};

}  // namespace plansight::kernels::cuda
