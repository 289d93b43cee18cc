// The NCCL path's host side, which runs without a GPU: the rank -> GPU mapping from the
// launcher's environment, the allreduce dtypes' NCCL types, and what a build or an engine that
// cannot make NCCL ranks says. The collectives themselves need two GPUs (bench/run_gpu_multi.sh).
#include <QtTest>

#include <map>
#include <memory>
#include <string>

#include "core/backend/cpu/cpu_backend.h"
#include "core/error.h"
#include "core/parallel/nccl_communicator.h"
#include "core/parallel/nccl_rank.h"
#include "core/parallel/single_process_communicator.h"

using namespace mantissa;

namespace {

const QString kMlp = QStringLiteral(MANTISSA_SOURCE_DIR "/resources/experiments/mlp-small.json");

int local_rank(const std::map<std::string, std::string>& env) {
    return local_rank_from_env([&](const char* name) -> const char* {
        const auto it = env.find(name);
        return it == env.end() ? nullptr : it->second.c_str();
    });
}

// mantissa-cli without any launcher variable in its environment (ctest may run under one).
QProcessEnvironment clean_environment() {
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    for (const char* key : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "PMI_RANK",
                            "MPI_LOCALNRANKS", "HYDRA_CONTROL_FD"})
        env.remove(key);
    for (const char* kv :
         {"OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
          "OMPI_MCA_btl_vader_single_copy_mechanism=none", "OMPI_MCA_btl=self,vader",
          "OMPI_MCA_oob_tcp_if_include=lo", "OMPI_MCA_rmaps_base_oversubscribe=1"}) {
        const QString text = kv;
        if (!env.contains(text.section('=', 0, 0)))
            env.insert(text.section('=', 0, 0), text.section('=', 1));
    }
    return env;
}

struct Run {
    int status = -1;
    QString err;
};

Run run(const QString& program, const QStringList& args) {
    QProcess process;
    process.setProcessEnvironment(clean_environment());
    process.start(program, args);
    Run r;
    if (!process.waitForFinished(120000)) {
        process.kill();
        process.waitForFinished();
        r.err = "timed out";
        return r;
    }
    r.status = process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1;
    r.err = QString::fromUtf8(process.readAllStandardError());
    return r;
}

} // namespace

class TestNccl : public QObject {
    Q_OBJECT

private slots:
    void localRankComesFromTheLauncher() {
        QCOMPARE(local_rank({}), -1);
        QCOMPARE(local_rank({{"OMPI_COMM_WORLD_LOCAL_RANK", "3"}}), 3);
        QCOMPARE(local_rank({{"SLURM_LOCALID", "1"}}), 1);
        QCOMPARE(local_rank({{"MPI_LOCALRANKID", "2"}}), 2);
        QCOMPARE(local_rank({{"PMIX_LOCAL_RANK", "0"}}), 0);
        // Open MPI's own variable wins over Slurm's when mpirun runs inside an allocation.
        QCOMPARE(local_rank({{"OMPI_COMM_WORLD_LOCAL_RANK", "1"}, {"SLURM_LOCALID", "0"}}), 1);
        QCOMPARE(local_rank({{"OMPI_COMM_WORLD_LOCAL_RANK", "x1"}}), -1);
        QCOMPARE(local_rank({{"OMPI_COMM_WORLD_LOCAL_RANK", "-1"}}), -1);
        QCOMPARE(local_rank({{"OMPI_COMM_WORLD_LOCAL_RANK", ""}, {"SLURM_LOCALID", "5"}}), 5);
    }

    void eachRankGetsItsOwnGpu() {
        // Two hosts of 4 GPUs, ranks 0-7: the local rank picks the GPU on its host.
        QCOMPARE(cuda_device_for_rank(5, 1, 4), 1);
        QCOMPARE(cuda_device_for_rank(0, 0, 4), 0);
        // More ranks than GPUs on a host: they wrap (and share), as torchrun's LOCAL_RANK % n.
        QCOMPARE(cuda_device_for_rank(2, 2, 2), 0);
        // No local rank from the launcher: the global rank decides.
        QCOMPARE(cuda_device_for_rank(3, -1, 2), 1);
        QCOMPARE(rank_device("cuda", 1, 1, 2), std::string("cuda:1"));
        try {
            cuda_device_for_rank(1, 1, 0);
            QFAIL("no error");
        } catch (const Error& e) {
            QCOMPARE(e.kind(), ErrorKind::Device);
            QVERIFY2(QString(e.what()).contains("rank 1: no CUDA device is visible"), e.what());
            QVERIFY2(QString(e.what()).contains("--device cpu"), e.what());
        }
        // "cuda:1" on every rank would put them all on one GPU.
        try {
            rank_device("cuda:1", 0, 0, 2);
            QFAIL("no error");
        } catch (const Error& e) {
            QCOMPARE(e.kind(), ErrorKind::Config);
            QVERIFY2(QString(e.what()).contains("use --device cuda"), e.what());
            QVERIFY2(QString(e.what()).contains("CUDA_VISIBLE_DEVICES"), e.what());
        }
    }

    // ncclDataType_t's numbers are NCCL's ABI (nccl.h); the NCCL build static_asserts them too.
    void wireTypesAreNcclTypes() {
        QCOMPARE(static_cast<int>(nccl_wire_type(DType::Int32)), 2);    // ncclInt32
        QCOMPARE(static_cast<int>(nccl_wire_type(DType::Float16)), 6);  // ncclFloat16
        QCOMPARE(static_cast<int>(nccl_wire_type(DType::Float32)), 7);  // ncclFloat32
        QCOMPARE(static_cast<int>(nccl_wire_type(DType::Float64)), 8);  // ncclFloat64
        QCOMPARE(static_cast<int>(nccl_wire_type(DType::BFloat16)), 9); // ncclBfloat16
        for (DType d : {DType::UInt8, DType::Float8E4M3, DType::Float8E5M2}) {
            try {
                nccl_wire_type(d);
                QFAIL("no error");
            } catch (const Error& e) {
                QCOMPARE(e.kind(), ErrorKind::InvalidArgument);
                QVERIFY2(
                    QString(e.what()).contains(QString::fromStdString(std::string(dtype_name(d)))),
                    e.what());
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
            QFAIL("no error");
        } catch (const Error& e) {
            QCOMPARE(e.kind(), ErrorKind::Config);
            const QString what = e.what();
            QVERIFY2(what.contains(nccl_built_in() ? "NCCL ranks train on the CUDA engine"
                                                   : "this build has no NCCL"),
                     e.what());
            QVERIFY2(what.contains("--device cpu"), e.what());
        }
        QVERIFY(host != nullptr);
    }

    // `train --data-parallel --device cuda` outside mpirun: a usage error that says what to do.
    void cliSaysWhatCudaRanksNeed() {
        const Run r = run(QStringLiteral(MANTISSA_CLI_PATH),
                          {"train", "--config", kMlp, "--device", "cuda", "--data-parallel"});
        QCOMPARE(r.status, 2);
        if (nccl_built_in()) {
            QVERIFY2(r.err.contains("not started by mpirun"), qPrintable(r.err));
        } else {
            QVERIFY2(r.err.contains("this build has no NCCL"), qPrintable(r.err));
            QVERIFY2(r.err.contains("--device cpu"), qPrintable(r.err));
        }
    }

    // Under mpirun, an explicit GPU index is refused on every rank before any GPU is touched.
    void cliRefusesOneGpuForEveryRank() {
        if (!nccl_built_in()) QSKIP("this build has no NCCL (covered by cliSaysWhatCudaRanksNeed)");
        const QString mpirun = QStandardPaths::findExecutable("mpirun");
        if (mpirun.isEmpty()) QSKIP("mpirun is not installed");
        const Run r = run(mpirun, {"-np", "2", "--oversubscribe", QStringLiteral(MANTISSA_CLI_PATH),
                                   "train", "--config", kMlp, "--device", "cuda:1",
                                   "--data-parallel", "--max-steps", "1"});
        QVERIFY2(r.status != 0 && r.status != -1, qPrintable(r.err));
        QVERIFY2(r.err.contains("use --device cuda"), qPrintable(r.err));
    }
};

QTEST_APPLESS_MAIN(TestNccl)
#include "tst_nccl.moc"
