"""Same texts, another variety: the rewrite's pull on the encoder and on the classifiers."""
