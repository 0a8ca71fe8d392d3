"""Every path of a run folder (its artifacts, and their local copy), named once, with readers.

``tests/layout`` keeps every other module free of these paths' literals.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from regbias.distances.matrix import DistanceMatrix
from regbias.tables import NAME_COLUMNS, read_table

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
#: docs/method.md, copied beside each report: the target of the Findings' "how" links.
METHOD_MD = "method.md"
METHOD_HTML = "method.html"
#: The findings as a typed object (:class:`regbias.report.findings_model.Findings`).
FINDINGS_JSON = "findings.json"
ERROR_TXT = "error.txt"
#: What a run logs but its local report leaves out: the config, the weights, a traceback.
NOT_IN_REPORT = frozenset({HYDRA_FOLDER, MODELS_FOLDER, ERROR_TXT})

#: A job's measurements (groups, sizes, meta; a parent's also its jobs' runs).
STUDY_JSON = "results/study.json"
#: The study's groups, the texts dropped in cleaning, each draw's sizes.
GROUPS_CSV = "data/groups.csv"
DROPPED_JSON = "data/dropped.json"
DRAWS_CSV = "data/draws.csv"

#: Stage I: every model's metrics per group, and every distinct text's scores.
PER_MODEL_CSV = "performance/per_model.csv"
TEXTS_CSV = "performance/texts.csv"
#: Each text a rewrite into another variety changes, scored as written, rewritten and control.
REWRITES_CSV = "performance/rewrites.csv"
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
PRIMARY_BY_SEED_CSV = "analysis/primary_by_seed.csv"
#: The table a paper prints (one row per region pair), as CSV and as LaTeX (booktabs).
PAPER_CSV = "paper/pairs.csv"
PAPER_TEX = "paper/pairs.tex"
#: The bottom line's numbers a report writes (read back as ``headline/<key>`` metrics).
HEADLINE_JSON = "analysis/headline.json"

#: What carries each difference: the explanations, the test of record on masked texts.
EXPLAIN_JSON = f"{EXPLAIN_FOLDER}/explanations.json"
#: Same texts, another variety: the encoder's shifts, the classifiers' flips, the figure.
COUNTERFACTUAL_ENCODER_CSV = "counterfactual/encoder.csv"
COUNTERFACTUAL_CLASSIFIER_CSV = "counterfactual/classifier.csv"
COUNTERFACTUAL_FIGURE = "counterfactual/shares.png"
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


@dataclass(frozen=True)
class Named:
    """A family of paths, one per name: ``pattern`` with a ``{}`` for each name."""

    pattern: str

    def __call__(self, *names: str) -> str:
        """The path of ``names`` (each already safe as a path component)."""
        return self.pattern.format(*names)


#: The most bytes of one file name (a path component) on the file systems runs are written to.
MAX_NAME_BYTES = 255
#: Hex digits of the hash that sets apart the file names of pairs their plain join would
#: confuse (``a-b`` with ``c``, ``a`` with ``b-c``).
PAIR_HASH_DIGITS = 10


def name_hash(*parts: str) -> str:
    """:data:`PAIR_HASH_DIGITS` hex digits of a hash of exactly ``parts`` (in order)."""
    text = json.dumps(list(parts), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:PAIR_HASH_DIGITS]


def _plain(name: str) -> bool:
    """Whether ``name`` is its own safe file-name part: letters, digits, ``_ - .``, no lead dot."""
    return bool(name) and not name.startswith(".") and all(c.isalnum() or c in "_-." for c in name)


def pair_name(first: str, second: str, separator: str = "-") -> str:
    """One file-name part for the pair ``(first, second)``, a different one for every pair.

    Two plain names (letters, digits, ``_``, ``-``, ``.``; no leading dot) that the join splits
    back into themselves keep the plain join, so ordinary names stay as they were (``au-uk``).
    Any other pair (a name holding the separator, so ``a-b`` with ``c`` and ``a`` with ``b-c``
    would both be ``a-b-c``; a character a file name cannot hold) gets its names made safe,
    joined, and the separator with :func:`name_hash` of the exact pair after them
    (``a-b-c-<10 hex digits>``): that has the separator more than once, which no plain join
    has, so it cannot take a plain pair's name either.
    """
    joined = f"{first}{separator}{second}"
    if _plain(first) and _plain(second) and joined.split(separator) == [first, second]:
        return joined
    return f"{_safe(first)}{separator}{_safe(second)}{separator}{name_hash(first, second)}"


def _safe(name: str) -> str:
    """``name`` with every character but letters, digits, ``_ - .`` as ``_``, no leading dot."""
    return "".join(c if c.isalnum() or c in "_-." else "_" for c in name).lstrip(".") or "_"


#: A distance matrix with its pairs' spreads (:meth:`DistanceMatrix.to_dict`), as a table,
#: its standard deviations over repetitions, a Sinkhorn distance's sensitivity to its
#: regularisation and its solver diagnostics.
distance_json = Named(f"{DISTANCES_FOLDER}/{{}}.json")
distance_csv = Named(f"{DISTANCES_FOLDER}/{{}}.csv")
distance_sd_csv = Named(f"{DISTANCES_FOLDER}/{{}}_sd.csv")
sensitivity_csv = Named(f"{DISTANCES_FOLDER}/sensitivity_{{}}.csv")
diagnostics_csv = Named(f"{DISTANCES_FOLDER}/{{}}_diagnostics.csv")
#: One table of a sweep's comparison of its variants.
comparison_csv = Named(f"{COMPARISON_FOLDER}/{{}}.csv")
#: A differing pair's distinguishing words, its typical texts, and its words as a chart,
#: each named by the pair's :func:`pair_name`.
explain_words_csv = Named(f"{EXPLAIN_FOLDER}/{{}}.csv")
explain_typical_csv = Named(f"{EXPLAIN_FOLDER}/{{}}_typical.csv")
explain_figure = Named(f"{FIGURES_FOLDER}/explain/{{}}.png")
#: A distance matrix's heatmap, and the distance against its noise floor.
distance_figure = Named(f"{FIGURES_FOLDER}/{{}}.png")
floor_figure = Named(f"{FIGURES_FOLDER}/{{}}_floor.png")
#: A metric's distribution per group.
performance_figure = Named(f"{FIGURES_FOLDER}/performance_{{}}.png")
#: The heatmap of one correlation statistic (``spearman_rho``, ``kendall_tau``).
correlation_figure = Named(f"{FIGURES_FOLDER}/correlations_{{}}.png")
#: Each region's distance to the baseline against its share of the regional data.
representation_figure = Named(f"{FIGURES_FOLDER}/representation_{{}}.png")
#: One correlation's scatter plot, named by the :func:`pair_name` of its distance and its
#: performance column joined by ``__`` (``dist_lda__gap_f1``).
scatter_figure = Named(f"{FIGURES_FOLDER}/scatter/{{}}.png")
#: Every per-pair path family above, named by :func:`pair_name` (file names from group names).
PAIR_FILES = (explain_words_csv, explain_typical_csv, explain_figure)
#: The figures a paper prints get a vector copy beside their PNG: the matrices, the tests of
#: record, the correlations and their scatter plots. Not these (diagnostics, one per pair or
#: per distance's floor: drawing each twice would cost a job seconds for no reader).
NO_PRINT_COPY = (
    f"{FIGURES_FOLDER}/explain/*",
    "*_floor.png",
    f"{FIGURES_FOLDER}/performance_*",
    f"{FIGURES_FOLDER}/representation_*",
    LDA_FIGURE,
)
#: The vector format of a figure's print copy (beside its PNG, same name).
PRINT_FORMAT = "pdf"


def print_copy(path: str) -> str | None:
    """Where a figure at ``path`` gets its print copy (``x.png`` -> ``x.pdf``); None: none."""
    if not path.endswith(".png") or any(fnmatch.fnmatch(path, p) for p in NO_PRINT_COPY):
        return None
    return f"{path.removesuffix('.png')}.{PRINT_FORMAT}"


def pair_file_names(first: str, second: str) -> list[str]:
    """The file names (last path parts) regbias derives from the pair ``(first, second)``."""
    name = pair_name(first, second)
    return [family(name).rsplit("/", 1)[-1] for family in PAIR_FILES]


def read_table_at(folder: Path, path: str) -> pd.DataFrame | None:
    """The table at ``path`` of a run folder (None when it is not there)."""
    file = folder / path
    return read_table(file) if file.is_file() else None


def read_json(folder: Path, path: str) -> Any:
    """The JSON document at ``path`` of a run folder (None when it is not there)."""
    file = folder / path
    return json.loads(file.read_text()) if file.is_file() else None


def read_text_table(path: Path) -> pd.DataFrame:
    """A per-text table (:data:`TEXTS_CSV`) as written: keys and labels kept as text."""
    return read_table(path, names=(*NAME_COLUMNS, "key", "label"))


def read_rewrite_table(path: Path) -> pd.DataFrame:
    """A rewrite score table (:data:`REWRITES_CSV`) as written: names, keys and labels as text."""
    return read_table(path, names=(*NAME_COLUMNS, "key", "label", "target", "version"))


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
