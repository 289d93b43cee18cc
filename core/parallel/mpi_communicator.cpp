// MPI communicator. 16-bit gradients travel as uint16 with user-defined sum operations (MPI has
// no bfloat16/float16 types): each pairwise sum is done in float32 and rounded once, the same
// "cast, reduce, cast back" that PyTorch's bf16/fp16 compression hooks perform with NCCL.
#include "core/parallel/mpi_communicator.h"

#include <cstdlib>

#include "core/error.h"

#ifdef MANTISSA_HAVE_MPI
#include <climits>
#include <cstdint>

#include <mpi.h>

#include "core/numeric/half.h"
#endif

namespace mantissa {

bool launched_by_mpi_launcher() {
    // Open MPI's mpirun, MPICH/Hydra, PMI-1/2 and PMIx (srun --mpi=pmix) each set one of these.
    for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "PMI_RANK",
                             "MPI_LOCALNRANKS", "HYDRA_CONTROL_FD"})
        if (std::getenv(name)) return true;
    return false;
}

#ifndef MANTISSA_HAVE_MPI

bool mpi_built_in() {
    return false;
}

std::unique_ptr<Communicator> make_mpi_communicator() {
    throw Error(ErrorKind::Config,
                "this build has no MPI: install Open MPI (Debian/Ubuntu: apt install "
                "libopenmpi-dev openmpi-bin, or run ./mantissa.sh) and rebuild");
}

#else

namespace {

void sum_bfloat16(void* in, void* inout, int* len, MPI_Datatype*) {
    const auto* a = static_cast<const std::uint16_t*>(in);
    auto* b = static_cast<std::uint16_t*>(inout);
    for (int i = 0; i < *len; ++i)
        b[i] = float_to_bfloat16_bits(bfloat16_bits_to_float(a[i]) + bfloat16_bits_to_float(b[i]));
}

void sum_float16(void* in, void* inout, int* len, MPI_Datatype*) {
    const auto* a = static_cast<const std::uint16_t*>(in);
    auto* b = static_cast<std::uint16_t*>(inout);
    for (int i = 0; i < *len; ++i)
        b[i] = float_to_half_bits(half_bits_to_float(a[i]) + half_bits_to_float(b[i]));
}

class MpiCommunicator final : public Communicator {
public:
    MpiCommunicator() {
        int initialized = 0;
        MPI_Initialized(&initialized);
        if (!initialized) {
            int provided = 0;
            if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
                throw Error(ErrorKind::Device, "MPI_Init_thread failed");
            m_owns_mpi = true;
        }
        MPI_Comm_dup(MPI_COMM_WORLD, &m_comm);
        // Errors come back as codes (thrown as Error below) instead of MPI's default of aborting
        // the job from inside the library with no word on what the trainer was doing.
        MPI_Comm_set_errhandler(m_comm, MPI_ERRORS_RETURN);
        MPI_Comm_rank(m_comm, &m_rank);
        MPI_Comm_size(m_comm, &m_size);
        MPI_Op_create(&sum_bfloat16, 1, &m_sum_bf16);
        MPI_Op_create(&sum_float16, 1, &m_sum_f16);
    }
    ~MpiCommunicator() override {
        MPI_Op_free(&m_sum_bf16);
        MPI_Op_free(&m_sum_f16);
        MPI_Comm_free(&m_comm);
        if (m_owns_mpi) MPI_Finalize();
    }

    int rank() const override { return m_rank; }
    int size() const override { return m_size; }
    std::string name() const override {
        char version[MPI_MAX_LIBRARY_VERSION_STRING] = {};
        int length = 0;
        MPI_Get_library_version(version, &length);
        std::string text(version, static_cast<std::size_t>(length));
        // "Open MPI v4.1.4, package: Debian OpenMPI, ...": the part before the first comma.
        if (const auto cut = text.find_first_of(",\n"); cut != std::string::npos) text.resize(cut);
        return "MPI (" + text + ")";
    }

    void allreduce_sum(void* data, std::size_t count, DType dtype) override {
        if (count > static_cast<std::size_t>(INT_MAX))
            throw Error(ErrorKind::InvalidArgument,
                        "allreduce_sum: " + std::to_string(count) + " elements exceed MPI's int");
        MPI_Datatype type = MPI_FLOAT;
        MPI_Op op = MPI_SUM;
        switch (dtype) {
        case DType::Float32:
            break;
        case DType::Float64:
            type = MPI_DOUBLE;
            break;
        case DType::BFloat16:
            type = MPI_UINT16_T, op = m_sum_bf16;
            break;
        case DType::Float16:
            type = MPI_UINT16_T, op = m_sum_f16;
            break;
        default:
            throw Error(ErrorKind::InvalidArgument, "allreduce_sum: cannot sum " +
                                                        std::string(dtype_name(dtype)) +
                                                        " elements");
        }
        check(MPI_Allreduce(MPI_IN_PLACE, data, static_cast<int>(count), type, op, m_comm),
              "MPI_Allreduce (gradients)");
    }

    std::int64_t allreduce_max(std::int64_t value) override {
        std::int64_t out = value;
        check(MPI_Allreduce(&value, &out, 1, MPI_INT64_T, MPI_MAX, m_comm), "MPI_Allreduce (max)");
        return out;
    }

    void allgather(std::span<const double> mine, std::span<double> all) override {
        if (all.size() != mine.size() * static_cast<std::size_t>(m_size))
            throw Error(ErrorKind::InvalidArgument,
                        "allgather: output holds " + std::to_string(all.size()) + " values");
        check(MPI_Allgather(mine.data(), static_cast<int>(mine.size()), MPI_DOUBLE, all.data(),
                            static_cast<int>(mine.size()), MPI_DOUBLE, m_comm),
              "MPI_Allgather");
    }

    void barrier() override { check(MPI_Barrier(m_comm), "MPI_Barrier"); }

    void abort(int exit_code) override { MPI_Abort(m_comm, exit_code); }

private:
    void check(int code, const char* what) const {
        if (code == MPI_SUCCESS) return;
        char text[MPI_MAX_ERROR_STRING] = {};
        int length = 0;
        MPI_Error_string(code, text, &length);
        throw Error(ErrorKind::Device, std::string(what) + " failed on rank " +
                                           std::to_string(m_rank) + " of " +
                                           std::to_string(m_size) + ": " +
                                           std::string(text, static_cast<std::size_t>(length)));
    }

    MPI_Comm m_comm = MPI_COMM_NULL;
    MPI_Op m_sum_bf16 = MPI_OP_NULL, m_sum_f16 = MPI_OP_NULL;
    int m_rank = 0, m_size = 1;
    bool m_owns_mpi = false;
};

} // namespace

bool mpi_built_in() {
    return true;
}

std::unique_ptr<Communicator> make_mpi_communicator() {
    return std::make_unique<MpiCommunicator>();
}

#endif

} // namespace mantissa
