"""Adding a distance is one module and one YAML block: the docs' example, outside the package.

The module and the config file are taken from ``docs/extending.md`` ("Adding a distance"), so
the worked example a user copies is the one tested. Nothing in regbias changes: the YAML joins
Hydra's search path and names the class (``_target_``); the suite runs it, and its matrix
reaches the pair table, the figures, the findings and the MLflow metrics.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient

from tests.cli import run_cli, runs

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "extending.md"


def _guide_example() -> tuple[str, str]:
    """The Python module and the YAML file of the guide's "Adding a distance" section."""
    section = GUIDE.read_text().split("## Adding a distance", 1)[1].split("\n## ", 1)[0]
    blocks = dict(re.findall(r"```(python|yaml)\n(.*?)```", section, re.S))
    return blocks["python"], blocks["yaml"]


def _write_example(root: Path) -> Path:
    """The guide's distance and its config, laid out as a user would: the module's folder."""
    module, yaml = _guide_example()
    plugin = root / "my_distances"
    plugin.mkdir()
    (plugin / "centroid.py").write_text(module)
    conf = root / "my_conf" / "distance"
    conf.mkdir(parents=True)
    (conf / "with_centroid.yaml").write_text(yaml)
    return plugin


@pytest.fixture(scope="module")
def centroid_run(tmp_path_factory: pytest.TempPathFactory, shared_data_dir: Path):
    """One smoke job with the guide's distance added (and its MLflow client)."""
    root = tmp_path_factory.mktemp("new_distance")
    plugin = _write_example(root)
    done = run_cli(
        root,
        f"hydra.searchpath=[file://{root / 'my_conf'}]",
        "distance=with_centroid",
        "experiment=smoke",
        "dataset.groups=[au,nz,za,baseline]",
        data_dir=shared_data_dir,
        env={"PYTHONPATH": str(plugin)},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    (run,) = runs(root)
    return run, MlflowClient(tracking_uri=f"sqlite:///{root / 'mlruns.db'}"), root


@pytest.mark.slow
def test_a_distance_in_one_module_and_one_yaml_block_reaches_every_output(centroid_run) -> None:
    run, client, _ = centroid_run
    assert run.info.status == "FINISHED"
    assert run.data.params["distance.centroid._target_"] == "centroid.CentroidDistance"
    metrics = set(run.data.metrics)
    # Its matrix, pair by pair, beside the shipped ones; and its correlations with the gaps.
    assert {"dist/centroid/au__nz", "dist/sinkhorn_short/au__nz", "dist_mean/centroid"} <= metrics
    assert any(key.startswith("corr/dist_centroid/gap_") for key in metrics)
    artifacts = {a.path for a in client.list_artifacts(run.info.run_id, "figures")}
    assert "figures/centroid.png" in artifacts
    matrices = {a.path for a in client.list_artifacts(run.info.run_id, "distances")}
    assert "distances/centroid.json" in matrices


@pytest.mark.slow
def test_its_label_is_the_one_its_class_gives(centroid_run) -> None:
    run, client, root = centroid_run
    report = Path(client.download_artifacts(run.info.run_id, "report.md", str(root))).read_text()
    assert "sentence-vector centroid distance" not in report  # one kind: the bare title
    assert "centroid distance" in report
