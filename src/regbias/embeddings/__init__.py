"""Stages II and III's encoders: sources (one class each), loading, embedding, the embedding cache."""
