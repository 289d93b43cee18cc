// The check macros every CUDA runtime, cuBLASLt and cuDNN call goes through: a failure becomes a
// mantissa::Error(Device / OutOfMemory) naming the call, file:line and the library's own message.
#pragma once

#include <cstddef>
#include <string>

#include <cublasLt.h>
#include <cuda_runtime.h>
#include <cudnn.h>

namespace mantissa::cuda {

// Each throws; `call` is the source text of the failing call.
[[noreturn]] void throw_cuda_error(cudaError_t status, const char* call, const char* file,
                                   int line);
[[noreturn]] void throw_cublas_error(cublasStatus_t status, const char* call, const char* file,
                                     int line);
[[noreturn]] void throw_cudnn_error(cudnnStatus_t status, const char* call, const char* file,
                                    int line);
// The message for a failed device allocation of `requested` bytes: requested, free and total.
std::string out_of_memory_message(std::size_t requested, const std::string& device);

} // namespace mantissa::cuda

#define MANTISSA_CUDA_CHECK(call)                                                                  \
    do {                                                                                           \
        const cudaError_t mantissa_status_ = (call);                                               \
        if (mantissa_status_ != cudaSuccess)                                                       \
            ::mantissa::cuda::throw_cuda_error(mantissa_status_, #call, __FILE__, __LINE__);       \
    } while (0)

#define MANTISSA_CUBLAS_CHECK(call)                                                                \
    do {                                                                                           \
        const cublasStatus_t mantissa_status_ = (call);                                            \
        if (mantissa_status_ != CUBLAS_STATUS_SUCCESS)                                             \
            ::mantissa::cuda::throw_cublas_error(mantissa_status_, #call, __FILE__, __LINE__);     \
    } while (0)

#define MANTISSA_CUDNN_CHECK(call)                                                                 \
    do {                                                                                           \
        const cudnnStatus_t mantissa_status_ = (call);                                             \
        if (mantissa_status_ != CUDNN_STATUS_SUCCESS)                                              \
            ::mantissa::cuda::throw_cudnn_error(mantissa_status_, #call, __FILE__, __LINE__);      \
    } while (0)

// After a kernel launch: catches bad launch configurations at once (asynchronous faults surface
// at the next synchronising call, which is checked too).
#define MANTISSA_CUDA_LAUNCH_CHECK() MANTISSA_CUDA_CHECK(cudaGetLastError())
