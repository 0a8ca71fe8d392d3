"""The Hydra app: one job per config, the sweep around the jobs, and the tasks they run."""
