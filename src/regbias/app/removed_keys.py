"""Config keys that were removed or moved, and the one error that names their new place.

Kept apart from the settings (no model, tracking or analysis imports), so ``python run.py``
answers a removed override before it loads anything heavy.
"""

from __future__ import annotations

from regbias.errors import ConfigError

#: Settings of the per-job secondary pair tests, removed: they were anti-conservative on
#: re-cut passages, and which pairs differ is the test of record's alone.
REMOVED_KEYS = (
    "distance.relabel_seed",
    "distance.sinkhorn.relabellings",
    "distance.energy.relabellings",
    "distance.lda.relabellings",
)


#: The analysis group's keys before it was laid out by question (issue 44), and their places
#: now: one spelling (``relabellings``, ``resamples``) and one seed. A group's own entry
#: (``analysis.pair_test``) answers an override of the whole group.
MOVED_KEYS = {
    "analysis.n_permutations": "analysis.correlation.relabellings",
    "analysis.exact_limit": "analysis.correlation.exact_limit",
    "analysis.adjust": "analysis.correlation.adjust",
    "analysis.primary": "analysis.correlation.primary",
    "analysis.primary_direction": "analysis.correlation.primary_direction",
    "analysis.primary_power_couplings": "analysis.power.primary.couplings",
    "analysis.primary_power_dimensions": "analysis.power.primary.dimensions",
    "analysis.primary_power_simulations": "analysis.power.primary.simulations",
    "analysis.primary_power_permutations": "analysis.power.primary.relabellings",
    "analysis.bootstrap": "analysis.robustness.resamples",
    "analysis.confidence": "analysis.robustness.confidence",
    "analysis.input": "analysis.analyze.input",
    "analysis.distances": "analysis.analyze.distances",
    "analysis.performance": "analysis.analyze.performance",
    "analysis.exclude_groups": "analysis.analyze.exclude_groups",
    "analysis.exclude_pairs": "analysis.analyze.exclude_pairs",
    "analysis.pair_test.enabled": "analysis.tests.embedding.enabled",
    "analysis.pair_test.statistic": "analysis.tests.embedding.statistic",
    "analysis.pair_test.relabellings": "analysis.tests.embedding.relabellings",
    "analysis.pair_test.cap": "analysis.tests.embedding.cap",
    "analysis.pair_test.quadratic_cap": "analysis.tests.embedding.quadratic_cap",
    "analysis.pair_test.effect_resamples": "analysis.tests.embedding.resamples",
    "analysis.pair_test.seed": "analysis.seed",
    "analysis.perf_test.enabled": "analysis.tests.performance.enabled",
    "analysis.perf_test.relabellings": "analysis.tests.performance.relabellings",
    "analysis.perf_test.seed": "analysis.seed",
    "analysis.power.seed": "analysis.seed",
    "analysis.pair_test": "analysis.tests.embedding",
    "analysis.perf_test": "analysis.tests.performance",
}


def removed_setting(key: str) -> ConfigError:
    """The error for a config or override that sets a key of :data:`REMOVED_KEYS` or MOVED_KEYS."""
    if key in MOVED_KEYS:
        new = MOVED_KEYS[key]
        why = (
            "the analysis has one seed, handed to every test, plant and bootstrap"
            if new == "analysis.seed"
            else "the analysis config is grouped by question, as src/regbias/analysis is"
        )
        return ConfigError(
            f"{key} was removed: it is {new} now ({why}; conf/analysis/default.yaml); set "
            f"{new} instead of {key}"
        )
    return ConfigError(
        f"{key} was removed with the distances' own pair tests (passages re-cut in every "
        "repetition made them anti-conservative): which pairs differ is the test of record's, "
        'analysis.tests.embedding (docs/method.md, "Which pairs differ: the test of record"); '
        f"remove {key} from the config"
    )


def removed_override(arguments: list[str]) -> ConfigError | None:
    """The error for a command-line override that sets a removed or moved key (None: none does)."""
    for argument in arguments:
        key = argument.lstrip("+~").split("=", 1)[0]
        if key in REMOVED_KEYS or key in MOVED_KEYS:
            return removed_setting(key)
    return None
