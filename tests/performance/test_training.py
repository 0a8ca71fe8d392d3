"""Stage I fine-tuning: folds, loaders, both classifiers in full and head mode, determinism."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import lightning as L
import numpy as np
import pytest
import torch
from lightning.pytorch.loggers import Logger
from transformers import BertConfig, BertModel, BertTokenizerFast

from regbias.data.corpus import TextSet
from regbias.data.groups import BASELINE
from regbias.errors import ConfigError
from regbias.performance.datamodule import (
    FoldDataModule,
    fold_splits,
    make_loader,
    validation_split,
)
from regbias.performance.folds import run_folds
from regbias.performance.modules import SentimentClassifier
from regbias.performance.predict import predict_proba
from regbias.performance.targets import CallbackSettings, OptimizerSettings
from regbias.performance.trainer import EncoderParts, build_classifier, train_fold, train_model

POSITIVE = ["good", "great", "happy", "love", "nice"]
NEGATIVE = ["bad", "awful", "sad", "hate", "poor"]
NEUTRAL = ["the", "day", "movie", "food", "was", "is", "it", "today", "so", "very"]
VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *POSITIVE, *NEGATIVE, *NEUTRAL]


class RecordingLogger(Logger):
    """Keeps every logged metric, to check names and values."""

    def __init__(self) -> None:
        super().__init__()
        self.metrics: dict[str, list[float]] = {}
        self.params: dict = {}

    @property
    def name(self) -> str:
        return "recording"

    @property
    def version(self) -> int:
        return 0

    def log_hyperparams(self, params, *args, **kwargs) -> None:
        self.params.update(dict(params))

    def log_metrics(self, metrics: dict[str, float], step: int | None = None) -> None:
        for key, value in metrics.items():
            self.metrics.setdefault(key, []).append(float(value))


def tweets(n: int, seed: int) -> TextSet:
    """Synthetic tweets whose sentiment words give the label away."""
    rng = np.random.default_rng(seed)
    texts, labels = [], []
    for i in range(n):
        label = i % 2
        words = list(rng.choice(NEUTRAL, size=rng.integers(2, 6)))
        words += list(rng.choice(POSITIVE if label else NEGATIVE, size=2))
        rng.shuffle(words)
        texts.append(" ".join(words))
        labels.append(label)
    return TextSet(texts=texts, labels=np.array(labels, dtype=np.int64))


def bag_of_words(texts: list[str]) -> np.ndarray:
    """A stand-in for cached pooled embeddings: word counts over the vocabulary."""
    index = {word: i for i, word in enumerate(VOCAB)}
    features = np.zeros((len(texts), len(VOCAB)), dtype=np.float32)
    for row, text in enumerate(texts):
        for word in text.split():
            features[row, index.get(word, 1)] += 1.0
    return features


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory: pytest.TempPathFactory) -> BertTokenizerFast:
    vocab_file = Path(tmp_path_factory.mktemp("vocab")) / "vocab.txt"
    vocab_file.write_text("\n".join(VOCAB) + "\n")
    return BertTokenizerFast(vocab_file=str(vocab_file), do_lower_case=True)


def tiny_bert(pooler: bool = True) -> BertModel:
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=len(VOCAB),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=64,
    )
    return BertModel(config, add_pooling_layer=pooler)


@pytest.fixture(scope="module")
def sentiment(finetune_settings):
    """``sentiment(**changes)``: the Sentiment140 fine-tuning settings with a few changes."""
    return lambda **changes: finetune_settings("sentiment140", **changes)


@pytest.fixture(scope="module")
def encoder(tokenizer: BertTokenizerFast) -> EncoderParts:
    return EncoderParts(tiny_bert(), tokenizer, pooling="cls", max_length=16)


FAST = {"max_epochs": 1, "batch_size": 16}


def test_folds_partition_the_sample_and_are_seeded() -> None:
    folds = fold_splits(23, 5, seed=3)
    tests = np.concatenate([test for _, test in folds])
    assert sorted(tests.tolist()) == list(range(23))
    for train, test in folds:
        assert not set(train) & set(test)
        assert len(train) + len(test) == 23
    again = fold_splits(23, 5, seed=3)
    assert all(np.array_equal(a[1], b[1]) for a, b in zip(folds, again, strict=True))
    assert not np.array_equal(folds[0][1], fold_splits(23, 5, seed=4)[0][1])


def test_bad_fold_counts_are_config_errors() -> None:
    with pytest.raises(ConfigError, match="k=10"):
        fold_splits(6, 10, seed=0)
    with pytest.raises(ConfigError):
        fold_splits(6, 1, seed=0)


def test_validation_split_holds_out_a_tenth() -> None:
    train = np.arange(100, 200)
    fit, val = validation_split(train, 0.1, seed=1)
    assert len(val) == 10 and len(fit) == 90
    assert sorted(np.concatenate([fit, val]).tolist()) == train.tolist()
    fit2, val2 = validation_split(train, 0.1, seed=1)
    assert np.array_equal(val, val2) and np.array_equal(fit, fit2)
    with pytest.raises(ConfigError):
        validation_split(train, 0.0, seed=1)


def test_text_loader_truncates_pads_per_batch_and_gives_float_labels(tokenizer) -> None:
    texts = ["good", "the movie was very very good so good today it is nice great love"]
    loader = make_loader(texts, np.array([1, 0]), 1, mode="full", tokenizer=tokenizer, max_length=8)
    short, long = list(loader)
    assert short["input_ids"].shape == (1, 3)  # [CLS] good [SEP]: padded to its own batch
    assert long["input_ids"].shape == (1, 8)
    assert short["labels"].dtype == torch.float32
    both = next(iter(make_loader(texts, None, 2, mode="full", tokenizer=tokenizer, max_length=8)))
    assert both["attention_mask"].sum(dim=1).tolist() == [3, 8]
    assert "labels" not in both


def _fold_datamodule(tokenizer, seed: int = 3) -> tuple[FoldDataModule, np.ndarray, tuple]:
    data = tweets(30, seed=8)
    train_index, test_index = fold_splits(30, 3, seed=1)[0]
    fit_index, val_index = validation_split(train_index, 0.2, seed=2)
    datamodule = FoldDataModule.for_fold(
        data.texts,
        data.labels,
        fit_index,
        val_index,
        mode="full",
        batch_size=4,
        tokenizer=tokenizer,
        max_length=16,
        seed=seed,
        predict_index=test_index,
        predict_batch_size=5,
    )
    return datamodule, data.labels, (fit_index, val_index, test_index)


def test_fold_datamodule_pads_each_batch_and_keeps_fit_and_val_apart(tokenizer) -> None:
    datamodule, labels, (fit_index, val_index, test_index) = _fold_datamodule(tokenizer)
    assert not set(fit_index) & set(val_index)
    assert not (set(fit_index) | set(val_index)) & set(test_index)
    assert len(fit_index) == 16 and len(val_index) == 4
    assert [len(datamodule.inputs[n]) for n in ("fit", "val", "predict")] == [16, 4, 10]
    assert datamodule.n_fit_batches == 4 and datamodule.n_labels == 1
    assert datamodule.feature_dim is None
    fit_batches = list(datamodule.train_dataloader())
    assert [len(b["labels"]) for b in fit_batches] == [4, 4, 4, 4]
    for batch in fit_batches:
        # Dynamic padding: each batch is as long as its longest text (the lengths vary).
        longest = int(batch["attention_mask"].sum(dim=1).max())
        assert batch["input_ids"].shape == (4, longest) and longest <= 16
        assert batch["labels"].dtype == torch.float32
    assert len({b["input_ids"].shape[1] for b in fit_batches}) > 1
    fit_labels = torch.cat([b["labels"] for b in fit_batches]).numpy()
    assert sorted(fit_labels.tolist()) == sorted(labels[fit_index].tolist())
    val = list(datamodule.val_dataloader())
    assert torch.cat([b["labels"] for b in val]).numpy().tolist() == labels[val_index].tolist()
    predict = list(datamodule.predict_dataloader())
    assert [len(b["input_ids"]) for b in predict] == [5, 5]
    assert all("labels" not in b for b in predict)


def test_fold_datamodule_shuffle_is_seeded(tokenizer) -> None:
    def first_batch(seed: int) -> torch.Tensor:
        datamodule = _fold_datamodule(tokenizer, seed=seed)[0]
        return next(iter(datamodule.train_dataloader()))["input_ids"]

    assert torch.equal(first_batch(3), first_batch(3))
    assert not torch.equal(first_batch(3), first_batch(4))


def test_fold_datamodule_in_head_mode_gives_vectors_and_multilabel_targets(
    sentiment, trainer_settings
) -> None:
    data = tweets(20, seed=3)
    features = bag_of_words(data.texts)
    topics = np.stack([data.labels, 1 - data.labels, np.arange(20) % 2], axis=1)
    head = {"mode": "head", "batch_size": 8}
    fit_index, val_index = validation_split(np.arange(20), 0.25, seed=0)
    datamodule = FoldDataModule.for_fold(features, topics, fit_index, val_index, **head)
    assert datamodule.feature_dim == len(VOCAB) and datamodule.n_labels == 3
    batch = next(iter(datamodule.train_dataloader()))
    assert batch["features"].shape == (8, len(VOCAB)) and batch["labels"].shape == (8, 3)
    val = next(iter(datamodule.val_dataloader()))
    np.testing.assert_array_equal(val["features"].numpy(), features[val_index])
    with pytest.raises(ConfigError, match="prediction"):
        datamodule.predict_dataloader()
    with pytest.raises(ConfigError, match="vectors"):
        FoldDataModule.for_fold(data.texts, data.labels, fit_index, val_index, **head)
    with pytest.raises(ConfigError, match="tokenizer"):
        FoldDataModule(data.texts, data.labels, data.texts, data.labels, mode="full")
    with pytest.raises(ConfigError, match="mode"):
        train_fold(datamodule, sentiment(mode="full"), trainer_settings)


def test_train_fold_fits_a_datamodule(sentiment, trainer_settings) -> None:
    data = tweets(40, seed=9)
    features = bag_of_words(data.texts)
    settings = sentiment(mode="head", max_epochs=3, batch_size=8, head_lr=0.5)
    fit_index, val_index = validation_split(np.arange(40), 0.2, seed=0)
    datamodule = FoldDataModule.for_fold(
        features, data.labels, fit_index, val_index, mode="head", batch_size=8, seed=3
    )
    module = train_fold(datamodule, settings, trainer_settings)
    again = train_model(
        features[fit_index],
        data.labels[fit_index],
        features[val_index],
        data.labels[val_index],
        settings,
        trainer_settings,
        seed=3,
    )
    np.testing.assert_array_equal(predict_proba(module, features), predict_proba(again, features))


class CountingCallback(L.Callback):
    """A user's callback: counts the training epochs it sees (all instances together)."""

    epochs = 0

    def __init__(self, step: int = 1) -> None:
        self.step = step

    def on_train_epoch_end(self, *args: object, **kwargs: object) -> None:
        CountingCallback.epochs += self.step


def test_a_callback_from_the_config_runs_in_every_fit(sentiment, trainer_settings) -> None:
    target = f"{__name__}.CountingCallback"
    callbacks = CallbackSettings.from_config(
        {"counter": {"_target_": target, "step": 10}, "removed": None}, "finetune.callbacks"
    )
    assert [name for name, _ in callbacks.entries] == ["counter"]
    settings = sentiment(mode="head", max_epochs=2, callbacks=callbacks)
    data = tweets(40, seed=0)
    features = bag_of_words(data.texts)
    CountingCallback.epochs = 0
    train_model(
        features[:30], data.labels[:30], features[30:], data.labels[30:], settings,
        trainer_settings, seed=0,
    )  # fmt: skip
    assert CountingCallback.epochs == 20  # 2 epochs, step 10: built with the config's argument


def test_optimizer_class_and_arguments_come_from_the_config(sentiment, trainer_settings) -> None:
    sgd = OptimizerSettings.from_config(
        {"_target_": "torch.optim.SGD", "_partial_": True, "momentum": 0.5}, "finetune.optimizer"
    )
    module = build_classifier("binary", sentiment(optimizer=sgd), feature_dim=4)
    made = sgd.make([{"params": list(module.parameters())}], lr=0.1)
    assert isinstance(made, torch.optim.SGD)
    assert made.defaults["momentum"] == 0.5 and made.defaults["lr"] == 0.1


def test_pooler_pooling_without_pooler_is_a_config_error(
    tokenizer, sentiment, trainer_settings
) -> None:
    no_pooler = EncoderParts(tiny_bert(pooler=False), tokenizer, pooling="pooler")
    data = tweets(20, seed=0)
    features = bag_of_words(data.texts)
    settings = sentiment(mode="head", **FAST)
    with pytest.raises(ConfigError, match="pooler"):
        train_model(
            features,
            data.labels,
            features,
            data.labels,
            settings,
            trainer_settings,
            encoder=no_pooler,
        )
    with pytest.raises(ConfigError, match="pooling"):
        SentimentClassifier(mode="head", feature_dim=4, pooling="max")


def test_full_mode_sentiment_trains_logs_and_predicts(encoder, sentiment, trainer_settings) -> None:
    data = tweets(64, seed=0)
    logger = RecordingLogger()
    settings = sentiment(mode="full", **FAST)
    module = train_model(
        data.texts[:48],
        data.labels[:48],
        data.texts[48:],
        data.labels[48:],
        settings,
        trainer_settings,
        encoder=encoder,
        seed=1,
        logger=logger,
        metric_prefix="fold0/",
    )
    assert {"fold0/train/loss", "fold0/val/loss", "fold0/val/acc"} <= set(logger.metrics)
    probs = predict_proba(module, data.texts[48:])
    assert probs.shape == (16,) and np.all((probs >= 0) & (probs <= 1))
    # The caller's encoder stays pre-trained: fine-tuning works on a copy.
    assert module.encoder is not encoder.model
    for name, param in encoder.model.named_parameters():
        assert torch.equal(param, tiny_bert().state_dict()[name])
    with pytest.raises(ConfigError, match="full"):
        train_model(data.texts, data.labels, data.texts, data.labels, settings, trainer_settings)


def test_a_loaded_encoder_in_eval_mode_is_fine_tuned_in_train_mode(tokenizer, sentiment) -> None:
    loaded = EncoderParts(tiny_bert().eval(), tokenizer, pooling="pooler", max_length=16)
    module = build_classifier("binary", sentiment(mode="full"), encoder=loaded)
    assert all(m.training for m in module.modules())
    assert not loaded.model.training  # the caller's encoder is left as it was


def test_full_mode_is_deterministic(encoder, sentiment, trainer_settings) -> None:
    data = tweets(32, seed=2)
    settings = sentiment(mode="full", **FAST)
    runs = [
        predict_proba(
            train_model(
                data.texts[:24],
                data.labels[:24],
                data.texts[24:],
                data.labels[24:],
                settings,
                trainer_settings,
                encoder=encoder,
                seed=5,
            ),
            data.texts,
        )
        for _ in range(2)
    ]
    np.testing.assert_array_equal(runs[0], runs[1])


def test_full_mode_multilabel_trains_with_warmup_and_logs_micro_f1(
    encoder, finetune_settings, trainer_settings
) -> None:
    data = tweets(64, seed=1)
    topics = np.stack([data.labels, 1 - data.labels, np.arange(64) % 3 == 0], axis=1)
    train = TextSet(texts=data.texts, labels=topics.astype(np.uint8))
    groups = {"uk": train.subset(np.arange(10)), "us": train.subset(np.arange(10, 30))}
    logger = RecordingLogger()
    settings = finetune_settings("reuters21578", mode="full", max_epochs=2, batch_size=16)
    (model,) = run_folds(
        train,
        groups,
        settings,
        trainer_settings,
        task="multilabel",
        seed=0,
        encoder=encoder,
        logger=logger,
    )
    assert "val/micro_f1" in logger.metrics and "train/loss" in logger.metrics
    assert model.predictions["uk"].shape == (10, 3) and model.predictions["us"].shape == (20, 3)
    assert model.fold == 0 and len(model.test_index) == 0
    assert not set(model.train_index) & set(model.val_index)
    assert len(model.val_index) == 6  # 10% dev split
    assert model.best_score == pytest.approx(max(logger.metrics["val/micro_f1"]))


def test_head_mode_restores_the_best_checkpoint(sentiment, trainer_settings) -> None:
    data = tweets(80, seed=3)
    features = bag_of_words(data.texts)
    logger = RecordingLogger()
    settings = sentiment(mode="head", max_epochs=4, batch_size=64, head_lr=0.5)
    module = train_model(
        features[:60],
        data.labels[:60],
        features[60:],
        data.labels[60:],
        settings,
        trainer_settings,
        seed=0,
        logger=logger,
    )
    # Folds share one MLflow run, which refuses changing params: none are sent per fold.
    assert "metric_prefix" not in logger.params
    assert not torch.are_deterministic_algorithms_enabled()  # the global flag is restored
    val_losses = logger.metrics["val/loss"]
    assert len(val_losses) == 4
    assert module.best_score == pytest.approx(min(val_losses), rel=1e-5)
    probs = torch.as_tensor(predict_proba(module, features[60:]), dtype=torch.float64)
    targets = torch.as_tensor(data.labels[60:], dtype=torch.float64)
    restored = torch.nn.functional.binary_cross_entropy(probs, targets).item()
    assert restored == pytest.approx(min(val_losses), rel=1e-4)
    with pytest.raises(ConfigError, match="vectors"):
        predict_proba(module, data.texts[:3])


def _head_folds(sentiment, trainer, seed: int, calls: list[int] | None = None) -> list:
    sample = tweets(60, seed=4)
    groups = {"au": tweets(12, seed=5), "nz": tweets(7, seed=6)}

    def features(texts: list[str]) -> np.ndarray:
        if calls is not None:
            calls.append(len(texts))
        return bag_of_words(texts)

    settings = sentiment(mode="head", max_epochs=3, batch_size=16, head_lr=0.3, k_folds=3)
    return run_folds(sample, groups, settings, trainer, task="binary", seed=seed, features=features)


def test_run_folds_baseline_never_leaks_and_folds_partition_the_sample(
    sentiment, trainer_settings
) -> None:
    calls: list[int] = []
    models = _head_folds(sentiment, trainer_settings, seed=0, calls=calls)
    assert calls == [60, 12, 7]  # each text set embedded once, not once per fold
    assert [m.fold for m in models] == [0, 1, 2]
    tests = np.concatenate([m.test_index for m in models])
    assert sorted(tests.tolist()) == list(range(60))
    for model in models:
        seen = set(model.train_index) | set(model.val_index)
        assert not seen & set(model.test_index)
        assert len(seen) + len(model.test_index) == 60
        assert len(model.val_index) == 4  # 10% of the 40-text train fold
        assert set(model.predictions) == {BASELINE, "au", "nz"}
        assert model.predictions[BASELINE].shape == (20,)
        assert np.array_equal(model.labels[BASELINE], model.baseline.labels)
        accuracy = np.mean((model.predictions["au"] > 0.5) == model.labels["au"])
        assert accuracy >= 0.75  # the sentiment words are learnable from the features


def test_run_folds_same_seed_same_predictions(sentiment, trainer_settings) -> None:
    first = _head_folds(sentiment, trainer_settings, seed=7)
    second = _head_folds(sentiment, trainer_settings, seed=7)
    for a, b in zip(first, second, strict=True):
        for group in a.predictions:
            np.testing.assert_array_equal(a.predictions[group], b.predictions[group])
    other = _head_folds(sentiment, trainer_settings, seed=8)
    assert not np.array_equal(first[0].test_index, other[0].test_index)


def test_run_folds_rejects_too_many_folds_and_reserved_group(sentiment, trainer_settings) -> None:
    settings = sentiment(mode="head", k_folds=2, **FAST)
    binary = {"task": "binary", "seed": 0, "features": bag_of_words}
    with pytest.raises(ConfigError, match="k=12"):
        run_folds(tweets(10, 0), {}, replace(settings, k_folds=12), trainer_settings, **binary)
    with pytest.raises(ConfigError, match="reserved"):
        run_folds(tweets(10, 0), {BASELINE: tweets(4, 1)}, settings, trainer_settings, **binary)
    with pytest.raises(ConfigError, match="features"):
        run_folds(tweets(10, 0), {}, settings, trainer_settings, task="binary", seed=0)
    with pytest.raises(ConfigError, match="labels"):
        run_folds(tweets(10, 0), {}, settings, trainer_settings, **{**binary, "task": "multilabel"})
    with pytest.raises(
        ConfigError, match=r"finetune\.monitor='val/micro_f1' is not logged for a binary task"
    ):
        run_folds(
            tweets(10, 0), {}, replace(settings, monitor="val/micro_f1"), trainer_settings, **binary
        )


@pytest.mark.slow
def test_spawned_loader_workers_train(sentiment, trainer_settings) -> None:
    data = tweets(40, seed=9)
    features = bag_of_words(data.texts)
    settings = sentiment(mode="head", max_epochs=3, batch_size=8, head_lr=0.5)
    trainer = replace(trainer_settings, num_workers=1)
    loader = make_loader(features, data.labels, 8, mode="head", num_workers=1)
    assert (
        loader.persistent_workers and loader.multiprocessing_context.get_start_method() == "spawn"
    )
    module = train_model(
        features[:32], data.labels[:32], features[32:], data.labels[32:], settings, trainer, seed=3
    )
    accuracy = np.mean((predict_proba(module, features) > 0.5) == data.labels)
    assert accuracy >= 0.9
