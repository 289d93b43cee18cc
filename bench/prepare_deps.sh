#!/usr/bin/env bash
# Run HERE (the build machine), before a GPU session: packs what the GPU box lacks into the
# git-ignored .deps/ so the `run` tool can carry it: Eigen and nlohmann-json headers with their
# CMake package files (a relocatable prefix), and the MNIST IDX files as one tarball.
set -euo pipefail
cd "$(dirname "$0")/.."
deps=.deps
rm -rf "$deps"
mkdir -p "$deps/include" "$deps/share/eigen3" "$deps/share/cmake"
# Eigen: the library headers only (unsupported/ is not used), and its CMake package.
mkdir -p "$deps/include/eigen3"
cp -r /usr/include/eigen3/Eigen "$deps/include/eigen3/"
cp /usr/include/eigen3/signature_of_eigen3_matrix_library "$deps/include/eigen3/" 2>/dev/null || true
cp -r /usr/share/eigen3/cmake "$deps/share/eigen3/"
# nlohmann-json: headers and CMake package (its targets file finds the prefix from its own path).
cp -r /usr/include/nlohmann "$deps/include/"
cp -r /usr/share/cmake/nlohmann_json "$deps/share/cmake/"
# MNIST: the four verified IDX files, compressed (the GPU script unpacks them into .deps/mnist).
src=${MANTISSA_DATA:-data/mnist}
for f in train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte t10k-labels-idx1-ubyte; do
    [ -f "$src/$f" ] || { echo "prepare_deps: $src/$f is missing; run ./mantissa.sh once to fetch MNIST" >&2; exit 1; }
done
tar -C "$src" -czf "$deps/mnist.tar.gz" train-images-idx3-ubyte train-labels-idx1-ubyte \
    t10k-images-idx3-ubyte t10k-labels-idx1-ubyte
du -sh "$deps"
echo "prepare_deps: .deps ready; carry it: run(carry=[\".deps\"], ...)"
