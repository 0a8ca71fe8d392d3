"""Issue 56, item 15: a model folder that needs its own code is refused in those words.

A folder whose ``config.json`` names classes of its own (``auto_map``) loads only with
``trust_remote_code``, which regbias never sets; it was refused, but the message blamed a cut
or damaged file. It now says that regbias does not run code from model folders and what to do.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from regbias.embeddings.sources import PathEncoder
from regbias.errors import ConfigError
from tests.faults.test_resume_sees_changes import save_tiny_bert

MODULE = """
from pathlib import Path
Path(__file__).with_name("RAN").write_text("the folder's code ran")
"""


def _folder_with_its_own_code(folder: Path, config: str = "config.json") -> Path:
    """A folder as a custom-code model ships it: its classes in .py files, named by auto_map."""
    folder.mkdir()
    for module in ("configuration_custom", "modeling_custom", "tokenization_custom"):
        (folder / f"{module}.py").write_text(MODULE)
    auto_map = {
        "config.json": {
            "AutoConfig": "configuration_custom.CustomConfig",
            "AutoModel": "modeling_custom.CustomModel",
        },
        "tokenizer_config.json": {"AutoTokenizer": ["tokenization_custom.CustomTokenizer", None]},
    }[config]
    (folder / "config.json").write_text(
        json.dumps({"model_type": "regbias_custom", "hidden_size": 8, "auto_map": auto_map})
        if config == "config.json"
        else json.dumps({"model_type": "regbias_custom", "hidden_size": 8})
    )
    if config == "tokenizer_config.json":
        (folder / config).write_text(json.dumps({"auto_map": auto_map}))
    (folder / "model.safetensors").write_bytes(b"weights of a custom architecture")
    (folder / "vocab.txt").write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "a"]))
    return folder


def _load(folder: Path) -> None:
    spec = {"name": "custom", "location": str(folder), "revision": None}
    PathEncoder(**spec, max_length=16, pooling="mean").load_model()


@pytest.mark.parametrize("config", ["config.json", "tokenizer_config.json"])
def test_a_folder_that_needs_its_own_code_is_refused_in_those_words(
    tmp_path: Path, config: str
) -> None:
    folder = _folder_with_its_own_code(tmp_path / "model", config)
    with pytest.raises(ConfigError) as refused:
        _load(folder)
    message = str(refused.value)
    assert "does not run code from model folders" in message
    assert "auto_map" in message and "custom" in message
    assert "architecture transformers ships" in message and "convert" in message
    assert "cut or damaged" not in message
    assert not (folder / "RAN").exists()  # refused, never run


def test_a_cut_file_in_an_ordinary_folder_still_says_cut_or_damaged(tmp_path: Path) -> None:
    folder = tmp_path / "model"
    save_tiny_bert(folder, seed=0)
    weights = folder / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:100])
    with pytest.raises(ConfigError, match="cut or damaged") as refused:
        _load(folder)
    assert "its own code" not in str(refused.value)
