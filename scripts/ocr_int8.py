"""Writes PP-OCR's text detection model with int8 weights and activations (docs/ocr.md).

Usage:
  ocr_int8.py quantize FP32_ONNX RANGES_JSON OUT_ONNX
  ocr_int8.py calibrate FP32_ONNX RANGES_JSON PAGE.png...

`quantize` is what `make setup` runs (scripts/fetch-model.sh): it folds each convolution's
following bias addition or batch normalization into the convolution, moves the graph to opset 17
and quantizes it statically (QDQ: per-channel int8 weights, uint8 activations) with the activation
ranges of RANGES_JSON. The ranges are fixed in the repository, so no model runs here and the
output is deterministic: same input, ranges and package versions give the same bytes, which
fetch-model.sh pins by SHA-256.

`calibrate` writes RANGES_JSON (ONNX Runtime's calibration cache format, min and max of every
tensor) from pages as the engine sees them: gray, scaled to a longer side of at most 1,600 pixels
and a shorter one of at least 736, sides multiples of 32 (host/ocr/src/detect.rs). Developers run
it when the model or the pages change; the pages should not be the ones `make eval` scores, e.g.
`QUARRY_OCR_EVAL_DUMP=DIR` with `--pages 6` and the documents numbered 3 to 5
(`DIR/*-[345]-*.png`; the committed ranges come from Chromium's printed pages).

Why: detection is a convolutional network over the whole page, and ONNX Runtime's int8
convolutions run it 2.8 times faster on this machine's CPUs, with character error rates within
0.005 of fp32's (`make eval`). The recognition model stays in fp32: quantized, it read Chinese
and Japanese with about twice the errors for 15% more speed.
"""

import os
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper, version_converter
from onnxruntime.quantization import (
    CalibrationDataReader,
    CalibrationMethod,
    QuantFormat,
    QuantType,
    quantize_static,
)

MIN_SIDE = 736
MAX_SIDE = 1600
OPSET = 17


def folded(model: onnx.ModelProto) -> onnx.ModelProto:
    """The model with each convolution's bias addition or batch normalization folded into it.

    The exporter leaves a convolution's bias as a separate Add (of a constant, often through an
    Identity); quantized, that Add would run on dequantized values. Folding keeps the arithmetic
    of the fp32 model (to rounding) and lets the quantized convolution carry its bias.
    """
    graph = model.graph
    initializers = {i.name: i for i in graph.initializer}
    alias = {
        n.output[0]: n.input[0]
        for n in graph.node
        if n.op_type == "Identity" and n.input[0] in initializers
    }

    def constant(name):
        name = alias.get(name, name)
        return numpy_helper.to_array(initializers[name]) if name in initializers else None

    consumers = {}
    for node in graph.node:
        for name in node.input:
            consumers.setdefault(name, []).append(node)
    outputs = {o.name for o in graph.output}
    removed = set()
    for node in graph.node:
        if node.op_type != "Conv" or len(node.input) != 2 or node.output[0] in outputs:
            continue
        following = consumers.get(node.output[0], [])
        if len(following) != 1:
            continue
        (after,) = following
        weights = constant(node.input[1])
        channels = weights.shape[0]
        if after.op_type == "Add":
            other = after.input[1] if after.input[0] == node.output[0] else after.input[0]
            bias = constant(other)
            if bias is None or bias.size != channels:
                continue
            bias = bias.reshape(channels).astype(np.float32)
        elif after.op_type == "BatchNormalization":
            gamma, beta, mean, var = (constant(name) for name in after.input[1:5])
            if any(v is None for v in (gamma, beta, mean, var)):
                continue
            eps = next((a.f for a in after.attribute if a.name == "epsilon"), 1e-5)
            scale = (gamma / np.sqrt(var + np.float32(eps))).astype(np.float32)
            weights = (weights * scale.reshape(-1, *[1] * (weights.ndim - 1))).astype(np.float32)
            bias = (beta - mean * scale).astype(np.float32)
            graph.initializer.append(numpy_helper.from_array(weights, f"{node.name}_folded_w"))
            node.input[1] = f"{node.name}_folded_w"
        else:
            continue
        graph.initializer.append(numpy_helper.from_array(bias, f"{node.name}_folded_b"))
        node.input.append(f"{node.name}_folded_b")
        node.output[0] = after.output[0]
        removed.add(id(after))
    for node in graph.node:
        for i, name in enumerate(node.input):
            if name in alias:
                node.input[i] = alias[name]
    kept = [
        n
        for n in graph.node
        if id(n) not in removed
        and not (n.op_type == "Identity" and n.output[0] in alias and n.output[0] not in outputs)
    ]
    del graph.node[:]
    graph.node.extend(kept)
    used = {name for n in graph.node for name in n.input}
    kept = [i for i in graph.initializer if i.name in used]
    del graph.initializer[:]
    graph.initializer.extend(kept)
    return model


def prepared(fp32_path: str) -> onnx.ModelProto:
    """The fp32 model folded and at opset 17 (per-channel DequantizeLinear needs 13 or later)."""
    model = version_converter.convert_version(folded(onnx.load(fp32_path)), OPSET)
    onnx.checker.check_model(model)
    return model


def page_input(path: str) -> np.ndarray:
    """A page as the detection model takes it (host/ocr/src/detect.rs)."""
    from PIL import Image  # only `calibrate` reads pages

    image = Image.open(path).convert("L")
    width, height = image.size
    short, long = min(width, height), max(width, height)
    scale = MIN_SIDE / short if short < MIN_SIDE else 1.0
    if long * scale > MAX_SIDE:
        scale = MAX_SIDE / long
    size = tuple(max(1, round(side * scale / 32)) * 32 for side in (width, height))
    resample = Image.BOX if scale < 1.0 else Image.BILINEAR
    values = np.asarray(image.resize(size, resample), dtype=np.float32) / 127.5 - 1.0
    return np.repeat(values[None, None], 3, axis=1)


class Pages(CalibrationDataReader):
    """Calibration inputs: the pages of `paths`, one at a time."""

    def __init__(self, paths):
        self.paths = iter(paths)

    def get_next(self):
        path = next(self.paths, None)
        return None if path is None else {"x": page_input(path)}


def quantize(fp32_path: str, ranges: str, out: str, pages=None) -> None:
    """Quantizes the prepared model with the ranges of `ranges` (computed first from `pages`
    when given)."""
    with tempfile.TemporaryDirectory() as tmp:
        model = os.path.join(tmp, "prepared.onnx")
        onnx.save(prepared(fp32_path), model)
        quantize_static(
            model,
            out,
            Pages(pages) if pages else None,
            quant_format=QuantFormat.QDQ,
            per_channel=True,
            activation_type=QuantType.QUInt8,
            weight_type=QuantType.QInt8,
            calibrate_method=CalibrationMethod.MinMax,
            calibration_cache_path=ranges,
        )


def main() -> None:
    if len(sys.argv) >= 5 and sys.argv[1] == "quantize":
        _, _, fp32_path, ranges, out = sys.argv[:5]
        quantize(fp32_path, ranges, out)
    elif len(sys.argv) >= 5 and sys.argv[1] == "calibrate":
        fp32_path, ranges, pages = sys.argv[2], sys.argv[3], sys.argv[4:]
        if os.path.exists(ranges):
            os.remove(ranges)
        with tempfile.TemporaryDirectory() as tmp:
            quantize(fp32_path, ranges, os.path.join(tmp, "det.onnx"), pages)
        print(f"ocr_int8: wrote the ranges of {len(pages)} pages to {ranges}")
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
