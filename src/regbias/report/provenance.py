"""``## Provenance``: how a report's numbers were made, on the page itself.

The command line and its overrides, the commit, the date, the package versions and the MLflow
run with a link. Every part is redacted: an override may carry a tracking URI's password.
"""

from __future__ import annotations

import datetime
import shlex
import sys
from collections.abc import Sequence
from typing import Any

from regbias.redaction import redacted
from regbias.report.escape import markdown_code, markdown_text
from regbias.tracking.provenance import git_state, package_versions
from regbias.tracking.ui import DEFAULT_UI, compare_url, run_url, ui_command

#: The tag prefix of package versions on a run (``version.torch``).
VERSION_TAG = "version."


def command_line(argv: Sequence[str] | None = None) -> str:
    """The command that made the report (``sys.argv`` by default), quoted and redacted."""
    words = list(sys.argv if argv is None else argv)
    if words and words[0].endswith(".py"):
        words = ["python", words[0].rsplit("/", 1)[-1], *words[1:]]
    return " ".join(shlex.quote(redacted(w)) for w in words)


def provenance_section(
    run: Any, argv: Sequence[str] | None = None, jobs: Sequence[str] = ()
) -> str:
    """Markdown: command, commit, date, versions and the MLflow run of ``run`` (a RunLog).

    ``jobs``: a study's job runs, linked to the UI's side-by-side comparison. ``run`` without
    an MLflow client (a test's stand-in) gets the parts that need none.
    """
    found = _mlflow_run(run)
    tags = dict(found.data.tags) if found is not None else {}
    state = tags if "git.commit" in tags else git_state()
    commit, dirty = state.get("git.commit", "unknown"), state.get("git.dirty", "unknown")
    versions = {
        k.removeprefix(VERSION_TAG): v for k, v in tags.items() if k.startswith(VERSION_TAG)
    }
    versions = versions or package_versions()
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        "## Provenance",
        "",
        f"- command: {markdown_code(command_line(argv))}",
        f"- commit: {markdown_code(commit)}"
        + (" (with uncommitted changes)" if dirty == "true" else ""),
        f"- written: {now}",
        "- packages:",
        *(f"  - {markdown_text(name)} {markdown_text(v)}" for name, v in sorted(versions.items())),
        *_mlflow_lines(run, found, list(jobs)),
    ]
    return "\n".join(lines) + "\n"


def _mlflow_run(run: Any) -> Any:
    client, run_id = getattr(run, "client", None), getattr(run, "run_id", None)
    return None if client is None or run_id is None else client.get_run(run_id)


def _mlflow_lines(run: Any, found: Any, jobs: list[str]) -> list[str]:
    if found is None:
        return []
    run_id, uri = run.run_id, redacted(str(run.client.tracking_uri))
    experiment = found.info.experiment_id
    served = uri.startswith(("http://", "https://"))
    base = uri if served else DEFAULT_UI
    line = f"- MLflow run: [{run_id}]({run_url(base, experiment, run_id)})"
    lines = [line if served else f"{line} (start the UI first: {markdown_code(ui_command(uri))})"]
    if jobs:
        link = compare_url(base, experiment, jobs)
        lines.append(f"- its {len(jobs)} jobs side by side: [compare]({link})")
    return lines
