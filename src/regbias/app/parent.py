"""The sweep's parent run: its name, and one parent per sweep also when the sweep is rerun.

A rerun (same config, overrides and code) reopens its parent; with ``resume=false`` it gets a
new one, tagged ``regbias.supersedes`` (the old one ``regbias.superseded_by``).
"""

from __future__ import annotations

import logging
import re
import shlex
from collections.abc import Iterable, Mapping
from typing import Any

from mlflow.tracking import MlflowClient
from omegaconf import DictConfig, OmegaConf

from regbias.errors import TrackingError
from regbias.tracking.provenance import config_hash, git_state
from regbias.tracking.reaper import live_owner, owner_tags
from regbias.tracking.runs import RunLog, start_run

log = logging.getLogger(__name__)

SWEEP_KEY_TAG = "regbias.sweep_key"
# Keys that do not make a sweep another sweep.
_NEUTRAL = ("hydra", "resume", "tracking")


def sweep_key(config: DictConfig) -> str:
    """What makes two sweeps the same: config, sweep overrides and code commit."""
    kept = OmegaConf.masked_copy(config, [str(k) for k in config if k not in _NEUTRAL])
    container = OmegaConf.to_container(kept, resolve=True)
    assert isinstance(container, dict)
    resolved = {str(k): v for k, v in container.items()}
    overrides = [str(o) for o in config.hydra.overrides.task]
    resolved["_overrides"] = sorted(o for o in overrides if not _neutral(o))
    resolved["_commit"] = git_state()["git.commit"]
    return config_hash(resolved)


def _neutral(override: str) -> bool:
    key = override.split("=", 1)[0].lstrip("+~")
    return key.split(".", 1)[0].split("/", 1)[0] in _NEUTRAL


def open_parent(
    client: MlflowClient, experiment_id: str, config: DictConfig, tags: Mapping[str, str]
) -> RunLog:
    """The sweep's parent run: the previous one of the same sweep reopened, or a new one.

    Raises:
        TrackingError: the same sweep is running now (its parent's owner lives): a second
            parent would split its jobs.
    """
    key = sweep_key(config)
    found = client.search_runs(
        [experiment_id],
        filter_string=f"tags.`{SWEEP_KEY_TAG}` = '{key}'",
        order_by=["attributes.start_time DESC"],
        max_results=1,
    )
    previous = found[0] if found else None
    if previous is not None:
        refuse_live_parent(previous, "the same sweep (same config, overrides and code)", "")
    overrides = [str(o) for o in config.hydra.overrides.task]
    reuse = bool(config.get("resume", True))
    if reuse and previous is not None and previous.info.status != "RUNNING":
        run = RunLog(client, previous.info.run_id)
        client.update_run(run.run_id, status="RUNNING")
        reopened = int(previous.data.tags.get("regbias.reopened", "0")) + 1
        # This process owns it now: a later start must not take it for a dead sweep's run.
        run.tags({**tags, **owner_tags(), "regbias.reopened": str(reopened)})
        log.info("sweep parent run %s reopened (this sweep ran before)", run.run_id)
        return run
    name = sweep_name(config, [" ".join(overrides)])
    run = start_run(client, experiment_id, name, {**tags, SWEEP_KEY_TAG: key})
    if previous is not None:
        RunLog(client, previous.info.run_id).tags({"regbias.superseded_by": run.run_id})
        run.tags({"regbias.supersedes": previous.info.run_id})
    return run


def refuse_live_parent(run: Any, what: str, elsewhere: str) -> None:
    """Refuse to start while ``run`` (a sweep's parent) is RUNNING and its owner lives.

    ``what`` the new sweep shares with it and ``elsewhere`` (a further way out) are said.

    Raises:
        TrackingError: one line naming the run and its owner, and what to do.
    """
    if run.info.status != "RUNNING":
        return
    owner = live_owner(run.data.tags)
    if owner is None:
        return
    raise TrackingError(
        f"{what} is running now: parent run {run.info.run_id}, owned by {owner}; wait for it "
        f"to end or stop it (kill -TERM {owner.split()[1]}){elsewhere}"
    )


def sweep_name(config: DictConfig, overrides: Iterable[str]) -> str:
    """``sentiment140 · minilm_l6 · laptop · 5 seeds`` from the config and the jobs' overrides.

    ``overrides``: each job's (``"seed=0 encoder=tiny"``), or the sweep's (``"seed=range(5)"``).
    """
    values: dict[str, list[str]] = {}
    for line in overrides:
        for word in shlex.split(line):
            key, _, value = word.partition("=")
            for item in _expand(value):
                items = values.setdefault(key.lstrip("+~"), [])
                if item not in items:
                    items.append(item)
    choices = config.hydra.runtime.choices if "hydra" in config else {}
    preset = choices.get("experiment") or "default"
    dataset = values.get("dataset") or [str(config.dataset.name)]
    encoder = values.get("encoder") or [str(config.encoder.name)]
    seeds = len(values.get("seed", [])) or 1
    parts = [", ".join(dataset), ", ".join(encoder), ", ".join(values.get("experiment", [preset]))]
    return " · ".join([*parts, f"{seeds} seed{'s' if seeds != 1 else ''}"])


def _expand(value: str) -> list[str]:
    """A sweep value as its items: ``a,b`` -> [a, b]; ``range(3)`` -> [0, 1, 2]."""
    match = re.fullmatch(r"range\((-?\d+)(?:,\s*(-?\d+))?(?:,\s*(-?\d+))?\)", value.strip())
    if match:
        numbers: list[Any] = [int(g) for g in match.groups() if g is not None]
        return [str(i) for i in range(*numbers)]
    return [v for v in value.split(",") if v]
