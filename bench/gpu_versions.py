#!/usr/bin/env python3
# Prints one JSON object naming everything a GPU figure depends on: the GPU and its driver, the
# CUDA runtime Mantissa was built with, the cuBLASLt and cuDNN libraries it loads (asked through
# ctypes: cublasLtGetVersion, cudnnGetVersion), PyTorch's versions, and Mantissa's commit.
# bench/run_gpu.sh stores it beside every result. A missing piece is null with a reason, never
# an exception: the versions of a failed run matter most.
#   usage: gpu_versions.py [BUILD_DIR]   (default build/headless: its CMakeCache names the libs)
import ctypes
import ctypes.util
import json
import os
import re
import subprocess
import sys


def run(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=60).stdout.strip()
    except (OSError, subprocess.SubprocessError) as e:
        return f"error: {e}"


def cache_value(build_dir, name):
    try:
        with open(os.path.join(build_dir, "CMakeCache.txt")) as f:
            for line in f:
                if line.startswith(name + ":"):
                    return line.split("=", 1)[1].strip()
    except OSError:
        pass
    return None


def lib_version(candidates, symbol):
    """Calls symbol() -> size_t in the first library of `candidates` that loads."""
    errors = []
    for path in candidates:
        if not path:
            continue
        try:
            lib = ctypes.CDLL(path)
            fn = getattr(lib, symbol)
            fn.restype = ctypes.c_size_t
            return {"version": int(fn()), "library": path}
        except (OSError, AttributeError) as e:
            errors.append(f"{path}: {e}")
    return {"version": None, "error": "; ".join(errors) or "no library found"}


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build/headless"
    v = {}
    smi = run(["nvidia-smi", "--query-gpu=name,driver_version,compute_cap",
               "--format=csv,noheader"])
    if smi and not smi.startswith("error") and "," in smi:
        name, driver, cc = [x.strip() for x in smi.splitlines()[0].split(",")[:3]]
        v.update(gpu=name, driver=driver, compute_capability=cc)
    else:
        v.update(gpu=None, driver=None, gpu_error=smi or "nvidia-smi printed nothing")
    nvcc = run(["nvcc", "--version"])
    m = re.search(r"release ([0-9.]+), V([0-9.]+)", nvcc)
    v["cuda_runtime"] = m.group(2) if m else None  # cudart is linked statically from this toolkit
    cublas_dir = os.path.dirname(cache_value(build, "CUDA_cublasLt_LIBRARY") or "")
    cublas_candidates = [cache_value(build, "CUDA_cublasLt_LIBRARY")]
    if cublas_dir:
        cublas_candidates += [os.path.join(cublas_dir, n) for n in ("libcublasLt.so",)]
    cublas_candidates.append(ctypes.util.find_library("cublasLt"))
    lt = lib_version(cublas_candidates, "cublasLtGetVersion")
    v["cublaslt"] = lt["version"]
    v["cublaslt_library"] = lt.get("library") or lt.get("error")
    dnn = lib_version([cache_value(build, "CUDNN_LIBRARY"), ctypes.util.find_library("cudnn")],
                      "cudnnGetVersion")
    v["cudnn"] = dnn["version"]
    v["cudnn_library"] = dnn.get("library") or dnn.get("error")
    v.update(torch_versions())
    # The GPU box's copy of the tree may carry a stale .git: the caller passes the commit it sent.
    v["mantissa_commit"] = (os.environ.get("MANTISSA_COMMIT")
                            or run(["git", "rev-parse", "--short", "HEAD"]) or None)
    print(json.dumps(v))


def torch_versions():
    """PyTorch's versions, asked in a child process: this one has loaded Mantissa's cuDNN through
    ctypes above, and a torch imported after it refuses to start when the versions differ (the
    first H100 run: system cuDNN 9.14 against the wheel's 9.19; PyTorch itself ran fine)."""
    code = ("import json, torch; print(json.dumps({'torch': torch.__version__, "
            "'torch_cuda': torch.version.cuda, 'torch_cudnn': torch.backends.cudnn.version()}))")
    try:
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             timeout=120)
        if out.returncode == 0:
            return json.loads(out.stdout.strip().splitlines()[-1])
        lines = out.stderr.strip().splitlines() or [f"exit status {out.returncode}"]
        return {"torch": None, "torch_error": lines[-1]}
    except (OSError, subprocess.SubprocessError, ValueError, IndexError) as e:
        return {"torch": None, "torch_error": str(e)}


if __name__ == "__main__":
    main()
