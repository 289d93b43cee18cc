// The one way the CPU engine includes Eigen: GCC 12 reports false "(maybe) uninitialized" warnings
// inside Eigen's AVX-512 kernels (GCC PR 105593); they are silenced here, for the engine's files
// only.
#pragma once

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

#include <Eigen/Core>
