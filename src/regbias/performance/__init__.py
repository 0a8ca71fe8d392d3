"""Stage I: fine-tune classifiers per fold (Lightning) and predict every group's texts."""

from regbias.performance.datamodule import FoldDataModule, fold_splits, validation_split
from regbias.performance.finetune import (
    BASELINE,
    EncoderParts,
    FeatureFn,
    FinetuneSettings,
    FoldModel,
    predict_proba,
    run_folds,
    train_fold,
    train_model,
    train_multilabel,
)
from regbias.performance.modules import MultilabelClassifier, SentimentClassifier

__all__ = [
    "BASELINE",
    "EncoderParts",
    "FeatureFn",
    "FinetuneSettings",
    "FoldDataModule",
    "FoldModel",
    "MultilabelClassifier",
    "SentimentClassifier",
    "fold_splits",
    "predict_proba",
    "run_folds",
    "train_fold",
    "train_model",
    "train_multilabel",
    "validation_split",
]
