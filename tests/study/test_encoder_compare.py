"""A sweep's comparison page, built from its variants' results in memory, in the sweep's order."""

from __future__ import annotations

import pytest

from regbias.app.settings import read_settings
from regbias.study.aggregate import SweepResult, VariantResult
from regbias.study.encoder_compare import sweep_headlines
from regbias.tracking.ledger import JobRecord
from regbias.tracking.run_log import RunLog
from regbias.tracking.runs import connect, start_run
from tests.conftest import local_tracking
from tests.faults.conftest import composed
from tests.report.test_encoders import CONTROL, TWIN, variant


@pytest.fixture
def store(tmp_path):
    return connect(local_tracking(tmp_path / "store", "t"))


def test_the_variants_stand_in_the_sweeps_order_not_their_hashes(store, tmp_path):
    client, experiment = store
    parent = start_run(client, experiment, "sweep", {})
    parent = RunLog(client, parent.run_id, local=tmp_path / "staging")
    # Job 0 ran the first encoder the user typed; its variant's hash sorts last.
    records = [
        JobRecord(0, "encoder=minilm_l6 seed=0", "FINISHED", "r0", "ff00"),
        JobRecord(1, "encoder=minilm_random seed=0", "FINISHED", "r1", "00ff"),
    ]
    twin = variant("minilm_l6", TWIN, null=0.0, rho=0.8, p=0.01)
    control = variant("minilm_random", CONTROL, null=100.0, rho=0.1, p=0.6)
    found = SweepResult(
        [
            VariantResult("00ff", "variant-00ff", [records[1]], control),
            VariantResult("ff00", "variant-ff00", [records[0]], twin),
        ]
    )
    settings = read_settings(composed("analysis.robustness.resamples=0"))
    headlines = sweep_headlines(parent, found, records, settings, lambda job: settings)
    assert list(headlines) == ["encoder=minilm_l6", "encoder=minilm_random"]
    assert headlines["encoder=minilm_l6"] is twin.headline
    page = (tmp_path / "staging" / "report.md").read_text()
    assert page.index("encoder=minilm_l6") < page.index("encoder=minilm_random")
