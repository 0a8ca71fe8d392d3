"""Passages fit the encoder's window: the app counts tokens with the encoder's tokenizer."""

from __future__ import annotations

import logging
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from regbias.data.corpus import TextSet
from regbias.data.draws import DrawSizes, distance_draws
from regbias.embeddings.encoder import load_encoder
from regbias.embeddings.spec import EncoderSpec
from regbias.study import pipeline
from regbias.study.pipeline import log_study, token_budget
from tests.conftest import packaged


@pytest.fixture(scope="module")
def encoder() -> Any:
    return load_encoder(
        packaged(EncoderSpec, "encoder", "encoder=tiny", max_length=32, pooling="mean"),
        device="cpu",
    )


def test_the_budget_counts_what_the_encoder_embeds_special_tokens_included(encoder) -> None:
    budget = token_budget(encoder)
    assert budget.max_tokens == 32
    short, long = "good day", " ".join(["rain"] * 40)
    embedded = encoder.token_embeddings([short, long])  # one vector per real token
    # A text that fits is embedded whole ([CLS] and [SEP] counted), a longer one is cut.
    assert budget.count(short) == len(embedded[0]) and budget.fits(short)
    assert budget.count(long) > 32 and len(embedded[1]) == 32 and not budget.fits(long)


class RecordingRun:
    """Keeps the metrics a run is given; every other write is dropped."""

    def __init__(self) -> None:
        self.logged: dict[str, float] = {}

    def metrics(self, values: dict[str, float]) -> None:
        self.logged.update(values)

    def __getattr__(self, name: str) -> Any:
        return lambda *args, **kwargs: None


def test_the_run_logs_how_many_texts_each_distance_embedded_in_full(
    encoder, caplog, monkeypatch
) -> None:
    rng = np.random.default_rng(0)
    texts = {
        g: TextSet(
            [" ".join(["ab"] * int(rng.integers(1, 6)) + [f"{g}{i}"]) for i in range(200)],
            np.zeros(200, dtype=np.int64),
        )
        for g in ("au", "nz")
    }
    sizes = DrawSizes(2, 10, 5, 10, 8, matched_pool=True, floors=True)
    draws = distance_draws(texts, sizes, "tweet", 0, "error", token_budget(encoder))
    corpus = SimpleNamespace(name="toy", dropped={}, train=[], emptied={}, duplicates={})
    study = SimpleNamespace(corpus=corpus, groups={}, training=[])
    monkeypatch.setattr(pipeline, "group_table", lambda *args: None)
    monkeypatch.setattr(pipeline, "log_dataset", lambda *args, **kwargs: None)
    run = RecordingRun()
    with caplog.at_level(logging.INFO, logger="regbias.study.pipeline"):
        log_study(run, study, draws, "toy")  # type: ignore[arg-type]
    counts = draws.texts_in_full().set_index("kind")
    for kind in ("short", "long", "lda"):
        assert run.logged[f"draws/{kind}/texts_in_full"] == counts.loc[kind, "texts_in_full"]
        assert run.logged[f"draws/{kind}/texts_in_full_share"] == counts.loc[kind, "share"]
    assert run.logged["draws/long/texts_in_full_share"] == 1.0  # passages fit the window
    (line,) = [r.getMessage() for r in caplog.records if "embedded in full" in r.getMessage()]
    texts = int(counts.loc["long", "texts"])
    assert f"long {texts:,} of {texts:,} (100.0%)" in line
    # The window binds: passages join fewer than texts_per_passage texts.
    units = [u for rep in draws.units["long"] for group in rep.values() for u in group]
    assert max(len(u) for u in units) < 10
