"""Adding a corpus is one module and one YAML: the documented example, outside the package, runs.

The module and the config file are taken from the "Adding a corpus" section of
``docs/extending.md``, so the worked example a user copies is the one tested. Nothing in
regbias changes: the YAML joins Hydra's search path (``hydra.searchpath``) and names the class
(``_target_``).
"""

from __future__ import annotations

import hashlib
import random
import re
from pathlib import Path

import pytest

from tests.cli import run_cli, runs

EXTENDING = Path(__file__).resolve().parents[2] / "docs" / "extending.md"


def _documented_example() -> tuple[str, str]:
    """The Python module and the YAML file of docs/extending.md's "Adding a corpus" section."""
    section = EXTENDING.read_text().split("\n## Adding a corpus\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```(python|yaml)\n(.*?)```", section, re.S)
    code = {kind: text for kind, text in blocks}
    return code["python"], code["yaml"]


def write_example(root: Path) -> tuple[Path, Path]:
    """The documented corpus, its data file and config, laid out as a user would."""
    data = root / "data" / "dialects"
    data.mkdir(parents=True)
    words = ["good", "bad", "rain", "sun", "tea", "mate", "eh", "y'all", "bloody", "wicked"]
    rng = random.Random(0)
    lines = []
    for group, n in (("pool", 400), ("north", 120), ("south", 120), ("east", 120)):
        for i in range(n):
            text = " ".join(rng.choice(words) for _ in range(6)) + f" {group}{i % 7}"
            lines.append(f"{group}\t{i % 2}\t{text}")
    rows = data / "rows.tsv"
    rows.write_text("\n".join(lines) + "\n")
    module, yaml = _documented_example()
    module = module.replace("<sha256>", hashlib.sha256(rows.read_bytes()).hexdigest())
    plugin = root / "my_corpora"
    plugin.mkdir()
    (plugin / "dialects.py").write_text(module)
    conf = root / "my_conf" / "dataset"
    conf.mkdir(parents=True)
    (conf / "dialects.yaml").write_text(yaml)
    return plugin, root / "data"


@pytest.mark.slow
def test_the_documented_corpus_in_one_module_and_one_yaml_runs_a_study(tmp_path: Path) -> None:
    plugin, data_dir = write_example(tmp_path)
    args = [f"hydra.searchpath=[file://{plugin.parent / 'my_conf'}]", "dataset=dialects"]
    env = {"PYTHONPATH": str(plugin)}
    described = run_cli(tmp_path, *args, "task=describe", data_dir=data_dir, env=env)
    assert described.returncode == 0, described.stderr[-2000:]
    for group in ("north", "south", "east", "baseline"):
        assert group in described.stdout
    done = run_cli(
        tmp_path,
        *args,
        "experiment=smoke",
        "dataset.groups=[north,south,east,baseline]",
        data_dir=data_dir,
        env=env,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    (run,) = runs(tmp_path)
    assert run.info.status == "FINISHED"
    assert run.data.params["dataset._target_"] == "dialects.Dialects"
    assert run.data.tags["mlflow.runName"].startswith("dialects-")
    metrics = run.data.metrics
    # Every stage ran on its groups: a performance gap per pair, correlated with distances.
    assert {"corr/dist_energy_long/gap_accuracy/rho", "cache/misses"} <= set(metrics)
    assert any(key.startswith("dist_mean/") for key in metrics)


def test_a_corpus_yaml_naming_a_missing_class_fails_in_one_line(tmp_path: Path) -> None:
    plugin, data_dir = write_example(tmp_path)
    yaml = plugin.parent / "my_conf" / "dataset" / "dialects.yaml"
    yaml.write_text(yaml.read_text().replace("dialects.Dialects", "dialects.Nope"))
    done = run_cli(
        tmp_path,
        f"hydra.searchpath=[file://{plugin.parent / 'my_conf'}]",
        "dataset=dialects",
        "task=describe",
        data_dir=data_dir,
        env={"PYTHONPATH": str(plugin)},
    )
    assert done.returncode != 0
    assert "dataset._target_=dialects.Nope cannot be imported" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.slow
def test_a_corpus_yaml_without_its_package_line_says_what_to_fix(tmp_path: Path) -> None:
    plugin, data_dir = write_example(tmp_path)
    yaml = plugin.parent / "my_conf" / "dataset" / "dialects.yaml"
    yaml.write_text(yaml.read_text().replace("# @package _global_\n", "", 1))
    done = run_cli(
        tmp_path,
        f"hydra.searchpath=[file://{plugin.parent / 'my_conf'}]",
        "dataset=dialects",
        "task=describe",
        data_dir=data_dir,
        env={"PYTHONPATH": str(plugin)},
    )
    assert done.returncode != 0
    assert "make `# @package _global_` its first line" in done.stderr
    assert "Traceback" not in done.stderr
