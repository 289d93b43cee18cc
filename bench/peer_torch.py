#!/usr/bin/env python3
# The PyTorch peer of `mantissa-cli bench`: the same experiment file (layers, Glorot-uniform
# kernels and zero biases as Keras initialises them, batch, optimizer, MNIST resident on the GPU
# as uint8 and normalised per batch), trained with autocast + GradScaler under mixed policies.
# Prints one JSON line: ms/step (mean over --steps after --warmup, one sync at the end) and
# torch.cuda.max_memory_allocated(). Only full batches are timed: Mantissa pads an epoch's short
# last batch to the full batch (same cost as a full step), so PyTorch's cheaper short batch would
# flatter the peer; `mantissa-cli bench` likewise cycles over full batches only.
# Note for readers of the figures: cudnn.benchmark autotunes PyTorch's convolutions (Mantissa
# takes cuDNN's heuristic), and GradScaler's inf check syncs the host every step (Mantissa's
# found-inf flag stays on the device).
# --compile MODE: the model through torch.compile (MODE "default" or "reduce-overhead", which
# adds CUDA Graphs); its compilation happens in the warm-up steps, which are not timed.
# --to-accuracy A: instead, train whole epochs (short batch included) and report the wall clock
# from before the data upload until the test accuracy first reaches A (checked after each epoch),
# and the train + test time from the data resident on the GPU.
# A OneCycle learning rate (the mnist-fast preset) runs as torch's OneCycleLR, momentum not cycled.
import argparse
import json
import math
import os
import struct
import sys
import time

import torch
import torch.nn as nn


def read_idx(path):
    with open(path, "rb") as f:
        data = f.read()
    magic, = struct.unpack(">I", data[:4])
    dims = magic & 0xFF
    shape = struct.unpack(">" + "I" * dims, data[4:4 + 4 * dims])
    return torch.frombuffer(bytearray(data[4 + 4 * dims:]), dtype=torch.uint8).reshape(shape)


class Flatten(nn.Module):
    def forward(self, x):
        return x.reshape(x.shape[0], -1)


def activation(name):
    return {"relu": nn.ReLU(), "gelu": nn.GELU(approximate="tanh"), "tanh": nn.Tanh(),
            "sigmoid": nn.Sigmoid(), "linear": nn.Identity(), None: nn.Identity()}[name]


def pair(v, default):
    if v is None:
        return (default, default)
    return (v, v) if isinstance(v, int) else tuple(v)


def build(spec, input_shape):
    """Keras layers -> torch modules (NHWC input is permuted once to NCHW/channels_last)."""
    h, w, c = input_shape
    layers, flat, softmax = [], None, False
    for layer in spec:
        kind = layer["type"]
        if kind == "Conv2D":
            kh, kw = pair(layer.get("kernel"), 3)
            sh, sw = pair(layer.get("strides", layer.get("stride")), 1)
            same = layer.get("padding", "valid") == "same"
            conv = nn.Conv2d(c, layer["filters"], (kh, kw), (sh, sw), padding="same" if same else 0)
            nn.init.xavier_uniform_(conv.weight)
            nn.init.zeros_(conv.bias)
            layers += [conv, activation(layer.get("activation"))]
            c = layer["filters"]
            h = math.ceil(h / sh) if same else (h - kh) // sh + 1
            w = math.ceil(w / sw) if same else (w - kw) // sw + 1
        elif kind == "MaxPool2D":
            ph, pw = pair(layer.get("pool_size"), 2)
            sh, sw = pair(layer.get("strides", layer.get("pool_size")), ph)
            layers.append(nn.MaxPool2d((ph, pw), (sh, sw)))
            h, w = (h - ph) // sh + 1, (w - pw) // sw + 1
        elif kind == "Flatten":
            # Keras flattens NHWC: permute back so the Dense weights see the same order.
            layers.append(nn.Sequential(PermuteNHWC(), Flatten()))
            flat = h * w * c
        elif kind == "Dense":
            fan_in = flat if flat is not None else h * w * c
            dense = nn.Linear(fan_in, layer["units"])
            nn.init.xavier_uniform_(dense.weight)
            nn.init.zeros_(dense.bias)
            layers += [dense, activation(layer.get("activation"))]
            flat = layer["units"]
        elif kind == "Activation" and layer.get("activation") == "softmax":
            softmax = True  # fused into the float32 cross-entropy, as Mantissa fuses it
        elif kind == "Dropout":
            layers.append(nn.Dropout(layer.get("rate", 0.5)))
        else:
            raise SystemExit(f"peer_torch: layer type {kind} is not supported by the peer")
    return nn.Sequential(*layers), softmax


class PermuteNHWC(nn.Module):
    def forward(self, x):
        return x.permute(0, 2, 3, 1) if x.dim() == 4 else x


def base_rate(o, kind):
    """The optimizer's rate: a number, or a schedule's initial rate (OneCycle: max_lr)."""
    lr = o.get("learning_rate", 0.01 if kind == "sgd" else 0.001)
    if isinstance(lr, dict):
        c = lr.get("config", {})
        return c.get("max_lr", c.get("initial_learning_rate", 0.001))
    return lr


def scheduler_for(cfg, opt, run_steps):
    """torch.optim.lr_scheduler for the experiment's schedule, stepped after every step (None:
    a constant rate). Only OneCycle (PyTorch's own, momentum not cycled, as Mantissa runs it)."""
    lr = cfg.get("optimizer", {}).get("learning_rate")
    if not isinstance(lr, dict):
        return None
    name, c = lr.get("class_name"), lr.get("config", {})
    if name not in ("OneCycle", "OneCycleLR"):
        raise SystemExit(f"peer_torch: schedule {name} has no peer here (OneCycle only)")
    return torch.optim.lr_scheduler.OneCycleLR(
        opt, max_lr=c["max_lr"], total_steps=c.get("total_steps") or run_steps,
        pct_start=c.get("pct_start", 0.3), anneal_strategy=c.get("anneal_strategy", "cos"),
        div_factor=c.get("div_factor", 25.0), final_div_factor=c.get("final_div_factor", 1e4),
        three_phase=c.get("three_phase", False), cycle_momentum=False)


def optimizer_for(cfg, params):
    o = cfg.get("optimizer", {})
    kind = o.get("type", "rmsprop").lower()
    lr = base_rate(o, kind)
    # The experiment's convention decides the default epsilon (PyTorch's 1e-8, Keras's 1e-7).
    eps = o.get("epsilon", 1e-8 if o.get("convention") == "pytorch" else 1e-7)
    if kind == "sgd":
        return torch.optim.SGD(params, lr=lr, momentum=o.get("momentum", 0.0),
                               nesterov=o.get("nesterov", False))
    if kind == "rmsprop":
        return torch.optim.RMSprop(params, lr=lr, alpha=o.get("rho", 0.9), eps=eps,
                                   momentum=o.get("momentum", 0.0), centered=o.get("centered", False))
    if kind == "adam":
        return torch.optim.Adam(params, lr=lr, betas=(o.get("beta_1", 0.9), o.get("beta_2", 0.999)),
                                eps=eps)
    if kind == "adamw":
        return torch.optim.AdamW(params, lr=lr, betas=(o.get("beta_1", 0.9), o.get("beta_2", 0.999)),
                                 eps=eps, weight_decay=o.get("weight_decay", 0.004))
    raise SystemExit(f"peer_torch: optimizer {kind} is not supported")


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--config", required=True)
    ap.add_argument("--policy", default=None, help="float32, mixed_float16, mixed_bfloat16")
    ap.add_argument("--batch", type=int, default=None)
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--data", default=os.environ.get("MANTISSA_DATA", "data/mnist"))
    ap.add_argument("--tf32", action="store_true")
    ap.add_argument("--compile", default=None, choices=["default", "reduce-overhead"],
                    help="torch.compile the model with this mode (default: eager)")
    ap.add_argument("--to-accuracy", type=float, default=None,
                    help="train epochs until the test accuracy reaches this; report the seconds")
    ap.add_argument("--epochs", type=int, default=None, help="epoch limit for --to-accuracy")
    ap.add_argument("--seed", type=int, default=None, help="the experiment's seed unless given")
    args = ap.parse_args()
    wall_start = time.perf_counter()
    cfg = json.load(open(args.config))
    policy = args.policy or cfg.get("policy", "float32")
    batch = args.batch or cfg["batch_size"]
    if policy not in ("float32", "mixed_float16", "mixed_bfloat16"):
        raise SystemExit(f"peer_torch: policy {policy} has no PyTorch AMP equivalent here")
    seed = args.seed if args.seed is not None else cfg.get("seed", 42)
    torch.manual_seed(seed)
    torch.backends.cuda.matmul.allow_tf32 = args.tf32
    torch.backends.cudnn.allow_tf32 = args.tf32
    torch.backends.cudnn.benchmark = True
    dev = torch.device("cuda")
    torch.cuda.reset_peak_memory_stats()

    images = read_idx(os.path.join(args.data, "train-images-idx3-ubyte")).to(dev)  # (N, 28, 28)
    labels = read_idx(os.path.join(args.data, "train-labels-idx1-ubyte")).to(dev).long()
    n = images.shape[0]
    input_shape = tuple(cfg["model"].get("input", [28, 28, 1]))
    is_cnn = any(l["type"] == "Conv2D" for l in cfg["model"]["layers"])
    model, _ = build(cfg["model"]["layers"], input_shape)
    model = model.to(dev)
    if is_cnn:
        model = model.to(memory_format=torch.channels_last)
    opt = optimizer_for(cfg, model.parameters())
    steps_per_epoch = (n + batch - 1) // batch
    if args.to_accuracy is not None:
        run_steps = (args.epochs or cfg.get("epochs", 3)) * steps_per_epoch
    else:
        run_steps = args.warmup + args.steps
    sched = scheduler_for(cfg, opt, run_steps)
    if args.compile:
        model = torch.compile(model, mode=args.compile)
    how = f"torch.compile({args.compile})" if args.compile else "eager"
    amp_dtype = {"mixed_float16": torch.float16, "mixed_bfloat16": torch.bfloat16}.get(policy)
    # Keras's dynamic scaler: 2^15, x2 every 2000 finite steps (GradScaler's default is 2^16).
    scaler_args = dict(init_scale=2.0 ** 15, growth_interval=2000, enabled=policy == "mixed_float16")
    try:
        scaler = torch.amp.GradScaler("cuda", **scaler_args)
    except (AttributeError, TypeError):  # PyTorch before 2.3
        scaler = torch.cuda.amp.GradScaler(**scaler_args)
    loss_fn = nn.CrossEntropyLoss()
    perm = torch.randperm(n, device=dev)
    full_batches = max(1, n // batch)  # the timed steps: never the short last batch

    def step(i):
        start = (i % full_batches) * batch
        return train_on(perm[start:start + batch])

    def train_on(idx):
        x = images[idx].float().div_(255.0).reshape(-1, 1, input_shape[0], input_shape[1])
        if is_cnn:
            x = x.contiguous(memory_format=torch.channels_last)
        y = labels[idx]
        with torch.autocast("cuda", dtype=amp_dtype or torch.float32, enabled=amp_dtype is not None):
            logits = model(x)
        loss = loss_fn(logits.float(), y)  # float32 softmax, as the Keras guide asks
        opt.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        if sched is not None:
            sched.step()
        return loss

    if args.to_accuracy is not None:
        return to_accuracy(args, cfg, policy, batch, dev, model, train_on, is_cnn, input_shape,
                           amp_dtype, n, wall_start, seed)
    for i in range(args.warmup):
        step(i)
    torch.cuda.synchronize()
    start = time.perf_counter()
    for i in range(args.steps):
        loss = step(args.warmup + i)
    torch.cuda.synchronize()
    ms = (time.perf_counter() - start) * 1000.0 / args.steps
    print(json.dumps({
        "type": "peer", "peer": f"pytorch {torch.__version__} {how} AMP", "config": cfg["name"],
        "policy": policy, "tf32": args.tf32, "batch": batch, "steps": args.steps, "ms": round(ms, 4),
        "steps_per_epoch": steps_per_epoch, "full_batches_timed": True,
        "peak_bytes": torch.cuda.max_memory_allocated(),
        "final_loss": float(loss), "device": torch.cuda.get_device_name(0),
    }))


def to_accuracy(args, cfg, policy, batch, dev, model, train_on, is_cnn, input_shape, amp_dtype, n,
                wall_start, seed):
    """Whole epochs (short batch included) until the test accuracy reaches args.to_accuracy."""
    test_x = read_idx(os.path.join(args.data, "t10k-images-idx3-ubyte")).to(dev)
    test_y = read_idx(os.path.join(args.data, "t10k-labels-idx1-ubyte")).to(dev).long()
    epochs = args.epochs or cfg.get("epochs", 3)
    reached, acc, epoch = False, 0.0, 0
    torch.cuda.synchronize()
    resident = time.perf_counter()  # data on the GPU, model built: train + test from here
    for epoch in range(1, epochs + 1):
        perm = torch.randperm(n, device=dev)
        model.train()
        for start in range(0, n, batch):
            train_on(perm[start:start + batch])
        model.eval()
        correct = 0
        with torch.no_grad(), torch.autocast("cuda", dtype=amp_dtype or torch.float32,
                                             enabled=amp_dtype is not None):
            for start in range(0, test_x.shape[0], 1000):
                x = test_x[start:start + 1000].float().div_(255.0).reshape(
                    -1, 1, input_shape[0], input_shape[1])
                if is_cnn:
                    x = x.contiguous(memory_format=torch.channels_last)
                correct += (model(x).argmax(1) == test_y[start:start + 1000]).sum()
        acc = float(correct) / test_x.shape[0]  # float() syncs: the epoch's work is done
        if acc >= args.to_accuracy:
            reached = True
            break
    end = time.perf_counter()
    seconds = end - wall_start
    print(json.dumps({
        "type": "peer_accuracy", "peer": f"pytorch {torch.__version__} eager AMP",
        "config": cfg["name"], "policy": policy, "batch": batch, "target": args.to_accuracy,
        "reached": reached, "epochs": epoch, "test_accuracy": round(acc, 4),
        "seconds": round(seconds, 3), "train_test_seconds": round(end - resident, 3),
        "seed": seed, "device": torch.cuda.get_device_name(0),
        "note": "seconds: wall clock from before the data upload, model build included; "
                "train_test_seconds: from the data resident on the GPU",
    }))
    return 0 if reached else 1


if __name__ == "__main__":
    sys.exit(main())
