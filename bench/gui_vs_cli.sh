#!/usr/bin/env bash
# Measures the desktop app's training throughput against mantissa-cli on the same experiment:
# for each policy, the CLI and the app (under Xvfb, charts redrawing) run alternately, twice,
# and the median ms/step of each run is compared; the app also reports how late its event loop
# answered a 10 ms timer meanwhile (p99 and max). Run from the repository root after a build.
set -euo pipefail
cli=${MANTISSA_CLI:-build/dev/app/mantissa-cli}
app=${MANTISSA_APP:-build/dev/ui/mantissa}
config=${1:-resources/experiments/mlp-small.json}
policies=${2:-float32,mixed_float16,mixed_bfloat16}
epochs=${EPOCHS:-2}
rounds=${ROUNDS:-2}
out=${OUT:-bench/out/gui_vs_cli}
mkdir -p "$out"
py=/usr/bin/python3

median_cli() { # the summary record's median_step_ms of a metrics JSONL file
    $py -c 'import json,sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r.get("type") == "summary": print(r["median_step_ms"])' "$1"
}
median_app() {
    $py -c 'import json,sys; print(json.load(open(sys.argv[1]))["runs"][0]["median_step_ms"])' "$1"
}
ui_late() { # p99 and max lateness of the app's 10 ms event-loop probe while it trained
    $py -c 'import json,sys; u = json.load(open(sys.argv[1]))["ui"]
print(u["p99_late_ms"], u["max_late_ms"])' "$1"
}

echo "date: $(date -u +%Y-%m-%d), $(nproc) CPUs: $(lscpu | sed -n 's/^Model name: *//p')"
echo "config: $config, $epochs epochs, $rounds rounds alternating CLI and app"
printf '| policy | CLI ms/step | app ms/step | app throughput vs CLI | UI event loop late, p99 / max |\n|---|---|---|---|---|\n'
IFS=, read -ra list <<<"$policies"
for policy in "${list[@]}"; do
    exp="$out/$policy.json"
    $py - "$config" "$exp" "$policy" "$epochs" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); d["policy"] = sys.argv[3]; d["epochs"] = int(sys.argv[4])
d["device"] = "cpu"; json.dump(d, open(sys.argv[2], "w"), indent=2)
PY
    cli_ms=() app_ms=() late_p99=() late_max=()
    for ((r = 0; r < rounds; ++r)); do
        "$cli" train --config "$exp" --metrics "$out/$policy-cli-$r.jsonl" >/dev/null
        cli_ms+=("$(median_cli "$out/$policy-cli-$r.jsonl")")
        xvfb-run -a -s "-screen 0 1600x1000x24" "$app" "$exp" --train \
            --report "$out/$policy-app-$r.json" >/dev/null 2>&1
        app_ms+=("$(median_app "$out/$policy-app-$r.json")")
        read -r p99 max < <(ui_late "$out/$policy-app-$r.json")
        late_p99+=("$p99") late_max+=("$max")
    done
    $py - "$policy" "${cli_ms[*]}" "${app_ms[*]}" "${late_p99[*]}" "${late_max[*]}" <<'PY'
import statistics, sys
cli = [float(x) for x in sys.argv[2].split()]; app = [float(x) for x in sys.argv[3].split()]
p99 = max(float(x) for x in sys.argv[4].split()); worst = max(float(x) for x in sys.argv[5].split())
c, a = statistics.median(cli), statistics.median(app)
print(f"| {sys.argv[1]} | {c:.2f} | {a:.2f} | {100 * c / a:.0f}% | {p99:.1f} / {worst:.1f} ms |")
PY
done
