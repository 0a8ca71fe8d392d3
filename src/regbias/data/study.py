"""The texts one job studies: its groups and its seeded training sample."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from regbias.data.corpus import Corpus, TextSet
from regbias.data.groups import BASELINE, RESERVED, TRAIN_POOL
from regbias.data.sampling import SizePolicy, draw_indices, rng_for
from regbias.errors import ConfigError, DataError


@dataclass(frozen=True)
class StudyData:
    """What one job works on.

    Attributes:
        corpus: the corpus as read.
        groups: the studied groups by name, in configured order. For binary corpora ``baseline``
            is the job's whole training sample: every text of it is the held-out fold of one
            model, so as a group of texts (for distances) it is the union of the held-out folds.
        training: the job's training sample (Sentiment140: drawn from the general pool with the
            job's seed; Reuters: the whole ModApte train split).
    """

    corpus: Corpus
    groups: dict[str, TextSet]
    training: TextSet


def build_study(
    corpus: Corpus,
    group_names: list[str] | None,
    sample_size: int | None,
    seed: int,
    policy: SizePolicy = "error",
) -> StudyData:
    """Validate the group names and draw the job's training sample.

    ``sample_size`` None (or a multilabel corpus) uses the whole training split.
    """
    binary = corpus.task == "binary"
    names = select_groups(corpus, group_names, with_baseline=binary)
    check_not_empty(corpus, names)
    if binary and not len(corpus.train):
        index = np.arange(0)
    elif sample_size is None or not binary:
        index = np.arange(len(corpus.train))
    else:
        rng = rng_for(seed, "training-sample")
        index = np.sort(
            draw_indices("training pool", len(corpus.train), sample_size, rng, policy).indices
        )
    training = corpus.train.subset(index)
    groups = {name: training if name == BASELINE else corpus.groups[name] for name in names}
    return StudyData(corpus, groups, training)


def check_not_empty(corpus: Corpus, names: list[str]) -> None:
    """An empty group (or an empty training pool behind ``baseline``) fails here, named."""
    for name in names:
        if name != BASELINE and not len(corpus.groups[name]):
            raise DataError(
                f"group {name!r} of dataset '{corpus.name}' has no texts (after cleaning): "
                "leave it out of dataset.groups or fill it"
            )
    if BASELINE in names and not len(corpus.train):
        raise DataError(
            f"dataset '{corpus.name}' has no training rows, so there is no baseline group: name "
            "the group of your file that holds them with dataset.train_group=<group> (the "
            "default is `train`), or name the groups without baseline (dataset.groups=[...]) "
            "and set finetune.enabled=false"
        )


def require_training_rows(corpus: Corpus, rows: int) -> None:
    """Fine-tuning needs training texts: ``rows`` of ``corpus``'s training pool.

    Raises:
        DataError: there are none (one line naming ``dataset.train_group``).
    """
    if not rows:
        raise DataError(
            f"dataset '{corpus.name}' has no training rows, which fine-tuning needs: name the "
            "group of your file that holds them with dataset.train_group=<group> (the default "
            "is `train`), or set finetune.enabled=false"
        )


def _label_summary(corpus: Corpus, labels: np.ndarray) -> dict[str, int]:
    if corpus.task == "binary":
        counts = np.bincount(np.asarray(labels, dtype=np.int64), minlength=2)
        return {f"n_{corpus.label_names[i]}": int(counts[i]) for i in range(2)}
    present = labels.sum(axis=0) if len(labels) else np.zeros(len(corpus.label_names))
    return {"n_topics": int((present > 0).sum()), "n_labels": int(labels.sum())}


def group_table(corpus: Corpus, extra: dict[str, TextSet] | None = None) -> pd.DataFrame:
    """One row per group: name, number of (distinct) texts, label counts (topics for multilabel).

    ``extra`` rows (the training split, a baseline fold) are appended after the groups;
    ``n_duplicates_dropped``: the copies of texts a group already held, dropped on reading.
    """
    rows = []
    for name, texts in {**corpus.groups, **(extra or {})}.items():
        rows.append({"group": name, "n_texts": len(texts), **_label_summary(corpus, texts.labels)})
        key = TRAIN_POOL if texts is corpus.train else name
        rows[-1]["n_duplicates_dropped"] = corpus.duplicates.get(key, 0)
    return pd.DataFrame(rows)


def select_groups(corpus: Corpus, wanted: list[str] | None, *, with_baseline: bool) -> list[str]:
    """Validate the configured group names against the corpus.

    ``baseline`` is not in the corpus (it is a held-out fold of the training sample) but is a
    valid name for corpora whose task is binary.

    Raises:
        DataError: the corpus has a group with a name regbias reserves (``baseline``).
        ConfigError: a name the corpus does not have.
    """
    taken = [g for g in corpus.group_names if g in RESERVED]
    if taken:
        raise DataError(
            f"dataset '{corpus.name}' has a group named {taken[0]!r}, a name regbias reserves "
            f"for its own groups ({', '.join(RESERVED)}): rename that group in the data"
        )
    known = [*corpus.group_names, *([BASELINE] if with_baseline else [])]
    names = list(wanted) if wanted is not None else known
    why = f"; {corpus.emptied_note()}" if corpus.emptied else ""
    unknown = [g for g in names if g not in known]
    if unknown:
        raise ConfigError(
            f"unknown group(s) {', '.join(unknown)} for dataset '{corpus.name}': "
            f"choose from {', '.join(known)} (dataset.groups=[...]){why}"
        )
    if len(names) < 2:
        raise ConfigError(
            f"dataset.groups={names}: a study compares groups, so name at least two "
            f"(available: {', '.join(known)}){why}"
        )
    if len(set(names)) != len(names):
        raise ConfigError(f"dataset.groups lists a group twice: {names}")
    return names
