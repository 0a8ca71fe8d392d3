"""``embedding_speed.py --against sentence-transformers`` still runs and checks its vectors.

It is not a test of speed: a few tweets, one round, so the comparison's code (the peer's
folder, its modules without Normalize, the cosine check, the printed ratio) keeps working.
"""

from __future__ import annotations

import re

import pytest

from tests.benchmark_module import load_benchmark

pytest.importorskip("sentence_transformers")
embedding_speed = load_benchmark("embedding_speed")


def test_the_peer_gives_regbias_vectors_and_a_ratio_is_printed(tmp_path, shared_data_dir, capsys):
    args = ["--against", "sentence-transformers", "--encoders", "minilm_l6"]
    args += ["--n", "8", "--repeats", "1", "--data-dir", str(shared_data_dir)]
    assert embedding_speed.main(args) == 0
    out = capsys.readouterr().out
    assert re.search(r"ratio st, batch 32 / regbias: median \d+\.\d\d \[", out), out
    cosine = re.search(r"min cosine regbias against st: (\d\.\d+) ok", out)
    assert cosine and float(cosine.group(1)) >= embedding_speed.MIN_COSINE, out
    assert "token positions computed per real token" in out


def test_the_opt_in_onnx_backend_is_timed_beside_it(tmp_path, shared_data_dir, capsys):
    pytest.importorskip("onnxruntime")
    args = ["--against", "sentence-transformers", "--encoders", "minilm_l6"]
    args += ["--backends", "torch", "onnxruntime"]
    args += ["--n", "8", "--repeats", "1", "--data-dir", str(shared_data_dir)]
    assert embedding_speed.main(args) == 0
    out = capsys.readouterr().out
    assert re.search(r"ratio st, batch 32 / regbias onnxruntime: median \d+\.\d\d \[", out), out
    found = re.search(
        r"regbias onnxruntime against regbias \(torch\): largest \|difference\| (\S+)", out
    )
    assert found and float(found.group(1)) <= 1e-4, out
