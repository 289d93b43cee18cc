#!/usr/bin/env python3
"""Evaluates Mantissa's ONNX exports in OpenCV's DNN module (Debian's python3-opencv) on the
10,000 MNIST test images: each file must reach the run's test accuracy within 0.1 percentage point.
The run's accuracy is read from the run's .safetensors (__metadata__.test_accuracy).

OpenCV reads float16 ONNX files from 4.7 on (it widens their float16 tensors to float32 as it
loads them); 4.6, Debian 12's, rejects every float16 tensor whoever wrote the file. On OpenCV < 4.7
a float16 file must fail with exactly that message, and the same graph with its float16 weights
widened the way 4.7 widens them (python3-onnx) must reach the run's accuracy: the graph itself
(casts included) is what OpenCV then runs.

Usage: /usr/bin/python3 onnx_opencv.py MNIST_DIR BASE...
  BASE  a run's files without extension: BASE.safetensors, BASE.onnx (float32) and BASE-f16.onnx
        (float16), as tests/export_for_runtimes.sh writes them
Exit 0 when every file passes, 1 when one does not, 77 (ctest's skip) when cv2 or NumPy is missing.
"""
import json
import os
import struct
import sys

TOLERANCE = 0.001  # 0.1 percentage point: 10 of the 10,000 test images
BATCH = 1000


def read_idx(path):
    import numpy as np
    raw = open(path, "rb").read()
    rank = struct.unpack(">I", raw[:4])[0] & 0xFF
    dims = struct.unpack(">" + "I" * rank, raw[4:4 + 4 * rank])
    return np.frombuffer(raw[4 + 4 * rank:], dtype=np.uint8).reshape(dims)


def run_accuracy(path):
    """The safetensors header (8-byte little-endian length, then JSON): the run's test accuracy."""
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n).decode("utf-8"))
    return float(header["__metadata__"]["test_accuracy"])


def opencv_version(cv2):
    return tuple(int(part) for part in cv2.__version__.split(".")[:2])


def widened_float16(path):
    """The file's bytes with every float16 initializer widened exactly to float32, as OpenCV >= 4.7
    does on load (getMatFromTensor: CV_16F -> CV_32F)."""
    import numpy as np
    import onnx
    from onnx import numpy_helper
    model = onnx.load(path)
    for tensor in model.graph.initializer:
        if tensor.data_type == onnx.TensorProto.FLOAT16:
            wide = numpy_helper.from_array(numpy_helper.to_array(tensor).astype(np.float32),
                                           tensor.name)
            tensor.CopyFrom(wide)
    return np.frombuffer(model.SerializeToString(), dtype=np.uint8)


def accuracy_of(cv2, model, images, labels):
    import numpy as np
    net = cv2.dnn.readNetFromONNX(model)
    net.setPreferableBackend(cv2.dnn.DNN_BACKEND_OPENCV)
    net.setPreferableTarget(cv2.dnn.DNN_TARGET_CPU)
    correct = 0
    for start in range(0, len(labels), BATCH):
        # As the README and the Export dialog show it.
        net.setInput(images[start:start + BATCH].reshape(-1, 1, 28, 28).astype(np.float32) / 255)
        probs = net.forward()
        n = len(labels[start:start + BATCH])
        if probs.dtype != np.float32 or probs.shape != (n, 10):
            raise RuntimeError(f"output {probs.dtype} {probs.shape}, want float32 ({n}, 10)")
        correct += int((probs.argmax(axis=1) == labels[start:start + BATCH]).sum())
    return correct


def main():
    if len(sys.argv) < 3:
        print("usage: onnx_opencv.py MNIST_DIR BASE...", file=sys.stderr)
        return 2
    try:
        import cv2
        import numpy  # noqa: F401 (cv2.dnn takes and returns NumPy arrays)
    except ImportError as error:
        print(f"SKIPPED: {sys.executable} cannot import OpenCV/NumPy ({error}); "
              "./mantissa.sh test installs python3-opencv and python3-numpy with apt")
        return 77
    print(f"OpenCV {cv2.__version__} DNN (Python {sys.version.split()[0]}, {sys.executable})")
    mnist = os.environ.get("MANTISSA_DATA") or sys.argv[1]  # as the CLI finds it
    images = read_idx(os.path.join(mnist, "t10k-images-idx3-ubyte"))
    labels = read_idx(os.path.join(mnist, "t10k-labels-idx1-ubyte"))
    failures = 0
    for base in sys.argv[2:]:
        want = run_accuracy(base + ".safetensors")
        for suffix, dtype in ((".onnx", "float32"), ("-f16.onnx", "float16")):
            path = base + suffix
            name = os.path.basename(path)
            model, how = path, "OpenCV accuracy"
            if dtype == "float16" and opencv_version(cv2) < (4, 7):
                try:
                    cv2.dnn.readNetFromONNX(path)
                    refused = ""
                except cv2.error as error:
                    refused = str(error)
                if "Unsupported data type: FLOAT16" not in refused:
                    print(f"FAIL {name} ({dtype}): OpenCV {cv2.__version__} was expected to refuse "
                          f"float16 tensors (as every 4.6 does), got: {refused or 'it loaded'}")
                    failures += 1
                    continue
                print(f"note {name} ({dtype}): OpenCV {cv2.__version__} reads no float16 ONNX "
                      "(from anyone; 4.7 added it): evaluating it with the float16 weights "
                      "widened as 4.7 does on load")
                try:
                    model = widened_float16(path)
                except ImportError as error:
                    print(f"FAIL {name}: widening needs python3-onnx ({error})")
                    failures += 1
                    continue
                how = "OpenCV accuracy (weights widened as in 4.7)"
            try:
                got = accuracy_of(cv2, model, images, labels) / len(labels)
            except (cv2.error, RuntimeError) as error:
                print(f"FAIL {name} ({dtype}): OpenCV cannot run it: {error}")
                failures += 1
                continue
            ok = abs(got - want) <= TOLERANCE + 1e-12
            print(f"{'ok  ' if ok else 'FAIL'} {name} ({dtype}): {how} "
                  f"{100 * got:.2f}% vs the run's {100 * want:.2f}% "
                  f"({round((got - want) * len(labels)):+d} images; at most 10 allowed)")
            failures += 0 if ok else 1
    print(f"{failures} failure(s)")
    return 0 if failures == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
