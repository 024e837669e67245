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
from onnx import TensorProto
from tokenizers import Tokenizer

import st_embed  # sentence-transformers, as the other embedding benches time it

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../scripts"))
from int8_graph import GRAPHS  # noqa: E402

BATCH = 16
PASSAGES = 600
SHORT = ["dog", "a", "x", "what is the effect of insulin on the liver?", "fetal glucose levels"]


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
        candidates = [("fused fp32", fp32_path)]
        for name, scheme in [
            ("blockwise 8-bit weights, int8 rows (MatMulNBits)", "blockwise"),
            ("per-token int8 (MatMulIntegerToFloat)", "per-token"),
        ]:
            path = os.path.join(tmp, f"{len(candidates)}.onnx")
            onnx.save_model(GRAPHS[scheme](fp32), path)
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
