#!/usr/bin/env python3
"""Independent readers for Mantissa's weight exports, run by tst_export.

Reads NPZ with numpy.load, safetensors with its own parser (the header JSON and raw bytes), and
ONNX with python3-onnx: the checker must accept the model, every Dense must be a Gemm with
transB = 1 and an (out, in) kernel (PyTorch's layout, the one OpenCV loads), every
BatchNormalization and LayerNormalization must hold the layer's weights and epsilon in float32,
and a small NumPy evaluator of the ops Mantissa emits must reproduce Mantissa's test accuracy on
the 10,000 MNIST test images. The real runtimes (onnxruntime, OpenCV DNN) run in the
onnx_runtime_node and onnx_opencv tests, on models without normalization layers; an ONNX entry
marked "opencv" (the normalization models' float32 files) is also run in OpenCV DNN here when cv2
imports, so that the opset-13 form of LayerNormalization stays one OpenCV 4.6 can import.
Usage: check_exports.py SPEC.json   (SPEC written by tst_export; see main()). Exit 0 when all pass.
"""
import json
import struct
import sys
import zipfile

import numpy as np
import onnx
from onnx import numpy_helper

FAILURES = []


def check(ok, message):
    print(("ok   " if ok else "FAIL ") + message)
    if not ok:
        FAILURES.append(message)


# ---- references --------------------------------------------------------------------------------

def to_bf16_bits(values):
    """float32 -> bfloat16 bits, round to nearest even (NaN kept quiet)."""
    u = np.asarray(values, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    nan = np.isnan(np.asarray(values, dtype=np.float32))
    rounded[nan] = (u[nan] >> 16) | 0x40
    return rounded.astype(np.uint16)


def bf16_bits_to_f32(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


def expected_array(reference, dtype):
    """Mantissa's stored values converted to `dtype` by NumPy (an independent rounding)."""
    values = np.asarray(reference["values"], dtype=np.float64).reshape(reference["shape"])
    if dtype == "BF16":
        return bf16_bits_to_f32(to_bf16_bits(values.astype(np.float32))).reshape(values.shape)
    return values.astype({"F64": np.float64, "F32": np.float32, "F16": np.float16}[dtype])


# ---- NPZ ---------------------------------------------------------------------------------------

def check_npz(entry, tensors):
    path, dtype = entry["path"], entry["dtype"]
    with zipfile.ZipFile(path) as z:
        check(z.testzip() is None, f"{path}: every member's CRC-32 matches")
        check(all(i.compress_type == zipfile.ZIP_STORED for i in z.infolist()),
              f"{path}: members are stored uncompressed")
    data = np.load(path)
    check(sorted(data.files) == sorted(tensors), f"{path}: holds exactly {sorted(tensors)}")
    for name, ref in tensors.items():
        if name not in data.files:
            continue
        array = data[name]
        want = expected_array(ref, dtype)
        check(array.dtype == want.dtype and array.shape == want.shape,
              f"{path}: {name} is {array.dtype} {array.shape} (want {want.dtype} {want.shape})")
        check(np.array_equal(array, want), f"{path}: {name} values equal Mantissa's")


# ---- safetensors -------------------------------------------------------------------------------

ST_DTYPES = {"F64": np.float64, "F32": np.float32, "F16": np.float16, "BF16": np.uint16}


def read_safetensors(path):
    raw = open(path, "rb").read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n].decode("utf-8"))
    check(n % 8 == 0, f"{path}: header length {n} keeps the data 8-byte aligned")
    base = 8 + n
    meta = header.pop("__metadata__", {})
    tensors, covered = {}, 0
    for name, info in header.items():
        begin, end = info["data_offsets"]
        array = np.frombuffer(raw[base + begin:base + end], dtype=ST_DTYPES[info["dtype"]])
        if info["dtype"] == "BF16":
            array = bf16_bits_to_f32(array)
        tensors[name] = (info["dtype"], array.reshape(info["shape"]))
        covered += end - begin
    check(covered == len(raw) - base, f"{path}: the tensors cover the whole data buffer")
    return meta, tensors


def check_safetensors(entry, tensors, spec):
    path, dtype = entry["path"], entry["dtype"]
    meta, stored = read_safetensors(path)
    check(sorted(stored) == sorted(tensors), f"{path}: holds exactly {sorted(tensors)}")
    for name, ref in tensors.items():
        if name not in stored:
            continue
        st_dtype, array = stored[name]
        want = expected_array(ref, dtype)
        check(st_dtype == dtype and list(array.shape) == list(want.shape),
              f"{path}: {name} is {st_dtype} {list(array.shape)}")
        check(np.array_equal(array.astype(np.float64), want.astype(np.float64)),
              f"{path}: {name} values equal Mantissa's")
    arch = json.loads(meta.get("architecture", "null"))
    check(arch == spec["architecture"], f"{path}: metadata architecture is the model's")
    check(meta.get("policy") == spec["policy"], f"{path}: metadata policy {meta.get('policy')}")
    check(meta.get("mantissa_version") == spec["version"], f"{path}: metadata Mantissa version")
    acc = float(meta.get("test_accuracy", "nan"))
    check(abs(acc - spec["test_accuracy"]) < 1e-12, f"{path}: metadata test_accuracy {acc}")


# ---- ONNX --------------------------------------------------------------------------------------

def attrs(node):
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


def conv(x, w, b, strides, pads):
    """ONNX Conv (group 1, no dilation) on NCHW; b may be None (LayerNormalization's 1x1 Conv of
    channel means has no bias)."""
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    x = np.pad(x, ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    oh = (x.shape[2] - kh) // strides[0] + 1
    ow = (x.shape[3] - kw) // strides[1] + 1
    cols = np.empty((n, c, kh, kw, oh, ow), dtype=np.float32)
    for i in range(kh):
        for j in range(kw):
            cols[:, :, i, j] = x[:, :, i:i + strides[0] * oh:strides[0], j:j + strides[1] * ow:strides[1]]
    out = np.einsum("nckluv,ockl->nouv", cols, w.astype(np.float32), optimize=True)
    return out if b is None else out + b.astype(np.float32).reshape(1, -1, 1, 1)


def maxpool(x, kernel, strides):
    oh = (x.shape[2] - kernel[0]) // strides[0] + 1
    ow = (x.shape[3] - kernel[1]) // strides[1] + 1
    out = None
    for i in range(kernel[0]):
        for j in range(kernel[1]):
            part = x[:, :, i:i + strides[0] * oh:strides[0], j:j + strides[1] * ow:strides[1]]
            out = part if out is None else np.maximum(out, part)
    return out


def softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


ONNX_TO_NUMPY = {onnx.TensorProto.FLOAT: np.float32, onnx.TensorProto.FLOAT16: np.float16,
                 onnx.TensorProto.DOUBLE: np.float64}


def run_graph(model, images):
    """A tiny interpreter for the ops Mantissa emits. Products accumulate in float32 and round to
    the operands' dtype, as ONNX runtimes do for float16."""
    env = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    env[model.graph.input[0].name] = images
    for node in model.graph.node:
        a = attrs(node)
        x = [env[i] for i in node.input]
        op = node.op_type
        if op == "Transpose":
            y = np.transpose(x[0], a["perm"])
        elif op == "Flatten":
            axis = a.get("axis", 1)
            y = x[0].reshape(int(np.prod(x[0].shape[:axis])), -1)
        elif op == "Reshape":
            y = x[0].reshape([d if d != 0 else x[0].shape[i] for i, d in enumerate(x[1])])
        elif op in ("Gemm", "MatMul"):
            aa, bb = x[0].astype(np.float32), x[1].astype(np.float32)
            if a.get("transA", 0):
                aa = aa.T
            if a.get("transB", 0):
                bb = bb.T
            y = a.get("alpha", 1.0) * (aa @ bb)
            if op == "Gemm" and len(x) > 2:
                y = y + a.get("beta", 1.0) * x[2].astype(np.float32)
            y = y.astype(x[0].dtype)
        elif op == "Add":
            y = x[0] + x[1]
        elif op == "Sub":
            y = x[0] - x[1]
        elif op == "Mul":
            y = x[0] * x[1]
        elif op == "Div":
            y = x[0] / x[1]
        elif op == "Sqrt":
            y = np.sqrt(x[0])
        elif op == "BatchNormalization":
            # Inference form (training_mode 0, one output): the moving statistics, over axis 1.
            check(a.get("training_mode", 0) == 0 and len(node.output) == 1,
                  f"BatchNormalization {node.name}: inference form")
            scale, bias, mean, var = (v.astype(np.float32).reshape((1, -1) + (1,) * (x[0].ndim - 2))
                                      for v in x[1:5])
            y = (x[0].astype(np.float32) - mean) / np.sqrt(var + np.float32(a.get("epsilon", 1e-5)))
            y = (y * scale + bias).astype(x[0].dtype)
        elif op == "Relu":
            y = np.maximum(x[0], 0).astype(x[0].dtype)
        elif op == "Tanh":
            y = np.tanh(x[0])
        elif op == "Sigmoid":
            y = (1 / (1 + np.exp(-x[0].astype(np.float32)))).astype(x[0].dtype)
        elif op == "Softmax":
            y = softmax(x[0].astype(np.float32), a.get("axis", -1)).astype(x[0].dtype)
        elif op == "Conv":
            check(a.get("group", 1) == 1 and all(d == 1 for d in a.get("dilations", [1, 1])),
                  f"Conv {node.name}: group 1, no dilation")
            y = conv(x[0], x[1], x[2] if len(x) > 2 else None, a.get("strides", [1, 1]),
                     a.get("pads", [0, 0, 0, 0]))
            y = y.astype(x[0].dtype)
        elif op == "MaxPool":
            y = maxpool(x[0], a["kernel_shape"], a.get("strides", [1, 1]))
        elif op == "Cast":
            y = x[0].astype(ONNX_TO_NUMPY[a["to"]])
        elif op in ("Identity", "Dropout"):
            y = x[0]
        else:
            raise SystemExit(f"the evaluator does not know op {op}")
        env[node.output[0]] = y
    return env[model.graph.output[0].name]


def read_idx(path):
    raw = open(path, "rb").read()
    magic, = struct.unpack(">I", raw[:4])
    dims = [struct.unpack(">I", raw[4 + 4 * i:8 + 4 * i])[0] for i in range(magic & 0xFF)]
    return np.frombuffer(raw[4 + 4 * len(dims):], dtype=np.uint8).reshape(dims)


def check_dense_layout(path, model, dtype, tensors):
    """Every Dense is a Gemm with transB = 1 and its kernel stored (out, in) under the weight's
    name, as PyTorch's exporter writes it: OpenCV's importer accepts no other layout."""
    inits = {t.name: t for t in model.graph.initializer}
    gemms = [n for n in model.graph.node if n.op_type == "Gemm"]
    check(len(gemms) > 0, f"{path}: the Dense layers are Gemm nodes")
    for node in gemms:
        a = attrs(node)
        name = node.input[1]
        if name not in inits or name not in tensors:
            check(False, f"{path}: {node.name}'s B input {name} is a named weight")
            continue
        got = numpy_helper.to_array(inits[name])
        want = expected_array(tensors[name], "F16" if dtype == "float16" else "F32").T
        check(a.get("transA", 0) == 0 and a.get("transB", 0) == 1 and got.shape == want.shape
              and np.array_equal(got, want),
              f"{path}: {node.name}: transB = 1, {name} stored (out, in) {list(got.shape)} "
              f"(transB {a.get('transB', 0)}, want {list(want.shape)})")


def layer_names(architecture):
    """(type, name, layer) of each layer, with the default names Mantissa's Model assigns
    ("dense_1", "batch_normalization_2": the type in snake case, counted per type, skipping names
    the file already uses)."""
    used = {layer["name"] for layer in architecture["layers"] if layer.get("name")}
    counters, out = {}, []
    for layer in architecture["layers"]:
        name = layer.get("name")
        if not name:
            t = layer["type"]
            prefix = "".join(("_" if c.isupper() and i > 0 and t[i - 1].islower() else "") + c.lower()
                             for i, c in enumerate(t))
            while True:
                counters[prefix] = counters.get(prefix, 0) + 1
                name = f"{prefix}_{counters[prefix]}"
                if name not in used:
                    break
        out.append((layer["type"], name, layer))
    return out


NORMALIZATIONS = ("BatchNormalization", "LayerNormalization")


def check_normalization_layout(path, model, spec):
    """Each BatchNormalization is an inference BatchNormalization node whose scale, B, mean and
    var are the layer's weights under their names; each LayerNormalization holds its gamma and
    beta under their names. Both keep their parameters, epsilon included, in float32 in a float16
    graph too (the normalization runs in float32 there, as under Mantissa's mixed policies)."""
    tensors = spec["tensors"]
    inits = {t.name: t for t in model.graph.initializer}
    for kind, name, layer in layer_names(spec["architecture"]):
        if kind not in NORMALIZATIONS:
            continue
        eps = np.float32(layer.get("epsilon", 1e-3))
        params = ["gamma", "beta"] + (["moving_mean", "moving_variance"]
                                      if kind == "BatchNormalization" else [])
        for param in params:
            weight = f"{name}.{param}"
            if weight not in inits or weight not in tensors:
                check(False, f"{path}: {name} ({kind}): {weight} is an initializer and a weight")
                continue
            got = numpy_helper.to_array(inits[weight])
            want = expected_array(tensors[weight], "F32")
            check(got.dtype == np.float32 and got.size == want.size
                  and np.array_equal(got.reshape(-1), want),
                  f"{path}: {weight} float32 {list(got.shape)} holds Mantissa's values")
        if kind == "BatchNormalization":
            nodes = [n for n in model.graph.node if n.op_type == "BatchNormalization"
                     and list(n.input[1:]) == [f"{name}.{p}" for p in params]]
            check(len(nodes) == 1 and np.float32(attrs(nodes[0]).get("epsilon", 1e-5)) == eps,
                  f"{path}: {name}: one BatchNormalization node on its weights, epsilon {eps}")
        else:
            got = inits.get(f"{name}/epsilon")
            check(got is not None and numpy_helper.to_array(got).dtype == np.float32
                  and numpy_helper.to_array(got) == eps, f"{path}: {name}: epsilon {eps} in float32")


def check_opencv(path, numpy_accuracy, images, labels):
    """The file in OpenCV's DNN module (Debian's python3-opencv) reaches the NumPy evaluation's
    accuracy within 10 images: both compute the same float32 graph."""
    try:
        import cv2
    except ImportError as error:
        print(f"skip {path}: no OpenCV in this python3 ({error}); onnx_opencv covers the rest")
        return
    try:
        net = cv2.dnn.readNetFromONNX(path)
        net.setPreferableBackend(cv2.dnn.DNN_BACKEND_OPENCV)
        net.setPreferableTarget(cv2.dnn.DNN_TARGET_CPU)
        correct = 0
        for start in range(0, len(labels), 1000):
            net.setInput(images[start:start + 1000].astype(np.float32)[:, None, :, :] / 255.0)
            probs = net.forward()
            correct += int((probs.argmax(axis=1) == labels[start:start + 1000]).sum())
    except cv2.error as error:
        check(False, f"{path}: OpenCV {cv2.__version__} cannot run it: {error}")
        return
    accuracy = correct / len(labels)
    check(abs(accuracy - numpy_accuracy) <= 0.001 + 1e-12,
          f"{path}: OpenCV {cv2.__version__} accuracy {accuracy:.4f} vs the NumPy evaluation's "
          f"{numpy_accuracy:.4f} (within 0.1%)")


def check_onnx(entry, spec):
    path = entry["path"]
    model = onnx.load(path)
    onnx.checker.check_model(model, full_check=True)
    check(True, f"{path}: onnx.checker (full_check) accepts it")
    opset = [o.version for o in model.opset_import if o.domain in ("", "ai.onnx")]
    check(opset and opset[0] >= 13, f"{path}: opset {opset} >= 13")
    inp, out = model.graph.input[0], model.graph.output[0]
    in_dims = [d.dim_value or d.dim_param for d in inp.type.tensor_type.shape.dim]
    out_dims = [d.dim_value or d.dim_param for d in out.type.tensor_type.shape.dim]
    check(inp.name == "input" and inp.type.tensor_type.elem_type == onnx.TensorProto.FLOAT
          and in_dims[1:] == [1, 28, 28], f"{path}: input 'input' float32 {in_dims}")
    check(out.type.tensor_type.elem_type == onnx.TensorProto.FLOAT and out_dims[1:] == [10],
          f"{path}: output float32 {out_dims}")
    # The normalization layers' initializers ("<layer>.gamma", "<layer>/epsilon", ...) are float32
    # in a float16 graph too: it normalizes in float32.
    norms = tuple(name for kind, name, _ in layer_names(spec["architecture"])
                  if kind in NORMALIZATIONS)
    def want_elem(t):
        if entry["dtype"] == "float16" and not t.name.startswith(
                tuple(n + "." for n in norms) + tuple(n + "/" for n in norms)):
            return onnx.TensorProto.FLOAT16
        return onnx.TensorProto.FLOAT
    check(all(t.data_type == want_elem(t) for t in model.graph.initializer
              if t.data_type != onnx.TensorProto.INT64),
          f"{path}: weights are {entry['dtype']}" + (" (normalizations float32)" if norms else ""))
    check_dense_layout(path, model, entry["dtype"], spec["tensors"])
    check_normalization_layout(path, model, spec)

    images = read_idx(spec["mnist"] + "/t10k-images-idx3-ubyte")
    labels = read_idx(spec["mnist"] + "/t10k-labels-idx1-ubyte")
    correct = 0
    for start in range(0, len(labels), 1000):
        batch = images[start:start + 1000].astype(np.float32)[:, None, :, :] / 255.0
        probs = run_graph(model, batch)
        if start == 0:
            check(probs.dtype == np.float32 and probs.shape == (len(batch), 10)
                  and np.allclose(probs.sum(axis=1), 1, atol=1e-5),
                  f"{path}: output rows are probabilities")
        correct += int((probs.argmax(axis=1) == labels[start:start + 1000]).sum())
    accuracy = correct / len(labels)
    want = spec["test_accuracy"]
    check(abs(accuracy - want) <= 0.005,
          f"{path}: NumPy evaluation accuracy {accuracy:.4f} vs Mantissa's {want:.4f} (within 0.5%)")
    print(f"accuracy {path} {accuracy:.6f} mantissa {want:.6f}")
    if entry.get("opencv"):
        check_opencv(path, accuracy, images, labels)


def main():
    spec = json.load(open(sys.argv[1]))
    tensors = spec["tensors"]
    for entry in spec.get("npz", []):
        check_npz(entry, tensors)
    for entry in spec.get("safetensors", []):
        check_safetensors(entry, tensors, spec)
    for entry in spec.get("onnx", []):
        check_onnx(entry, spec)
    print(f"{len(FAILURES)} failure(s)")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
