// The throwing half of cuda_check.h: turns a CUDA, cuBLASLt or cuDNN status into a readable
// mantissa::Error; an allocation failure becomes OutOfMemory with the free and total bytes.
#include "core/backend/cuda/cuda_check.h"

#include "core/error.h"

namespace mantissa::cuda {

namespace {

std::string where(const char* call, const char* file, int line) {
    return std::string(call) + " at " + file + ":" + std::to_string(line);
}

std::string mib(std::size_t bytes) {
    return std::to_string((bytes + (std::size_t{1} << 19)) >> 20) + " MiB";
}

} // namespace

std::string out_of_memory_message(std::size_t requested, const std::string& device) {
    std::size_t free_bytes = 0, total_bytes = 0;
    if (cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess) {
        cudaGetLastError(); // the query failing must not leave a sticky error behind
        free_bytes = total_bytes = 0;
    }
    return "out of GPU memory on " + device + ": requested " + std::to_string(requested) +
           " bytes (" + mib(requested) + "), " + std::to_string(free_bytes) + " bytes (" +
           mib(free_bytes) + ") free of " + mib(total_bytes) +
           "; reduce the batch size or the model's size";
}

void throw_cuda_error(cudaError_t status, const char* call, const char* file, int line) {
    cudaGetLastError(); // clear a non-sticky error so the next run starts clean
    if (status == cudaErrorMemoryAllocation)
        throw Error(ErrorKind::OutOfMemory, "out of GPU memory in " + where(call, file, line) +
                                                " (" + cudaGetErrorString(status) + ")");
    throw Error(ErrorKind::Device, std::string("CUDA error ") + cudaGetErrorName(status) + " (" +
                                       cudaGetErrorString(status) + ") in " +
                                       where(call, file, line));
}

void throw_cublas_error(cublasStatus_t status, const char* call, const char* file, int line) {
    if (status == CUBLAS_STATUS_ALLOC_FAILED)
        throw Error(ErrorKind::OutOfMemory,
                    "cuBLASLt could not allocate GPU memory in " + where(call, file, line));
    throw Error(ErrorKind::Device, std::string("cuBLASLt error ") + cublasLtGetStatusName(status) +
                                       " (" + cublasLtGetStatusString(status) + ") in " +
                                       where(call, file, line));
}

void throw_cudnn_error(cudnnStatus_t status, const char* call, const char* file, int line) {
    if (status == CUDNN_STATUS_ALLOC_FAILED)
        throw Error(ErrorKind::OutOfMemory,
                    "cuDNN could not allocate GPU memory in " + where(call, file, line));
    throw Error(ErrorKind::Device, std::string("cuDNN error ") + cudnnGetErrorString(status) +
                                       " in " + where(call, file, line));
}

} // namespace mantissa::cuda
