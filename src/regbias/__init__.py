"""regbias: measure regional bias in pre-trained language models."""

__version__ = "0.1.0"
