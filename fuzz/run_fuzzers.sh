#!/usr/bin/env bash
# Runs every libFuzzer target of a MANTISSA_FUZZ build for a bounded time from its seed corpus
# (fuzz/corpus/<name>/), so CI and people run the same thing. A crash, leak, hang or sanitizer
# report fails the script and leaves the input in $MANTISSA_FUZZ_ARTIFACTS for a regression test.
#
#   fuzz/run_fuzzers.sh BUILD_DIR [TARGET...]
#   MANTISSA_FUZZ_SECONDS  seconds per target (default 30: 6 targets keep the CI stage near 3 min)
#   MANTISSA_FUZZ_ARTIFACTS where crash inputs go (default BUILD_DIR/fuzz-artifacts)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
build="${1:?usage: fuzz/run_fuzzers.sh BUILD_DIR [TARGET...]}"
shift
seconds="${MANTISSA_FUZZ_SECONDS:-30}"
artifacts="${MANTISSA_FUZZ_ARTIFACTS:-$build/fuzz-artifacts}"
mkdir -p "$artifacts"

targets=("$@")
if [ "${#targets[@]}" -eq 0 ]; then
    for exe in "$build"/fuzz/fuzz_*; do
        [ -x "$exe" ] && [ -f "$exe" ] && targets+=("$(basename "$exe" | sed 's/^fuzz_//')")
    done
fi
[ "${#targets[@]}" -gt 0 ] || {
    echo "run_fuzzers.sh: no fuzz_* executables in $build/fuzz (configure with MANTISSA_FUZZ=ON)" >&2
    exit 2
}

status=0
for name in "${targets[@]}"; do
    exe="$build/fuzz/fuzz_$name"
    seeds="$here/corpus/$name"
    [ -d "$seeds" ] || { echo "run_fuzzers.sh: no seed corpus $seeds" >&2; exit 2; }
    # New inputs go to a scratch copy: the repository keeps only the small hand-picked seeds.
    work="$(mktemp -d "${TMPDIR:-/tmp}/mantissa-fuzz-$name.XXXXXX")"
    cp "$seeds"/* "$work"/
    args=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=1024
        -print_final_stats=1 -artifact_prefix="$artifacts/$name-")
    [ -f "$here/$name.dict" ] && args+=(-dict="$here/$name.dict")
    echo "==> fuzz_$name: ${seconds} s from $(ls "$seeds" | wc -l) seeds"
    log="$artifacts/$name.log"
    if "$exe" "${args[@]}" "$work" >"$log" 2>&1; then
        execs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)"
        echo "    ok: ${execs:-?} executions, corpus grew to $(ls "$work" | wc -l) inputs"
    else
        status=1
        echo "    FAILED: see $log; the input is in $artifacts/$name-*" >&2
        tail -n 40 "$log" >&2
    fi
    rm -rf "$work"
done
exit "$status"
