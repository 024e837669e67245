"""Writes an int8 form of a fused fp32 BERT graph (scripts/bert_onnx.py's) that gives each text
the same vector alone and in any batch (docs/embedding.md, "int8 that ignores the batch").

Usage: int8_graph.py per-token|blockwise FP32_ONNX OUT_ONNX

The graph's feed-forward and output products (18 of 24; Q/K/V stay inside the fused Attention
kernel) are rewritten:

- per-token: each row of the activations scaled by its own largest magnitude to uint8 (zero
  point 128), `MatMulIntegerToFloat` over per-column int8 weights, then the rows' scales (the
  default on CPUs without VNNI);
- blockwise: `MatMulNBits`, 8-bit weights in blocks of 32 along the input, accuracy level 4
  (ONNX Runtime quantizes each row of the activations in blocks of 32 and multiplies in int8;
  chosen where the CPU has VNNI).

The other weights are kept as they are. OUT_ONNX's weights go beside it in OUT_ONNX.data (ONNX
external data, mapped by ONNX Runtime). The output is deterministic: the same input graph and
package versions (scripts/bert-onnx-requirements.txt) give the same bytes, which
scripts/fetch-model.sh pins by SHA-256. tests/bench/int8_candidates.py measures these rewrites
beside the fp32 graph and sentence-transformers.
"""

import os
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper

MS = "com.microsoft"
BLOCK = 32


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


# The graphs this script writes, by name.
GRAPHS = {
    "per-token": lambda fp32: with_per_token_constants(rewrite(fp32, per_token)),
    "blockwise": lambda fp32: rewrite(fp32, blockwise),
}


def main() -> None:
    if len(sys.argv) != 4 or sys.argv[1] not in GRAPHS:
        sys.exit("usage: int8_graph.py per-token|blockwise FP32_ONNX OUT_ONNX")
    scheme, fp32_path, out = sys.argv[1:4]
    graph = GRAPHS[scheme](onnx.load(fp32_path))
    data = os.path.basename(out) + ".data"
    if os.path.exists(out + ".data"):
        os.remove(out + ".data")
    onnx.save_model(
        graph,
        out,
        save_as_external_data=True,
        all_tensors_to_one_file=True,
        location=data,
        size_threshold=1024,
    )


if __name__ == "__main__":
    main()
