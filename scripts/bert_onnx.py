"""Writes a BERT sentence encoder (sentence-transformers layout: config.json + model.safetensors)
as one ONNX graph of ONNX Runtime's fused transformer operators, in fp32.

Usage: bert_onnx.py CONFIG_JSON MODEL_SAFETENSORS OUT_DIR

Writes OUT_DIR/model.onnx (the graph) and OUT_DIR/model.onnx.data (its weights, as ONNX external
data). ONNX Runtime maps a graph's external data file into memory instead of reading it onto the
heap: the word embeddings (half the weights) stay file pages the kernel may drop, of which only
the rows of tokens in use are ever read, and two sessions of the same model share them.

Why: on CPUs like the ones Quarry runs on, ONNX Runtime embeds fastest with the fused kernels
(EmbedLayerNormalization, Attention, SkipLayerNormalization, BiasGelu) over fp32 weights; an
int8 file or an unfused export is slower (docs/embedding.md has the measurements). The graph is
built from the weights directly, so no PyTorch is needed; the output is deterministic (same
weights and package versions give the same bytes, which `fetch-model.sh` pins by SHA-256).

Graph: inputs `input_ids` and `attention_mask` (int64, [batch, tokens], padding on the right),
output `last_hidden_state` (float32, [batch, tokens, hidden]); pooling stays with the host.
Token type ids are not an input: every text is one segment, so the embedding of type 0 is folded
into the position embeddings (exactly what the model computes for single texts).
"""

import json
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from safetensors.numpy import load_file

MS = "com.microsoft"


def main() -> None:
    config_path, weights_path, out_dir = sys.argv[1:4]
    with open(config_path, encoding="utf-8") as f:
        config = json.load(f)
    if config.get("model_type") != "bert" or config.get("hidden_act") != "gelu":
        sys.exit(f"bert_onnx: {config_path} is not a BERT model with erf GELU")
    if config.get("position_embedding_type", "absolute") != "absolute":
        sys.exit(f"bert_onnx: {config_path} does not use absolute position embeddings")
    weights = load_file(weights_path)
    prefix = "bert." if "bert.embeddings.word_embeddings.weight" in weights else ""

    def w(name: str) -> np.ndarray:
        return np.ascontiguousarray(weights[prefix + name], dtype=np.float32)

    hidden = int(config["hidden_size"])
    heads = int(config["num_attention_heads"])
    layers = int(config["num_hidden_layers"])
    eps = float(config["layer_norm_eps"])

    initializers: list[TensorProto] = []

    def const(name: str, value: np.ndarray) -> str:
        initializers.append(numpy_helper.from_array(np.ascontiguousarray(value), name))
        return name

    def linear(name: str) -> str:
        """A Linear layer's weight, [out, in] in PyTorch, as MatMul's [in, out]."""
        return const(name, w(name).T)

    def skip_layer_norm(value: str, skip: str, module: str, out: str) -> onnx.NodeProto:
        """LayerNorm(value + module's dense bias + skip): a BERT sub-layer's output."""
        return helper.make_node(
            "SkipLayerNormalization",
            [
                value,
                skip,
                const(module + ".LayerNorm.weight", w(module + ".LayerNorm.weight")),
                const(module + ".LayerNorm.bias", w(module + ".LayerNorm.bias")),
                const(module + ".dense.bias", w(module + ".dense.bias")),
            ],
            [out],
            domain=MS,
            epsilon=eps,
        )

    nodes = [
        helper.make_node("Cast", ["input_ids"], ["ids32"], to=TensorProto.INT32),
        helper.make_node("Cast", ["attention_mask"], ["mask32"], to=TensorProto.INT32),
        helper.make_node(
            "EmbedLayerNormalization",
            [
                "ids32",
                "",
                const("word_embeddings", w("embeddings.word_embeddings.weight")),
                const(
                    "position_embeddings",
                    w("embeddings.position_embeddings.weight")
                    + w("embeddings.token_type_embeddings.weight")[0],
                ),
                "",
                const("embeddings_gamma", w("embeddings.LayerNorm.weight")),
                const("embeddings_beta", w("embeddings.LayerNorm.bias")),
                "mask32",
            ],
            ["layer0_in", "mask_index"],
            domain=MS,
            epsilon=eps,
        ),
    ]
    x = "layer0_in"
    for i in range(layers):
        p = f"encoder.layer.{i}."
        qkv_weight = np.concatenate(
            [w(p + f"attention.self.{m}.weight").T for m in ("query", "key", "value")], axis=1
        )
        qkv_bias = np.concatenate([w(p + f"attention.self.{m}.bias") for m in ("query", "key", "value")])
        attended, projected, mid = f"l{i}_attention", f"l{i}_projected", f"l{i}_mid"
        up, activated, down, out = f"l{i}_up", f"l{i}_activated", f"l{i}_down", f"l{i}_out"
        nodes += [
            helper.make_node(
                "Attention",
                [x, const(f"l{i}_qkv_weight", qkv_weight), const(f"l{i}_qkv_bias", qkv_bias), "mask_index"],
                [attended],
                domain=MS,
                num_heads=heads,
            ),
            helper.make_node("MatMul", [attended, linear(p + "attention.output.dense.weight")], [projected]),
            skip_layer_norm(projected, x, p + "attention.output", mid),
            helper.make_node("MatMul", [mid, linear(p + "intermediate.dense.weight")], [up]),
            helper.make_node(
                "BiasGelu",
                [up, const(p + "intermediate.dense.bias", w(p + "intermediate.dense.bias"))],
                [activated],
                domain=MS,
            ),
            helper.make_node("MatMul", [activated, linear(p + "output.dense.weight")], [down]),
            skip_layer_norm(down, mid, p + "output", out),
        ]
        x = out
    nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"]))
    for node in nodes:
        node.name = node.output[0]

    graph = helper.make_graph(
        nodes,
        "sentence_encoder",
        [
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "tokens"]),
            helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "tokens"]),
        ],
        [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch", "tokens", hidden])],
        initializers,
    )
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(MS, 1)],
        producer_name="quarry bert_onnx.py",
    )
    model.ir_version = 8
    onnx.save_model(
        model,
        os.path.join(out_dir, "model.onnx"),
        save_as_external_data=True,
        all_tensors_to_one_file=True,
        location="model.onnx.data",
        size_threshold=1024,
    )


if __name__ == "__main__":
    main()
