// How CUDA, cuBLASLt and cuDNN failures reach the user: an allocation failure in any of them is
// Error(OutOfMemory) with a message that says what to reduce; anything else is Error(Device).
// Built only with the CUDA engine; the status mapping runs without a GPU, the real OOM with one.
#include <QtTest>

#include <cstddef>
#include <string>

#include "core/backend/cuda/cuda_backend.h"
#include "core/backend/cuda/cuda_check.h"
#include "core/backend/factory/backend_factory.h"
#include "core/error.h"

using namespace mantissa;

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

class TestCudaErrors : public QObject {
    Q_OBJECT

private slots:
    void allocationFailuresAreOutOfMemory() {
        const Error cuda = raised([] {
            cuda::throw_cuda_error(cudaErrorMemoryAllocation, "cudaMalloc(&ptr, bytes)",
                                   "cuda_backend.cpp", 114);
        });
        QCOMPARE(cuda.kind(), ErrorKind::OutOfMemory);
        QVERIFY2(
            QString(cuda.what())
                .contains("out of GPU memory in cudaMalloc(&ptr, bytes) at cuda_backend.cpp:114"),
            cuda.what());

        const Error cublas = raised([] {
            cuda::throw_cublas_error(CUBLAS_STATUS_ALLOC_FAILED, "cublasLtMatmul(...)",
                                     "cuda_gemm.cpp", 9);
        });
        QCOMPARE(cublas.kind(), ErrorKind::OutOfMemory);
        QVERIFY2(QString(cublas.what())
                     .contains("cuBLASLt could not allocate GPU memory in "
                               "cublasLtMatmul(...) at cuda_gemm.cpp:9"),
                 cublas.what());

        const Error cudnn = raised([] {
            cuda::throw_cudnn_error(CUDNN_STATUS_ALLOC_FAILED, "cudnnConvolutionForward(...)",
                                    "cuda_conv2d.cpp", 3);
        });
        QCOMPARE(cudnn.kind(), ErrorKind::OutOfMemory);
        QVERIFY2(QString(cudnn.what()).contains("cuDNN could not allocate GPU memory"),
                 cudnn.what());
    }

    // Other failures are device errors naming the library's own status and the call.
    void otherFailuresAreDeviceErrors() {
        const Error cuda = raised([] {
            cuda::throw_cuda_error(cudaErrorInvalidValue, "cudaMemcpyAsync(...)", "f.cpp", 1);
        });
        QCOMPARE(cuda.kind(), ErrorKind::Device);
        QVERIFY2(QString(cuda.what()).contains("cudaErrorInvalidValue") &&
                     QString(cuda.what()).contains("cudaMemcpyAsync(...) at f.cpp:1"),
                 cuda.what());

        const Error cublas = raised([] {
            cuda::throw_cublas_error(CUBLAS_STATUS_NOT_SUPPORTED, "cublasLtMatmul(...)", "g.cpp",
                                     2);
        });
        QCOMPARE(cublas.kind(), ErrorKind::Device);
        QVERIFY2(QString(cublas.what()).contains("CUBLAS_STATUS_NOT_SUPPORTED"), cublas.what());

        const Error cudnn = raised([] {
            cuda::throw_cudnn_error(CUDNN_STATUS_BAD_PARAM, "cudnnSetTensorNdDescriptor(...)",
                                    "h.cpp", 3);
        });
        QCOMPARE(cudnn.kind(), ErrorKind::Device);
        QVERIFY2(QString(cudnn.what()).contains("h.cpp:3"), cudnn.what());
    }

    // The allocator's message: what was asked for, what is free, and what to change. Without a
    // GPU the free and total bytes read 0; with one they are the device's.
    void outOfMemoryMessageSaysWhatToReduce() {
        const QString message =
            QString::fromStdString(cuda::out_of_memory_message(std::size_t{3} << 30, "cuda:0"));
        QVERIFY2(message.startsWith("out of GPU memory on cuda:0: requested 3221225472 bytes "
                                    "(3072 MiB), "),
                 qPrintable(message));
        QVERIFY2(message.contains(" free of ") &&
                     message.endsWith("; reduce the batch size or the model's size"),
                 qPrintable(message));
    }

    // On a GPU: asking for more than the card holds is refused as OutOfMemory, nothing stays
    // allocated, and the device keeps working (the error is not sticky).
    void realAllocationBeyondTheCardRecovers() {
        if (!has_gpu()) QSKIP("no CUDA device: the real allocation cannot be tried here");
        CudaBackend backend(0);
        const std::size_t total = backend.info().memory_total;
        const Error error =
            raised([&] { Buffer b = backend.allocate(total + (std::size_t{1} << 30)); });
        QCOMPARE(error.kind(), ErrorKind::OutOfMemory);
        QVERIFY2(QString(error.what()).contains("reduce the batch size"), error.what());
        QCOMPARE(backend.memory_in_use(), std::size_t{0});
        {
            Buffer small = backend.allocate(std::size_t{1} << 20);
            QCOMPARE(backend.memory_in_use(), std::size_t{1} << 20);
        }
        backend.synchronize();
        QCOMPARE(backend.memory_in_use(), std::size_t{0});
    }
};

QTEST_MAIN(TestCudaErrors)
#include "tst_cuda_errors.moc"
