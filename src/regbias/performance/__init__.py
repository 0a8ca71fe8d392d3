"""Stage I: fine-tune classifiers per fold (Lightning) and predict every group's texts."""

from regbias.performance.datamodule import (
    FoldDataModule,
    fold_splits,
    make_loader,
    validation_split,
)
from regbias.performance.finetune import (
    EncoderParts,
    EvaluationSettings,
    FeatureFn,
    FinetuneSettings,
    FoldModel,
    TrainerSettings,
    fold_plans,
    predict_proba,
    run_folds,
    train_fold,
    train_model,
)
from regbias.performance.modules import (
    MultilabelClassifier,
    SentimentClassifier,
    classifier_for,
)

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
