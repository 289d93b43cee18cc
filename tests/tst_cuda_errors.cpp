// How CUDA, cuBLASLt and cuDNN failures reach the user: an allocation failure in any of them is
// Error(OutOfMemory) with a message that says what to reduce; anything else is Error(Device).
// Built only with the CUDA engine; the status mapping runs without a GPU, the real OOM with one.

#include <cstddef>
#include <string>

#include "core/backend/cuda/cuda_backend.h"
#include "core/backend/cuda/cuda_check.h"
#include "core/backend/factory/backend_factory.h"
#include "core/error.h"
#include "tests/unit/files.h"
#include "tests/unit/unit_test.h"

using namespace mantissa;
using namespace mantissa::unit;

namespace {

// The Error a throwing call raised; fails the test when it raised nothing.
template <typename Call>
Error raised(Call&& call) {
    try {
        call();
    } catch (const Error& error) {
        return error;
    }
    return Error(ErrorKind::Internal, "nothing was thrown");
}

bool has_gpu() {
    return available_devices().size() > 1;
}

} // namespace

class TestCudaErrors {
public:
    void allocationFailuresAreOutOfMemory() {
        const Error cuda = raised([] {
            cuda::throw_cuda_error(cudaErrorMemoryAllocation, "cudaMalloc(&ptr, bytes)",
                                   "cuda_backend.cpp", 114);
        });
        CHECK_EQ(cuda.kind(), ErrorKind::OutOfMemory);
        CHECK_MSG(contains(cuda.what(),
                           "out of GPU memory in cudaMalloc(&ptr, bytes) at cuda_backend.cpp:114"),
                  cuda.what());

        const Error cublas = raised([] {
            cuda::throw_cublas_error(CUBLAS_STATUS_ALLOC_FAILED, "cublasLtMatmul(...)",
                                     "cuda_gemm.cpp", 9);
        });
        CHECK_EQ(cublas.kind(), ErrorKind::OutOfMemory);
        CHECK_MSG(contains(cublas.what(), "cuBLASLt could not allocate GPU memory in "
                                          "cublasLtMatmul(...) at cuda_gemm.cpp:9"),
                  cublas.what());

        const Error cudnn = raised([] {
            cuda::throw_cudnn_error(CUDNN_STATUS_ALLOC_FAILED, "cudnnConvolutionForward(...)",
                                    "cuda_conv2d.cpp", 3);
        });
        CHECK_EQ(cudnn.kind(), ErrorKind::OutOfMemory);
        CHECK_MSG(contains(cudnn.what(), "cuDNN could not allocate GPU memory"), cudnn.what());
    }

    // Other failures are device errors naming the library's own status and the call.
    void otherFailuresAreDeviceErrors() {
        const Error cuda = raised([] {
            cuda::throw_cuda_error(cudaErrorInvalidValue, "cudaMemcpyAsync(...)", "f.cpp", 1);
        });
        CHECK_EQ(cuda.kind(), ErrorKind::Device);
        CHECK_MSG(contains(cuda.what(), "cudaErrorInvalidValue") &&
                      contains(cuda.what(), "cudaMemcpyAsync(...) at f.cpp:1"),
                  cuda.what());

        const Error cublas = raised([] {
            cuda::throw_cublas_error(CUBLAS_STATUS_NOT_SUPPORTED, "cublasLtMatmul(...)", "g.cpp",
                                     2);
        });
        CHECK_EQ(cublas.kind(), ErrorKind::Device);
        CHECK_MSG(contains(cublas.what(), "CUBLAS_STATUS_NOT_SUPPORTED"), cublas.what());

        const Error cudnn = raised([] {
            cuda::throw_cudnn_error(CUDNN_STATUS_BAD_PARAM, "cudnnSetTensorNdDescriptor(...)",
                                    "h.cpp", 3);
        });
        CHECK_EQ(cudnn.kind(), ErrorKind::Device);
        CHECK_MSG(contains(cudnn.what(), "h.cpp:3"), cudnn.what());
    }

    // The allocator's message: what was asked for, what is free, and what to change. Without a
    // GPU the free and total bytes read 0; with one they are the device's.
    void outOfMemoryMessageSaysWhatToReduce() {
        const std::string message = cuda::out_of_memory_message(std::size_t{3} << 30, "cuda:0");
        CHECK_MSG(message.starts_with("out of GPU memory on cuda:0: requested 3221225472 bytes "
                                      "(3072 MiB), "),
                  message);
        CHECK_MSG(contains(message, " free of ") &&
                      message.ends_with("; reduce the batch size or the model's size"),
                  message);
    }

    // On a GPU: asking for more than the card holds is refused as OutOfMemory, nothing stays
    // allocated, and the device keeps working (the error is not sticky).
    void realAllocationBeyondTheCardRecovers() {
        if (!has_gpu()) SKIP_TEST("no CUDA device: the real allocation cannot be tried here");
        CudaBackend backend(0);
        const std::size_t total = backend.info().memory_total;
        const Error error =
            raised([&] { Buffer b = backend.allocate(total + (std::size_t{1} << 30)); });
        CHECK_EQ(error.kind(), ErrorKind::OutOfMemory);
        CHECK_MSG(contains(error.what(), "reduce the batch size"), error.what());
        CHECK_EQ(backend.memory_in_use(), std::size_t{0});
        {
            Buffer small = backend.allocate(std::size_t{1} << 20);
            CHECK_EQ(backend.memory_in_use(), std::size_t{1} << 20);
        }
        backend.synchronize();
        CHECK_EQ(backend.memory_in_use(), std::size_t{0});
    }
};

MANTISSA_TEST_MAIN(TestCudaErrors, allocationFailuresAreOutOfMemory, otherFailuresAreDeviceErrors,
                   outOfMemoryMessageSaysWhatToReduce, realAllocationBeyondTheCardRecovers)
