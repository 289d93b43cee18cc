#!/usr/bin/env python3
# Pairs one `mantissa-cli bench --json` line with one peer_torch.py line into a results.jsonl
# record (`pair`), appends GEMM throughput (`gemm`) and any other measured JSON object
# (`record`: build, selftest, time to 99%), and regenerates the GPU table of bench/RESULTS.md
# from bench/results.jsonl (`table`). `work` sums `mantissa-cli profile --json` files by work
# (matrix math, casts and quantisation, the rest) into one table across policies. Every record
# carries the versions bench/gpu_versions.py printed (GPU, driver, CUDA runtime, cuBLASLt, cuDNN,
# torch) when a VERSIONS.json is given.
# Only measured numbers are written; nothing is estimated.
import datetime
import json
import statistics
import sys


def last_json(path, kind):
    with open(path) as f:
        for line in reversed(f.read().splitlines()):
            line = line.strip()
            if line.startswith("{") and json.loads(line).get("type") == kind:
                return json.loads(line)
    raise SystemExit(f"gpu_results: no '{kind}' JSON line in {path}")


def now():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def versions(path):
    if not path:
        return None
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        return {"error": f"{path}: {e}"}


def append(results_path, record):
    with open(results_path, "a") as f:
        f.write(json.dumps(record) + "\n")
    print(json.dumps(record), flush=True)


def pair(mantissa_path, peer_path, label, results_path, rep, versions_path=None):
    m = last_json(mantissa_path, "bench")
    p = last_json(peer_path, "peer")
    record = {
        "kind": "pair",
        "date": now(),
        "device": p["device"],
        "config": m["config"],
        "policy": label,
        "batch": m["batch"],
        "rep": rep,
        "mantissa_ms": m["median_ms"],
        "peer": p["peer"],
        "peer_ms": p["ms"],
        "ratio": round(m["median_ms"] / p["ms"], 4) if p["ms"] > 0 else None,
        "mantissa_peak_bytes": m.get("device_bytes_in_use", m.get("memory_bytes")),
        "peer_peak_bytes": p["peak_bytes"],
        "mantissa_gflops": m["gflops"],
        "steps_per_epoch": p["steps_per_epoch"],
        "mantissa_epoch_s_from_ms": round(m["median_ms"] * p["steps_per_epoch"] / 1000.0, 3),
        "peer_epoch_s_from_ms": round(p["ms"] * p["steps_per_epoch"] / 1000.0, 3),
        "full_batches_only": bool(p.get("full_batches_timed")),
        "versions": versions(versions_path),
    }
    append(results_path, record)


def record(kind, data_path, results_path, versions_path=None):
    """Appends the last JSON object of data_path as a `kind` record (build, selftest, mnist99)."""
    data = None
    with open(data_path) as f:
        for line in reversed(f.read().splitlines()):
            if line.strip().startswith("{"):
                data = json.loads(line)
                break
    if data is None:
        raise SystemExit(f"gpu_results: no JSON object in {data_path}")
    append(results_path, {"kind": kind, "date": now(), **data, "versions": versions(versions_path)})


def gemm(gemm_path, results_path, versions_path=None):
    """Appends the cuBLAS GEMM throughput lines (mantissa-cli bench --gemm --json) as records."""
    date = now()
    with open(gemm_path) as f:
        for line in f:
            if line.strip().startswith("{"):
                g = json.loads(line)
                append(results_path, {"kind": "gemm", "date": date, "device": g["device"],
                                      "dtype": g["dtype"], "size": g["m"], "ms": g["ms"],
                                      "gflops": g["gflops"], "versions": versions(versions_path)})


def fp8(bench_path, model, gemm_mode, results_path, versions_path=None):
    """Appends each policy line of a `mantissa-cli bench --json` run of the FP8 comparison
    (bench/run_gpu.sh: mixed_bfloat16 and mixed_float8 under recipe.gemm `gemm_mode`)."""
    date = now()
    found = False
    with open(bench_path) as f:
        for line in f:
            if line.strip().startswith("{") and json.loads(line).get("type") == "bench":
                b = json.loads(line)
                found = True
                append(results_path, {"kind": "fp8_gemm", "date": date, "model": model,
                                      "gemm": gemm_mode, "device": b["device"],
                                      "policy": b["policy"], "batch": b["batch"],
                                      "median_ms": b["median_ms"], "gflops": b["gflops"],
                                      "versions": versions(versions_path)})
    if not found:
        raise SystemExit(f"gpu_results: no bench line in {bench_path}")


def speed(bench_path, tag, results_path, versions_path=None):
    """Appends each policy line of one `mantissa-cli bench --json` run (bench/run_gpu.sh's speed
    stage: several policies side by side), each with its ratio to the run's first policy."""
    date = now()
    lines = []
    with open(bench_path) as f:
        for line in f:
            if line.strip().startswith("{") and json.loads(line).get("type") == "bench":
                lines.append(json.loads(line))
    if not lines:
        raise SystemExit(f"gpu_results: no bench line in {bench_path}")
    base = lines[0]
    for b in lines:
        append(results_path, {"kind": "speed", "date": date, "case": tag, "device": b["device"],
                              "config": b["config"], "policy": b["policy"], "batch": b["batch"],
                              "median_ms": b["median_ms"], "p10_ms": b.get("p10_ms"),
                              "p90_ms": b.get("p90_ms"), "gflops": b["gflops"],
                              "vs": base["policy"],
                              "ratio": round(b["median_ms"] / base["median_ms"], 4)
                              if base["median_ms"] > 0 else None,
                              "versions": versions(versions_path)})


def kernels(csv_path, steps):
    """Prints an ncu --csv gpu__time_duration profile as ms per step by kernel, largest first."""
    import csv
    import io
    import signal
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `| head` may close the pipe early
    with open(csv_path) as f:
        text = f.read().splitlines()
    start = next((i for i, line in enumerate(text) if line.startswith('"ID"')), None)
    if start is None:
        raise SystemExit(f"gpu_results: no ncu table in {csv_path}")
    totals = {}
    for row in csv.DictReader(io.StringIO("\n".join(text[start:]))):
        name = row["Kernel Name"].split("(")[0][:90]
        key = (name, row.get("Grid Size", ""))
        ns = float(row["Metric Value"].replace(",", ""))
        scale = {"ns": 1.0, "us": 1e3, "usecond": 1e3, "ms": 1e6, "msecond": 1e6}.get(
            row.get("Metric Unit", "ns"), 1.0)
        count, total = totals.get(key, (0, 0.0))
        totals[key] = (count + 1, total + ns * scale)
    whole = sum(t for _, t in totals.values()) / steps / 1e6
    print(f"{whole:.3f} ms of kernels per step ({csv_path})")
    # ncu sees the whole process: a kernel launched fewer times than there are steps ran at setup
    # (the weights' initialisation, their first 16-bit copies) or in the warm-up only, not in
    # every step. The GEMMs (cuBLASLt's kernels) against the rest, the "small kernels" issue 26
    # counts, over the kernels of every step.
    every = {k: v for k, v in totals.items() if v[0] >= steps}
    gemm = sum(t for (name, _), (_, t) in every.items() if is_gemm_kernel(name)) / steps / 1e6
    rest = sum(t for (name, _), (_, t) in every.items() if not is_gemm_kernel(name)) / steps / 1e6
    if gemm + rest > 0:
        print(f"every step: {gemm + rest:.3f} ms, GEMMs {gemm:.3f} ms, other kernels {rest:.3f} ms "
              f"({100 * rest / (gemm + rest):.1f}%); not every step: {whole - gemm - rest:.3f} ms")
    for (name, grid), (count, total) in sorted(totals.items(), key=lambda kv: -kv[1][1]):
        print(f"{total / steps / 1e6:8.3f} ms/step  {count / steps:5.1f} launches  grid {grid}  {name}")


def step_work(row):
    """A profile row's work: its "work" field, or, for a profile written before the field
    (2026-11-30), the same classes from the op's name."""
    if "work" in row:
        return row["work"]
    op = row["op"]
    if "gemm" in op or op.startswith("conv2d"):
        return "matrix_math"
    if op.startswith("cast ") or op.startswith("quantize "):
        return "conversion"
    return "other"


def bench_steps(path):
    """policy -> median ms a step from a `mantissa-cli bench --json` file ({} if it is missing)."""
    steps = {}
    try:
        with open(path) as f:
            for line in f:
                line = line.strip()
                if line.startswith("{"):
                    r = json.loads(line)
                    if r.get("type") == "bench":
                        steps[r["policy"]] = r["median_ms"]
    except (OSError, ValueError) as e:
        print(f"(no bench steps: {e})")
    return steps


def work(baseline, paths):
    """Prints `mantissa-cli profile --json` files of one experiment under several policies as a
    Markdown table of where each step goes: the matrix math (the format's own speed, against
    BASELINE's), the casts and quantisation that feed it, and the rest. With `--bench
    SPEED.json` first, a column beside the profile's sum gives `bench`'s step time for the policy:
    since 2026-12-01 a GPU profile times each plan step by events, the steps back to back, so the
    two should agree (before, a wait after each plan step inflated the sum)."""
    bench = {}
    if len(paths) >= 2 and paths[0] == "--bench":
        bench = bench_steps(paths[1])
        paths = paths[2:]
    profiles = []
    for path in paths:  # a profile that failed left no JSON: say so, and table the rest
        try:
            profiles.append(last_json(path, "profile"))
        except (SystemExit, OSError, ValueError) as e:
            print(f"(skipped: {e})")
    sums = []
    for p in profiles:
        t = {"matrix_math": 0.0, "conversion": 0.0, "other": 0.0}
        for row in p["steps"]:
            t[step_work(row)] += row["ms"]
        sums.append(t)
    base = next((t for p, t in zip(profiles, sums) if p["policy"] == baseline), None)
    configs = sorted({p["config"].split("/")[-1] for p in profiles})
    devices = sorted({p["device"] for p in profiles})
    print(f"{', '.join(configs)} on {', '.join(devices)}: ms a step, the plan steps' medians "
          f"summed (mantissa-cli profile)\n")
    bench_head, bench_rule = (" bench step |", "---|") if bench else ("", "")
    print(f"| policy | step |{bench_head} matrix math | matrix math vs {baseline} | casts and "
          f"quantisation | everything else |")
    print(f"|---|---|{bench_rule}---|---|---|---|")
    for p, t in zip(profiles, sums):
        step = sum(t.values())
        ratio = (f"{t['matrix_math'] / base['matrix_math']:.2f}x"
                 if base and base["matrix_math"] > 0 else "–")
        bench_cell = ""
        if bench:
            b = bench.get(p["policy"])
            bench_cell = f" {b:.3f} |" if b is not None else " – |"
        print(f"| {p['policy']} | {step:.3f} |{bench_cell} {t['matrix_math']:.3f} | {ratio} | "
              f"{t['conversion']:.3f} ({100 * t['conversion'] / max(step, 1e-12):.0f}%) | "
              f"{t['other']:.3f} |")


def is_gemm_kernel(name):
    """Whether an ncu kernel name is cuBLASLt's GEMM (nvjet, CUTLASS, its split-K reduction)."""
    return any(tag in name for tag in ("nvjet", "cublasLt", "cutlass", "sm90_xmma", "gemm_kernel"))


def table(results_path, results_md):
    rows = {}
    gemms = {}
    mnist = []
    fp8_rows = {}
    seen_versions = {}
    with open(results_path) as f:
        for line in f:
            if line.strip():
                r = json.loads(line)
                if r.get("versions") and r["versions"].get("gpu"):
                    seen_versions[(r["date"][:10], r["versions"]["gpu"])] = r["versions"]
                if r.get("kind") == "gemm":
                    key = (r["date"][:10], r["device"], r["dtype"])
                    gemms[key] = max(gemms.get(key, 0.0), r["gflops"])
                    continue
                if r.get("kind") == "mnist99":
                    mnist.append(r)
                    continue
                if r.get("kind") == "fp8_gemm":
                    # mixed_bfloat16 runs under both recipes (it has none): one figure for it.
                    label = r["policy"] if r["policy"] != "mixed_float8" else "mixed_float8 " + r["gemm"]
                    key = (r["date"][:10], r["device"], r["model"], r["batch"])
                    fp8_rows.setdefault(key, {}).setdefault(label, []).append(r["median_ms"])
                    continue
                if r.get("kind", "pair") != "pair":
                    continue  # build / selftest records: in results.jsonl, not in the table
                rows.setdefault((r["date"][:10], r["device"], r["config"], r["policy"], r["peer"]), []).append(r)
    lines = ["| date | device | config | policy | batch | Mantissa ms/step | peer | peer ms/step | "
             "ratio | Mantissa bytes | peer peak bytes | Mantissa GFLOP/s (% of cuBLAS fp16 GEMM) "
             "| pairs |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for (date, device, config, policy, peer), rs in sorted(rows.items()):
        mm = statistics.median(r["mantissa_ms"] for r in rs)
        pm = statistics.median(r["peer_ms"] for r in rs)
        gf = statistics.median(r["mantissa_gflops"] for r in rs)
        peak = gemms.get((date, device, "float16"))
        share = f"{gf:.0f} ({100.0 * gf / peak:.0f}%)" if peak else f"{gf:.0f}"
        lines.append(f"| {date} | {device} | {config} | {policy} | {rs[0]['batch']} | {mm:.3f} | "
                     f"{peer} | {pm:.3f} | {mm / pm:.2f} | {rs[0]['mantissa_peak_bytes']} | "
                     f"{rs[0]['peer_peak_bytes']} | {share} | {len(rs)} |")
    for (date, device, dtype), gflops in sorted(gemms.items()):
        lines.append(f"\ncuBLAS {dtype} GEMM on {device} ({date}): best {gflops:.0f} GFLOP/s "
                     "(mantissa-cli bench --gemm, sizes 4096 and 8192).")
    if mnist:
        lines += ["", "Time for MNIST to reach 99% test accuracy (cnn; wall clock from before the "
                  "data upload; the accuracy is checked after each epoch):", "",
                  "| date | device | engine | reached | epochs | test accuracy | seconds |",
                  "|---|---|---|---|---|---|---|"]
        for r in mnist:
            lines.append(f"| {r['date'][:10]} | {r.get('device', '?')} | {r.get('engine', '?')} | "
                         f"{r.get('reached')} | {r.get('epochs')} | {r.get('test_accuracy')} | "
                         f"{r.get('seconds')} |")
    if fp8_rows:
        lines += ["", "Does FP8 pay? mixed_float8 (delayed scaling) with its Dense GEMMs on cuBLASLt "
                  "FP8 (recipe.gemm fp8) or quantised-and-decoded into float32 GEMMs (fake_quant), "
                  "against mixed_bfloat16; median ms/step; ratio = FP8 GEMMs / mixed_bfloat16:", "",
                  "| date | device | model | batch | mixed_bfloat16 | mixed_float8 fake_quant | "
                  "mixed_float8 fp8 | ratio |", "|---|---|---|---|---|---|---|---|"]
        for (date, device, model, batch), by in sorted(fp8_rows.items()):
            med = {k: statistics.median(v) for k, v in by.items()}
            bf, fq, f8 = (med.get(k) for k in ("mixed_bfloat16", "mixed_float8 fake_quant",
                                               "mixed_float8 fp8"))
            fmt = lambda v: f"{v:.3f}" if v is not None else "–"
            ratio = f"{f8 / bf:.2f}" if f8 and bf else "–"
            lines.append(f"| {date} | {device} | {model} | {batch} | {fmt(bf)} | {fmt(fq)} | "
                         f"{fmt(f8)} | {ratio} |")
    for (date, gpu), v in sorted(seen_versions.items()):
        lines.append(f"\nVersions on {gpu} ({date}): driver {v.get('driver')}, CUDA runtime "
                     f"{v.get('cuda_runtime')}, cuBLASLt {v.get('cublaslt')}, cuDNN "
                     f"{v.get('cudnn')}, torch {v.get('torch')} (CUDA {v.get('torch_cuda')}, "
                     f"cuDNN {v.get('torch_cudnn')}), Mantissa {v.get('mantissa_commit')}.")
    begin, end = "<!-- gpu-results:begin -->", "<!-- gpu-results:end -->"
    text = open(results_md).read()
    block = (begin + "\n" + "Generated by bench/gpu_results.py from bench/results.jsonl (medians of "
             "the alternating pairs; ratio = Mantissa / peer, below 1 is faster).\n\n" +
             "\n".join(lines) + "\n" + end)
    if begin in text:
        text = text[:text.index(begin)] + block + text[text.index(end) + len(end):]
    else:
        text = text.rstrip() + "\n\n## GPU: Mantissa against PyTorch AMP\n\n" + block + "\n"
    with open(results_md, "w") as f:
        f.write(text)


if __name__ == "__main__":
    a = sys.argv[1:]
    if len(a) in (6, 7) and a[0] == "pair":
        pair(a[1], a[2], a[3], a[4], int(a[5]), a[6] if len(a) == 7 else None)
    elif len(a) in (3, 4) and a[0] == "gemm":
        gemm(a[1], a[2], a[3] if len(a) == 4 else None)
    elif len(a) in (4, 5) and a[0] == "record":
        record(a[1], a[2], a[3], a[4] if len(a) == 5 else None)
    elif len(a) in (5, 6) and a[0] == "fp8":
        fp8(a[1], a[2], a[3], a[4], a[5] if len(a) == 6 else None)
    elif len(a) in (4, 5) and a[0] == "speed":
        speed(a[1], a[2], a[3], a[4] if len(a) == 5 else None)
    elif len(a) == 3 and a[0] == "kernels":
        kernels(a[1], int(a[2]))
    elif len(a) >= 3 and a[0] == "work":
        work(a[1], a[2:])
    elif len(a) == 3 and a[0] == "table":
        table(a[1], a[2])
    else:
        raise SystemExit("usage: gpu_results.py pair MANTISSA.json PEER.json LABEL RESULTS.jsonl REP "
                         "[VERSIONS.json]\n"
                         "       gpu_results.py gemm GEMM.jsonl RESULTS.jsonl [VERSIONS.json]\n"
                         "       gpu_results.py record KIND DATA.json RESULTS.jsonl [VERSIONS.json]\n"
                         "       gpu_results.py fp8 BENCH.json MODEL GEMM RESULTS.jsonl [VERSIONS.json]\n"
                         "       gpu_results.py speed BENCH.json CASE RESULTS.jsonl [VERSIONS.json]\n"
                         "       gpu_results.py kernels NCU.csv STEPS\n"
                         "       gpu_results.py work BASELINE_POLICY [--bench SPEED.json] PROFILE.json...\n"
                         "       gpu_results.py table RESULTS.jsonl RESULTS.md")
