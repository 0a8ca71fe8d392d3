"""Stage IV: from measured distances and performance to correlations and their checks."""
