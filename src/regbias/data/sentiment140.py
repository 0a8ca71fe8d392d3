"""``dataset=sentiment140``: the six regional tweet files and the general training pool."""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from regbias.data.cleaning import clean_tweet
from regbias.data.corpus import Corpus, TextSet
from regbias.data.csv_rows import non_utf8_message, read_csv_rows
from regbias.data.data_dir import DATA_DIR_ENV
from regbias.data.dataset import Dataset, manifest
from regbias.data.fetch import fetch_command
from regbias.data.groups import MIXED
from regbias.errors import DataError

#: The six inner-circle English regions, in display order.
REGIONS: tuple[str, ...] = ("au", "ca", "nz", "uk", "us", "za")
#: The groups the reader builds; ``baseline`` is the pipeline's held-out training fold.
SENTIMENT140_GROUPS: tuple[str, ...] = (*REGIONS, MIXED)
LABEL_NAMES: list[str] = ["negative", "positive"]
#: The general training pool, one tweet per line, label from the file name.
POOL_FILES: dict[str, int] = {
    "sentiment140_pool/negative.txt": 0,
    "sentiment140_pool/positive.txt": 1,
}
#: How the shipped 100k pool was drawn (``Corpus.pool``): a reader of ``baseline`` needs it.
POOL_DATES = (
    "the first and the last 50,000 rows of Sentiment140's training file, which is sorted by "
    "label and then by date (its negatives are the file's earliest tweets, its positives the "
    "latest): not a random sample, so words of those weeks (school, vacation, spring, ...) "
    "can set baseline apart from the regions by date, not by region"
)
#: The original Sentiment140 training file; used instead of the pool when present.
FULL_TRAINING_FILE = "sentiment140/training.1600000.processed.noemoticon.csv"

_REGIONAL_URL = "https://raw.githubusercontent.com/anniejlu/regional_bias/main/Sentiment140"
_POOL_URL = (
    "https://raw.githubusercontent.com/geraldzakwan/iykra-sentiment-analysis/"
    "0f8dae787c1e4d239f8b03a04dccfd6ddb77a6cc/data/tweets_100k"
)
#: The files a run reads, with the checksums of the copies the study was run on.
SENTIMENT140_DOWNLOADS = manifest(
    "regional_sentiment140",
    _REGIONAL_URL,
    {
        "au.csv": "604afe9cbe8aca66076a3be5de6207c262f10ca33bc73eb646a1f7a8ed8fd50a",
        "ca.csv": "78bc843b45c8ec52e0305aef5a36b6ab3bec0d8afda6c7dee1df516f62b89f7f",
        "nz.csv": "a9faed919ea80208fa982a80d9974309eadbeec696ae849cf38cb3e31df5ffb0",
        "uk.csv": "569c87a31298688631a2414102af8705e87c1ac06b454bd1ad3622f505ade9d4",
        "us.csv": "a1d3062640e0e128a7a6f473858578dfeaea3c7c803f01e26b74ccb741af8f1e",
        "za.csv": "75e6febad56922fb1ca2bea3566da79e4555972294099183c1395a789ba9baf8",
    },
) + manifest(
    "sentiment140_pool",
    _POOL_URL,
    {
        "negative.txt": "91305124952116f2a29e1b1024eb74f74f6bfdf566189ffed2f0bfa9b181a3b7",
        "positive.txt": "9974fca006a8ba35d363f2444712b16479948ba2fc9613a2d42cdd143251769d",
    },
)

# Sentiment140 polarity -> binary label.
_POLARITY = {0: 0, 4: 1}
_FULL_FIELDS = ("polarity", "id", "date", "query", "user", "text")


@dataclass(frozen=True)
class Sentiment140(Dataset):
    """``dataset=sentiment140``: regional tweets and the general training pool.

    Attributes:
        clean_regional: clean the regional files again (for raw copies of the sources).
    """

    clean_regional: bool

    downloads = SENTIMENT140_DOWNLOADS

    def read(self, data_dir: Path | None) -> Corpus:
        """The corpus (:func:`read_sentiment140`); a known file with other bytes is warned about."""
        self.altered_copies(self.required(data_dir))
        return read_sentiment140(self.required(data_dir), clean_regional=self.clean_regional)

    def files(self, data_dir: Path | None) -> list[Path]:
        """The regional files, and the full training file if present, else the pool."""
        if data_dir is None:
            return []
        regional = [data_dir / "regional_sentiment140" / f"{r}.csv" for r in REGIONS]
        full = data_dir / FULL_TRAINING_FILE
        return regional + ([full] if full.is_file() else [data_dir / p for p in POOL_FILES])


def read_sentiment140(data_dir: Path, *, clean_regional: bool = False) -> Corpus:
    """Read the regional tweets and the general training pool.

    ``clean_regional`` cleans the regional texts with :func:`clean_tweet` too (for raw copies; the
    shared files are already cleaned, so by default only whitespace is normalised).

    Groups are the six regions and ``mixed`` (all regional tweets pooled, in region order).
    The training pool is the original 1.6M-row training file when
    ``<data_dir>/sentiment140/training.1600000.processed.noemoticon.csv`` exists, else the
    100k-tweet pool; either way tweets are cleaned, empty ones and duplicates dropped, and so is
    any tweet whose cleaned text also occurs among the regional tweets.

    Returns:
        A ``binary`` corpus; ``dropped`` counts regional tweets empty after cleaning
        (``empty_after_cleaning``, and per region ``empty_after_cleaning/<region>``) and
        pool tweets dropped as ``train/empty_after_cleaning``, ``train/duplicate`` and
        ``train/in_regional``.

    Raises:
        DataError: the data directory or a file is missing, or a file is malformed.
    """
    data_dir = Path(data_dir)
    if not data_dir.is_dir():
        raise DataError(
            f"data directory {data_dir} does not exist: {_fetch_hint(data_dir)}, "
            f"or set {DATA_DIR_ENV} to the folder that holds regional_sentiment140/"
        )
    groups: dict[str, TextSet] = {}
    dropped: dict[str, int] = {"empty_after_cleaning": 0}
    for region in REGIONS:
        path = data_dir / "regional_sentiment140" / f"{region}.csv"
        groups[region], empty = read_regional_tweets(path, region, clean=clean_regional)
        dropped[f"empty_after_cleaning/{region}"] = empty
        dropped["empty_after_cleaning"] += empty
    groups[MIXED] = TextSet.joined([groups[region] for region in REGIONS])
    train, pool_dropped = read_training_pool(data_dir, exclude=set(groups[MIXED].texts))
    full = (data_dir / FULL_TRAINING_FILE).is_file()
    return Corpus(
        name="sentiment140",
        task="binary",
        label_names=list(LABEL_NAMES),
        train=train,
        groups=groups,
        dropped=dropped | pool_dropped,
        pool="" if full else POOL_DATES,
    )


def read_regional_tweets(path: Path, region: str, *, clean: bool = False) -> tuple[TextSet, int]:
    """Read one regional tweet file (columns: unnamed index, ``text``, ``labels`` 0/4).

    Ids are ``<region>:<index>``; ``clean`` applies :func:`clean_tweet`, else only whitespace is
    normalised.

    Returns:
        The region's non-empty tweets (labels 0 negative, 1 positive) and the number of tweets
        dropped because they were empty.

    Raises:
        DataError: the file is missing or malformed (the message names file and line).
    """
    texts: list[str] = []
    labels: list[int] = []
    ids: list[str] = []
    empty = 0
    _require_file(path)
    for line, row in read_csv_rows(path, ("text", "labels")):
        text = clean_tweet(row["text"]) if clean else " ".join(row["text"].split())
        if not text:
            empty += 1
            continue
        texts.append(text)
        labels.append(_binary_label(row["labels"], path, line))
        ids.append(f"{region}:{row.get('', line)}")
    return TextSet(texts=texts, labels=np.asarray(labels, dtype=np.int64), ids=ids), empty


def read_training_pool(
    data_dir: Path, *, exclude: set[str] | None = None
) -> tuple[TextSet, dict[str, int]]:
    """Read the general training pool: the full Sentiment140 file if present, else the 100k pool.

    ``exclude``: cleaned texts that must not be trained on (the regional tweets).

    Tweets are cleaned with :func:`clean_tweet`; empty ones are dropped, then repeated ones
    (the first is kept), then those whose cleaned text is in ``exclude``.

    Returns:
        The pool (ids ``<file stem>:<row>``) and the drop counts ``train/empty_after_cleaning``,
        ``train/duplicate`` and ``train/in_regional``.

    Raises:
        DataError: a pool file is missing or malformed.
    """
    full = Path(data_dir) / FULL_TRAINING_FILE
    raw_texts, labels, ids = _read_full_file(full) if full.is_file() else _read_pool(data_dir)
    return _filter_pool([clean_tweet(t) for t in raw_texts], labels, ids, exclude or set())


def _read_pool(data_dir: Path) -> tuple[list[str], list[int], list[str]]:
    texts: list[str] = []
    labels: list[int] = []
    ids: list[str] = []
    for name, label in POOL_FILES.items():
        path = Path(data_dir) / name
        _require_file(path)
        try:
            content = path.read_bytes().decode("utf-8")
        except UnicodeDecodeError:
            raise DataError(f"{non_utf8_message(path)}, or {_fetch_hint(data_dir)}") from None
        # Split on '\n' only: some tweets hold U+0085, which str.splitlines() would break on.
        lines = content.split("\n")
        if lines and not lines[-1]:
            lines.pop()
        texts += lines
        labels += [label] * len(lines)
        ids += [f"{path.stem}:{i}" for i in range(len(lines))]
    return texts, labels, ids


def _read_full_file(path: Path) -> tuple[list[str], list[int], list[str]]:
    texts: list[str] = []
    labels: list[int] = []
    ids: list[str] = []
    with path.open(encoding="latin-1", newline="") as stream:
        # Lenient quoting, as pandas reads this file: a stray quote in a tweet is kept as text.
        reader = csv.reader(stream)
        try:
            for row in reader:
                if len(row) != len(_FULL_FIELDS):
                    raise DataError(
                        f"{path}, line {reader.line_num}: expected {len(_FULL_FIELDS)} fields "
                        f"({','.join(_FULL_FIELDS)}), found {len(row)}"
                    )
                labels.append(_binary_label(row[0], path, reader.line_num))
                texts.append(row[5])
                ids.append(f"training:{reader.line_num}")
        except csv.Error as error:
            raise DataError(f"{path}, line {reader.line_num}: malformed CSV ({error})") from None
    return texts, labels, ids


def _filter_pool(
    texts: list[str], labels: list[int], ids: list[str], exclude: set[str]
) -> tuple[TextSet, dict[str, int]]:
    seen: set[str] = set()
    keep: list[int] = []
    dropped = {"train/empty_after_cleaning": 0, "train/duplicate": 0, "train/in_regional": 0}
    for i, text in enumerate(texts):
        if not text:
            dropped["train/empty_after_cleaning"] += 1
        elif text in seen:
            dropped["train/duplicate"] += 1
        elif text in exclude:
            seen.add(text)
            dropped["train/in_regional"] += 1
        else:
            seen.add(text)
            keep.append(i)
    return TextSet(texts, np.asarray(labels, dtype=np.int64), ids).subset(keep), dropped


def _binary_label(value: str, path: Path, line: int) -> int:
    try:
        polarity = int(value)
    except ValueError:
        raise DataError(
            f"{path}, line {line}: label {value!r} is not an integer (expected 0 or 4)"
        ) from None
    if polarity not in _POLARITY:
        raise DataError(
            f"{path}, line {line}: label {polarity} is neither 0 (negative) nor 4 (positive)"
        )
    return _POLARITY[polarity]


def _require_file(path: Path) -> None:
    if not path.is_file():
        data_dir = path.parent.parent
        raise DataError(
            f"{path} is missing: {_fetch_hint(data_dir)}, "
            f"or set {DATA_DIR_ENV} to a folder that holds it"
        )


def _fetch_hint(data_dir: Path) -> str:
    return f"run `{fetch_command('sentiment140', data_dir)}` to download it"
