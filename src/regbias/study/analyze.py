"""``task=analyze``: the correlations and figures of any pairwise table a user has."""

from __future__ import annotations

import time

from regbias.analysis.pair_table import read_pairwise_csv, recorded_verdicts
from regbias.analysis.study import StudyResults, analyse_table
from regbias.errors import ConfigError
from regbias.report.publish import Published, log_analysis
from regbias.study.settings import StudySettings
from regbias.tracking.run_log import RunLog


def run_analysis(study: StudySettings, run: RunLog) -> Published:
    """Read ``analysis.analyze.input``, correlate the chosen columns, log the results to ``run``."""
    settings = study.analysis
    given = settings.analyze
    if given.input is None:
        raise ConfigError(
            "task=analyze needs a pair table: analysis.analyze.input=PATH/TO/pairwise.csv"
        )
    table = read_pairwise_csv(
        given.input,
        given.distances,
        given.performance,
        given.exclude_groups,
        given.exclude_pairs,
    )
    # A bare table: leave-one-group-out and without-group checks, no bootstrap or sizes.
    start = time.perf_counter()
    analysis = analyse_table(table, settings)
    run.metrics({"time/analysis_s": time.perf_counter() - start})  # the one stage that ran
    recorded = recorded_verdicts(given.input, settings.reference_groups)
    results = StudyResults(table.groups, meta={"input": given.input}, recorded=recorded)
    return log_analysis(run, results, analysis, settings)
