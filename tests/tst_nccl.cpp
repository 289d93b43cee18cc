// The NCCL path's host side, which runs without a GPU: the rank -> GPU mapping from the
// launcher's environment, the allreduce dtypes' NCCL types, and what a build or an engine that
// cannot make NCCL ranks says. The collectives themselves need two GPUs (bench/run_gpu_multi.sh).

#include <cstdlib>
#include <initializer_list>
#include <map>
#include <memory>
#include <string>

#include "core/backend/cpu/cpu_backend.h"
#include "core/error.h"
#include "core/parallel/nccl_communicator.h"
#include "core/parallel/nccl_rank.h"
#include "core/parallel/single_process_communicator.h"
#include "tests/unit/files.h"
#include "tests/unit/process.h"
#include "tests/unit/unit_test.h"

using namespace mantissa;
using namespace mantissa::unit;

namespace {

const std::string kMlp = MANTISSA_SOURCE_DIR "/resources/experiments/mlp-small.json";

int local_rank(const std::map<std::string, std::string>& env) {
    return local_rank_from_env([&](const char* name) -> const char* {
        const auto it = env.find(name);
        return it == env.end() ? nullptr : it->second.c_str();
    });
}

// mantissa-cli without any launcher variable in its environment (ctest may run under one), and
// with Open MPI allowed to run as root on loopback (CI containers).
ProcessResult run(const std::string& program, const std::vector<std::string>& args) {
    ProcessOptions options;
    options.unset_env = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE",        "PMIX_RANK", "PMI_RANK",
                         "MPI_LOCALNRANKS",      "HYDRA_CONTROL_FD"};
    for (const auto& [key, value] : std::initializer_list<std::pair<const char*, const char*>>{
             {"OMPI_ALLOW_RUN_AS_ROOT", "1"},
             {"OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1"},
             {"OMPI_MCA_btl_vader_single_copy_mechanism", "none"},
             {"OMPI_MCA_btl", "self,vader"},
             {"OMPI_MCA_oob_tcp_if_include", "lo"},
             {"OMPI_MCA_rmaps_base_oversubscribe", "1"}}) {
        if (!std::getenv(key)) options.env.emplace_back(key, value);
    }
    options.timeout_ms = 120000;
    return run_process(program, args, options);
}

} // namespace

class TestNccl {
public:
    void localRankComesFromTheLauncher() {
        CHECK_EQ(local_rank({}), -1);
        CHECK_EQ(local_rank({{"OMPI_COMM_WORLD_LOCAL_RANK", "3"}}), 3);
        CHECK_EQ(local_rank({{"SLURM_LOCALID", "1"}}), 1);
        CHECK_EQ(local_rank({{"MPI_LOCALRANKID", "2"}}), 2);
        CHECK_EQ(local_rank({{"PMIX_LOCAL_RANK", "0"}}), 0);
        // Open MPI's own variable wins over Slurm's when mpirun runs inside an allocation.
        CHECK_EQ(local_rank({{"OMPI_COMM_WORLD_LOCAL_RANK", "1"}, {"SLURM_LOCALID", "0"}}), 1);
        CHECK_EQ(local_rank({{"OMPI_COMM_WORLD_LOCAL_RANK", "x1"}}), -1);
        CHECK_EQ(local_rank({{"OMPI_COMM_WORLD_LOCAL_RANK", "-1"}}), -1);
        CHECK_EQ(local_rank({{"OMPI_COMM_WORLD_LOCAL_RANK", ""}, {"SLURM_LOCALID", "5"}}), 5);
    }

    void eachRankGetsItsOwnGpu() {
        // Two hosts of 4 GPUs, ranks 0-7: the local rank picks the GPU on its host.
        CHECK_EQ(cuda_device_for_rank(5, 1, 4), 1);
        CHECK_EQ(cuda_device_for_rank(0, 0, 4), 0);
        // More ranks than GPUs on a host: they wrap (and share), as torchrun's LOCAL_RANK % n.
        CHECK_EQ(cuda_device_for_rank(2, 2, 2), 0);
        // No local rank from the launcher: the global rank decides.
        CHECK_EQ(cuda_device_for_rank(3, -1, 2), 1);
        CHECK_EQ(rank_device("cuda", 1, 1, 2), std::string("cuda:1"));
        try {
            cuda_device_for_rank(1, 1, 0);
            FAIL_TEST("no error");
        } catch (const Error& e) {
            CHECK_EQ(e.kind(), ErrorKind::Device);
            CHECK_MSG(contains(e.what(), "rank 1: no CUDA device is visible"), e.what());
            CHECK_MSG(contains(e.what(), "--device cpu"), e.what());
        }
        // "cuda:1" on every rank would put them all on one GPU.
        try {
            rank_device("cuda:1", 0, 0, 2);
            FAIL_TEST("no error");
        } catch (const Error& e) {
            CHECK_EQ(e.kind(), ErrorKind::Config);
            CHECK_MSG(contains(e.what(), "use --device cuda"), e.what());
            CHECK_MSG(contains(e.what(), "CUDA_VISIBLE_DEVICES"), e.what());
        }
    }

    // ncclDataType_t's numbers are NCCL's ABI (nccl.h); the NCCL build static_asserts them too.
    void wireTypesAreNcclTypes() {
        CHECK_EQ(static_cast<int>(nccl_wire_type(DType::Int32)), 2);    // ncclInt32
        CHECK_EQ(static_cast<int>(nccl_wire_type(DType::Float16)), 6);  // ncclFloat16
        CHECK_EQ(static_cast<int>(nccl_wire_type(DType::Float32)), 7);  // ncclFloat32
        CHECK_EQ(static_cast<int>(nccl_wire_type(DType::Float64)), 8);  // ncclFloat64
        CHECK_EQ(static_cast<int>(nccl_wire_type(DType::BFloat16)), 9); // ncclBfloat16
        for (DType d : {DType::UInt8, DType::Float8E4M3, DType::Float8E5M2}) {
            try {
                nccl_wire_type(d);
                FAIL_TEST("no error");
            } catch (const Error& e) {
                CHECK_EQ(e.kind(), ErrorKind::InvalidArgument);
                CHECK_MSG(contains(e.what(), std::string(dtype_name(d))), e.what());
            }
        }
    }

    // The CPU engine cannot make NCCL ranks (with NCCL in the build: wrong engine; without: no
    // NCCL). Either way the MPI communicator stays with the caller, to end the job through it.
    void cpuEngineCannotMakeNcclRanks() {
        CpuBackend cpu;
        std::unique_ptr<Communicator> host = std::make_unique<SingleProcessCommunicator>();
        try {
            make_nccl_communicator(host, cpu);
            FAIL_TEST("no error");
        } catch (const Error& e) {
            CHECK_EQ(e.kind(), ErrorKind::Config);
            const std::string what = e.what();
            CHECK_MSG(contains(what, nccl_built_in() ? "NCCL ranks train on the CUDA engine"
                                                     : "this build has no NCCL"),
                      e.what());
            CHECK_MSG(contains(what, "--device cpu"), e.what());
        }
        CHECK(host != nullptr);
    }

    // `train --data-parallel --device cuda` outside mpirun: a usage error that says what to do.
    void cliSaysWhatCudaRanksNeed() {
        const ProcessResult r = run(
            MANTISSA_CLI_PATH, {"train", "--config", kMlp, "--device", "cuda", "--data-parallel"});
        CHECK_EQ(r.status, 2);
        if (nccl_built_in()) {
            CHECK_MSG(contains(r.err, "not started by mpirun"), (r.err));
        } else {
            CHECK_MSG(contains(r.err, "this build has no NCCL"), (r.err));
            CHECK_MSG(contains(r.err, "--device cpu"), (r.err));
        }
    }

    // Under mpirun, an explicit GPU index is refused on every rank before any GPU is touched.
    void cliRefusesOneGpuForEveryRank() {
        if (!nccl_built_in())
            SKIP_TEST("this build has no NCCL (covered by cliSaysWhatCudaRanksNeed)");
        const std::string mpirun = find_executable("mpirun");
        if (mpirun.empty()) SKIP_TEST("mpirun is not installed");
        const ProcessResult r =
            run(mpirun, {"-np", "2", "--oversubscribe", MANTISSA_CLI_PATH, "train", "--config",
                         kMlp, "--device", "cuda:1", "--data-parallel", "--max-steps", "1"});
        CHECK_MSG(r.status != 0 && r.status != -1, (r.err));
        CHECK_MSG(contains(r.err, "use --device cuda"), (r.err));
    }
};

MANTISSA_TEST_MAIN(TestNccl, localRankComesFromTheLauncher, eachRankGetsItsOwnGpu,
                   wireTypesAreNcclTypes, cpuEngineCannotMakeNcclRanks, cliSaysWhatCudaRanksNeed,
                   cliRefusesOneGpuForEveryRank)
