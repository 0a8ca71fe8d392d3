"""The test of record wired to a study: a variant's own settings, its groups, its verdicts."""

from __future__ import annotations

import numpy as np
from omegaconf import OmegaConf

from regbias.app.settings import read_settings, variant_settings
from regbias.study.record import run_record_tests
from tests.conftest import compose_config


def test_each_variant_is_tested_on_its_own_saved_config(tmp_path):
    sweep = read_settings(compose_config())
    job = compose_config("encoder=tiny", "analysis.tests.embedding.cap=123")
    (tmp_path / "3" / ".hydra").mkdir(parents=True)
    OmegaConf.save(job, tmp_path / "3" / ".hydra" / "config.yaml")
    own = variant_settings(sweep, tmp_path, 3)
    assert own.encoder.name == "tiny" and own.analysis.tests.embedding.cap == 123
    assert sweep.encoder.name == "minilm_l6"
    # No saved config (a job that never started): the sweep's own settings stand in.
    assert variant_settings(sweep, tmp_path, 7) is sweep


def test_the_study_is_tested_pair_by_pair_with_its_reference_family(shared_data_dir):
    settings = read_settings(
        compose_config(
            "experiment=smoke",
            f"paths.data_dir={shared_data_dir}",
            "analysis.tests.embedding.cap=60",
            "analysis.tests.embedding.relabellings=199",
        )
    )
    tests = run_record_tests(settings)
    assert tests is not None
    table = tests.table
    assert len(table) == 28 and set(table["family"]) == {"regions", "reference"}
    references = table[table["family"] == "reference"]
    declared = settings.dataset.reference_groups  # the corpus's: baseline and mixed
    assert settings.analysis.reference_groups == declared == ["baseline", "mixed"]
    assert all(
        a in declared or b in declared
        for a, b in zip(references["group_a"], references["group_b"], strict=True)
    )
    assert len(references) == 13  # 2 x 6 regions + baseline-mixed
    assert (table[["n_a", "n_b"]].to_numpy() <= 60).all()
    assert np.isfinite(table["p"]).all() and (table["p"] >= 1 / 200).all()
    off = read_settings(
        compose_config("experiment=smoke", "analysis.tests.embedding.enabled=false")
    )
    assert run_record_tests(off) is None


def test_the_parent_reads_the_corpus_and_loads_the_encoder_once_with_power_on(
    shared_data_dir, monkeypatch
):
    """Power on, explanations off: the test of record and its plants share one read."""
    from regbias.study import record

    settings = read_settings(
        compose_config(
            "experiment=smoke",
            f"paths.data_dir={shared_data_dir}",
            "analysis.tests.embedding.cap=40",
            "analysis.tests.embedding.relabellings=99",
            "analysis.power.enabled=true",
            "analysis.explain.enabled=false",
        )
    )
    calls = {"study": 0, "encoder": 0}
    read, load = record.record_study, record.study_encoder

    def counted_study(*args, **kwargs):
        calls["study"] += 1
        return read(*args, **kwargs)

    def counted_encoder(*args, **kwargs):
        calls["encoder"] += 1
        return load(*args, **kwargs)

    monkeypatch.setattr(record, "record_study", counted_study)
    monkeypatch.setattr(record, "study_encoder", counted_encoder)
    seen = []
    monkeypatch.setattr(
        record, "sweep_power", lambda s, r, *, study, encoder: seen.append((study, encoder))
    )
    found = record.record_and_power(settings, {})
    assert found.record is not None and calls == {"study": 1, "encoder": 1}
    assert seen and seen[0][0] is not None and seen[0][1] is not None  # handed, not re-read


def test_both_tests_of_record_are_asked_in_one_place_and_the_analysis_only_reads_them():
    """``record_and_power`` runs the performance test beside the embedding one; analyse()
    reads both from the results and runs neither."""
    from regbias.analysis.study import StudyResults, analyse
    from regbias.study.record import record_and_power
    from tests.analysis.pairs.test_performance import scored_group, texts_frame

    rng = np.random.default_rng(0)
    groups = {g: scored_group(rng, 80, 0.5, (0.7, 0.8)) for g in ("au", "nz", "uk")}
    settings = read_settings(
        compose_config(
            "experiment=smoke",
            "analysis.tests.embedding.enabled=false",
            "analysis.tests.performance.relabellings=99",
            "analysis.power.enabled=false",
        )
    )
    results = StudyResults(["au", "nz", "uk"], texts=texts_frame(groups))
    times: dict[str, float] = {}
    tests = record_and_power(settings, times, results)
    assert tests.record is None and tests.performance is not None
    assert len(tests.performance.table) == 3 and "performance_tests" in times
    assert analyse(results, settings.analysis).performance_record is None  # not asked there
    tests.into(results)
    assert analyse(results, settings.analysis).performance_record is tests.performance
