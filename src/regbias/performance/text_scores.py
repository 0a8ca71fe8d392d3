"""Stage I's ``texts`` design: every model scores every distinct text of every group once.

The paper scored each model on repeated equal-size draws, which weight the texts they happen to
cover unequally and leave most texts of a large group unscored. Here every model scores each
distinct text of each group once (the test of record's texts), never a text of its own
training or validation data, and its held-out fold is its ``baseline``. What each model said of
each text is kept (:func:`text_table`, ``performance/texts.csv``) so that a sweep's parent can
pool the texts over all its models and test the groups' performance (:mod:`regbias.analysis.
perf_test`).

The per-text table has one row per group and text:

- ``group``, ``key`` (:func:`text_key`) and ``label`` (binary: 0/1; multilabel: the text's
  topics joined by ``|``, ``-`` for none: its label stratum);
- binary: ``prob:<model>``, each model's probability of the positive class;
- multilabel: ``tp:<model>``, ``fp:<model>``, ``fn:<model>``, the text's true positive, false
  positive and false negative topics at the threshold (micro-F1 is a ratio of their sums);

NaN where the model did not score the text (its own training or validation data; another
model's held-out fold).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from regbias.data.corpus import TaskKind, TextSet
from regbias.data.groups import BASELINE
from regbias.data.rewrite_sets import RewriteSet
from regbias.performance.evaluation import metric_rows
from regbias.performance.folds import FoldModel
from regbias.performance.table import COLUMNS

#: A text is predicted positive (a topic predicted) when its probability exceeds this.
THRESHOLD = 0.5
#: Probabilities are written with the digits that give a float32 back exactly.
PROBABILITY_FORMAT = "%.9g"
#: A multilabel text's counts, one column per model each.
COUNTS = ("tp", "fp", "fn")
_MODEL = re.compile(r"^seed(-?\d+)/fold(\d+)$")


def text_key(text: str) -> str:
    """A text's stable key (16 hex digits of its BLAKE2b hash): the same in every job."""
    return hashlib.blake2b(text.encode("utf-8"), digest_size=8).hexdigest()


def model_of(name: str) -> tuple[int, int]:
    """``(seed, fold)`` of a model named ``seed3/fold0`` (:attr:`FoldModel.name`)."""
    found = _MODEL.match(name)
    if found is None:
        raise ValueError(f"not a model name: {name!r}")
    return int(found.group(1)), int(found.group(2))


def model_columns(texts: pd.DataFrame, kind: str) -> dict[str, str]:
    """The per-text table's columns of one kind (``prob``, ``tp``, ...), by model name."""
    prefix = f"{kind}:"
    return {c.removeprefix(prefix): c for c in texts.columns if c.startswith(prefix)}


def scored_subsets(
    groups: Mapping[str, TextSet], scored: Mapping[str, Sequence[str]] | None = None
) -> dict[str, TextSet]:
    """Each group cut to its distinct texts, or to the texts ``scored`` names for it.

    ``groups`` exclude ``baseline`` (each model's own fold); a group ``scored`` does not name keeps
    every distinct text; a text's first row gives its label.
    """
    out = {}
    for name, texts in groups.items():
        first = dict.fromkeys(texts.texts)
        position = {t: i for i, t in reversed(list(enumerate(texts.texts)))}
        wanted = scored.get(name) if scored is not None else None
        chosen = list(first) if wanted is None else [t for t in dict.fromkeys(wanted) if t in first]
        out[name] = texts.subset([position[t] for t in chosen])
    return out


def _seen(model: FoldModel, sample: TextSet) -> set[str]:
    """The texts a model was fitted or validated on: never scored for it."""
    index = np.concatenate([model.train_index, model.val_index]).astype(np.int64)
    return {sample.texts[i] for i in index}


def _label_strings(labels: np.ndarray, names: Sequence[str]) -> list[str]:
    """A multilabel text's topics joined by ``|`` (its stratum; ``-``: no topic)."""
    return ["|".join(names[int(j)] for j in np.flatnonzero(row)) or "-" for row in labels]


def _group_frame(
    name: str, texts: TextSet, task: TaskKind, label_names: Sequence[str]
) -> pd.DataFrame:
    labels = np.asarray(texts.labels)
    label: object = _label_strings(labels, label_names) if task == "multilabel" else labels
    return pd.DataFrame({"group": name, "key": [text_key(t) for t in texts.texts], "label": label})


def _model_values(
    model: FoldModel, group: str, texts: TextSet, task: TaskKind, seen: set[str]
) -> dict[str, np.ndarray]:
    """One model's columns for one group's rows: NaN where it saw the text in training."""
    probs = np.asarray(model.predictions[group], dtype=np.float64)
    hidden = np.array([t in seen for t in texts.texts], dtype=bool)
    if task == "binary":
        return {f"prob:{model.name}": np.where(hidden, np.nan, probs)}
    labels = np.asarray(texts.labels).astype(bool)
    predicted = probs > THRESHOLD
    counts = {
        "tp": (predicted & labels).sum(axis=1),
        "fp": (predicted & ~labels).sum(axis=1),
        "fn": (~predicted & labels).sum(axis=1),
    }
    return {
        f"{kind}:{model.name}": np.where(hidden, np.nan, counts[kind].astype(np.float64))
        for kind in COUNTS
    }


def text_table(
    models: Sequence[FoldModel],
    groups: Mapping[str, TextSet],
    sample: TextSet,
    task: TaskKind,
    label_names: Sequence[str],
) -> pd.DataFrame:
    """What every model said of every text (the module's table), baseline rows last.

    A model's ``predictions[g]`` is aligned with ``groups[g]`` (:func:`scored_subsets`); ``sample``
    says which texts each model saw.
    """
    seen = {model.name: _seen(model, sample) for model in models}
    parts = []
    for name, texts in groups.items():
        frame = _group_frame(name, texts, task, label_names)
        for model in models:
            for column, values in _model_values(model, name, texts, task, seen[model.name]).items():
                frame[column] = values
        parts.append(frame)
    for model in models:
        if model.baseline is None or BASELINE not in model.predictions:
            continue
        frame = _group_frame(BASELINE, model.baseline, task, label_names)
        held_out = _model_values(model, BASELINE, model.baseline, task, set())
        parts.append(frame.assign(**held_out))
    table = pd.concat(parts, ignore_index=True)
    return table.drop_duplicates(["group", "key"], keep="first").reset_index(drop=True)


def per_model_rows(
    models: Sequence[FoldModel],
    groups: Sequence[str],
    sample: TextSet,
    subsets: Mapping[str, TextSet],
) -> pd.DataFrame:
    """The ``texts`` design's per-model table: each metric on all texts a model scored.

    One row per model, group and metric (``repetition`` 0; ``n_texts`` the texts scored),
    the columns of ``performance/per_model.csv``.
    """
    rows = []
    for model in models:
        seen = _seen(model, sample)
        for group in groups:
            if group not in model.predictions:
                continue
            labels = np.asarray(model.labels[group])
            probs = np.asarray(model.predictions[group])
            if group in subsets:
                keep = np.array([t not in seen for t in subsets[group].texts], dtype=bool)
                labels, probs = labels[keep], probs[keep]
            if len(labels):
                rows.extend(metric_rows(model, group, 0, labels, probs, THRESHOLD))
    return pd.DataFrame(rows, columns=list(COLUMNS))


def rewrite_subsets(
    rewrites: Sequence[RewriteSet], subsets: Mapping[str, TextSet]
) -> dict[str, TextSet]:
    """Each rewrite set's scored texts, rewritten and as controls, with their originals' labels.

    Named ``<set>~variety`` and ``<set>~control`` (:func:`rewrite_table` reads them back); a
    changed text the models do not score in its group is left out.
    """
    out = {}
    for rewrite in rewrites:
        group = subsets.get(rewrite.group)
        if group is None:
            continue
        position = {t: i for i, t in enumerate(group.texts)}
        kept = [i for i, t in enumerate(rewrite.originals) if t in position]
        labels = np.asarray(group.labels)[[position[rewrite.originals[i]] for i in kept]]
        for version, texts in (("variety", rewrite.rewritten), ("control", rewrite.controls)):
            out[f"{rewrite.name}~{version}"] = TextSet([texts[i] for i in kept], labels)
    return out


def rewrite_table(
    models: Sequence[FoldModel],
    rewrites: Sequence[RewriteSet],
    subsets: Mapping[str, TextSet],
    sample: TextSet,
) -> pd.DataFrame:
    """``performance/rewrites.csv``: each changed text as written, rewritten and as control.

    One row per rewrite set, version (``original``, ``variety``, ``control``) and text (keyed
    by the original's :func:`text_key`), ``prob:<model>`` each model's probability (NaN where
    the model saw the original in training). Binary tasks only.
    """
    seen = {model.name: _seen(model, sample) for model in models}
    parts = []
    for rewrite in rewrites:
        if f"{rewrite.name}~variety" not in models[0].predictions:
            continue
        group = subsets[rewrite.group]
        position = {t: i for i, t in enumerate(group.texts)}
        originals = [t for t in rewrite.originals if t in position]
        index = [position[t] for t in originals]
        for version in ("original", "variety", "control"):
            frame = pd.DataFrame(
                {
                    "group": rewrite.group,
                    "target": rewrite.target,
                    "version": version,
                    "key": [text_key(t) for t in originals],
                    "label": np.asarray(group.labels)[index],
                }
            )
            for model in models:
                name = rewrite.group if version == "original" else f"{rewrite.name}~{version}"
                probs = np.asarray(model.predictions[name], dtype=np.float64)
                probs = probs[index] if version == "original" else probs
                hidden = np.array([t in seen[model.name] for t in originals], dtype=bool)
                frame[f"prob:{model.name}"] = np.where(hidden, np.nan, probs)
            parts.append(frame)
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
