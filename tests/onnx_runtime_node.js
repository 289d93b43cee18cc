#!/usr/bin/env node
// Evaluates Mantissa's ONNX exports in onnxruntime (the npm package onnxruntime-node, CPU) on the
// 10,000 MNIST test images: each file must reach the run's test accuracy within 0.1 percentage
// point. The run's accuracy is read from the run's .safetensors (__metadata__.test_accuracy).
//
// Usage: node onnx_runtime_node.js ORT_DIR MNIST_DIR BASE...
//   ORT_DIR   the npm prefix ./mantissa.sh test installed onnxruntime-node into (.deps/onnxruntime-node)
//   BASE      a run's files without extension: BASE.safetensors, BASE.onnx (float32) and
//             BASE-f16.onnx (float16), as tests/export_for_runtimes.sh writes them
// Exit 0 when every file passes, 1 when one does not, 77 (ctest's skip) when onnxruntime-node is
// not installed.
'use strict';

const fs = require('fs');
const path = require('path');

const TOLERANCE = 0.001; // 0.1 percentage point: 10 of the 10,000 test images
const BATCH = 1000;

function readIdx(file) {
    const raw = fs.readFileSync(file);
    const rank = raw.readUInt32BE(0) & 0xff;
    const dims = [];
    for (let i = 0; i < rank; ++i) dims.push(raw.readUInt32BE(4 + 4 * i));
    return { dims, data: raw.subarray(4 + 4 * rank) };
}

function signed(n) {
    return n < 0 ? `${n}` : `+${n}`;
}

// The safetensors header (8-byte little-endian length, then JSON): the run's test accuracy.
function runAccuracy(file) {
    const raw = fs.readFileSync(file);
    const length = Number(raw.readBigUInt64LE(0));
    const header = JSON.parse(raw.subarray(8, 8 + length).toString('utf8'));
    const value = Number(header.__metadata__ && header.__metadata__.test_accuracy);
    if (!Number.isFinite(value)) throw new Error(`${file}: no __metadata__.test_accuracy`);
    return value;
}

async function accuracyOf(ort, file, images, labels) {
    const session = await ort.InferenceSession.create(file, { executionProviders: ['cpu'] });
    const pixels = 28 * 28;
    let correct = 0;
    for (let start = 0; start < labels.length; start += BATCH) {
        const n = Math.min(BATCH, labels.length - start);
        const input = new Float32Array(n * pixels);
        for (let i = 0; i < n * pixels; ++i) input[i] = images[start * pixels + i] / 255;
        const outputs = await session.run({ input: new ort.Tensor('float32', input, [n, 1, 28, 28]) });
        const probs = outputs.probabilities;
        if (probs.type !== 'float32' || probs.dims.join() !== [n, 10].join())
            throw new Error(`${file}: output is ${probs.type} [${probs.dims}], want float32 [${n},10]`);
        for (let row = 0; row < n; ++row) {
            let best = 0;
            for (let c = 1; c < 10; ++c)
                if (probs.data[row * 10 + c] > probs.data[row * 10 + best]) best = c;
            if (best === labels[start + row]) ++correct;
        }
    }
    return correct;
}

async function main() {
    const [ortDir, mnistArg, ...bases] = process.argv.slice(2);
    const mnistDir = process.env.MANTISSA_DATA || mnistArg; // as the CLI finds it
    if (!ortDir || !mnistDir || bases.length === 0) {
        console.error('usage: node onnx_runtime_node.js ORT_DIR MNIST_DIR BASE...');
        return 2;
    }
    let ort;
    try {
        ort = require(path.resolve(ortDir, 'node_modules', 'onnxruntime-node'));
    } catch (error) {
        console.log(`SKIPPED: onnxruntime-node is not installed in ${path.resolve(ortDir)} ` +
                    `(./mantissa.sh test installs it from the npm registry; it could not: ${error.message.split('\n')[0]})`);
        return 77;
    }
    const version = require(path.resolve(ortDir, 'node_modules', 'onnxruntime-node', 'package.json')).version;
    console.log(`onnxruntime-node ${version} (Node.js ${process.version})`);
    const images = readIdx(path.join(mnistDir, 't10k-images-idx3-ubyte')).data;
    const labels = readIdx(path.join(mnistDir, 't10k-labels-idx1-ubyte')).data;
    let failures = 0;
    for (const base of bases) {
        const want = runAccuracy(`${base}.safetensors`);
        for (const [suffix, dtype] of [['.onnx', 'float32'], ['-f16.onnx', 'float16']]) {
            const file = `${base}${suffix}`;
            let got;
            try {
                got = (await accuracyOf(ort, file, images, labels)) / labels.length;
            } catch (error) {
                console.log(`FAIL ${file} (${dtype}): onnxruntime cannot run it: ${error.message}`);
                ++failures;
                continue;
            }
            const ok = Math.abs(got - want) <= TOLERANCE + 1e-12;
            console.log(`${ok ? 'ok  ' : 'FAIL'} ${path.basename(file)} (${dtype}): onnxruntime accuracy ` +
                        `${(100 * got).toFixed(2)}% vs the run's ${(100 * want).toFixed(2)}% ` +
                        `(${signed(Math.round((got - want) * labels.length))} images; at most 10 allowed)`);
            if (!ok) ++failures;
        }
    }
    console.log(`${failures} failure(s)`);
    return failures === 0 ? 0 : 1;
}

main().then((code) => process.exit(code), (error) => {
    console.error(error.stack || String(error));
    process.exit(1);
});
