"""Faults regbias survives, one test each (issues 10 and 20). Read the test names as the list.

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

Issue 20 (the second round):

- ``test_names_survive``: groups named ``NA``/``None``/``null``/``nan`` survive every table
  read back (sweep pooling, ``task=analyze``); a group named ``baseline`` in the data, ``..``,
  and names (or pairs) that become the same MLflow key are refused before any run; a CSV
  header naming a column twice is an error; spaces around an analyze table's names are layout.
- ``test_undefined_values``: the recall of a class a group lacks is NaN, not 0; a correlation
  says how many pairs it left out; a distance with no usable value (every solve unconverged)
  is the report's first finding, with the settings that fix it.
- ``test_resume_sees_changes``: new weights in a local model folder are a new encoder (cache
  and resume key); a FINISHED job whose artifacts are gone runs again; a sweep in a reused
  ``hydra.sweep.dir`` pools only its own jobs.
- ``test_interrupt_aggregation``: Ctrl-C during the aggregation (also when a library swallows
  it) ends the parent FAILED, prints "regbias: interrupted" and exits 130.
- ``test_quiet_steps_said``: long analysis steps show progress; ``task=analyze`` names its
  stage; texts a CSV shares between groups or with its training rows are counted and warned of.
- ``test_solver_faults``: an infinite epsilon is refused before any run; a stop is seen between
  the solves of a large batched Sinkhorn call (a CPU call holds a bounded number of them).

Issue 27 (the third round), items 9 to 16:

- ``test_refused_early``: optimizer and callback arguments checked against the class's
  signature (and ``torch.optim.Optimizer`` itself refused) when the settings are read; a typo
  in ``analysis.correlation.primary`` refused before any stage, the known columns listed; an
  ``encoder.location`` that is no model package is one line; CSV labels whose positive class
  is unclear are refused, ``Positive``/``negative`` mapped in any case and logged.
- ``test_valid_inputs_work``: a 5 MB CSV field is read; the exact preset's solver line logs
  without a logging error; twins longer than every main cloud get their noise floor.
- ``test_unwritable_folder``: an output folder Hydra cannot write is one line (run and sweep).

Issue 46 (the fifth round; items whose test lives with its module are named with it):

- ``test_dated_times``: the docs' job and study times say their commit, date and load.
- ``test_full_output_disk``: an output folder on a full disk is one line before any run, and a
  disk that fills during the report's copy fails the job (exit 1) instead of exit 0.
- ``test_read_only_store``: a read-only MLflow store (new or kept experiment) is one line.
- ``test_second_ctrl_c``: a second Ctrl-C while runs close or during the exit handlers neither
  leaves a run RUNNING nor prints a traceback.
- Elsewhere: ``test_analyze_bottom_line`` (item 2), ``tests/app/test_user_path`` (3),
  ``tests/report/test_encoders`` (4), ``tests/tracking/test_artifact_location`` (5),
  ``test_clear_lines``, ``test_hostile_names``, ``test_resume_sees_changes`` (6),
  ``test_repeated_seeds``, ``tests/data/test_sentiment140`` (7).
"""
