"""int8 graphs that would give each text the same vector alone and in any batch, measured beside
the fp32 default and sentence-transformers on PyTorch in one run (`make bench`; docs/embedding.md,
"int8 that ignores the batch").

Usage: int8_candidates.py MODEL_DIR CORPUS_JSONL THREADS

The passages are the first 600 texts of CORPUS_JSONL (`../shared/eval/med/corpus.jsonl`: medical
abstracts, cut at 256 tokens), as in docs/embedding.md's tables.

MODEL_DIR is the default model as `make setup` installs it (tokenizer.json, onnx/model.onnx: the
fused fp32 graph of scripts/bert_onnx.py). The candidates are that graph with its feed-forward
and output products (18 of 24; Q/K/V stay inside the fused Attention kernel) rewritten:

- blockwise: `MatMulNBits`, 8-bit weights in blocks of 32 along the input, accuracy level 4
  (ONNX Runtime quantizes each row of the activations in blocks of 32 and multiplies in int8);
- per-token: each row of the activations scaled by its own largest magnitude to uint8 (zero
  point 128), `MatMulIntegerToFloat` over per-column int8 weights, then the rows' scales;
- per-tensor (the batch-dependent reference): ONNX Runtime's `quantize_dynamic`, one scale
  for a whole batch's activations.

Each is timed on the same passages (length-sorted, batches of 16, as Quarry embeds), beside
sentence-transformers (best of batches 8, 16 and 32). Printed per graph: passages/s, its ratio
to PyTorch's (the aim is 2.0), the lowest cosine of a vector to fp32's over the passages and a
few short texts (aim 0.995), and the largest difference between a text's vector alone and in a
batch of texts of other lengths (aim 0).
"""

import json
import os
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper
from tokenizers import Tokenizer

import st_embed  # sentence-transformers, as the other embedding benches time it

MS = "com.microsoft"
BATCH = 16
BLOCK = 32
PASSAGES = 600
SHORT = ["dog", "a", "x", "what is the effect of insulin on the liver?", "fetal glucose levels"]


def rewrite(model: onnx.ModelProto, product) -> onnx.ModelProto:
    """`model` with every MatMul over a constant weight replaced by the nodes `product` gives."""
    model = onnx.ModelProto.FromString(model.SerializeToString())
    graph = model.graph
    weights = {i.name: i for i in graph.initializer}
    nodes, added = [], []
    for node in graph.node:
        if node.op_type == "MatMul" and node.input[1] in weights:
            weight = numpy_helper.to_array(weights[node.input[1]]).astype(np.float32)
            new_nodes, new_weights = product(node, weight)
            nodes += new_nodes
            added += new_weights
        else:
            nodes.append(node)
    used = {name for node in nodes for name in node.input}
    kept = [i for i in list(graph.initializer) + added if i.name in used]
    del graph.node[:]
    graph.node.extend(nodes)
    del graph.initializer[:]
    graph.initializer.extend(kept)
    return model


def blockwise(node, weight):
    """8-bit weights in blocks of `BLOCK` along K, symmetric (zero point 128, ONNX Runtime's
    convention: the block's extreme maps to -128)."""
    k, n = weight.shape
    blocks = weight.T.reshape(n, k // BLOCK, BLOCK)
    extreme = np.take_along_axis(blocks, np.abs(blocks).argmax(-1)[..., None], -1)[..., 0]
    scales = np.where(extreme == 0, 1.0, extreme / -128.0).astype(np.float32)
    quantized = (np.clip(np.round(blocks / scales[..., None]), -128, 127) + 128).astype(np.uint8)
    p = node.name
    return [
        helper.make_node(
            "MatMulNBits",
            [node.input[0], p + "_q8", p + "_scales"],
            [node.output[0]],
            domain=MS,
            K=k,
            N=n,
            bits=8,
            block_size=BLOCK,
            accuracy_level=4,
        )
    ], [numpy_helper.from_array(quantized, p + "_q8"), numpy_helper.from_array(scales, p + "_scales")]


def per_token(node, weight):
    """uint8 activations scaled per row (zero point 128; `QuantizeLinear` in blocks of a whole
    row) times per-column int8 weights, then the rows' scales."""
    scales = np.abs(weight).max(0) / 127.0
    scales[scales == 0] = 1.0
    quantized = np.clip(np.round(weight / scales), -127, 127).astype(np.int8)
    x, p = node.input[0], node.name
    return [
        helper.make_node("Abs", [x], [p + "_abs"]),
        helper.make_node("ReduceMax", [p + "_abs", "last_axis"], [p + "_max"], keepdims=1),
        helper.make_node("Max", [p + "_max", "tiny"], [p + "_max1"]),
        helper.make_node("Mul", [p + "_max1", "one_127th"], [p + "_row_scale"]),
        helper.make_node("Shape", [p + "_row_scale"], [p + "_rows"]),
        helper.make_node("Expand", ["zero_point", p + "_rows"], [p + "_row_zero"]),
        helper.make_node(
            "QuantizeLinear",
            [x, p + "_row_scale", p + "_row_zero"],
            [p + "_q"],
            axis=-1,
            block_size=weight.shape[0],
        ),
        helper.make_node(
            "MatMulIntegerToFloat",
            [p + "_q", p + "_w", "one", p + "_w_scale", "zero_point", p + "_w_zero"],
            [p + "_product"],
            domain=MS,
        ),
        helper.make_node("Mul", [p + "_product", p + "_row_scale"], [node.output[0]]),
    ], [
        numpy_helper.from_array(quantized, p + "_w"),
        numpy_helper.from_array(scales.astype(np.float32), p + "_w_scale"),
        numpy_helper.from_array(np.zeros(weight.shape[1], np.int8), p + "_w_zero"),
    ]


def with_per_token_constants(model: onnx.ModelProto) -> onnx.ModelProto:
    """`per_token`'s shared constants, and opset 21 (blocked `QuantizeLinear`)."""
    model.graph.initializer.extend([
        numpy_helper.from_array(np.array([-1], np.int64), "last_axis"),
        numpy_helper.from_array(np.array(1e-12, np.float32), "tiny"),
        numpy_helper.from_array(np.array(1 / 127, np.float32), "one_127th"),
        numpy_helper.from_array(np.array(1.0, np.float32), "one"),
        numpy_helper.from_array(np.array(128, np.uint8), "zero_point"),
    ])
    for opset in model.opset_import:
        if opset.domain == "":
            opset.version = 21
    model.ir_version = max(model.ir_version, 10)
    return model


def session(path: str, threads: int) -> ort.InferenceSession:
    """The graph at `path` on `threads` threads, every graph optimization on."""
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])


def embed(sess, tokenizer, texts, batch):
    """Mean-pooled, normalized vectors of `texts`, in length-sorted batches of `batch`."""
    encoded = tokenizer.encode_batch(texts)
    order = sorted(range(len(texts)), key=lambda i: len(encoded[i].ids))
    out = [None] * len(texts)
    for start in range(0, len(order), batch):
        chosen = order[start:start + batch]
        width = max(len(encoded[i].ids) for i in chosen)
        ids = np.zeros((len(chosen), width), np.int64)
        mask = np.zeros((len(chosen), width), np.int64)
        for row, i in enumerate(chosen):
            tokens = encoded[i].ids
            ids[row, :len(tokens)] = tokens
            mask[row, :len(tokens)] = 1
        hidden = sess.run(None, {"input_ids": ids, "attention_mask": mask})[0]
        weights = mask[:, :, None].astype(np.float32)
        vectors = (hidden * weights).sum(1) / weights.sum(1)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        for row, i in enumerate(chosen):
            out[i] = vectors[row]
    return np.stack(out)


def main() -> None:
    model_dir, corpus, threads = sys.argv[1], sys.argv[2], int(sys.argv[3])
    with open(corpus, encoding="utf-8") as f:
        passages = [json.loads(line)["text"] for line in f][:PASSAGES]
    tokenizer = Tokenizer.from_file(os.path.join(model_dir, "tokenizer.json"))
    tokenizer.enable_truncation(256)
    fp32_path = os.path.join(model_dir, "onnx", "model.onnx")
    fp32 = onnx.load(fp32_path)

    st = st_embed.load("auto", threads)
    pytorch = max(st_embed.passages_per_s(st, passages, batch) for batch in (8, 16, 32))
    print(f"int8 candidates on {len(passages)} real passages, {threads} threads, batches of {BATCH}:")
    print(f"  sentence-transformers (PyTorch {st_embed.torch.__version__}, fp32, best batch)  {pytorch:7.1f} passages/s")

    reference = embed(session(fp32_path, threads), tokenizer, passages + SHORT, 1)
    with tempfile.TemporaryDirectory() as tmp:
        candidates = [("fp32 (the default)", fp32_path)]
        for name, build in [
            ("blockwise 8-bit weights, int8 rows (MatMulNBits)", lambda: rewrite(fp32, blockwise)),
            ("per-token int8 (MatMulIntegerToFloat)", lambda: with_per_token_constants(rewrite(fp32, per_token))),
        ]:
            path = os.path.join(tmp, f"{len(candidates)}.onnx")
            onnx.save_model(build(), path)
            candidates.append((name, path))
        from onnxruntime.quantization import QuantType, quantize_dynamic

        path = os.path.join(tmp, "per_tensor.onnx")
        quantize_dynamic(
            fp32_path,
            path,
            weight_type=QuantType.QInt8,
            per_channel=True,
            extra_options={"DefaultTensorType": TensorProto.FLOAT},
        )
        candidates.append(("per-tensor int8, batch-dependent (quantize_dynamic)", path))

        print(f"  {'graph':52} {'passages/s':>10} {'x PyTorch':>9} {'min cos':>8} {'alone vs batch':>14}")
        for name, path in candidates:
            sess = session(path, threads)
            embed(sess, tokenizer, passages[:16], BATCH)
            speed = st_embed.rate(lambda: embed(sess, tokenizer, passages, BATCH), len(passages))
            cosine = (embed(sess, tokenizer, passages + SHORT, BATCH) * reference).sum(1).min()
            probe = SHORT + passages[:3]
            alone = embed(sess, tokenizer, probe, 1)
            batched = embed(sess, tokenizer, probe, len(probe))
            drift = np.abs(alone - batched).max()
            print(f"  {name:52} {speed:10.1f} {speed / pytorch:8.2f}x {cosine:8.4f} {drift:14.1e}", flush=True)
    print("  aims: >= 2.00x PyTorch, min cosine >= 0.995, alone vs batch 0 (float tolerance)\n")


if __name__ == "__main__":
    main()
