// MANTISSA_HD: marks a function that both engines compile, the CPU engine with the host compiler
// and the CUDA kernels with nvcc (__host__ __device__ there), so one definition of the arithmetic
// serves both and the CPU tests of it test the kernels' arithmetic too.
#pragma once

#if defined(__CUDACC__)
#define MANTISSA_HD __host__ __device__
#else
#define MANTISSA_HD
#endif
