"""One job's and one sweep's wiring, without Hydra: pipeline, aggregation, the parent's tests."""
