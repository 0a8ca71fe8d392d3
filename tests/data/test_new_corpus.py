"""Adding a corpus is one module and one YAML: a toy dataset outside the package runs a study.

The module below and its config file are all a user writes; nothing in regbias changes. The
YAML joins Hydra's search path (``hydra.searchpath``) and names the class (``_target_``).
"""

from __future__ import annotations

import hashlib
import textwrap
from pathlib import Path

from tests.cli import run_cli, runs

MODULE = '''
"""A toy corpus: tab-separated rows (group, label, text) in <data_dir>/toy/rows.tsv."""

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from regbias.data.corpus import Corpus, TextSet
from regbias.data.dataset import Dataset, ManifestEntry


@dataclass(frozen=True)
class Toy(Dataset):
    """Rows of three made-up dialects and a training pool."""

    lowercase: bool = True

    downloads = (ManifestEntry("toy/rows.tsv", "https://example.org/toy/rows.tsv", "{sha}"),)

    def read(self, data_dir: Path | None) -> Corpus:
        rows = [line.split("\\t") for line in (self.required(data_dir) / "toy/rows.tsv")
                .read_text().splitlines()]
        def text_set(group: str) -> TextSet:
            picked = [(int(label), text.lower() if self.lowercase else text)
                      for g, label, text in rows if g == group]
            return TextSet([t for _, t in picked], np.array([l for l, _ in picked]))
        groups = {{g: text_set(g) for g in ("north", "south", "east")}}
        return Corpus(self.name, "binary", ["negative", "positive"], text_set("pool"), groups)
'''

YAML = """\
# @package _global_
defaults:
  - /finetune: sentiment140
  - _self_

dataset:
  _target_: toy_corpus.Toy
  name: toy
  task: binary
  unit: tweet
  groups: null
  lowercase: true
"""


def _write_toy(root: Path) -> tuple[Path, Path]:
    data = root / "data" / "toy"
    data.mkdir(parents=True)
    words = ["good", "bad", "rain", "sun", "tea", "mate", "eh", "y'all", "bloody", "wicked"]
    rng = __import__("random").Random(0)
    lines = []
    for group, n in (("pool", 400), ("north", 120), ("south", 120), ("east", 120)):
        for i in range(n):
            text = " ".join(rng.choice(words) for _ in range(6)) + f" {group}{i % 7}"
            lines.append(f"{group}\t{i % 2}\t{text}")
    rows = data / "rows.tsv"
    rows.write_text("\n".join(lines) + "\n")
    sha = hashlib.sha256(rows.read_bytes()).hexdigest()
    plugin = root / "plugin"
    (plugin / "conf" / "dataset").mkdir(parents=True)
    (plugin / "toy_corpus.py").write_text(textwrap.dedent(MODULE).format(sha=sha))
    (plugin / "conf" / "dataset" / "toy.yaml").write_text(YAML)
    return plugin, root / "data"


def test_a_toy_corpus_in_one_module_and_one_yaml_runs_a_study(tmp_path: Path) -> None:
    plugin, data_dir = _write_toy(tmp_path)
    args = [f"hydra.searchpath=[file://{plugin / 'conf'}]", "dataset=toy"]
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
    assert run.data.params["dataset._target_"] == "toy_corpus.Toy"
    assert run.data.tags["mlflow.runName"].startswith("toy-")
    metrics = run.data.metrics
    # Every stage ran on the toy's groups: a performance gap per pair, correlated with distances.
    assert {"corr/dist_energy_long/gap_accuracy/rho", "cache/misses"} <= set(metrics)
    assert any(key.startswith("dist_mean/") for key in metrics)


def test_a_toy_yaml_naming_a_missing_class_fails_in_one_line(tmp_path: Path) -> None:
    plugin, data_dir = _write_toy(tmp_path)
    yaml = plugin / "conf" / "dataset" / "toy.yaml"
    yaml.write_text(yaml.read_text().replace("toy_corpus.Toy", "toy_corpus.Nope"))
    done = run_cli(
        tmp_path,
        f"hydra.searchpath=[file://{plugin / 'conf'}]",
        "dataset=toy",
        "task=describe",
        data_dir=data_dir,
        env={"PYTHONPATH": str(plugin)},
    )
    assert done.returncode != 0
    assert "dataset._target_=toy_corpus.Nope cannot be imported" in done.stderr
    assert "Traceback" not in done.stderr
