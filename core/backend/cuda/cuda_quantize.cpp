// CudaBackend::fake_quantize: the CPU engine's checks (cpu_quantize.cpp); one-dimensional blocks
// and NVFP4's 16x16 tiles in one kernel from the source into the copy (launch_fake_quantize_lines),
// and the two copies of one MX or NVFP4 tensor in one kernel (fake_quantize_pair,
// launch_fake_quantize_pair);
// otherwise the input widened to float32 in the output by the engine's cast (zero rows after it
// when NVFP4's Hadamard transform pads the batch), the transform (hadamard.cu) where the spec asks
// for it, then the quantise kernels (fake_quantize.cu) in place, with the spec resolved once here
// into the plain values the kernels take. quantize_fp8 writes an FP8 GEMM's codes;
// activation_backward_bias_grad_fp8 forms a ReLU layer's dZ, its bias gradient and its codes in one
// pass under delayed scaling (launch_relu_grad_fp8), the other cases as the base class composes.
#include <algorithm>
#include <array>
#include <string>

#include "core/backend/cuda/bias_grad.cuh"
#include "core/backend/cuda/cuda_backend.h"
#include "core/backend/cuda/cuda_check.h"
#include "core/backend/cuda/cuda_state.h"
#include "core/backend/cuda/fake_quantize.cuh"
#include "core/backend/cuda/hadamard.cuh"
#include "core/backend/cuda/op_checks.h"
#include "core/backend/fp8_gemm.h"
#include "core/error.h"
#include "core/numeric/hadamard.h"
#include "core/numeric/quant_math.h"
#include "core/numeric/quant_recipe.h"
#include "core/numeric/tensor_quant.h"

namespace mantissa {

namespace {

using cuda_checks::describe;
using cuda_checks::require;

// What tensor_quant.cpp decides on the host for each call, resolved the same way.
cuda::DeviceQuant device_quant(const QuantSpec& spec, std::uint64_t step) {
    cuda::DeviceQuant q;
    if (spec.scaling == QuantScaling::Block) {
        BlockQuantConfig config = spec.block;
        config.block_size = 0; // the block shape decides (fake_quantize_blocks)
        const ResolvedBlockQuant r = resolve_block_quant(config);
        if (spec.block_rows < 1 || spec.block_cols < 1)
            throw Error(ErrorKind::InvalidArgument, "fake_quantize: bad block shape");
        q.block = true;
        q.element = r.spec.element;
        q.tensor_scale = r.spec.tensor_scale;
        q.scale_in_gemm = r.tensor_scale_in_gemm;
        q.ceil = r.rule == ScaleRule::Ceil;
        q.stochastic = r.stochastic;
        q.seed = quant_math::step_seed(r.seed, step);
        q.block_rows = spec.block_rows;
        q.block_cols = spec.block_cols;
    } else {
        q.element = spec.element;
        q.delayed = spec.scaling == QuantScaling::Delayed;
        q.history_len = spec.history_len;
        q.margin = spec.margin;
        q.most_recent = spec.amax_most_recent;
    }
    q.max_elem = element_spec(q.element).max_finite;
    return q;
}

// A fake_quantize call's spec resolved for its step, with NVFP4's tensor scale for the GEMM
// written to its gemm_scale where the spec leaves it there (check_fake_quantize has checked it).
cuda::DeviceQuant device_quant(const FakeQuantArgs& a) {
    cuda::DeviceQuant q = device_quant(*a.spec, a.step);
    if (tensor_scale_in_gemm(*a.spec)) q.gemm_scale = static_cast<float*>(a.gemm_scale->data);
    return q;
}

// Where a quantize_fp8 writes, as its kernels take it (check_quantize_fp8 has checked `a`).
cuda::Fp8CodesOut codes_out(const Fp8QuantArgs& a) {
    cuda::Fp8CodesOut out;
    out.codes = a.codes ? static_cast<std::uint8_t*>(a.codes->data) : nullptr;
    out.codes_t = a.codes_t ? static_cast<std::uint8_t*>(a.codes_t->data) : nullptr;
    out.scale_inv = static_cast<float*>(a.scale_inv->data);
    out.state = quant_state_floats(*a.spec) ? static_cast<float*>(a.state->data) : nullptr;
    out.stats = static_cast<double*>(a.stats->data);
    out.record = a.record;
    return out;
}

// fake_quantize's arguments checked as the CPU engine checks them; the rows of the 2-D view.
std::int64_t check_fake_quantize(const FakeQuantArgs& a) {
    require(a.spec && a.src && a.dst && a.stats, "fake_quantize: missing argument");
    const Tensor& src = *a.src;
    const Tensor& dst = *a.dst;
    require(is_floating(src.dtype),
            "fake_quantize: tensor " + describe(src) + " must have a floating dtype");
    // Under the Hadamard transform the output may have extra (zero) rows: a multiple of 16.
    const bool padded = a.spec->hadamard && dst.rows() > src.rows();
    require(quant_copy_dtype_ok(*a.spec, dst.dtype) && dst.cols() == src.cols() &&
                (dst.rows() == src.rows() || padded),
            "fake_quantize: output " + describe(dst) +
                " must be float32 (bfloat16 for MX and NVFP4 copies) like " + describe(src));
    const bool gemm_scale = tensor_scale_in_gemm(*a.spec);
    require(
        gemm_scale == (a.gemm_scale != nullptr) &&
            (!gemm_scale || (a.gemm_scale->dtype == DType::Float32 && a.gemm_scale->numel() == 1)),
        "fake_quantize: gemm_scale must be one float32 exactly when the spec leaves NVFP4's "
        "tensor scale to the GEMM");
    require(a.stats->dtype == DType::Float64 && a.stats->numel() == kQuantStatsValues,
            "fake_quantize: stats " + describe(*a.stats) + " must be float64 (6)");
    const std::size_t state_floats = quant_state_floats(*a.spec);
    require(state_floats == 0 || (a.state && a.state->dtype == DType::Float32 &&
                                  static_cast<std::size_t>(a.state->numel()) == state_floats),
            "fake_quantize: delayed scaling needs a float32 state of " +
                std::to_string(state_floats));
    // The 2-D view the blocks lie on: a convolution passes N·H·W rows (its channels are the
    // columns), a Dense layer leaves it to the tensor's own rows.
    const std::int64_t rows = a.rows > 0 ? a.rows : dst.rows();
    require(rows > 0 && dst.numel() % rows == 0,
            "fake_quantize: " + std::to_string(rows) + " rows do not divide " + describe(dst));
    require(!a.spec->hadamard || rows % static_cast<std::int64_t>(kHadamardSize) == 0,
            "fake_quantize: the Hadamard transform needs rows in multiples of 16, got " +
                std::to_string(rows) + " (the plan pads the batch)");
    return rows;
}

} // namespace

void CudaBackend::fake_quantize(const FakeQuantArgs& a) {
    const std::int64_t rows = check_fake_quantize(a);
    const Tensor& src = *a.src;
    Tensor& dst = *a.dst;
    const std::size_t state_floats = quant_state_floats(*a.spec);
    const cuda::DeviceQuant q = device_quant(a);
    auto* stats = static_cast<double*>(a.stats->data);
    // One-dimensional blocks and NVFP4's weight tiles without a transform: one kernel from the
    // source into the copy.
    if (!a.spec->hadamard && cuda::fake_quantize_lines_apply(q, src.dtype, dst.dtype)) {
        cuda::launch_fake_quantize_lines(src.data, src.dtype, dst.data, dst.dtype, rows,
                                         dst.numel() / rows, q, stats, a.record,
                                         m_impl->quant_scratch, m_impl->stream);
        return;
    }
    if (dst.dtype != DType::Float32) {
        // A bfloat16 copy the fused path does not take (stochastic rounding, two-dimensional
        // blocks, a float16 source): quantised in a float32 buffer from the stream-ordered pool,
        // then narrowed, exactly (quant_copy_dtype_ok).
        Tensor wide = dst;
        wide.dtype = DType::Float32;
        MANTISSA_CUDA_CHECK(cudaMallocAsync(&wide.data, wide.bytes(), m_impl->stream));
        FakeQuantArgs inner = a;
        inner.dst = &wide;
        try {
            fake_quantize(inner);
            cast(wide, dst);
        } catch (...) {
            cudaFreeAsync(wide.data, m_impl->stream);
            throw;
        }
        MANTISSA_CUDA_CHECK(cudaFreeAsync(wide.data, m_impl->stream));
        return;
    }
    Tensor head = dst; // the rows src fills; the padding rows are zero
    head.shape = src.shape;
    cast(src, head); // exact: every stored float dtype but float64 widens exactly
    auto* data = static_cast<float*>(dst.data);
    if (const std::int64_t tail = dst.numel() - src.numel(); tail > 0)
        MANTISSA_CUDA_CHECK(cudaMemsetAsync(
            data + src.numel(), 0, static_cast<std::size_t>(tail) * sizeof(float), m_impl->stream));
    if (a.spec->hadamard) {
        cuda::HadamardSigns signs;
        const std::array<float, kHadamardSize> s = hadamard_signs(a.spec->hadamard_seed);
        std::copy(s.begin(), s.end(), signs.s);
        cuda::launch_random_hadamard_rows(data, rows, dst.numel() / rows, signs, m_impl->stream);
    }
    cuda::launch_fake_quantize(data, rows, dst.numel() / rows, q,
                               state_floats ? static_cast<float*>(a.state->data) : nullptr, stats,
                               a.record, m_impl->quant_scratch, m_impl->stream);
}

void CudaBackend::fake_quantize_pair(const FakeQuantArgs& rowwise,
                                     const FakeQuantArgs& columnwise) {
    const std::int64_t rows = check_fake_quantize(rowwise);
    // MX's 1x32 and 32x1 copies of one source, or NVFP4's 1x16 and 16x1 (either may be the
    // "row-wise" one: a weight's row-wise copy runs down its columns): one kernel reads the
    // source once for both.
    if (check_fake_quantize(columnwise) == rows && rowwise.src == columnwise.src &&
        !rowwise.spec->hadamard && !columnwise.spec->hadamard &&
        rowwise.dst->dtype == columnwise.dst->dtype && rowwise.record == columnwise.record) {
        const bool along = rowwise.spec->block_rows == 1;
        const FakeQuantArgs& ones = along ? rowwise : columnwise; // 1xn blocks
        const FakeQuantArgs& down = along ? columnwise : rowwise; // nx1 blocks
        const cuda::DeviceQuant oq = device_quant(ones);
        const cuda::DeviceQuant dq = device_quant(down);
        const std::int64_t cols = ones.dst->numel() / rows;
        if (cuda::fake_quantize_pair_apply(oq, dq, ones.src->dtype, ones.dst->dtype, cols)) {
            cuda::launch_fake_quantize_pair(ones.src->data, ones.src->dtype, ones.dst->data,
                                            down.dst->data, ones.dst->dtype, rows, cols, oq, dq,
                                            static_cast<double*>(ones.stats->data),
                                            static_cast<double*>(down.stats->data), ones.record,
                                            m_impl->quant_scratch, m_impl->stream);
            return;
        }
    }
    Backend::fake_quantize_pair(rowwise, columnwise);
}

void CudaBackend::quantize_fp8(const Fp8QuantArgs& a) {
    const Fp8QuantShape view = check_quantize_fp8(a); // fp8_gemm.h: the same rules on every engine
    cuda::launch_quantize_fp8(a.src->data, a.src->dtype, view.rows, view.cols,
                              device_quant(*a.spec, 0), codes_out(a), m_impl->quant_scratch,
                              m_impl->stream);
}

void CudaBackend::activation_backward_bias_grad_fp8(Activation act, const Tensor& x,
                                                    const Tensor& y, const Tensor& dy, Tensor& dz,
                                                    Tensor& db, const Fp8QuantArgs& codes) {
    Fp8QuantArgs of_dz = codes;
    of_dz.src = &dz;
    const Fp8QuantShape view = check_quantize_fp8(of_dz); // the codes' shape and rules
    const bool fits = act == Activation::Relu && y.dtype == dy.dtype && dz.dtype == dy.dtype &&
                      y.numel() == dy.numel() && dz.numel() == dy.numel() &&
                      view.rows * view.cols == dy.numel() && db.numel() == view.cols && y.data &&
                      dy.data && db.data;
    if (fits) {
        const bool ran = cuda::launch_relu_grad_fp8(
            y.data, dy.data, dy.dtype, view.rows, view.cols, device_quant(*codes.spec, 0),
            codes_out(codes), m_impl->quant_scratch, m_impl->bias_scratch,
            cuda::kBiasGradScratchBytes, db.data, db.dtype, m_impl->stream);
        if (ran) return;
    }
    Backend::activation_backward_bias_grad_fp8(act, x, y, dy, dz, db, codes);
}

} // namespace mantissa
