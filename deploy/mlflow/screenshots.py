"""Headless-Chromium screenshots of a run in the MLflow UI: its page and its report artifact.

Starts ``mlflow ui`` on 127.0.0.1 for a store, opens the run's page (Overview: description,
datasets, metrics) and its ``report.html`` in the artifact viewer, and writes PNGs. It checks
what a reader sees: it waits until the viewer's frame holds the page's heading and every
embedded figure has decoded, prints how much text and how many figures the reader sees, and
exits 1 if the pane stays empty. Needs ``chromium`` on PATH (``apt-get install -y chromium``)
and Playwright (``pip install -e '.[screenshots]'``), which drives that Chromium: no browser
is downloaded.

    python deploy/mlflow/screenshots.py --store /tmp/study/mlruns.db --run RUN_ID --out shots/

A plain ``chromium --screenshot --virtual-time-budget=...`` shot is not a check: it may be
taken before the viewer's frame paints, and then shows an empty pane for a page MLflow renders
(on 2026-12-03 the same 12 KB page was empty in two shots of four).
"""

from __future__ import annotations

import argparse
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from mlflow.tracking import MlflowClient

VIEW = "workflowType=machine_learning"
#: What the frame holds once the page is drawn: its text, its figures, the decoded ones.
_SEEN = (
    "[document.body.innerText.length, document.images.length,"
    " Array.from(document.images).filter(i => i.complete && i.naturalWidth > 0).length]"
)
_DECODED = "Array.from(document.images).every(i => i.complete)"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for(url: str, seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(url, timeout=2).close()
            return
        except OSError:
            time.sleep(1)
    raise SystemExit(f"no MLflow UI at {url} after {seconds:.0f} s")


def browser_path() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        raise SystemExit("chromium is not on PATH: apt-get install -y chromium")
    return path


def close_assistant(page) -> None:
    """Close MLflow 3's assistant panel (a quarter of the width) where it is open."""
    panel = page.get_by_role("button", name="Close", exact=True)
    if panel.count():
        panel.first.click()
        page.wait_for_timeout(500)


def shoot_run_page(page, url: str, name: str, path: Path, timeout_ms: int) -> None:
    page.set_viewport_size({"width": 1600, "height": 1800})
    page.goto(url)
    page.get_by_text(name, exact=False).first.wait_for(timeout=timeout_ms)
    close_assistant(page)
    page.wait_for_timeout(1500)
    page.screenshot(path=str(path))
    print(f"{path}: {url}")


def shoot_viewer(page, url: str, out: Path, height: int, timeout_ms: int) -> bool:
    """The artifact in the viewer: its top, and its first figure; False if it stays empty."""
    page.set_viewport_size({"width": 1600, "height": height})
    page.goto(url)
    started = time.monotonic()
    try:
        frame = page.wait_for_selector("iframe", timeout=timeout_ms).content_frame()
        frame.wait_for_selector("h1, h2", timeout=timeout_ms)
        frame.wait_for_function(_DECODED, timeout=timeout_ms)
    except Exception as error:  # the pane stayed empty: say so, keep the shot
        page.screenshot(path=str(out / "report_in_mlflow.png"))
        print(f"EMPTY viewer pane after {timeout_ms / 1000:.0f} s ({type(error).__name__}): {url}")
        return False
    text, images, decoded = frame.evaluate(_SEEN)
    waited = time.monotonic() - started
    print(
        f"viewer drew the page in {waited:.1f} s: {text} characters of text, "
        f"{decoded} of {images} figures decoded"
    )
    close_assistant(page)
    page.wait_for_timeout(1000)
    page.screenshot(path=str(out / "report_in_mlflow.png"))
    if images:
        frame.evaluate("document.images[0].scrollIntoView()")
        page.wait_for_timeout(500)
        page.screenshot(path=str(out / "report_in_mlflow_figures.png"))
    print(f"{out / 'report_in_mlflow.png'}: {url}")
    return decoded == images


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, required=True, help="the SQLite store (mlruns.db)")
    parser.add_argument("--run", required=True, help="the run id (a sweep's parent)")
    parser.add_argument("--out", type=Path, required=True, help="folder for the PNGs")
    parser.add_argument("--artifact", default="report.html", help="the artifact to open")
    parser.add_argument("--wait-ms", type=int, default=60000, help="longest wait for a page")
    parser.add_argument("--report-height", type=int, default=1400, help="the viewer's shot")
    options = parser.parse_args()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        raise SystemExit("Playwright is not installed: pip install -e '.[screenshots]'") from None
    store = f"sqlite:///{options.store.resolve()}"
    run_info = MlflowClient(store).get_run(options.run).info
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    command = [sys.executable, "-m", "mlflow", "ui", "--backend-store-uri", store]
    server = subprocess.Popen(
        [*command, "--host", "127.0.0.1", "--port", str(port)],
        cwd=options.store.resolve().parent,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for(f"{base}/health")
        options.out.mkdir(parents=True, exist_ok=True)
        run = f"{base}/#/experiments/{run_info.experiment_id}/runs/{options.run}"
        with sync_playwright() as driver:
            browser = driver.chromium.launch(
                executable_path=browser_path(), args=["--no-sandbox", "--disable-gpu"]
            )
            page = browser.new_page()
            shoot_run_page(
                page,
                f"{run}?{VIEW}",
                run_info.run_name,
                options.out / "run_page.png",
                options.wait_ms,
            )
            viewer = f"{run}/artifacts/{options.artifact}?{VIEW}"
            drawn = shoot_viewer(page, viewer, options.out, options.report_height, options.wait_ms)
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=30)
    if not drawn:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
