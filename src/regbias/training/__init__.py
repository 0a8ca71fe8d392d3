"""Stage I: fine-tune classifiers per fold (Lightning) and predict every group's texts."""

from regbias.training.data import fold_splits, validation_split
from regbias.training.finetune import (
    BASELINE,
    EncoderParts,
    FeatureFn,
    FinetuneSettings,
    FoldModel,
    predict_proba,
    run_folds,
    train_model,
    train_multilabel,
)
from regbias.training.modules import MultilabelClassifier, SentimentClassifier

__all__ = [
    "BASELINE",
    "EncoderParts",
    "FeatureFn",
    "FinetuneSettings",
    "FoldModel",
    "MultilabelClassifier",
    "SentimentClassifier",
    "fold_splits",
    "predict_proba",
    "run_folds",
    "train_model",
    "train_multilabel",
    "validation_split",
]
