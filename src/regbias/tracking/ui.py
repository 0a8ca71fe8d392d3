"""What the MLflow UI shows: the experiment's kind, run names, descriptions, input datasets.

MLflow 3's UI opens an experiment on its runs table only when it is tagged model-training.
"""

from __future__ import annotations

import copy
import json
import re
import urllib.error
import urllib.request
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pandas as pd
from mlflow.entities import DatasetInput, InputTag
from mlflow.utils.mlflow_tags import MLFLOW_DATASET_CONTEXT

from regbias.tracking.artifacts import METHOD_HTML, METHOD_MD, REPORT_HTML
from regbias.tracking.run_log import RunLog

NOTE_TAG = "mlflow.note.content"
#: The most characters a run's description keeps (longer ones are cut with a note).
NOTE_LIMIT = 5000
#: The UI's view for training runs (its "Model training" switch).
WORKFLOW_TYPE = "machine_learning"
#: Where ``mlflow ui`` serves by default.
DEFAULT_UI = "http://127.0.0.1:5000"
#: Config keys that may be null and then get their value at run time.
DERIVED_KEYS = ("distance.sinkhorn.epsilon", "distance.sinkhorn.anneal_init")
_METHOD_LINK = re.compile(rf"\]\({re.escape(METHOD_MD)}(#[^)]*)?\)")


def describe_run(run: RunLog, markdown: str) -> None:
    """The run's description on its UI page (Markdown), cut only with a word that says so."""
    experiment_id = run.client.get_run(run.run_id).info.experiment_id
    artifacts = f"#/experiments/{quote(experiment_id)}/runs/{quote(run.run_id)}/artifacts"
    run.client.set_tag(run.run_id, NOTE_TAG, run_description(markdown, artifacts))


def run_description(markdown: str, artifacts: str) -> str:
    """``markdown`` fitted (:func:`fitted_description`), its ``method.md`` links the run's page.

    Args:
        markdown: the description, links relative to the report's folder.
        artifacts: the UI's route to the run's artifacts (``#/experiments/E/runs/R/artifacts``).
    """
    view = f"?workflowType={WORKFLOW_TYPE}"  # the link opens in a new tab: keep the view
    markdown = _METHOD_LINK.sub(f"]({artifacts}/{METHOD_HTML}{view})", markdown)
    return fitted_description(markdown, f"{artifacts}/{REPORT_HTML}{view}")


def fitted_description(markdown: str, report_link: str, limit: int = NOTE_LIMIT) -> str:
    """The description as it is, or cut at a line's end with a note linking the full report.

    Returns:
        ``markdown`` when it fits ``limit``; else its first whole lines and a note saying where
        it was cut and linking ``report_link``.
    """
    if len(markdown) <= limit:
        return markdown
    note = (
        "\n\n*This description is cut at {kept:,} of {total:,} characters (the most a "
        f"description keeps here is {limit:,}): the full findings are in the run's artifact "
        f"[{REPORT_HTML}]({report_link}).*"
    )
    room = limit - len(note.format(kept=limit, total=len(markdown)))
    cut = markdown.rfind("\n", 0, room)
    kept = markdown[: cut if cut > 0 else max(room, 0)].rstrip()
    return kept + note.format(kept=len(kept), total=len(markdown))


def without_derived(resolved: Mapping[str, Any]) -> dict[str, Any]:
    """The config without the :data:`DERIVED_KEYS` that are null (logged once derived)."""
    kept = copy.deepcopy(dict(resolved))
    for key in DERIVED_KEYS:
        *parents, leaf = key.split(".")
        node: Any = kept
        for part in parents:
            node = node.get(part) if isinstance(node, dict) else None
        if isinstance(node, dict) and leaf in node and node[leaf] is None:
            del node[leaf]
    return kept


def log_derived(run: RunLog, values: Mapping[str, float | None]) -> None:
    """Log run-time values under their config keys, where the config left them null."""
    logged = run.client.get_run(run.run_id).data.params
    fresh = {k: v for k, v in values.items() if v is not None and k not in logged}
    if fresh:
        run.params(fresh)
        run.tags({"regbias.derived": ",".join(sorted(fresh))})


def shared_and_swept(params: list[Mapping[str, str]]) -> tuple[dict[str, str], dict[str, str]]:
    """Params equal in every run (the shared config) and the others (``key: a,b``)."""
    keys = sorted(set().union(*params)) if params else []
    shared, swept = {}, {}
    for key in keys:
        values = list(dict.fromkeys(p.get(key, "") for p in params))
        if len(values) == 1:
            shared[key] = values[0]
        else:
            swept[key] = ",".join(values)
    return shared, swept


def ui_command(tracking_uri: str) -> str:
    """The shell command that starts a UI on ``tracking_uri`` (a SQLite path made absolute)."""
    if tracking_uri.startswith("sqlite:///") and not tracking_uri.startswith("sqlite:////"):
        tracking_uri = f"sqlite:///{Path(tracking_uri.removeprefix('sqlite:///')).resolve()}"
    return f"mlflow ui --backend-store-uri {tracking_uri}"


def run_url(base: str, experiment_id: str, run_id: str) -> str:
    """The run's page in the UI at ``base``, in the model-training view (``?workflowType=``)."""
    route = f"#/experiments/{quote(experiment_id)}/runs/{quote(run_id)}"
    return f"{base.rstrip('/')}/{route}?workflowType={WORKFLOW_TYPE}"


def compare_url(base: str, experiment_id: str, run_ids: list[str]) -> str:
    """The UI's side-by-side comparison of ``run_ids`` (a study's jobs) at ``base``."""
    route = f"#/compare-runs?runs={quote(json.dumps(run_ids))}"
    return f"{base.rstrip('/')}/{route}&experiments={quote(json.dumps([experiment_id]))}"


def ui_serving(base: str, run_id: str, timeout_s: float = 1.0) -> bool:
    """Whether a UI answers at ``base`` and knows ``run_id`` (so it shows this store)."""
    url = f"{base.rstrip('/')}/api/2.0/mlflow/runs/get?run_id={quote(run_id)}"
    try:
        with urllib.request.urlopen(url, timeout=timeout_s) as response:
            return (
                json.loads(response.read()).get("run", {}).get("info", {}).get("run_id") == run_id
            )
    except (urllib.error.URLError, OSError, ValueError):
        return False


def log_dataset(run: RunLog, table: pd.DataFrame, name: str, source: str, context: str) -> None:
    """Record ``table`` (one row per group) as an input of ``run``, read from ``source``.

    ``context`` is the input's role shown beside it (``groups``, ``pooled groups``).
    """
    # Where mlflow.data's from_pandas is defined (the package adds it at import time).
    from mlflow.data.pandas_dataset import from_pandas

    with warnings.catch_warnings():  # source-type guesses and integer-schema hints
        warnings.simplefilter("ignore")
        dataset = from_pandas(table, source=source, name=name)
        # What the fluent mlflow.log_input logs, for a run this process does not make active.
        entity = dataset._to_mlflow_entity()
    tags = [InputTag(key=MLFLOW_DATASET_CONTEXT, value=context)]
    run.client.log_inputs(run.run_id, datasets=[DatasetInput(entity, tags)])
