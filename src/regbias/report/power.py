"""Write ``task=power``'s plants into its run: the plants, the rates and the power figure.

The plants are :mod:`regbias.analysis.power`'s; the study's wiring (:mod:`regbias.study.power`,
the performance test's plants too) builds them and hands them here.
"""

from __future__ import annotations

from regbias.analysis.power.embedding import PowerResult
from regbias.analysis.power.performance import PerfPower
from regbias.report import figures as plots
from regbias.tracking import artifacts as paths
from regbias.tracking.runs import RunLog

__all__ = ["write_perf_power", "write_power"]


def write_power(run: RunLog, result: PowerResult) -> None:
    """The embedding test's plants and rates as tables, and its power curves as a figure."""
    run.table(result.plants, paths.POWER_PLANTS_CSV)
    rates = result.rates()
    run.table(rates, paths.POWER_RATES_CSV)
    curves = rates.assign(distance=rates["n_a"].astype(str) + " + " + rates["n_b"].astype(str))
    run.figure(plots.power_curves(curves, "p <= alpha / m"), paths.POWER_FIGURE)


def write_perf_power(run: RunLog, result: PerfPower) -> None:
    """The performance test's planted-gap rates as a table."""
    run.table(result.rates, paths.PERF_POWER_RATES_CSV)
