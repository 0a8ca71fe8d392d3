"""The comparison page answers its questions, and every column of every table is named."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from regbias.analysis.encoders.separation import contrast_encoders
from regbias.analysis.pairs.embedding import (
    EmbeddingPairTests,
    EmbeddingTestSettings,
    embedding_pair_tests,
)
from regbias.report.comparison import comparison_markdown
from regbias.report.encoder_contrast import EncoderComparison, markdown_table
from tests.conftest import packaged

SETTINGS = packaged(EmbeddingTestSettings, "analysis.tests.embedding", relabellings=99, cap=100)
GROUPS = ("au", "ca", "nz", "uk", "mixed")


def _comparison() -> EncoderComparison:
    rng = np.random.default_rng(0)
    texts = {g: [f"{g}{i}" for i in range(40)] for g in GROUPS}
    latent = {t: rng.standard_normal(4) + (i % 3) for i, g in enumerate(GROUPS) for t in texts[g]}
    encoders = {
        "encoder=l6": lambda ts: np.stack([latent[t] for t in ts]),
        "encoder=random": lambda ts: np.stack([latent[t] * 0 + rng.standard_normal(4) for t in ts]),
    }
    contrasts = contrast_encoders(texts, encoders, SETTINGS, references=["mixed"], n_bootstrap=99)
    records: dict[str, EmbeddingPairTests] = {
        label: embedding_pair_tests(texts, vectors, SETTINGS, references=["mixed"])
        for label, vectors in encoders.items()
    }
    primary = pd.DataFrame(
        [
            {
                "first": "encoder=l6",
                "second": "encoder=random",
                "rho_first": 0.3,
                "rho_first_ci_low": -0.1,
                "rho_first_ci_high": 0.6,
                "rho_second": 0.6,
                "rho_second_ci_low": 0.2,
                "rho_second_ci_high": 0.8,
                "difference": -0.3,
                "ci_low": -0.7,
                "ci_high": 0.2,
                "p": 0.3,
                "paired": True,
            }
        ]
    )
    return EncoderComparison(contrasts, records, primary)


def _tables(page: str) -> list[list[str]]:
    """The header cells of every Markdown table of ``page``."""
    lines = page.splitlines()
    return [
        [c.strip() for c in lines[i - 1].strip().strip("|").split("|")]
        for i, line in enumerate(lines)
        if re.fullmatch(r"(\|---)+\|", line.strip())
    ]


def test_every_column_of_every_table_is_named_and_explained() -> None:
    compared = _comparison()
    exploratory = pd.DataFrame(
        {"rho dist_energy_long ~ gap_accuracy": [0.1, -0.2]}, index=["encoder=l6", "x"]
    )
    exploratory["p_perm dist_energy_long ~ gap_accuracy"] = [0.5, 0.01]
    exploratory["mean energy_long"] = [1.0, 2.0]
    page = comparison_markdown(
        exploratory, {"encoder=l6": "variant-a"}, compared.markdown("d ~ g"), compared.findings()
    )
    headers = _tables(page)
    assert len(headers) >= 4  # separation, agreement, primary, exploratory
    for header in headers:
        assert all(header), header
        legend = page[page.index(" | ".join(header)) :].split("Columns: ", 1)[1].split("\n")[0]
        for name in header:
            assert f"*{name}*" in legend, name


def test_findings_answer_and_hold_no_unadjusted_p() -> None:
    compared = _comparison()
    table = pd.DataFrame(
        {
            "rho dist_energy_long ~ gap_accuracy": [0.1],
            "p_perm dist_energy_long ~ gap_accuracy": [0.002],
        },
        index=["encoder=l6"],
    )
    page = comparison_markdown(table, {}, compared.markdown("d ~ g"), compared.findings())
    findings = page.split("## Findings", 1)[1].split("\n## ", 1)[0]
    assert "separates the regions more" in findings or "no difference shown" in findings
    assert "tests of record agree on" in findings
    assert "primary rho" in findings
    assert "0.002" not in findings and "dist_energy_long" not in findings
    assert "## Exploratory: every distance against the headline gap (unadjusted)" in page


def test_an_unnamed_column_is_refused() -> None:
    with pytest.raises(ValueError, match="without a name"):
        markdown_table(pd.DataFrame({"": [1.0]}), {"": "x"})
    with pytest.raises(ValueError, match="legend"):
        markdown_table(pd.DataFrame({"a": [1.0]}), {})
