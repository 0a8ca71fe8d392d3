"""Which pairs of groups differ: the tests of record (embedding space, performance)."""
