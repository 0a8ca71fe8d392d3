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

Issue 56 (the sixth round; each test failed on f7bc9eb, the probes' where they found a fault):

- ``test_report_folder_keeps_user_files`` (item 1): a report folder holding a user's files is
  refused in one line before any run and at the copy; a later copy removes only the files its
  manifest lists.
- ``test_formula_cells`` (2): a CSV cell a spreadsheet would run begins with an apostrophe,
  numbers keep their sign, and regbias reads every name back as written (a job with such group
  names too).
- ``test_credentials_redacted`` (3): a URI's password and a credential in a query are hidden in
  the store's error line, params, tags, ``error.txt``, the stored ``.hydra`` files and the log.
- ``test_explain_faults`` (4, 5, 7): each side's own words (an empty side says so); the English
  check reads every group's texts; a skipped explanation is said in the log and the report.
- ``test_gazetteer_words`` (8): ordinary words are not masked; the report lists the names masked
  in each group's texts.
- ``test_pair_file_names`` (6, 10): one file per pair however names join; group names whose
  file names pass 255 bytes are refused at the start.
- ``test_figure_labels`` (9): a ``$`` in a name is drawn as written, never mathtext.
- ``test_early_interrupt`` (11), ``test_swallowed_ctrl_c`` (12): Ctrl-C is one line and exit
  130 from the first second, and a swallowed ``KeyboardInterrupt`` still stops the job.
- ``test_onnx_messages`` (13, 14), ``test_remote_code_message`` (15): one line each, naming the
  checkout's install line or that regbias does not run a model folder's code.
- ``test_round6_probes`` (the five probes): a resumed run's report carries the current method
  page; a report rewritten while read is never missing or half; an artifact root that cannot
  be written is one line before any run; ``mask_places=maybe`` is one line (already so); more
  than 1,000,000 relabellings or resamples is refused with its cost.
- ``test_full_output_disk`` (CI): the full disk's free space after the failed copy is 0 or 1 MB.
"""
