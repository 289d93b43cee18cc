// `train --data-parallel`: option parsing, MPI start-up and the ranks' common exit paths.
#include "app/cli/data_parallel.h"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/backend/factory/backend_factory.h"
#include "core/error.h"
#include "core/parallel/mpi_communicator.h"
#include "core/parallel/nccl_communicator.h"
#include "core/parallel/nccl_rank.h"

namespace mantissa::cli {

namespace {

// "R:S" from a test-hook environment variable; false when unset or malformed.
bool rank_and_step(const char* variable, int* rank, std::int64_t* step) {
    const char* text = std::getenv(variable);
    if (!text) return false;
    long long r = -1, s = 0;
    if (std::sscanf(text, "%lld:%lld", &r, &s) != 2 || r < 0 || s < 1) return false;
    *rank = static_cast<int>(r);
    *step = s;
    return true;
}

// The exit status main() gives an exception (2 bad input, 1 anything else).
int exit_status_of(std::exception_ptr error) {
    try {
        std::rethrow_exception(error);
    } catch (const UsageError&) {
        return 2;
    } catch (const Error& e) {
        return e.kind() == ErrorKind::Config || e.kind() == ErrorKind::InvalidArgument ||
                       e.kind() == ErrorKind::Shape
                   ? 2
                   : 1;
    } catch (...) {
        return 1;
    }
}

} // namespace

void add_data_parallel_options(ArgParser& parser) {
    parser.add_flag("--data-parallel",
                    "train as one rank of an MPI job (mpirun -np N ...): each rank takes "
                    "batch/N examples of every batch and the gradients are averaged");
    parser.add_option("--allreduce-dtype", "D",
                      "with --data-parallel: the gradients' dtype on the wire: float32 "
                      "(default), bfloat16 or float16 (half the bytes), float64");
}

ParallelRun start_data_parallel(const ArgParser& parser, const std::string& device) {
    ParallelRun run;
    const bool wanted = parser.has("--data-parallel");
    if (!wanted) {
        if (parser.has("--allreduce-dtype"))
            throw UsageError("--allreduce-dtype: only with --data-parallel");
        return run;
    }
    if (parser.has("--allreduce-dtype")) {
        const std::string name = parser.value("--allreduce-dtype");
        DType dtype = DType::Float32;
        try {
            dtype = dtype_from_name(name);
        } catch (const Error&) {
            dtype = DType::UInt8; // rejected below with the list
        }
        if (dtype != DType::Float32 && dtype != DType::BFloat16 && dtype != DType::Float16 &&
            dtype != DType::Float64)
            throw UsageError("--allreduce-dtype: expected float32, bfloat16, float16 or float64, "
                             "got '" +
                             name + "'");
        run.options.allreduce_dtype = dtype;
    }
    run.uses_nccl = device.rfind("cuda", 0) == 0;
    if (run.uses_nccl && !nccl_built_in())
        throw UsageError("--data-parallel --device cuda: this build has no NCCL; rebuild with the "
                         "CUDA toolkit, NCCL (nccl.h, libnccl.so; cmake -DNCCL_ROOT=<prefix>) and "
                         "Open MPI, or use --device cpu");
    if (!mpi_built_in())
        throw UsageError("--data-parallel: this build has no MPI. Install Open MPI (Debian/Ubuntu: "
                         "apt install libopenmpi-dev openmpi-bin, or run ./mantissa.sh), rebuild, "
                         "then start the ranks with: mpirun -np 2 mantissa-cli train "
                         "--data-parallel ...");
    if (!launched_by_mpi_launcher())
        throw UsageError("--data-parallel: this process was not started by mpirun or srun; run "
                         "e.g. 'mpirun -np 2 mantissa-cli train --data-parallel --config FILE' "
                         "(Slurm: 'srun --mpi=pmix -n 2 mantissa-cli train --data-parallel ...')");
    run.communicator = make_mpi_communicator();
    run.options.communicator = run.communicator.get();
    run.device = "cpu"; // "auto" must not put two ranks on one GPU
    if (run.uses_nccl) {
        int visible = 0;
        for (const DeviceInfo& d : available_devices()) visible += d.is_gpu ? 1 : 0;
        const int local = local_rank_from_env([](const char* name) { return std::getenv(name); });
        try {
            run.device = rank_device(device, run.rank(), local, visible);
        } catch (const Error& e) {
            throw UsageError(std::string("--data-parallel: ") + e.what());
        }
    }
    rank_and_step("MANTISSA_TEST_INJECT_NONFINITE", &run.options.inject_nonfinite_rank,
                  &run.options.inject_nonfinite_step);
    rank_and_step("MANTISSA_TEST_FAIL_RANK", &run.fail_rank, &run.fail_step);
    return run;
}

void attach_nccl(ParallelRun& run, Backend& engine) {
    try {
        std::unique_ptr<Communicator> nccl = make_nccl_communicator(run.communicator, engine);
        run.communicator = std::move(nccl);
        run.options.communicator = run.communicator.get();
    } catch (...) {
        // NCCL's start is collective: a rank that cannot join leaves the others waiting in it,
        // so this one ends the job.
        if (!run.communicator) std::rethrow_exception(std::current_exception());
        fail_all_ranks(run, std::current_exception());
    }
}

bool setup_failed_somewhere(ParallelRun& run, std::exception_ptr error, int* exit_status) {
    if (!run.enabled()) {
        if (error) std::rethrow_exception(error);
        return false;
    }
    const double mine = error ? 1.0 : 0.0;
    std::vector<double> failed(static_cast<std::size_t>(run.size()));
    run.communicator->allgather({&mine, 1}, failed);
    bool any = false;
    for (double f : failed) any = any || f != 0;
    if (!any) return false;
    if (error) {
        if (run.is_root() || failed[0] == 0) std::rethrow_exception(error);
        *exit_status = exit_status_of(error); // rank 0 failed the same way and says so
        return true;
    }
    if (run.is_root())
        for (std::size_t r = 1; r < failed.size(); ++r)
            if (failed[r] != 0)
                std::fprintf(stderr, "mantissa-cli train: rank %zu failed during setup\n", r);
    *exit_status = 1;
    return true;
}

void fail_all_ranks(ParallelRun& run, std::exception_ptr error) {
    if (!run.enabled()) std::rethrow_exception(error);
    std::string what = "unknown error";
    try {
        std::rethrow_exception(error);
    } catch (const Error& e) {
        what = std::string(error_kind_name(e.kind())) + ": " + e.what();
    } catch (const std::exception& e) {
        what = e.what();
    } catch (...) {
    }
    std::fprintf(stderr,
                 "mantissa-cli train: rank %d of %d failed: %s; stopping every rank (MPI_Abort)\n",
                 run.rank(), run.size(), what.c_str());
    std::fflush(stderr);
    run.communicator->abort(1);
    std::_Exit(1); // MPI_Abort does not return; this is for a communicator that would
}

} // namespace mantissa::cli
