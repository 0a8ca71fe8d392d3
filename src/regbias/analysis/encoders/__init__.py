"""Two encoders on the same texts: separation per pair and the primary rhos compared."""
