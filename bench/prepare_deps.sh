#!/usr/bin/env bash
# Run HERE (the build machine), before a GPU session: packs what the GPU box lacks into the
# git-ignored .deps/ so the `run` tool can carry it: Eigen and nlohmann-json headers with their
# CMake package files (a relocatable prefix), and the MNIST IDX files as one tarball.
# With --cli it also builds a mantissa-cli the GPU box can run as it is (.deps/bin), so a device
# call spends no lease time compiling: CUDA for sm_90, -march=x86-64-v3 (not this CPU's native
# set), no MPI, and the Debian libraries it needs that the GPU image may lack in .deps/lib.
# bench/gpu_call.sh uses it when every library resolves there, else it builds.
#   usage: bench/prepare_deps.sh [--cli]
set -euo pipefail
cd "$(dirname "$0")/.."
deps=.deps
with_cli=0
case ${1:-} in
"") ;;
--cli) with_cli=1 ;;
*) echo "usage: bench/prepare_deps.sh [--cli]" >&2; exit 2 ;;
esac
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
if [ $with_cli -eq 1 ]; then
    command -v nvcc > /dev/null || [ -x /usr/local/cuda/bin/nvcc ] \
        || { echo "prepare_deps: --cli needs nvcc (the CUDA toolkit)" >&2; exit 1; }
    [ -x /usr/local/cuda/bin/nvcc ] && export PATH=/usr/local/cuda/bin:$PATH
    dir=build/gpu-carry
    cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DMANTISSA_BUILD_UI=OFF \
        -DMANTISSA_WITH_CUDA=ON -DMANTISSA_NATIVE=OFF -DCMAKE_CXX_FLAGS=-march=x86-64-v3 \
        -DCMAKE_DISABLE_FIND_PACKAGE_MPI=ON > /dev/null
    cmake --build "$dir" --target mantissa-cli
    mkdir -p "$deps/bin" "$deps/lib"
    cp "$dir/app/mantissa-cli" "$deps/bin/"
    git rev-parse HEAD > "$deps/bin/commit.txt"
    git status --porcelain --untracked-files=no | grep -q . && echo "(with uncommitted changes)" >> "$deps/bin/commit.txt"
    # Everything it links but the C/C++ runtime, CUDA's libraries (the GPU image has its own) and
    # what every Linux has.
    ldd "$dir/app/mantissa-cli" | awk '$3 ~ /^\// {print $3}' | while read -r lib; do
        case $(basename "$lib") in
        libc.so* | libm.so* | libstdc++* | libgcc_s* | libgomp* | libpthread* | libdl.so* | librt.so* \
            | libz.so* | libcublas* | libcudnn* | libcudart* | libnccl*) ;;
        *) cp -L "$lib" "$deps/lib/" ;;
        esac
    done
    echo "prepare_deps: .deps/bin/mantissa-cli ($(cat "$deps/bin/commit.txt" | tr '\n' ' ')), libraries: $(ls "$deps/lib" | tr '\n' ' ')"
fi
du -sh "$deps"
echo "prepare_deps: .deps ready; carry it: run(carry=[\".deps\"], ...)"
