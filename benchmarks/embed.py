"""Texts per second of regbias's embedding path against a naive fixed-padding loop.

regbias tokenises once, sorts texts by token length and pads each batch to its own longest
text; the naive loop pads every batch to 128 tokens, as the paper's code did. Both return the
last hidden layer's real-token vectors of all-MiniLM-L6-v2 for the same real tweets.

    python benchmarks/embed.py --n 1000 --data-dir /work/shared/data
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from shipped import shipped_encoder

from regbias.embeddings.encoder import Encoder, load_encoder


def read_tweets(data_dir: Path, n: int, seed: int) -> list[str]:
    """``n`` non-empty regional tweets drawn at random from all regions."""
    frames = [pd.read_csv(path) for path in sorted(data_dir.glob("regional_sentiment140/*.csv"))]
    if not frames:
        raise SystemExit(f"no regional_sentiment140/*.csv under {data_dir}; pass --data-dir")
    texts = pd.concat(frames)["text"].dropna().astype(str)
    texts = texts[texts.str.strip() != ""]
    return texts.sample(n=min(n, len(texts)), random_state=seed).tolist()


def naive_token_embeddings(encoder: Encoder, texts: list[str], batch_size: int) -> list:
    """Batches in input order, each padded to max_length."""
    results = []
    with torch.inference_mode():
        for start in range(0, len(texts), batch_size):
            batch = encoder.tokenizer(
                texts[start : start + batch_size],
                padding="max_length",
                truncation=True,
                max_length=encoder.spec.max_length,
                return_tensors="pt",
            ).to(encoder.device)
            hidden = encoder.model(**batch).last_hidden_state.cpu().numpy()
            lengths = batch["attention_mask"].sum(dim=1).tolist()
            results.extend(hidden[row, :length].copy() for row, length in enumerate(lengths))
    return results


def timed(function, *args, **kwargs) -> tuple[object, float]:
    start = time.perf_counter()
    result = function(*args, **kwargs)
    return result, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1000, help="tweets to embed")
    parser.add_argument("--data-dir", type=Path, default=Path("/work/shared/data"))
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--device", default="auto")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per path (best kept)")
    args = parser.parse_args()

    texts = read_tweets(args.data_dir, args.n, args.seed)
    encoder = load_encoder(shipped_encoder(), device=args.device)
    encoder.token_embeddings(texts[:8])  # warm-up: first-call allocations
    # Alternate the two paths and keep each one's best time: the CPUs may be shared.
    ours_times, naive_times = [], []
    for _ in range(args.repeats):
        naive, seconds = timed(naive_token_embeddings, encoder, texts, args.batch_size)
        naive_times.append(seconds)
        ours, seconds = timed(encoder.token_embeddings, texts, batch_size=args.batch_size)
        ours_times.append(seconds)
    ours_s, naive_s = min(ours_times), min(naive_times)
    worst = max(float(np.abs(a - b).max()) for a, b in zip(ours, naive, strict=True))
    tokens = sum(len(array) for array in ours)

    print(
        f"{len(texts)} tweets, {tokens / len(texts):.1f} real tokens per tweet on average, "
        f"device {encoder.device}, threads {torch.get_num_threads()}, batch {args.batch_size}"
    )
    print(f"best of {args.repeats} alternating runs per path")
    print(f"{'path':<34}{'seconds':>10}{'texts/s':>10}")
    print(f"{'naive (every batch padded to 128)':<34}{naive_s:>10.2f}{len(texts) / naive_s:>10.1f}")
    print(f"{'regbias (sorted, dynamic padding)':<34}{ours_s:>10.2f}{len(texts) / ours_s:>10.1f}")
    print(f"speedup {naive_s / ours_s:.2f}x; largest difference between outputs {worst:.2e}")


if __name__ == "__main__":
    main()
