"""One MLflow parent per variant of a sweep over more than the seed (one per encoder).

Each variant's run is a child of the sweep's parent and the parent of its jobs; its params are
its jobs' (but the seed), its metrics the pooled analysis's under the same names in every
variant, so the runs table sets the encoders side by side. The sweep's parent keeps a copy of
each variant's artifacts and metrics under ``variant-<hash>/`` for its comparison page.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Callable
from pathlib import Path

from regbias.report.comparison import variant_labels
from regbias.report.headline import Headline
from regbias.report.html import publish_html
from regbias.report.publish import Published, copy_folder
from regbias.tracking.ledger import JobRecord
from regbias.tracking.runs import RunLog, start_run, tracked_run
from regbias.tracking.ui import describe_run

#: ``regbias.role`` of a variant's run (the sweep's parent is ``sweep``).
VARIANT_ROLE = "variant"
#: ``true`` on the run of a random-weights variant (a control, or a toy encoder).
CONTROL_TAG = "regbias.control"
_CONTROL_WORDS = "random weights: a control"


#: A pooled analysis as written (None: no job had results) and the seconds per step.
Analysed = tuple[Published | None, dict[str, float]]


def run_variant(
    parent: RunLog,
    variant: str,
    members: list[JobRecord],
    records: list[JobRecord],
    analyse: Callable[[RunLog], Analysed],
) -> Analysed:
    """The variant's own run, its pooled analysis (``analyse``) written into it, then published.

    Its artifacts go to the parent's local folder under ``variant-<variant>/`` (a temporary
    one when the parent has none) and from there into ``parent``, with its metrics; it gains
    ``report.html``, headline metrics and description, ends FINISHED (FAILED if the analysis
    raised) and adopts its jobs. A rerun reuses it. ``variant``: its jobs'
    ``regbias.variant``; ``members``: its finished job records; ``records``: every job record
    of the sweep (they tell the variants apart).
    """
    client = parent.client
    jobs = [client.get_run(m.run_id) for m in members]
    control = any(j.data.tags.get("encoder.identity", "").startswith("random:") for j in jobs)
    done = [r for r in records if r.done]
    label = variant_labels(done).get(variant, f"variant-{variant}")
    sweep = client.get_run(parent.run_id)
    name = f"{sweep.info.run_name} · {label}" + (f" ({_CONTROL_WORDS})" if control else "")
    tags = {
        "regbias.role": VARIANT_ROLE,
        "regbias.variant": variant,
        "regbias.variant_label": label,
        CONTROL_TAG: str(control).lower(),
        "sweep_dir": sweep.data.tags.get("sweep_dir", ""),
    }
    run_id = (
        _reopened(parent, variant)
        or start_run(client, sweep.info.experiment_id, name, tags, parent.run_id).run_id
    )
    folder = f"variant-{variant}"
    with contextlib.ExitStack() as stack:
        root = parent.local or Path(stack.enter_context(tempfile.TemporaryDirectory()))
        own = RunLog(client, run_id, local=root / folder)
        # The jobs' params but the seed: the same in every job of a variant.
        own.params({k: v for k, v in (jobs[0].data.params if jobs else {}).items() if k != "seed"})
        with tracked_run(own):
            written, times = analyse(own)
            copy = parent.under(f"{folder}/")  # its artifacts and metrics
            copy_folder(copy, root / folder)
            copy.metrics(own.logged)
            publish_run(own, written.headline if written is not None else Headline())
    for job in jobs:  # nested under the variant's run: the UI shows sweep > variant > jobs
        if job.data.tags.get("mlflow.parentRunId") in (parent.run_id, own.run_id):
            client.set_tag(job.info.run_id, "mlflow.parentRunId", own.run_id)
    return written, times


def publish_pages(run: RunLog, folder: Path) -> None:
    """``report.html`` (figures embedded) beside each ``report.md`` of ``folder`` and in the run."""
    for source in sorted(folder.glob("**/report.md")):
        relative = source.parent.relative_to(folder).as_posix()
        publish_html(run, source.parent, None if relative == "." else relative)


def publish_run(run: RunLog, headline: Headline) -> None:
    """The pages of ``run``'s local folder, its headline metrics and description."""
    if run.local is not None:
        publish_pages(run, run.local)
    run.metrics(headline.metrics)
    describe_run(run, headline.markdown())


def _reopened(parent: RunLog, variant: str) -> str | None:
    """The variant's run from an earlier end of this sweep (a rerun reuses it), RUNNING again."""
    experiment = parent.client.get_run(parent.run_id).info.experiment_id
    found = parent.client.search_runs(
        [experiment],
        filter_string=(
            f"tags.`mlflow.parentRunId` = '{parent.run_id}' and "
            f"tags.`regbias.role` = '{VARIANT_ROLE}' and tags.`regbias.variant` = '{variant}'"
        ),
        max_results=1,
    )
    if not found:
        return None
    parent.client.update_run(found[0].info.run_id, status="RUNNING")
    return str(found[0].info.run_id)
