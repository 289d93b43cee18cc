// `train --data-parallel`: the options, starting MPI, and how the ranks leave together when one
// of them fails (setup errors: every rank exits cleanly; errors mid-run: MPI_Abort naming the
// rank).
#pragma once

#include <cstdint>
#include <exception>
#include <memory>
#include <string>

#include "app/cli/args.h"
#include "core/parallel/communicator.h"
#include "core/train/trainer.h"

namespace mantissa::cli {

struct ParallelRun {
    std::unique_ptr<Communicator> communicator; // nullptr: an ordinary one-process run
    DataParallelOptions options;                // points at `communicator`
    // Test hook MANTISSA_TEST_FAIL_RANK=R:S: rank R throws after step S (a rank dying mid-run).
    int fail_rank = -1;
    std::int64_t fail_step = 0;
    // The device this rank opens: "cpu" for MPI ranks, "cuda:N" (its own GPU) for NCCL ranks.
    std::string device = "cpu";
    bool uses_nccl = false; // --device cuda: attach_nccl() once the engine is open

    bool enabled() const { return communicator != nullptr; }
    int rank() const { return communicator ? communicator->rank() : 0; }
    int size() const { return communicator ? communicator->size() : 1; }
    bool is_root() const { return rank() == 0; } // writes metrics, the summary and exports
};

// --data-parallel and --allreduce-dtype.
void add_data_parallel_options(ArgParser& parser);

// Reads the options and, with --data-parallel, starts MPI. UsageError when the build has no MPI,
// when no launcher (mpirun, srun) started this process, or for a bad --allreduce-dtype.
// `device` is the experiment's: "cuda" makes NCCL ranks (run.device = this rank's GPU; a build
// without NCCL, or "cuda:K", is a UsageError saying what to do), anything else MPI ranks on "cpu".
// Test hook MANTISSA_TEST_INJECT_NONFINITE=R:S: rank R alone sees an inf gradient at step S.
ParallelRun start_data_parallel(const ArgParser& parser, const std::string& device);

// NCCL ranks: wraps the MPI communicator in the NCCL one on `engine` (this rank's CUDA engine).
// Collective; a rank where it fails ends every rank (fail_all_ranks).
void attach_nccl(ParallelRun& run, Backend& engine);

// After setup (loading data, compiling the plan): `error` is this rank's exception, or null.
// Returns normally when every rank is ready. When any rank failed, rank 0's error is rethrown on
// rank 0 (so main() prints it once); a failing rank whose rank 0 succeeded rethrows its own;
// every other rank returns from here with `*exit_status` set and must end quietly. All of them
// then finalise MPI together instead of leaving the others waiting in a collective.
bool setup_failed_somewhere(ParallelRun& run, std::exception_ptr error, int* exit_status);

// A rank that failed mid-run: prints the rank and the error, then MPI_Abort ends every rank
// within MPI's kill timeout (mpirun reports which rank called it). One process: rethrows.
[[noreturn]] void fail_all_ranks(ParallelRun& run, std::exception_ptr error);

} // namespace mantissa::cli
