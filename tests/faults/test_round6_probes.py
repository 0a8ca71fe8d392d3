"""Issue 56, the five "not yet probed" items: what each probe found, held by a test.

* a resume after an edit of docs/method.md only (the resume key covers code, config and data,
  not the docs): the reused run's report copy kept the old method page. It is now the one the
  docs say, in the local copy and in the run;
* a report rewritten while it is read: MLflow's store already replaced each artifact in one
  step; the local copy removed the old files before moving the new ones in (a reader found
  ``report.html`` missing), and wrote ``report.html`` in place (half a page). Each file is now
  replaced in one step;
* an absolute ``tracking.artifact_root``: works where it can be written; where it cannot (a
  file in its path, no such folder) the run failed at its first artifact with 100 lines of
  traceback. It is now one line, exit 2, before any run;
* ``analysis.explain.mask_places=maybe`` (and ``yes``, ``1``): already refused in one line;
  held here;
* ``analysis.tests.embedding.relabellings=1000000000`` was accepted (time linear in it, every
  draw held in memory: 7.5 GiB a test). Any relabellings or resamples above 1,000,000 is now
  refused in one line that says what it would cost.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from regbias.app.settings import read_settings
from regbias.report.findings_model import method_markdown
from regbias.report.publish import copy_report
from regbias.report.report_folder import replace_report
from regbias.settings_reader import MAX_DRAWS
from regbias.study.variant_runs import publish_pages
from regbias.tracking.artifacts import METHOD_HTML, METHOD_MD, REPORT_HTML, REPORT_MD
from regbias.tracking.runs import check_artifact_folder, start_run
from tests.cli import ROOT, run_job, runs
from tests.faults.conftest import composed, regbias_lines

OLD_METHOD = "# The method\n\nAn older text of the method, before an edit of docs/method.md.\n"


def test_a_reused_runs_report_carries_the_method_page_the_docs_say_now(store, tmp_path):
    client, experiment_id = store
    run = start_run(client, experiment_id, "job", {})
    run.text("# Report\n\nSee [the method](method.md).\n", REPORT_MD)
    run.text(OLD_METHOD, METHOD_MD)  # what the run wrote when it ran
    folder = copy_report(run, tmp_path / "report")
    publish_pages(run, folder)
    current = method_markdown()
    assert (folder / METHOD_MD).read_text() == current
    assert "older text" not in (folder / METHOD_HTML).read_text()
    stored = Path(client.download_artifacts(run.run_id, METHOD_MD, str(tmp_path / "got")))
    assert stored.read_text() == current


READER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    path, sizes, end = Path(sys.argv[1]), {int(s) for s in sys.argv[2:]}, time.time() + 30
    reads = bad = 0
    Path(sys.argv[1] + ".ready").touch()
    while time.time() < end and not Path(sys.argv[1] + ".stop").exists():
        try:
            size = len(path.read_bytes())
        except FileNotFoundError:
            bad += 1
            continue
        reads += 1
        bad += size not in sizes
    print(reads, bad)
    """
)


def test_a_report_rewritten_while_it_is_read_is_never_missing_or_half(store, tmp_path):
    """Forty rewrites of the local copy (each a new page) under a reader in another process."""
    client, experiment_id = store
    pages = {"a": "a" * 3_000_000, "b": "b" * 2_000_000}
    folder = tmp_path / "report"
    run = start_run(client, experiment_id, "job", {})
    run.text("# Report\n", REPORT_MD)
    publish_pages(run, copy_report(run, folder))  # the first copy, before the reader
    (folder / REPORT_HTML).write_text(pages["a"])
    reader = subprocess.Popen(
        [sys.executable, "-c", READER, str(folder / REPORT_HTML), "3000000", "2000000"],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    waited = time.monotonic()
    while not (folder / f"{REPORT_HTML}.ready").exists():
        assert reader.poll() is None and time.monotonic() - waited < 60, "the reader never began"
        time.sleep(0.01)
    for i in range(40):
        page = pages["ab"[i % 2]]
        replace_report(folder, lambda staging, p=page: (staging / REPORT_HTML).write_text(p), "k")
    (folder / f"{REPORT_HTML}.stop").touch()
    reads, bad = map(int, reader.communicate(timeout=60)[0].split())
    assert reads > 0 and bad == 0, f"{bad} of {reads} reads found the page missing or cut"


@pytest.mark.parametrize("where", ["under a file", "under /proc"])
def test_an_artifact_root_that_cannot_be_written_is_one_line_before_any_run(tmp_path, where):
    """The real ``run.py``: a file in the root's path, or a folder not even root can make."""
    (tmp_path / "afile").write_text("a file, not a folder")
    root = str(tmp_path / "afile" / "art") if where == "under a file" else "/proc/regbias-no/art"
    command = [
        sys.executable, str(ROOT / "run.py"), "experiment=smoke",
        f"tracking.uri=sqlite:///{tmp_path}/mlruns.db", f"tracking.artifact_root={root}",
        f"hydra.run.dir={tmp_path}/out",
    ]  # fmt: skip
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert done.returncode == 2, done.stderr[-3000:]
    (line,) = regbias_lines(done.stderr)
    assert line.startswith(f"regbias: error: cannot write the MLflow artifact folder {root}")
    assert "tracking.artifact_root" in line and "Traceback" not in done.stderr
    assert runs(tmp_path) == []


def test_a_writable_absolute_artifact_root_is_made(tmp_path):
    folder = tmp_path / "new" / "deep" / "art"
    check_artifact_folder(folder.as_uri())
    check_artifact_folder(str(tmp_path / "plain"))
    check_artifact_folder("s3://bucket/art")  # a server's or a bucket's: not ours to check
    assert folder.is_dir() and (tmp_path / "plain").is_dir()


@pytest.mark.parametrize("value", ["maybe", "yes", "1"])
def test_a_non_boolean_mask_places_is_one_line(tmp_path, value):
    done = run_job(tmp_path, "experiment=smoke", f"analysis.explain.mask_places={value}")
    assert done.returncode == 2
    (line,) = regbias_lines(done.stderr)
    assert "analysis.explain.mask_places must be true or false" in line
    assert runs(tmp_path) == []


@pytest.mark.parametrize(
    "key",
    [
        "analysis.tests.embedding.relabellings",
        "analysis.tests.embedding.resamples",
        "analysis.tests.performance.relabellings",
        "analysis.correlation.relabellings",
        "analysis.robustness.resamples",
        "analysis.power.relabellings",
        "analysis.power.primary.relabellings",
    ],
)
def test_a_billion_relabellings_is_refused_with_its_cost(tmp_path, key):
    done = run_job(tmp_path, "experiment=smoke", f"{key}=1000000000")
    assert done.returncode == 2
    (line,) = regbias_lines(done.stderr)
    assert f"{key}=1,000,000,000 is more than the 1,000,000 regbias allows" in line
    assert "7.5 GiB" in line and f"set {key} to {MAX_DRAWS} or less" in line
    assert runs(tmp_path) == []


def test_a_million_relabellings_is_allowed(tmp_path):
    settings = read_settings(composed(f"analysis.tests.embedding.relabellings={MAX_DRAWS}"))
    assert settings.analysis.tests.embedding.relabellings == MAX_DRAWS
