// The MPI communicator (MPI_COMM_WORLD as mpirun or srun started it), behind the Communicator
// interface. Built only when CMake found MPI; otherwise make_mpi_communicator() says how to get it.
#pragma once

#include <memory>

#include "core/parallel/communicator.h"

namespace mantissa {

// True when this build was linked against an MPI library (Open MPI: libopenmpi-dev).
bool mpi_built_in();

// True when a launcher started this process as one rank of a job: mpirun/mpiexec (Open MPI,
// MPICH) or srun with PMI/PMIx. Lets `--data-parallel` refuse to run alone instead of silently
// training as a one-rank "job".
bool launched_by_mpi_launcher();

// Initialises MPI (MPI_THREAD_FUNNELED: only the training thread calls MPI) and returns
// MPI_COMM_WORLD's duplicate with MPI_ERRORS_RETURN, so a failed transfer throws Error(Device)
// naming the rank instead of hanging or aborting silently. Finalises MPI when destroyed.
// Without MPI in the build: throws Error(Config) saying which packages to install.
std::unique_ptr<Communicator> make_mpi_communicator();

} // namespace mantissa
