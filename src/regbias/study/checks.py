"""What a job checks before any heavy work, beyond the settings' own checks: one line each."""

from __future__ import annotations

from pathlib import Path

from regbias.analysis.pair_table import DISTANCE_PREFIX, PERFORMANCE_PREFIXES
from regbias.data.rewrite_sets import read_word_list, variety_directions
from regbias.data.variety_rewrite import LEXIS, VarietyRewrite
from regbias.distances.suite import DistanceSettings
from regbias.errors import ConfigError
from regbias.performance.evaluation import BINARY_METRICS, MULTILABEL_METRICS
from regbias.study.settings import StudySettings


def preflight_job(settings: StudySettings) -> None:
    """What one ``task=run`` job checks before reading data, beyond the settings' own checks.

    Raises:
        ConfigError: a size that cannot work for this corpus (``k_folds=1`` for a binary task),
            or an ``analysis.correlation.primary`` column the run does not produce, or a
            counterfactual pair or word list that cannot work (:func:`check_counterfactual`).
    """
    finetune = settings.finetune
    if finetune.enabled and settings.dataset.task == "binary" and finetune.k_folds < 2:
        raise ConfigError(
            f"finetune.k_folds must be at least 2 for a binary task (the held-out fold is the "
            f"baseline), not {finetune.k_folds}"
        )
    check_primary(settings)
    check_counterfactual(settings)


def check_counterfactual(settings: StudySettings) -> None:
    """``analysis.counterfactual``'s word list parses and its pairs can be rewritten.

    Raises:
        ConfigError: the word list is missing or a row does not parse; a pair names a group the
            dataset does not study, one with no variety, or two of the same variety.
    """
    counterfactual = settings.analysis.counterfactual
    if not counterfactual.enabled:
        return
    word_list = counterfactual.word_list
    lexis = read_word_list(Path(word_list)) if word_list is not None else LEXIS
    groups = settings.dataset.groups
    if counterfactual.pairs is None or groups is None:  # a corpus's groups are known once read
        return
    for source, other in variety_directions(groups, counterfactual.pairs):
        VarietyRewrite.between(source, other, lexis)


def preflight_study(distance: DistanceSettings, n_groups: int, why: str = "") -> None:
    """What needs the number of groups, checked before any embedding (LDA components).

    ``why`` (groups emptied by cleaning) is said in the error.

    Raises:
        ConfigError: a distance cannot measure that many groups (``distance.lda.n_components``
            too large).
    """
    for method in distance.enabled_methods():
        try:
            method.check_groups(n_groups)
        except ConfigError as error:
            if not why:
                raise
            raise ConfigError(f"{error}; {why}") from None


def check_primary(settings: StudySettings) -> None:
    """In ``task=run``, ``analysis.correlation.primary`` names columns the run's pairs will have.

    A typo would otherwise cost the whole run; a stage that is off leaves its half unchecked.

    Raises:
        ConfigError: a name that is not one of the known columns, with the known names listed.
    """
    primary = settings.analysis.correlation.primary
    if primary is None or settings.task != "run":  # task=analyze reads a table of any columns
        return
    known = run_columns(settings)
    for name, kind, names in zip(primary, ("distance", "performance"), known, strict=True):
        if names is not None and name not in names:
            raise ConfigError(
                f"analysis.correlation.primary names the {kind} column {name!r}, which this run "
                f"does not produce; its {kind} columns are {', '.join(names) or 'none'}: fix the "
                "name (analysis.correlation.primary=[DISTANCE,PERFORMANCE]) or set "
                "analysis.correlation.primary=null"
            )


def run_columns(settings: StudySettings) -> tuple[list[str] | None, list[str] | None]:
    """The distance and the performance columns of the pair table a ``task=run`` produces.

    None for a stage that is off; a distance is listed with its excess over the noise floors
    (``excess_dist_*``) where floors are measured.
    """
    distance, dataset = settings.distance, settings.dataset
    distances = None
    if distance.enabled:
        short = dataset.unit == "tweet"  # documents are measured long only
        names = distance.matrix_names([k for k in distance.drawn_kinds() if short or k != "short"])
        distances = [f"{DISTANCE_PREFIX}{n}" for n in names]
        if distance.floors:
            distances += [f"excess_{column}" for column in distances]
    performance = None
    if settings.finetune.enabled:
        metrics = BINARY_METRICS if dataset.task == "binary" else MULTILABEL_METRICS
        performance = [f"{prefix}{m}" for prefix in PERFORMANCE_PREFIXES for m in metrics]
    return distances, performance
