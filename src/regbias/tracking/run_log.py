"""One MLflow run as this process writes it: params, tags, metrics and artifacts.

Stages never import MLflow; they return results and :class:`RunLog` writes them (the runs
themselves are opened and ended in :mod:`regbias.tracking.runs`).
"""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pandas as pd
from mlflow.entities import Metric, Param, RunTag
from mlflow.tracking import MlflowClient

from regbias.redaction import redacted
from regbias.tables import csv_text
from regbias.tracking.artifacts import NOT_IN_REPORT, print_copy

_BATCH = 100  # MLflow's limit of params per log_batch call.


@contextmanager
def _layout_kept(figure: Any) -> Iterator[None]:
    """``figure`` drawn again where its last draw laid it out: its layout engine off meanwhile.

    The print copy of a figure just written as a PNG needs no second constrained layout (half
    its drawing time); the layout's positions are the PNG's.
    """
    engine = figure.get_layout_engine()
    if engine is None:
        yield
        return
    figure.set_layout_engine("none")
    try:
        yield
    finally:
        figure.set_layout_engine(engine)


class RunLog:
    """Writes results into one MLflow run, every artifact path and metric key under ``prefix``.

    With ``local`` (a folder), every artifact but :data:`NOT_IN_REPORT` is written there first,
    at its path in the run, then logged from there: the folder holds the run's report as this
    process wrote it, so the end of a run or a sweep moves it in, never reading the store. The
    metrics logged through a run (and its :meth:`under` views) are kept in :attr:`logged`.
    """

    def __init__(
        self,
        client: MlflowClient,
        run_id: str,
        prefix: str = "",
        local: Path | None = None,
        logged: dict[str, float] | None = None,
    ) -> None:
        self.client = client
        self.run_id = run_id
        self.prefix = prefix
        self.local = local
        #: The metrics logged through this run in this process, by their full key.
        self.logged: dict[str, float] = {} if logged is None else logged

    @property
    def tracking_uri(self) -> str:
        """The URI of the store the run lives in."""
        return str(self.client.tracking_uri)

    def under(self, prefix: str) -> RunLog:
        """The same run, writing under ``prefix`` (into the same local folder, if any)."""
        return RunLog(self.client, self.run_id, f"{self.prefix}{prefix}", self.local, self.logged)

    def _at(self, path: str) -> str:
        full = f"{self.prefix}{path}"
        if any(part in ("..", ".") for part in full.split("/")) or full.startswith("/"):
            raise ValueError(f"artifact path {full!r} would leave the run's artifact folder")
        return full

    def params(self, values: Mapping[str, Any]) -> None:
        """Log parameters (values as text, credentials redacted, cut at 6,000), in batches."""
        items = [Param(k, redacted(str(v))[:6000]) for k, v in values.items()]
        self._batches("params", items, _BATCH)

    def tags(self, values: Mapping[str, Any]) -> None:
        """Set tags (values as text, credentials redacted, cut at 8,000 characters), in batches."""
        items = [RunTag(k, redacted(str(v))[:8000]) for k, v in values.items()]
        self._batches("tags", items, _BATCH)

    def metrics(self, values: Mapping[str, float], step: int = 0) -> None:
        """Log metrics at ``step``, their keys under the prefix and made valid for MLflow."""
        now = int(time.time() * 1000)
        items = [Metric(metric_key(self._at(k)), float(v), now, step) for k, v in values.items()]
        self._batches("metrics", items, 1000)
        self.logged.update({m.key: m.value for m in items})

    def _batches(self, kind: str, items: list[Any], size: int) -> None:
        """``log_batch`` of ``items`` as ``kind`` (params, tags, metrics), ``size`` a call."""
        for start in range(0, len(items), size):
            batch: dict[str, Any] = {kind: items[start : start + size]}
            self.client.log_batch(self.run_id, **batch)

    @contextmanager
    def _artifact(self, path: str) -> Iterator[Path]:
        """A file to write the artifact at ``path`` into; logged when the block ends.

        The file is the local folder's (when the run has one), else a temporary one.
        """
        full = self._at(path)
        folder, _, name = full.rpartition("/")
        with tempfile.TemporaryDirectory() as tmp:
            local = self._local(full)
            target = Path(tmp) / name if local is None else local
            target.parent.mkdir(parents=True, exist_ok=True)
            yield target
            self.client.log_artifact(self.run_id, str(target), folder or None)

    def json(self, data: Any, path: str) -> None:
        """Write ``data`` as a JSON artifact at ``path`` (under the prefix)."""
        with self._artifact(path) as target:
            target.write_text(json.dumps(data, indent=2, default=str))

    def text(self, text: str, path: str) -> None:
        """Write ``text`` (a page, a traceback) as an artifact at ``path``, credentials redacted."""
        with self._artifact(path) as target:
            target.write_text(redacted(text), encoding="utf-8")

    def table(
        self, frame: pd.DataFrame, path: str, index: bool = False, float_format: str | None = None
    ) -> None:
        """Write ``frame`` as a CSV artifact at ``path`` (``float_format`` e.g. ``%.9g``).

        Text cells a spreadsheet would run as formulas are neutralised (:func:`csv_text`).
        """
        text = csv_text(frame, index=index, float_format=float_format)
        with self._artifact(path) as target:
            target.write_text(text, encoding="utf-8")

    def figure(self, figure: Any, path: str) -> None:
        """Write a matplotlib figure as an image artifact at ``path`` (under the prefix).

        A PNG also gets a vector copy for print beside it (:func:`print_copy`).
        """
        with self._artifact(path) as target:
            figure.savefig(target)
        vector = print_copy(path)
        if vector is not None:
            with self._artifact(vector) as target, _layout_kept(figure):
                # No creation date: the same figure gives the same bytes (reproducible runs).
                figure.savefig(target, metadata={"CreationDate": None})

    def file(self, local: Path, directory: str | None = None) -> None:
        """Copy a local file into the artifact folder ``directory`` (None: the prefix's)."""
        folder = self._folder(directory)
        self._mirror(local, Path(folder or "") / local.name)
        self.client.log_artifact(self.run_id, str(local), folder)

    def directory(self, local: Path, directory: str | None = None) -> None:
        """Copy a local folder's contents into the artifact folder ``directory``."""
        folder = self._folder(directory)
        self._mirror(local, Path(folder or ""))
        self.client.log_artifacts(self.run_id, str(local), folder)

    def _mirror(self, source: Path, relative: Path) -> None:
        """``source`` (a file or a folder) copied to ``relative`` in the local folder, if any."""
        target = self._local(relative.as_posix())
        if target is None:
            return
        if target.resolve() == source.resolve():
            return  # written there already
        if source.is_dir():
            shutil.copytree(source, target, dirs_exist_ok=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)

    def _local(self, full: str) -> Path | None:
        """Where the local folder holds the artifact at ``full`` (None: it holds none there)."""
        if self.local is None or full.split("/")[0] in NOT_IN_REPORT:
            return None
        return self.local / full

    def _folder(self, directory: str | None) -> str | None:
        folder = self._at(directory or "").rstrip("/")
        return folder or None

    def download(self, path: str, destination: Path) -> Path | None:
        """A logged artifact (file or folder) copied to ``destination``; None if absent."""
        path = self._at(path)
        parent = path.rsplit("/", 1)[0] if "/" in path else ""
        names = {a.path for a in self.client.list_artifacts(self.run_id, parent or None)}
        if path not in names:
            return None
        return Path(self.client.download_artifacts(self.run_id, path, str(destination)))


def metric_key(name: str) -> str:
    """``name`` as an MLflow metric key: characters MLflow refuses become ``_``."""
    # MLflow keys allow alphanumerics, _ - . space / only.
    return "".join(c if c.isalnum() or c in "_-. /" else "_" for c in name)
