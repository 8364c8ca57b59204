// Status of a CUDA kernel launch, and the forward declaration of cudaStream_t that lets plain C++
// include the CUDA twins' headers without the CUDA toolkit's headers (cuda_runtime.h declares the
// same alias, `typedef struct CUstream_st* cudaStream_t`, so both may be included together).
#pragma once

#include <string>
#include <utility>

struct CUstream_st;
using cudaStream_t = CUstream_st*;

namespace plansight::kernels::cuda {

// What a launcher returns: ok, or an error code and a message naming the kernel or library call
// and the library's text for the code. The code is a cudaError_t value, or a cublasStatus_t value
// when the message names a cuBLASLt call. Launches are asynchronous, so ok means "launched": an
// error during execution shows up at the caller's next synchronising call on the stream.
class [[nodiscard]] Status {
 public:
  Status() = default;  // ok
  Status(int cuda_error, std::string message) : code_(cuda_error), message_(std::move(message)) {}

  bool ok() const { return code_ == 0; }
  explicit operator bool() const { return ok(); }
  int cuda_error() const { return code_; }  // see above; 0 is success
  const std::string& message() const { return message_; }

 private:
  int code_ = 0;
  std::string message_;
};

}  // namespace plansight::kernels::cuda
