#!/usr/bin/env bash
# Run HERE (the build machine), before a GPU session: packs what the GPU box lacks into the
# git-ignored .deps/ so the `run` tool can carry it: Eigen and nlohmann-json headers with their
# CMake package files (a relocatable prefix), and the MNIST IDX files as one tarball.
# With --cli it also builds a mantissa-cli the GPU box can run as it is (.deps/bin), so a device
# call spends no lease time compiling: CUDA for sm_90, -march=x86-64-v3 (not this CPU's native
# set), no MPI, and the Debian libraries it needs that the GPU image may lack in .deps/lib.
# bench/gpu_call.sh uses it when every library resolves there, else it builds.
# With --gui it also packs the app's GPU test for run_gpu.sh's gui stage (.deps/gui.tar.xz): the
# tst_gui_device_training binary from the same build with the UI on, Qt's and every other
# library it and the offscreen platform plugin load (but the C/C++ runtime and CUDA's), the
# plugin and one font, xz-compressed to fit the 64 MiB the run tool carries.
#   usage: bench/prepare_deps.sh [--cli] [--gui]
set -euo pipefail
cd "$(dirname "$0")/.."
deps=.deps
with_cli=0 with_gui=0
for arg in "$@"; do
    case $arg in
    --cli) with_cli=1 ;;
    --gui) with_gui=1 ;;
    *) echo "usage: bench/prepare_deps.sh [--cli] [--gui]" >&2; exit 2 ;;
    esac
done
# copy_libs BINARY DEST: every library BINARY loads but the C/C++ runtime, CUDA's libraries (the
# GPU image has its own) and what every Linux has, into DEST.
copy_libs() {
    ldd "$1" | awk '$3 ~ /^\// {print $3}' | while read -r lib; do
        case $(basename "$lib") in
        libc.so* | libm.so* | libstdc++* | libgcc_s* | libgomp* | libpthread* | libdl.so* | librt.so* \
            | libz.so* | libcublas* | libcudnn* | libcudart* | libnccl*) ;;
        *) [ -f "$2/$(basename "$lib")" ] || cp -L "$lib" "$2/" ;;
        esac
    done
}
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
dir=build/gpu-carry
if [ $((with_cli + with_gui)) -gt 0 ]; then
    command -v nvcc > /dev/null || [ -x /usr/local/cuda/bin/nvcc ] \
        || { echo "prepare_deps: --cli and --gui need nvcc (the CUDA toolkit)" >&2; exit 1; }
    [ -x /usr/local/cuda/bin/nvcc ] && export PATH=/usr/local/cuda/bin:$PATH
    ui=OFF
    [ $with_gui -eq 1 ] && ui=ON
    cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DMANTISSA_BUILD_UI=$ui \
        -DMANTISSA_WITH_CUDA=ON -DMANTISSA_NATIVE=OFF -DCMAKE_CXX_FLAGS=-march=x86-64-v3 \
        -DCMAKE_DISABLE_FIND_PACKAGE_MPI=ON > /dev/null
fi
if [ $with_cli -eq 1 ]; then
    cmake --build "$dir" --target mantissa-cli
    mkdir -p "$deps/bin" "$deps/lib"
    cp "$dir/app/mantissa-cli" "$deps/bin/"
    git rev-parse HEAD > "$deps/bin/commit.txt"
    git status --porcelain --untracked-files=no | grep -q . && echo "(with uncommitted changes)" >> "$deps/bin/commit.txt"
    copy_libs "$dir/app/mantissa-cli" "$deps/lib"
    # xz: 24 MB of CUDA kernels and host code become about 4 (the 64 MiB carry limit);
    # bench/gpu_call.sh unpacks it.
    xz -T0 -6 "$deps/bin/mantissa-cli"
    echo "prepare_deps: .deps/bin/mantissa-cli.xz ($(cat "$deps/bin/commit.txt" | tr '\n' ' ')), libraries: $(ls "$deps/lib" | tr '\n' ' ')"
fi
if [ $with_gui -eq 1 ]; then
    plugins=$(qtpaths6 --query QT_INSTALL_PLUGINS 2> /dev/null || echo /usr/lib/x86_64-linux-gnu/qt6/plugins)
    [ -f "$plugins/platforms/libqoffscreen.so" ] \
        || { echo "prepare_deps: --gui needs Qt 6's offscreen plugin ($plugins/platforms)" >&2; exit 1; }
    cmake --build "$dir" --target tst_gui_device_training
    gui=$deps/gui
    mkdir -p "$gui/bin" "$gui/lib" "$gui/plugins/platforms" "$gui/fonts"
    cp "$dir/tests/tst_gui_device_training" "$gui/bin/"
    cp "$plugins/platforms/libqoffscreen.so" "$gui/plugins/platforms/"
    copy_libs "$gui/bin/tst_gui_device_training" "$gui/lib"
    copy_libs "$gui/plugins/platforms/libqoffscreen.so" "$gui/lib"
    font=$(fc-match -f '%{file}' sans 2> /dev/null || true)
    [ -f "$font" ] && cp "$font" "$gui/fonts/"
    git rev-parse HEAD > "$gui/commit.txt"
    tar -C "$gui" -cJf "$deps/gui.tar.xz" .
    rm -rf "$gui"
    echo "prepare_deps: .deps/gui.tar.xz ($(du -h "$deps/gui.tar.xz" | cut -f1)): tst_gui_device_training, Qt's offscreen plugin, $(tar -tJf "$deps/gui.tar.xz" | grep -c '^./lib/.') libraries"
fi
du -sh "$deps"
[ "$(du -sm "$deps" | cut -f1)" -le 64 ] || echo "prepare_deps: WARNING: .deps is over the 64 MiB the run tool carries" >&2
echo "prepare_deps: .deps ready; carry it: run(carry=[\".deps\"], ...)"
