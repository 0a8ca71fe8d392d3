"""Items 12, 13 and 15 of issue 10: checkpoints, artifact names, non-UTF-8 input."""

from __future__ import annotations

import pickle
from types import SimpleNamespace

import pytest
import torch

from regbias.data.csv_corpus import read_csv_corpus
from regbias.errors import DataError
from regbias.performance import trainer
from regbias.tracking.run_log import RunLog


class Payload:
    """Something a tampered checkpoint could carry besides tensors."""


def test_best_checkpoint_is_loaded_weights_only(tmp_path):
    path = tmp_path / "best.ckpt"
    torch.save({"state_dict": {}, "extra": Payload()}, path)
    checkpoint = SimpleNamespace(best_model_path=str(path), monitor="val/loss")
    with pytest.raises(pickle.UnpicklingError):
        trainer._restore_best(torch.nn.Module(), checkpoint)


@pytest.mark.parametrize("path", ["../outside.csv", "figures/../../x.png", "/abs.png"])
def test_run_log_refuses_paths_that_leave_the_run(path):
    with pytest.raises(ValueError, match="would leave the run's artifact folder"):
        RunLog(None, "run")._at(path)  # type: ignore[arg-type]


def test_non_utf8_input_names_the_line(tmp_path):
    path = tmp_path / "latin.csv"
    path.write_bytes(b"text,label,group\nfine,1,a\ncaf\xe9 au lait,0,a\nok,1,b\n")
    with pytest.raises(DataError, match=r"latin\.csv, line 3: not UTF-8 text \(bytes b'\\xe9'"):
        read_csv_corpus(path, text_column="text", label_column="label", group_column="group")
