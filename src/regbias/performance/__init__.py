"""Stage I: fine-tune classifiers per fold (Lightning) and predict every group's texts."""

from regbias.performance.datamodule import (
    FoldDataModule,
    fold_splits,
    make_loader,
    validation_split,
)
from regbias.performance.folds import FoldModel, fold_plans, run_folds
from regbias.performance.modules import MultilabelClassifier, SentimentClassifier, classifier_for
from regbias.performance.predict import FeatureFn, predict_proba
from regbias.performance.settings import EvaluationSettings, FinetuneSettings, TrainerSettings
from regbias.performance.trainer import EncoderParts, train_fold, train_model

__all__ = [
    "EncoderParts",
    "EvaluationSettings",
    "FeatureFn",
    "FinetuneSettings",
    "FoldDataModule",
    "FoldModel",
    "MultilabelClassifier",
    "SentimentClassifier",
    "TrainerSettings",
    "classifier_for",
    "fold_plans",
    "fold_splits",
    "make_loader",
    "predict_proba",
    "run_folds",
    "train_fold",
    "train_model",
    "validation_split",
]
