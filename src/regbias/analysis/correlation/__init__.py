"""Do distances track performance gaps: rank correlations, Mantel nulls, the primary."""
