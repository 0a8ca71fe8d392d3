"""The study's words for its groups, defined once."""

from __future__ import annotations

#: A job's general training sample; as an evaluation group, each fold model's held-out fold.
BASELINE = "baseline"
#: Every regional group pooled into one (Sentiment140).
MIXED = "mixed"
#: The rows of the general training pool, and the job's sample of them (``data/groups.csv``).
TRAIN_POOL = "train_pool"
TRAIN_SAMPLE = "train_sample"
#: Names regbias gives to groups of its own: a corpus's group may not take them.
RESERVED = (BASELINE, TRAIN_POOL, TRAIN_SAMPLE)
