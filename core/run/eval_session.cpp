// EvalSession: compile for inference, upload the test split alone, run eval_batch over it.
#include "core/run/eval_session.h"

#include <algorithm>
#include <numeric>
#include <vector>

#include "core/error.h"
#include "core/plan/compile.h"
#include "core/plan/fp8_lowering.h"

namespace mantissa {

namespace {

SessionEngine open_engine(EvalSessionOptions& options) {
    return SessionEngine(std::move(options.engine), options.experiment.device);
}

std::size_t aligned(std::size_t bytes) {
    return (bytes + 255) / 256 * 256;
}

} // namespace

EvalSession::EvalSession(EvalSessionOptions options)
    : m_engine(open_engine(options)), m_experiment(std::move(options.experiment)) {
    validate_experiment(m_experiment);
    MnistSplit loaded;
    if (!options.data.data) loaded = load_mnist_test(find_data_dir(options.data.dir));
    const MnistSplit& test = options.data.data ? options.data.data->test : loaded;

    Backend& engine = backend();
    const Policy policy = policy_from_name(m_experiment.policy);
    m_model = std::make_unique<Model>(m_experiment.model, policy);
    CompileOptions compile_options;
    compile_options.policy = policy;
    compile_options.batch_size = m_experiment.batch_size;
    compile_options.optimizer = m_experiment.optimizer;
    compile_options.loss_scale = m_experiment.loss_scale;
    compile_options.inference_only = true;
    compile_options.fp8_gemm = resolve_fp8_gemm(policy, &engine);
    engine.set_tf32(m_experiment.tf32);
    // As the Trainer: pure 16-bit policies must show NaN as the CPU does.
    engine.set_propagate_nan(!policy.is_mixed() && (policy.compute == DType::Float16 ||
                                                    policy.compute == DType::BFloat16));
    m_plan = compile(*m_model, compile_options, engine);
    m_plan->initialize(engine, m_experiment.seed); // the scalars; the variables are replaced next
    load_model_weights(*m_plan, engine, options.weights, options.source, options.load);

    m_count = test.count;
    const std::int64_t pixels = test.rows * test.cols;
    m_images = {"test_images", DType::UInt8, {m_count, pixels}, MemCategory::Data, nullptr};
    m_labels = {"test_labels", DType::UInt8, {m_count}, MemCategory::Data, nullptr};
    m_order = {"test_permutation", DType::Int32, {m_count}, MemCategory::Data, nullptr};
    Tensor* all[] = {&m_images, &m_labels, &m_order};
    std::size_t total = 0;
    for (Tensor* t : all) total += aligned(t->bytes());
    m_buffer = engine.allocate(total);
    std::size_t offset = 0;
    for (Tensor* t : all) {
        t->data = static_cast<unsigned char*>(m_buffer.data()) + offset;
        offset += aligned(t->bytes());
        m_data_bytes += t->bytes();
    }
    engine.upload(test.images.data(), m_images);
    engine.upload(test.labels.data(), m_labels);
    std::vector<std::int32_t> identity(static_cast<std::size_t>(m_count));
    std::iota(identity.begin(), identity.end(), 0);
    engine.upload(identity.data(), m_order);
}

EvalSession::~EvalSession() = default;

MemoryByCategory EvalSession::memory() const {
    MemoryByCategory memory = m_plan->memory;
    memory[MemCategory::Data] += m_data_bytes;
    return memory;
}

EvalResult EvalSession::run() {
    Backend& engine = backend();
    Tensor& scalars = m_plan->tensor(m_plan->scalars);
    engine.begin_step(scalars);
    const std::int64_t batch = m_plan->batch_size;
    for (std::int64_t offset = 0; offset < m_count; offset += batch) {
        RunContext ctx;
        ctx.training = false;
        ctx.seed = m_experiment.seed;
        ctx.batch = {&m_images, &m_labels, &m_order, offset, std::min(batch, m_count - offset)};
        m_plan->eval_batch(engine, ctx);
    }
    const StepScalars result = engine.read_scalars(scalars);
    EvalResult out;
    out.examples = result.examples;
    if (result.examples > 0) {
        out.loss = result.loss_sum / static_cast<double>(result.examples);
        out.accuracy = static_cast<double>(result.correct) / static_cast<double>(result.examples);
    }
    return out;
}

} // namespace mantissa
