"""Where a run's artifacts go is said, and one store keeps them in one place (fault list 5)."""

from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path

from regbias.tracking.runs import TrackingSettings, artifact_location, connect

SETTINGS = TrackingSettings(
    uri="sqlite:///mlruns.db",
    artifact_root="mlruns",
    experiment="where",
    log_models=False,
    random_encoder_experiment=None,
)


def test_a_relative_root_lies_beside_the_store_whatever_the_working_folder(tmp_path, monkeypatch):
    store = tmp_path / "shared" / "mlruns.db"
    settings = replace(SETTINGS, uri=f"sqlite:///{store}")
    for folder in (tmp_path / "one", tmp_path / "two"):
        folder.mkdir()
        monkeypatch.chdir(folder)
        assert artifact_location(settings) == (tmp_path / "shared" / "mlruns").as_uri()


def test_the_default_store_keeps_its_artifacts_in_the_working_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert artifact_location(SETTINGS) == (tmp_path / "mlruns").as_uri()
    absolute = replace(SETTINGS, artifact_root=str(tmp_path / "elsewhere"))
    assert artifact_location(absolute) == (tmp_path / "elsewhere").as_uri()
    assert artifact_location(replace(SETTINGS, uri="http://127.0.0.1:5000")) is None


def test_a_second_root_for_an_existing_experiment_is_warned_about(tmp_path, caplog):
    store = f"sqlite:///{tmp_path / 'mlruns.db'}"
    first = replace(SETTINGS, uri=store, artifact_root=str(tmp_path / "first"))
    second = replace(first, artifact_root=str(tmp_path / "second"))
    with caplog.at_level(logging.INFO, logger="regbias.tracking.runs"):
        client, experiment = connect(first)
        assert Path(client.get_experiment(experiment).artifact_location).name == "first"
        assert any("go to" in r.getMessage() and "first" in r.getMessage() for r in caplog.records)
        caplog.clear()
        connect(second)
    (warning,) = [r for r in caplog.records if r.levelno == logging.WARNING]
    message = warning.getMessage()
    assert "first" in message and "second" in message and "tracking.experiment" in message
