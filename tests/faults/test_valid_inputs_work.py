"""Items 10, 12 and 16 of issue 27: valid inputs and presets run without an error or a warning."""

from __future__ import annotations

import csv
import logging
from types import SimpleNamespace

import numpy as np

from regbias.app.settings import read_settings
from regbias.data.csv_corpus import read_csv_corpus
from regbias.data.draws import DistanceDraws
from regbias.distances.suite import run_distance_suite
from tests.faults.conftest import composed

# Item 10: a valid CSV with one very long text is read, not called malformed.


def test_a_five_megabyte_text_is_a_valid_field(tmp_path):
    long_text = "word " * 1_000_000  # 5 MB in one field, quoted, with a comma inside
    path = tmp_path / "long.csv"
    rows = ["text,label,group", "short one,0,a", f'"{long_text}, end",1,a', "fine,0,b", "ok,1,b"]
    path.write_text("\n".join(rows) + "\n")
    corpus = read_csv_corpus(path, text_column="text", label_column="label", group_column="group")
    assert corpus.groups["a"].texts == ["short one", " ".join(f"{long_text}, end".split())]
    assert csv.field_size_limit() < 2**31  # raised to what the file needs, never overflowing


class WordVectors:
    """A stand-in encoder: one seeded 4-d token vector per word of a text."""

    spec = SimpleNamespace(identity="test:word-vectors", pooling="mean", one_pass=True)

    def token_embeddings(self, texts, padding="real", batch_size=64):
        return [
            np.random.default_rng(len(text)).normal(size=(len(text.split()), 4)).astype("f4")
            for text in texts
        ]

    def embed(self, texts, padding="real", batch_size=64):
        """Token vectors and (none asked here) no pooled ones: the suite's one pass."""
        return self.token_embeddings(texts, padding, batch_size), None


def distance_settings(*overrides):
    """The composed smoke distance settings with ``sinkhorn.<key>=<value>``."""
    sinkhorn = [f"distance.sinkhorn.{change}" for change in overrides]
    return read_settings(composed(*sinkhorn)).distance


def draws_with_twins(main_words: int, twin_words: int) -> DistanceDraws:
    """Two groups of two short texts each, with twins of ``twin_words`` words a text."""

    def draw(words: int, tag: str) -> dict[str, list[str]]:
        return {g: [" ".join([f"{g}{tag}{i}"] * words) for i in range(2)] for g in ("a", "b")}

    return DistanceDraws(
        texts={"short": [draw(main_words, "m")]}, twins={"short": [draw(twin_words, "t")]}
    )


# Item 12: the solver line of a preset whose annealing start is not set (the paper's: exact).


def test_solver_line_of_the_exact_preset_logs_without_error(caplog):
    distance = distance_settings("solver=exact", "epsilon=0.005")
    with caplog.at_level(logging.INFO, logger="regbias.distances"):
        result = run_distance_suite(draws_with_twins(3, 3), WordVectors(), None, distance)
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("Sinkhorn")]
    assert lines == ["Sinkhorn solver exact, updates auto, epsilon 0.005, no annealing"]
    assert result.matrices["sinkhorn_short"].config["solver"] == "exact"


# Item 16: a twin draw holding more tokens than every main draw.


def test_twins_longer_than_the_main_clouds_get_their_floor():
    distance = distance_settings("solver=sinkhorn", "pad_multiple=8")
    result = run_distance_suite(draws_with_twins(2, 30), WordVectors(), None, distance)
    matrix = result.matrices["sinkhorn_short"]
    assert matrix.config["n_points_padded"] == 8  # the main clouds' size: 2 texts x 2 tokens
    assert matrix.floor is not None and np.all(np.isfinite(matrix.floor))
    assert np.all(matrix.floor > 0)
