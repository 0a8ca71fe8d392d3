"""MLflow tracking: the store, runs and what they log, datasets, provenance and the UI."""
