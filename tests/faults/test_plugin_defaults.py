"""Found beside the probes of issue 36: a corpus plugin without ``primary_performance`` works.

A corpus written as docs/extending.md described it (one module and one YAML outside the
checkout, ``task: binary``, no ``primary_performance``) stopped every command, ``task=describe``
included: "dataset.primary_performance is not set". The task implies it (binary:
``gap_accuracy``; multilabel: ``gap_micro_f1``); without ``reference_groups``, ``[baseline]``.
"""

from __future__ import annotations

import pytest

from regbias.app.settings import read_settings
from tests.cli import run_cli
from tests.data.test_new_corpus import write_example
from tests.faults.conftest import composed


def test_a_plugin_without_primary_or_reference_groups_describes_and_reads(tmp_path):
    plugin, data_dir = write_example(tmp_path)
    yaml = plugin.parent / "my_conf" / "dataset" / "dialects.yaml"
    kept = [
        line
        for line in yaml.read_text().splitlines()
        if not line.lstrip().startswith(("primary_performance:", "reference_groups:"))
    ]
    yaml.write_text("\n".join(kept) + "\n")
    args = [f"hydra.searchpath=[file://{plugin.parent / 'my_conf'}]", "dataset=dialects"]
    done = run_cli(
        tmp_path, *args, "task=describe", data_dir=data_dir, env={"PYTHONPATH": str(plugin)}
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "north" in done.stdout and "primary_performance" not in done.stderr


@pytest.mark.parametrize(
    ("dataset", "column"), [("sentiment140", "gap_accuracy"), ("reuters21578", "gap_micro_f1")]
)
def test_the_task_implies_the_primary_and_baseline_is_the_reference(dataset, column):
    settings = read_settings(
        composed(f"dataset={dataset}", "~dataset.primary_performance", "~dataset.reference_groups")
    )
    assert settings.dataset.primary_performance == column
    assert settings.analysis.correlation.primary == ("dist_sinkhorn_long", column)
    assert settings.analysis.reference_groups == ["baseline"]
