"""Stage 0, the data: corpora (one class each, found through ``conf/dataset``), groups, draws."""
