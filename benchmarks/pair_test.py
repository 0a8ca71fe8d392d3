"""The test of record on real tweets: planted nulls, planted differences, cost (figures only).

Runs regbias's own :func:`~regbias.analysis.pairs.embedding.embedding_pair_tests` and
:func:`~regbias.analysis.power.embedding.plant_power` on sentence vectors of the real Sentiment140
tweets (the configured encoder, default all-MiniLM-L6-v2, through the embedding cache):

1. **Planted nulls**: ``--splits`` random splits of the US tweets into six pseudo-regions of
   the real sizes (AU 2165, CA 1840, NZ 329, UK 6446, ZA 250, US the rest), each tested as
   the parent tests the regions (cap, shared texts, Holm over the 15 pairs): raw p by tenths,
   the share at 0.05 and 0.01, and the false "differs" after Holm.
2. **Independent null pairs**: ``--null-pairs`` pairs of disjoint random US samples at the
   study's size classes, each its own test: rates at 0.05 and 0.01 with 99% binomial bounds
   (bounds that twice the nominal rate would fail).
3. **Power**: planted UK-into-US mixtures (fresh texts every plant) at the size classes given
   by ``--power-sizes``, for every statistic; the rate at ``alpha / 15`` with its 95%
   Clopper-Pearson interval.
4. **Pure UK vs US** at 1,200 + 1,200 and at the cap: z and p per statistic; and the shipped
   default study's own test of record (``study``), exactly as a sweep's parent runs it.
5. **Cost** of one pair at the cap: the test against its matrix-product bound (this machine's
   float32 GEMM rate) and against ``dcor.homogeneity.energy_test`` (timed on a few
   relabellings, projected).

    python benchmarks/pair_test.py                       # ~15 min on a quiet 2-core machine
    python benchmarks/pair_test.py --splits 3 --null-pairs 300 --plants 20 --skip-dcor
"""

from __future__ import annotations

import argparse
import os
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
from scipy import stats
from shipped import shipped_analysis

from regbias.analysis.pairs.embedding import EmbeddingTestSettings, embedding_pair_tests
from regbias.analysis.pairs.embedding_null import (
    PAIR_STATISTICS,
    pair_statistic_null,
    permutation_p,
    pooled_form,
)
from regbias.analysis.power.embedding import PowerSettings, plant_power
from regbias.app.settings import read_settings
from regbias.config_files import CONFIG_DIR
from regbias.data.registry import packaged_dataset
from regbias.embeddings.cache import EmbeddingCache, embed_pooled
from regbias.embeddings.encoder import load_encoder
from regbias.study.settings import StudySettings

SIZES = {"au": 2165, "ca": 1840, "nz": 329, "uk": 6446, "za": 250}


def _settings(*overrides: str) -> StudySettings:
    """The shipped default config with ``overrides`` (Hydra compose API)."""
    from hydra import compose, initialize_config_dir

    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
        return read_settings(compose("config", overrides=list(overrides)))


def _vectors(data_dir: str, cache_dir: str) -> tuple[list[str], np.ndarray, np.ndarray]:
    corpus = packaged_dataset("sentiment140").read(Path(data_dir))
    us = list(dict.fromkeys(corpus.groups["us"].texts))
    uk = [t for t in dict.fromkeys(corpus.groups["uk"].texts) if t not in set(us)]
    encoder = load_encoder(_settings().encoder, device="cpu")
    cache = EmbeddingCache(cache_dir)
    started = time.perf_counter()
    us_vectors, uk_vectors = embed_pooled(encoder, cache, us), embed_pooled(encoder, cache, uk)
    print(f"embedded {len(us)} US and {len(uk)} UK texts in {time.perf_counter() - started:.0f} s")
    return us, us_vectors, uk_vectors


def _rate_line(p: np.ndarray, level: float) -> str:
    hits = int(np.sum(p <= level))
    low, high = stats.binom.ppf([0.005, 0.995], len(p), level) / len(p)
    ok = "within" if low <= hits / len(p) <= high else "OUTSIDE"
    doubled = stats.binom.cdf(high * len(p), len(p), 2 * level)
    return (
        f"p <= {level:g}: {hits}/{len(p)} = {hits / len(p):.4f}, 99% bounds under the null "
        f"[{low:.4f}, {high:.4f}] ({ok}); a test at twice the rate stays inside them with "
        f"probability {doubled:.3f}"
    )


def planted_nulls(
    texts: list[str], vectors: np.ndarray, settings: EmbeddingTestSettings, splits: int
) -> None:
    print(f"\n## planted nulls: {splits} splits of the US tweets at the regions' sizes")
    lookup = dict(zip(texts, vectors, strict=True))
    p_all, false = [], []
    for split in range(splits):
        order = np.random.default_rng(1000 + split).permutation(len(texts))
        groups, start = {}, 0
        for group, size in {**SIZES, "us": len(texts) - sum(SIZES.values())}.items():
            groups[group] = [texts[i] for i in order[start : start + size]]
            start += size
        tests = embedding_pair_tests(groups, lambda ts: np.stack([lookup[t] for t in ts]), settings)
        p_all.extend(tests.table["p"])
        false.append(int(tests.table["differs"].sum()))
    p = np.asarray(p_all)
    print("raw p by tenths:", np.histogram(p, bins=10, range=(0, 1))[0].tolist())
    for level in (0.05, 0.01):
        print("  ", _rate_line(p, level))
    print(
        f"  false 'differs' after Holm per split: {false} (a family-wise rate <= 0.05 allows "
        f"{stats.binom.ppf(0.99, splits, 0.05):.0f} of {splits} splits with any)"
    )


def null_pairs(
    vectors: np.ndarray,
    statistic: str,
    pairs: int,
    relabellings: int,
    sizes: list[tuple[int, int]],
) -> None:
    rng = np.random.default_rng(7)
    p = []
    for k in range(pairs):
        n_a, n_b = sizes[k % len(sizes)]
        order = rng.permutation(len(vectors))[: n_a + n_b]
        matrix = pooled_form(vectors[order], statistic)  # type: ignore[arg-type]
        observed, null = pair_statistic_null(matrix, n_a, relabellings, rng)
        p.append(permutation_p(observed, null))
    print(f"  {statistic}: {pairs} independent null pairs at {sizes}, K = {relabellings}")
    for level in (0.05, 0.01):
        print("    ", _rate_line(np.asarray(p), level))


def power(
    us: np.ndarray,
    uk: np.ndarray,
    sizes: list[tuple[int, int]],
    plants: int,
    statistics: list[str],
    relabellings: int,
) -> None:
    print(f"\n## power: UK planted into US, {plants} plants a share, detected at p <= 0.05 / 15")
    for statistic in statistics:
        started = time.perf_counter()
        result = plant_power(
            us,
            uk,
            [(a, b, 15) for a, b in sizes],
            shipped_analysis(PowerSettings, "power", plants=plants, relabellings=relabellings),
            statistic=statistic,  # type: ignore[arg-type]
            alpha=0.05,
            progress=False,
        )
        rates = result.rates()
        for (a, b), part in rates.groupby(["n_a", "n_b"]):
            cells = ", ".join(
                f"{r.share:.0%}: {r.power:.2f} [{r.power_low:.2f}-{r.power_high:.2f}]"
                for r in part.itertuples()
            )
            print(f"  {statistic:6s} {a}+{b}: {cells}")
        took = time.perf_counter() - started
        print(f"  {statistic}: {took:.0f} s; detectable: {result.detectable()}")


def pure_pair(us: np.ndarray, uk: np.ndarray, cap: int) -> None:
    print("\n## pure UK vs US")
    rng = np.random.default_rng(3)
    for n in (1200, cap):
        a, b = us[rng.permutation(len(us))[:n]], uk[rng.permutation(len(uk))[:n]]
        for statistic in PAIR_STATISTICS:
            matrix = pooled_form(np.vstack([a, b]), statistic)  # type: ignore[arg-type]
            observed, null = pair_statistic_null(matrix, n, 999, rng)
            z = (observed - null.mean()) / null.std()
            print(f"  {n}+{n} {statistic}: z = {z:.1f}, p = {permutation_p(observed, null):.4f}")


def cost(us: np.ndarray, cap: int, relabellings: int, skip_dcor: bool) -> None:
    print(f"\n## cost of one pair at {cap}+{cap}, {relabellings} relabellings")
    x = us[: 2 * cap]
    n = len(x)
    a = np.random.default_rng(0).standard_normal((n, n), dtype=np.float32)
    b = np.random.default_rng(1).standard_normal((n, 512), dtype=np.float32)
    started = time.perf_counter()
    for _ in range(5):
        a @ b
    gemm = 5 * 2 * n * n * 512 / (time.perf_counter() - started)
    for statistic in PAIR_STATISTICS:
        started = time.perf_counter()
        form = pooled_form(x, statistic)  # type: ignore[arg-type]
        built = time.perf_counter() - started
        pair_statistic_null(form, cap, relabellings, np.random.default_rng(0))
        took = time.perf_counter() - started
        bound = 2 * n * form.values.shape[1] * relabellings / gemm
        print(
            f"  {statistic}: {took:.2f} s (form {built:.2f} s); matrix-product bound "
            f"{bound:.2f} s at {gemm / 1e9:.0f} GFLOP/s float32: {bound / took:.2f} of it"
        )
    if not skip_dcor:
        import dcor

        started = time.perf_counter()
        dcor.homogeneity.energy_test(x[:cap], x[cap:], num_resamples=3, random_state=0)
        per = (time.perf_counter() - started) / 4
        minutes = per * relabellings / 60
        print(
            f"  dcor energy_test: {per:.3f} s a relabelling, {minutes:.0f} min for {relabellings}"
        )


def study(data_dir: str, cache_dir: str) -> None:
    """The test of record of the shipped default study, as a sweep's parent runs it."""
    from regbias.study.record import run_record_tests

    print("\n## the default study's test of record (what a sweep's parent runs)")
    settings = _settings(f"paths.data_dir={data_dir}", f"paths.cache_dir={cache_dir}")
    started = time.perf_counter()
    tests = run_record_tests(settings)
    assert tests is not None
    print(f"  {time.perf_counter() - started:.0f} s, {len(tests.table)} pairs")
    columns = ["group_a", "group_b", "family", "n_a", "n_b", "shared", "z", "p_adjusted", "differs"]
    print(tests.table[columns].to_string(index=False))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=os.environ.get("REGBIAS_DATA_DIR", "data"))
    parser.add_argument("--cache-dir", default=".cache/regbias")
    parser.add_argument("--splits", type=int, default=10)
    parser.add_argument("--split-relabellings", type=int, default=999)
    parser.add_argument("--null-pairs", type=int, default=1200)
    parser.add_argument("--null-relabellings", type=int, default=199)
    parser.add_argument("--null-sizes", default="250x329,250x2000,329x1800")
    parser.add_argument("--plants", type=int, default=50)
    parser.add_argument("--power-sizes", default="2000x2000,1500x1500,250x2000")
    parser.add_argument("--cap", type=int, default=2000)
    parser.add_argument("--statistic", default="energy", choices=PAIR_STATISTICS)
    parser.add_argument("--skip-dcor", action="store_true")
    parser.add_argument("--only", default="study,nulls,pairs,power,pure,cost")
    parser.add_argument("--statistics", default=",".join(PAIR_STATISTICS))
    parser.add_argument("--power-relabellings", type=int, default=999)
    args = parser.parse_args()
    only = set(args.only.split(","))
    if "study" in only:
        study(args.data_dir, args.cache_dir)
    statistics = args.statistics.split(",")
    null_sizes = [tuple(int(v) for v in s.split("x")) for s in args.null_sizes.split(",")]
    texts, us, uk = _vectors(args.data_dir, args.cache_dir)
    settings = shipped_analysis(
        EmbeddingTestSettings,
        "tests.embedding",
        statistic=args.statistic,
        relabellings=args.split_relabellings,
        cap=args.cap,
    )
    if "nulls" in only:
        planted_nulls(texts, us, settings, args.splits)
    if "pairs" in only:
        print("\n## independent null pairs of US tweets")
        for statistic in statistics:
            null_pairs(us, statistic, args.null_pairs, args.null_relabellings, null_sizes)
    if "power" in only:
        sizes = [tuple(int(v) for v in s.split("x")) for s in args.power_sizes.split(",")]
        power(us, uk, sizes, args.plants, statistics, args.power_relabellings)  # type: ignore[arg-type]
    if "pure" in only:
        pure_pair(us, uk, args.cap)
    if "cost" in only:
        cost(us, args.cap, replace(settings, relabellings=9999).relabellings, args.skip_dcor)


if __name__ == "__main__":
    main()
