"""The test of record of every pair, wired to the configured study (once per sweep).

Reads the corpus, builds its groups, embeds every tested text through the embedding cache and
runs :func:`regbias.analysis.pairs.embedding.embedding_pair_tests`, once per variant of a sweep.
"""

from __future__ import annotations

import logging
from typing import NamedTuple

from regbias.analysis.counterfactual.result import Counterfactual
from regbias.analysis.explain.result import Explanations
from regbias.analysis.pairs.embedding import EmbeddingPairTests, embedding_pair_tests
from regbias.analysis.pairs.performance import PerformancePairTests
from regbias.analysis.power.embedding import PowerResult
from regbias.analysis.power.performance import PerfPower
from regbias.analysis.study import StudyResults, performance_tests
from regbias.console import progress_bar
from regbias.data.study import StudyData
from regbias.embeddings.cache import embed_pooled
from regbias.embeddings.encoder import Encoder
from regbias.study.counterfactual import run_counterfactual
from regbias.study.explain import run_explain
from regbias.study.parts import record_study, study_cache, study_encoder
from regbias.study.power import sweep_power
from regbias.study.settings import StudySettings
from regbias.study.timing import timed

log = logging.getLogger(__name__)


def run_record_tests(
    settings: StudySettings,
    *,
    study: StudyData | None = None,
    encoder: Encoder | None = None,
) -> EmbeddingPairTests | None:
    """The tests of record of the configured study (None where they are off).

    ``study`` and ``encoder`` None: read as :func:`record_study` and ``study_encoder`` do.
    """
    pair = settings.analysis.tests.embedding
    if not pair.enabled:
        return None
    study = study if study is not None else record_study(settings)
    encoder = encoder if encoder is not None else study_encoder(settings)
    cache = study_cache(settings)
    groups = {name: list(texts.texts) for name, texts in study.groups.items()}
    n = len(groups)
    log.info(
        "test of record: %s, %d pairs, all distinct texts (at most %s a group), %d relabellings",
        pair.words(),
        n * (n - 1) // 2,
        pair.group_cap or "every text",
        pair.relabellings,
    )
    with progress_bar(total=n * (n - 1) // 2, desc="pair tests") as bar:
        tests = embedding_pair_tests(
            groups,
            lambda texts: embed_pooled(encoder, cache, texts),
            pair,
            references=settings.analysis.reference_groups,
            alpha=settings.analysis.significance,
            progress=lambda _: bar.update(),
        )
    return tests


class ParentTests(NamedTuple):
    """Which pairs differ, asked once per variant: both tests of record and their power.

    Attributes:
        record: the embedding-space test of record.
        power: its planted mixtures.
        explained: what carries each difference it finds.
        performance: the performance test of record.
        performance_power: its planted gaps.
        counterfactual: the same texts in another variety (None: off).
    """

    record: EmbeddingPairTests | None
    power: PowerResult | None
    explained: Explanations | None
    performance: PerformancePairTests | None = None
    performance_power: PerfPower | None = None
    counterfactual: Counterfactual | None = None

    def into(self, results: StudyResults) -> PowerResult | None:
        """Set the tests on ``results`` (for the analysis); the embedding test's power."""
        results.record, results.explained = self.record, self.explained
        results.performance, results.performance_power = self.performance, self.performance_power
        results.counterfactual = self.counterfactual
        return self.power


def record_and_power(
    settings: StudySettings,
    times: dict[str, float],
    results: StudyResults | None = None,
    *,
    study: StudyData | None = None,
    encoder: Encoder | None = None,
) -> ParentTests:
    """Both tests of record, their power and what carries each embedding difference found.

    The embedding test reads the corpus and embeds its texts; the performance test reads the
    per-text scores of ``results`` (None: not run). Power where ``analysis.power.enabled``,
    explanations where ``analysis.explain.enabled``. Each pair's smallest detectable share
    (gap) is added to its row. The counterfactual track where ``analysis.counterfactual.enabled``.
    Seconds are added to ``times`` as ``pair_tests``, ``power``, ``explain``,
    ``performance_tests`` and ``counterfactual``.
    """
    analysis = settings.analysis
    with timed(times, "pair_tests"):
        if analysis.tests.embedding.enabled:
            # Read once for the test, its power plants and its explanations, not once each.
            study = study if study is not None else record_study(settings)
            encoder = encoder if encoder is not None else study_encoder(settings)
        record = run_record_tests(settings, study=study, encoder=encoder)
    with timed(times, "power"):
        power = sweep_power(settings, record, study=study, encoder=encoder)
    with timed(times, "explain"):
        explained = run_explain(settings, record, study=study, encoder=encoder)
    if record is not None and power is not None:
        record = record.with_power(power.detectable(), power.donor)
    with timed(times, "performance_tests"):
        scores = performance_tests(results, analysis) if results is not None else (None, None)
    with timed(times, "counterfactual"):
        counterfactual = None
        if analysis.counterfactual.enabled:
            study = study if study is not None else record_study(settings)
            encoder = encoder if encoder is not None else study_encoder(settings)
            rewrites = results.rewrites if results is not None else None
            counterfactual = run_counterfactual(settings, study, encoder, rewrites)
    return ParentTests(record, power, explained, *scores, counterfactual)
