"""``task=analyze``: the correlations and figures of any pairwise table a user has."""

from __future__ import annotations

from omegaconf import DictConfig

from regbias.analysis.pairs import correlations, read_pairwise_csv
from regbias.analysis.results import Analysis, AnalysisSettings, StudyResults, add_robustness
from regbias.errors import ConfigError
from regbias.report.publish import log_analysis
from regbias.tracking.runs import RunLog

__all__ = ["run_analysis"]


def _names(value: object) -> list[str] | None:
    return None if value is None else [str(v) for v in value]  # type: ignore[attr-defined]


def run_analysis(cfg: DictConfig, run: RunLog) -> Analysis:
    """Read ``analysis.input``, correlate the chosen columns, log tables and figures to ``run``."""
    a = cfg.analysis
    if a.get("input") is None:
        raise ConfigError("task=analyze needs a pair table: analysis.input=PATH/TO/pairwise.csv")
    table = read_pairwise_csv(
        a.input,
        _names(a.get("distances")),
        _names(a.get("performance")),
        _names(a.get("exclude_groups")) or (),
        _names(a.get("exclude_pairs")) or (),
    )
    settings = AnalysisSettings.from_mapping(a)
    found = correlations(
        table,
        n_permutations=settings.n_permutations,
        seed=settings.seed,
        exact_limit=settings.exact_limit,
    )
    # A bare table: leave-one-group-out and without-group checks, no bootstrap or sizes.
    found, checks = add_robustness(table.frame, found, settings)
    analysis = Analysis(None, None, None, table.frame, found, robustness=checks)
    results = StudyResults(table.groups, meta={"input": str(a.input)})
    log_analysis(run, results, analysis, settings)
    return analysis
