"""Stages II and III's encoders: their sources, loading, embedding and the embedding cache."""
