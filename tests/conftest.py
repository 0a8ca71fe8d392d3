"""Fixtures shared by the test modules."""

from __future__ import annotations

import copy
import functools
import os
import signal
import sqlite3
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import closing
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

import pytest


@pytest.fixture(scope="session")
def shared_data_dir() -> Path:
    """The real study data: ``$REGBIAS_DATA_DIR``, else ``../shared/data`` next to the project."""
    configured = os.environ.get("REGBIAS_DATA_DIR")
    path = Path(configured) if configured else Path(__file__).parents[1] / "../shared/data"
    path = path.resolve()
    assert (path / "regional_sentiment140").is_dir(), f"no study data in {path}"
    return path


ROOT = Path(__file__).resolve().parents[1]
T = TypeVar("T")
#: The reason a ``needs_mpnet`` test is skipped; the terminal summary counts these skips.
MPNET_ABSENT = "the mpnet_base pieces are not installed"


@functools.cache
def mpnet_missing() -> str | None:
    """Why the mpnet_base pieces cannot be used here (with the install line), or None."""
    from omegaconf import OmegaConf

    from regbias.embeddings.parts import install_line, parts_version
    from regbias.errors import ConfigError

    conf = OmegaConf.load(ROOT / "conf/encoder/mpnet_base.yaml")
    version = str(conf.revision)
    try:
        parts_version(conf.location, conf.parts, conf.name, version)
    except ConfigError:
        return f"{MPNET_ABSENT} ({install_line(conf.location, conf.parts, version)})"
    return None


def pytest_configure(config: pytest.Config) -> None:
    """Register ``needs_mpnet``: a test that loads the real all-mpnet-base-v2 pieces."""
    config.addinivalue_line(
        "markers", "needs_mpnet: loads the real mpnet_base pieces (skipped when not installed)"
    )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Skip the ``needs_mpnet`` tests, saying why and how to install, when the pieces are absent."""
    wanting = [item for item in items if item.get_closest_marker("needs_mpnet")]
    reason = mpnet_missing() if wanting else None
    for item in wanting if reason else []:
        item.add_marker(pytest.mark.skip(reason=reason))


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Say how many tests were skipped for want of the mpnet pieces, and the install line."""
    skipped = [
        report
        for report in terminalreporter.stats.get("skipped", [])
        if MPNET_ABSENT in str(getattr(report, "longrepr", ""))
    ]
    if skipped:
        count = f"{len(skipped)} test{'s' if len(skipped) > 1 else ''}"
        terminalreporter.write_line(f"{count} skipped: {mpnet_missing()}")


@pytest.fixture(autouse=True)
def restore_signal_handlers() -> Iterator[None]:
    """Give the process its SIGTERM and SIGINT handlers back after every test.

    A test that starts a sweep in-process installs regbias's SIGTERM flag; left in place, a
    SIGTERM to pytest would only set the flag and the run would go on (issue 46).
    """
    term, interrupt = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)
    yield
    signal.signal(signal.SIGTERM, term)
    signal.signal(signal.SIGINT, interrupt)


@pytest.fixture(scope="session", autouse=True)
def migrated_once(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """A new SQLite MLflow store in this process gets a copy of tables migrated once a session.

    MLflow builds a new store's tables by running every schema migration (2 to 3 s of CPU,
    several times that in wall time on a busy disk); a copy of one such database has the same
    tables and schema version. The store then adds its default experiment itself, as always.
    Stores made by ``run.py`` subprocesses still migrate.
    """
    if "mlflow" not in sys.modules:  # nothing collected uses MLflow
        yield
        return
    import sqlalchemy
    from mlflow.store.db import utils

    migrate = utils._initialize_tables
    template = tmp_path_factory.mktemp("mlflow") / "migrated.db"

    def initialize(engine: sqlalchemy.Engine) -> None:
        database = engine.url.database
        if engine.url.get_backend_name() != "sqlite" or database in (None, "", ":memory:"):
            migrate(engine)
        elif not template.exists():  # the session's first store: migrated, then kept
            migrate(engine)
            _copy_database(database, template)
        else:
            try:
                _copy_database(template, database)
            except sqlite3.Error:  # a read-only or full folder: MLflow's own path and errors
                migrate(engine)
                return
            engine.dispose()

    utils._initialize_tables = initialize
    yield
    utils._initialize_tables = migrate


def _copy_database(source: str | Path, target: str | Path) -> None:
    """Copy the SQLite database ``source`` into ``target`` (SQLite's online backup)."""
    with closing(sqlite3.connect(source)) as read, closing(sqlite3.connect(target)) as write:
        read.backup(write)


@pytest.fixture(scope="session", autouse=True)
def distributions_read_once() -> Iterator[None]:
    """``importlib.metadata.packages_distributions()`` read once per ``sys.path``.

    Reading settings of a packaged encoder asks which distribution ships its module, and the
    answer scans every installed distribution's file list (half a second of CPU a call, every
    settings read of the default encoder). Within a session the installed packages change only
    by ``sys.path`` entries a test adds (fake pieces), which give a new answer.
    """
    import importlib.metadata

    scan = importlib.metadata.packages_distributions
    answers: dict[tuple[str, ...], Mapping[str, list[str]]] = {}

    def packages_distributions() -> Mapping[str, list[str]]:
        key = tuple(sys.path)
        if key not in answers:
            answers[key] = scan()
        return {name: list(found) for name, found in answers[key].items()}

    importlib.metadata.packages_distributions = packages_distributions
    yield
    importlib.metadata.packages_distributions = scan


@pytest.fixture
def one_blas_thread() -> Iterator[None]:
    """One BLAS thread for the test: thousands of small products, where a second thread only
    contends for the cores (``distances/lda.py`` does the same); the numbers do not change."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        yield


def compose_config(*overrides: str) -> Any:
    """The real ``conf/config.yaml`` composed in-process with ``overrides`` (Hydra compose API)."""
    from hydra import compose, initialize_config_dir

    with initialize_config_dir(config_dir=str(ROOT / "conf"), version_base="1.3"):
        return compose("config", overrides=list(overrides))


@functools.cache
def _packaged_config(overrides: tuple[str, ...]) -> dict[str, Any]:
    from omegaconf import OmegaConf

    values = OmegaConf.to_container(
        compose_config(*overrides), resolve=True, throw_on_missing=False
    )
    assert isinstance(values, dict)
    return values  # type: ignore[return-value]


def _packaged_group(key: str, overrides: tuple[str, ...]) -> dict[str, Any]:
    node: Any = _packaged_config(overrides)
    for part in key.split("."):
        assert isinstance(node, dict) and part in node, f"the packaged config has no group {key}"
        node = node[part]
    assert isinstance(node, dict)
    return node


def packaged_values(key: str, *overrides: str) -> dict[str, Any]:
    """The packaged config's group at ``key`` (``analysis.tests.embedding``), resolved, as a dict.

    ``overrides`` are Hydra overrides of the composition (``dataset=reuters21578``).
    """
    return copy.deepcopy(_packaged_group(key, overrides))


def _merged(values: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    """``values`` with ``changes``; a change that is a mapping changes that group's keys only."""
    merged = dict(values)
    for name, change in changes.items():
        if isinstance(change, dict) and isinstance(merged.get(name), dict):
            merged[name] = _merged(merged[name], change)
        else:
            merged[name] = change
    return merged


def packaged(kind: type[T], key: str, *overrides: str, **changes: Any) -> T:
    """``kind`` built from the packaged config's ``key`` group, as a job builds it.

    The defaults are the YAML's (the settings classes have none of their own); a test names
    only what it is about. ``overrides`` are Hydra overrides of the composition
    (``encoder=tiny``, ``dataset=reuters21578``); ``changes`` replace keys of the group
    before it is built, so they are converted and checked as config values are; a change
    given as a mapping replaces only the keys it names of that inner group:
    ``packaged(AnalysisSettings, "analysis", robustness={"resamples": 0})``. What the
    enclosing groups hand down (``analysis.seed``) is the packaged config's.
    """
    from regbias.settings_reader import build, handed_down

    handed = handed_down(_packaged_config(overrides), key)
    return build(kind, _merged(packaged_values(key, *overrides), changes), key, handed)


def local_tracking(folder: Path, experiment: str, artifacts: str = "mlruns", **changes: Any) -> Any:
    """The packaged tracking settings on a SQLite store in ``folder`` (artifacts beside it)."""
    from regbias.tracking.runs import TrackingSettings

    return packaged(
        TrackingSettings,
        "tracking",
        uri=f"sqlite:///{folder / 'mlruns.db'}",
        artifact_root=str(folder / artifacts),
        experiment=experiment,
        **changes,
    )


@pytest.fixture(scope="session")
def finetune_settings() -> Callable[..., Any]:
    """``finetune_settings(dataset, **changes)``: the composed ``finetune`` group as settings.

    Field names are config keys, so the settings are built from the group as it stands; tests
    change only what they are about (``**changes``, e.g. ``max_epochs=1``).
    """
    from regbias.performance.settings import FinetuneSettings

    def make(dataset: str = "sentiment140", **changes: Any) -> FinetuneSettings:
        composed = packaged(FinetuneSettings, "finetune", f"dataset={dataset}")
        return replace(composed, **changes)

    return make


@pytest.fixture(scope="session")
def trainer_settings() -> Any:
    """The composed ``trainer`` group as settings, on the CPU and without progress bars."""
    from regbias.performance.settings import TrainerSettings

    return packaged(TrainerSettings, "trainer", accelerator="cpu", enable_progress_bar=False)
