"""Every number and word the two pairwise tests write, on fixed synthetic data, as one file.

Run before and after a change to the pairwise tests or their renderer and ``diff`` the files:
the tables (``pair_tests.csv``, ``perf_tests.csv``), their JSON forms, the pairwise columns,
the MLflow metrics, the headline counts and the report's lines and sections.

    PYTHONPATH=src python benchmarks/pairwise_snapshot.py OUT_FILE
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from regbias.analysis.pairs.embedding import EmbeddingTestSettings, embedding_pair_tests
from regbias.analysis.pairs.pairwise import PairwiseTests
from regbias.analysis.pairs.performance import (
    PerformancePairTests,
    PerformanceTestSettings,
    performance_pair_tests,
)
from regbias.analysis.pairs.pooled_scores import PerfTexts
from regbias.report.record import (
    pairs_columns,
    pairs_found,
    pairs_lines,
    pairs_metrics,
    pairs_numbers,
    pairs_part,
    perf_section,
    record_section,
)


def _vectors(texts: list[str]) -> np.ndarray:
    rows = []
    for text in texts:
        seed = int(hashlib.sha256(text.encode()).hexdigest()[:8], 16)
        shift = 1.0 if text.startswith("c") else 0.0
        rows.append(np.random.default_rng(seed).normal(size=4) + shift)
    return np.asarray(rows)


def _pair_tests(relabellings: int) -> PairwiseTests:
    same = [f"t{i}" for i in range(20)]
    groups = {
        "g_a": same,
        "g_b": list(same),
        "c": [f"c{i}" for i in range(20)],
        "d": [f"d{i}" for i in range(25)],
        "mixed": [*same[:5], "c1", "d2", *[f"m{i}" for i in range(15)]],
    }
    settings = EmbeddingTestSettings(True, "energy", relabellings, None, None, 20, 3)
    return embedding_pair_tests(groups, _vectors, settings, references=["mixed"])


def _perf_tests(relabellings: int) -> PairwiseTests:
    rng = np.random.default_rng(0)
    frames = []
    for name, right in (("au", 0.8), ("ca", 0.6), ("nz", 0.7), ("mixed", 0.7)):
        labels = (rng.random(60) < 0.5).astype(int)
        frame = pd.DataFrame(
            {"group": name, "key": [f"{name}-{i}" for i in range(60)], "label": labels}
        )
        for m in range(4):
            correct = rng.random(60) < right
            frame[f"prob:seed{m}/fold0"] = np.where(correct == (labels == 1), 0.8, 0.2)
        frames.append(frame)
    frame = pd.concat(frames, ignore_index=True)
    frame.loc[frame["group"] == "nz", "key"] = frame.loc[frame["group"] == "ca", "key"].to_numpy()
    return performance_pair_tests(
        PerfTexts.of(frame),
        ["au", "ca", "nz", "mixed"],
        PerformanceTestSettings(True, relabellings, 3),
        references=["mixed"],
        n_bootstrap=30,
    )


def _functions() -> dict[str, object]:
    """The renderer's functions, each taking a test."""

    def section(tests: PairwiseTests) -> str:
        return (
            perf_section(tests)
            if isinstance(tests, PerformancePairTests)
            else record_section(tests)
        )  # type: ignore[arg-type]

    return {
        "part": pairs_part,
        "found": pairs_found,
        "lines": pairs_lines,
        "metrics": pairs_metrics,
        "numbers": pairs_numbers,
        "columns": lambda tests: pairs_columns(_pairwise(), tests),
        "section": section,
    }


def _pairwise() -> pd.DataFrame:
    groups = ["g_a", "g_b", "c", "d", "mixed", "au", "ca", "nz"]
    pairs = [(a, b) for i, a in enumerate(groups) for b in groups[i + 1 :]]
    return pd.DataFrame(pairs, columns=["group_a", "group_b"])


def main(out: Path) -> None:
    """Write the snapshot to ``out``."""
    functions = _functions()
    parts = []
    for tests in (_pair_tests(19), _pair_tests(199), _perf_tests(9), _perf_tests(199)):
        kind = type(tests).__name__
        parts.append(f"== {kind} table\n{tests.table.to_csv(index=False)}")
        data = tests.to_dict()
        parts.append(f"== {kind} json\n{json.dumps(data, sort_keys=True, default=str)}")
        back = type(tests).from_dict(json.loads(json.dumps(data)))
        parts.append(f"== {kind} read back\n{back.table.to_csv(index=False)}")
        for name, function in functions.items():
            value = function(tests)  # type: ignore[operator]
            if isinstance(value, pd.DataFrame):
                value = value.to_csv(index=False)
            elif isinstance(value, dict):
                value = json.dumps(value, sort_keys=True)
            elif isinstance(value, list):
                value = "\n".join(value)
            parts.append(f"== {kind} {name}\n{value}")
    out.write_text("\n".join(parts) + "\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
