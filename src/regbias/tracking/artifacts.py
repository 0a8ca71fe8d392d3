"""Every path of a run folder (its artifacts, and their local copy), named once, with readers.

``tests/layout`` keeps every other module free of these paths' literals.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from regbias.distances.matrix import DistanceMatrix
from regbias.tables import NAME_COLUMNS, read_table

__all__ = [
    "FINDINGS_JSON",
    "COMPARISON_FIGURE",
    "COMPARISON_FOLDER",
    "CORRELATIONS_CSV",
    "DCOR_CSV",
    "DISTANCES_FOLDER",
    "DRAWS_CSV",
    "DROPPED_JSON",
    "ERROR_TXT",
    "EXPLAIN_FOLDER",
    "EXPLAIN_JSON",
    "MASKED_TESTS_CSV",
    "FIGURES_FOLDER",
    "GAPS_CSV",
    "GROUPS_CSV",
    "HEADLINE_JSON",
    "HYDRA_FOLDER",
    "JOBS_JSON",
    "LDA_FIGURE",
    "MODELS_FOLDER",
    "PAIRWISE_CSV",
    "PAIR_TESTS_CSV",
    "PAIR_TESTS_JSON",
    "PAIR_TEST_FIGURE",
    "PERF_FIGURE",
    "PERF_GROUPS_CSV",
    "PERF_POWER_CSV",
    "PERF_POWER_RATES_CSV",
    "PERF_TESTS_CSV",
    "PERF_TESTS_JSON",
    "PER_MODEL_CSV",
    "POWER_FIGURE",
    "POWER_PLANTS_CSV",
    "POWER_RATES_CSV",
    "PRIMARY_CSV",
    "PRIMARY_POWER_CSV",
    "REPORT_HTML",
    "REPORT_MD",
    "ROBUSTNESS_CSV",
    "RUN_FOLDERS",
    "STUDY_JSON",
    "SUMMARY_CSV",
    "TEXTS_CSV",
    "VARIANTS_CSV",
    "VERSIONS_JSON",
    "comparison_csv",
    "correlation_figure",
    "diagnostics_csv",
    "distance_csv",
    "distance_figure",
    "distance_json",
    "distance_sd_csv",
    "explain_figure",
    "explain_typical_csv",
    "explain_words_csv",
    "floor_figure",
    "performance_figure",
    "read_distance",
    "read_distances",
    "read_json",
    "read_study",
    "read_table_at",
    "read_text_table",
    "representation_figure",
    "scatter_figure",
    "sensitivity_csv",
]

#: The folders of a run folder (what a path of this module starts with).
DISTANCES_FOLDER = "distances"
FIGURES_FOLDER = "figures"
COMPARISON_FOLDER = "comparison"
EXPLAIN_FOLDER = "explain"
#: The composed Hydra config and the fine-tuned models' checkpoints (not copied locally).
HYDRA_FOLDER = ".hydra"
MODELS_FOLDER = "models"
RUN_FOLDERS = (
    "analysis",
    COMPARISON_FOLDER,
    "data",
    DISTANCES_FOLDER,
    EXPLAIN_FOLDER,
    FIGURES_FOLDER,
    "performance",
    "power",
    "provenance",
    "results",
    "sweep",
)

#: The pages: the report, its self-contained HTML copy, a failed run's traceback.
REPORT_MD = "report.md"
REPORT_HTML = "report.html"
#: The findings as a typed object (:class:`regbias.report.findings_model.Findings`).
FINDINGS_JSON = "findings.json"
ERROR_TXT = "error.txt"

#: A job's measurements (groups, sizes, meta; a parent's also its jobs' runs).
STUDY_JSON = "results/study.json"
#: The study's groups, the texts dropped in cleaning, each draw's sizes.
GROUPS_CSV = "data/groups.csv"
DROPPED_JSON = "data/dropped.json"
DRAWS_CSV = "data/draws.csv"

#: Stage I: every model's metrics per group, and every distinct text's scores.
PER_MODEL_CSV = "performance/per_model.csv"
TEXTS_CSV = "performance/texts.csv"
SUMMARY_CSV = "performance/summary.csv"
GAPS_CSV = "performance/gaps.csv"
DCOR_CSV = "performance/dcor.csv"
PERF_GROUPS_CSV = "performance/group_metrics.csv"

#: The analysis: the pair table, both tests of record, correlations, the primary.
PAIRWISE_CSV = "analysis/pairwise.csv"
PAIR_TESTS_CSV = "analysis/pair_tests.csv"
PAIR_TESTS_JSON = "analysis/pair_tests.json"
PERF_TESTS_CSV = "analysis/perf_tests.csv"
PERF_TESTS_JSON = "analysis/perf_tests.json"
PERF_POWER_CSV = "analysis/perf_power.csv"
CORRELATIONS_CSV = "analysis/correlations.csv"
ROBUSTNESS_CSV = "analysis/robustness.csv"
PRIMARY_CSV = "analysis/primary.csv"
PRIMARY_POWER_CSV = "analysis/primary_power.csv"
#: The bottom line's numbers a report writes (read back as ``headline/<key>`` metrics).
HEADLINE_JSON = "analysis/headline.json"

#: What carries each difference: the explanations, the test of record on masked texts.
EXPLAIN_JSON = f"{EXPLAIN_FOLDER}/explanations.json"
MASKED_TESTS_CSV = f"{EXPLAIN_FOLDER}/masked_pair_tests.csv"

#: ``task=power``: the planted mixtures, their rejection rates, the performance test's.
POWER_PLANTS_CSV = "power/plants.csv"
POWER_RATES_CSV = "power/rates.csv"
PERF_POWER_RATES_CSV = "power/performance_rates.csv"

#: A sweep's parent: its variants, its jobs, the package versions it ran with.
VARIANTS_CSV = "sweep/variants.csv"
JOBS_JSON = "sweep/jobs.json"
VERSIONS_JSON = "provenance/versions.json"

#: Figures with one name each.
LDA_FIGURE = "figures/lda_projection.png"
PAIR_TEST_FIGURE = "figures/pair_test_effect.png"
PERF_FIGURE = "figures/perf_test_groups.png"
POWER_FIGURE = "figures/power.png"
COMPARISON_FIGURE = "figures/comparison.png"


def distance_json(name: str) -> str:
    """A distance matrix with its pairs' spreads (:meth:`DistanceMatrix.to_dict`)."""
    return f"{DISTANCES_FOLDER}/{name}.json"


def distance_csv(name: str) -> str:
    """A distance matrix as a table."""
    return f"{DISTANCES_FOLDER}/{name}.csv"


def distance_sd_csv(name: str) -> str:
    """A distance matrix's standard deviations over repetitions."""
    return f"{DISTANCES_FOLDER}/{name}_sd.csv"


def sensitivity_csv(name: str) -> str:
    """A Sinkhorn distance's sensitivity to its regularisation."""
    return f"{DISTANCES_FOLDER}/sensitivity_{name}.csv"


def diagnostics_csv(name: str) -> str:
    """A Sinkhorn distance's solver diagnostics."""
    return f"{DISTANCES_FOLDER}/{name}_diagnostics.csv"


def comparison_csv(name: str) -> str:
    """One table of a sweep's comparison of its variants."""
    return f"{COMPARISON_FOLDER}/{name}.csv"


def explain_words_csv(pair: str) -> str:
    """A differing pair's distinguishing words (``pair`` already safe in a path)."""
    return f"{EXPLAIN_FOLDER}/{pair}.csv"


def explain_typical_csv(pair: str) -> str:
    """A differing pair's typical texts."""
    return f"{EXPLAIN_FOLDER}/{pair}_typical.csv"


def explain_figure(pair: str) -> str:
    """A differing pair's distinguishing words as a diverging bar chart."""
    return f"{FIGURES_FOLDER}/explain/{pair}.png"


def distance_figure(name: str) -> str:
    """A distance matrix's heatmap."""
    return f"{FIGURES_FOLDER}/{name}.png"


def floor_figure(name: str) -> str:
    """A distance against its noise floor."""
    return f"{FIGURES_FOLDER}/{name}_floor.png"


def performance_figure(metric: str) -> str:
    """A metric's distribution per group."""
    return f"{FIGURES_FOLDER}/performance_{metric}.png"


def correlation_figure(statistic: str) -> str:
    """The heatmap of one correlation statistic (``spearman_rho``, ``kendall_tau``)."""
    return f"{FIGURES_FOLDER}/correlations_{statistic}.png"


def representation_figure(name: str) -> str:
    """Each region's distance to the baseline against its share of the regional data."""
    return f"{FIGURES_FOLDER}/representation_{name}.png"


def scatter_figure(distance: str, performance: str) -> str:
    """One correlation's scatter plot (both names already safe in a path)."""
    return f"{FIGURES_FOLDER}/scatter/{distance}__{performance}.png"


def read_table_at(folder: Path, path: str) -> pd.DataFrame | None:
    """The table at ``path`` of a run folder (None when it is not there)."""
    file = folder / path
    return read_table(file) if file.is_file() else None


def read_json(folder: Path, path: str) -> Any:
    """The JSON document at ``path`` of a run folder (None when it is not there)."""
    file = folder / path
    return json.loads(file.read_text()) if file.is_file() else None


def read_study(folder: Path) -> dict[str, Any] | None:
    """The run's :data:`STUDY_JSON` (None when it is not there)."""
    found: dict[str, Any] | None = read_json(folder, STUDY_JSON)
    return found


def read_text_table(path: Path) -> pd.DataFrame:
    """A per-text table (:data:`TEXTS_CSV`) as written: keys and labels kept as text."""
    return read_table(path, names=(*NAME_COLUMNS, "key", "label"))


def read_distance(folder: Path, name: str) -> DistanceMatrix | None:
    """The distance matrix ``name`` of a run folder (None when it is not there)."""
    found = read_json(folder, distance_json(name))
    return DistanceMatrix.from_dict(found) if found is not None else None


def read_distances(folder: Path, *, strict: bool = False) -> dict[str, DistanceMatrix]:
    """Every distance matrix of a run folder's :data:`DISTANCES_FOLDER`, by name.

    ``strict``: raise on a JSON file that is no distance matrix (else it is skipped).
    """
    matrices = {}
    distances = folder / DISTANCES_FOLDER
    for path in sorted(distances.glob("*.json")) if distances.is_dir() else []:
        try:
            matrix = DistanceMatrix.from_dict(json.loads(path.read_text()))
        except (KeyError, TypeError, ValueError):
            if strict:
                raise
            continue  # another table in the folder
        matrices[matrix.name] = matrix
    return matrices
