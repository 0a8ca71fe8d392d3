"""Faults regbias survives, one test each (issue 10). Read the test names as the list.

- ``test_stale_results``: resume never reuses a run after data or uncommitted code changed; a
  reused job keeps its variant; bad sizes and infinite cells are refused, not silently empty.
- ``test_cache_faults``: overwritten, NaN-filled or truncated cache shards are found, moved
  aside and recomputed; a full disk names the file; cache files honour the umask.
- ``test_failures_fail``: a sweep whose parent or aggregation failed exits non-zero; runs of a
  killed process are closed FAILED; SIGTERM stops at a safe point and stops the sweep; two
  starts on a fresh SQLite store both get in; Ctrl-C prints "interrupted" and exits 130.
- ``test_clear_lines``: seed=-1, a read-only or full store, a full disk, bad fine-tuning sizes,
  one-group CSVs, empty training pools, missing data directories: one line before heavy work.
- ``test_smaller_faults``: weights-only checkpoints, safe artifact names, non-UTF-8 lines.
- ``test_solver_faults`` (issue 20): an infinite epsilon is refused; a stop is seen between the
  solves of a large batched Sinkhorn call.
"""
