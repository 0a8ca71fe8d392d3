"""Checks before any heavy work, and what the resume key covers besides the config."""

from __future__ import annotations

import logging
import tempfile
from pathlib import Path

from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.core.override_parser.types import Glob, Override
from hydra.errors import HydraException

from regbias.app.tasks import task_named
from regbias.data.fingerprint import content_fingerprint
from regbias.data.study import check_not_empty, require_training_rows, select_groups
from regbias.errors import ConfigError, DataError
from regbias.study.checks import check_counterfactual, check_primary
from regbias.study.settings import StudySettings
from regbias.tracking import artifacts as paths
from regbias.tracking.provenance import git_state
from regbias.tracking.run_log import metric_key

log = logging.getLogger(__name__)
#: The most characters a pair's part of an MLflow key (``<a>__<b>``) may have: MLflow keeps 250,
#: and the longest prefix and suffix regbias puts around a pair (``power/detectable_share/``,
#: ``/effect_ci_high``) take under 40.
MAX_PAIR_KEY = 210


def preflight(settings: StudySettings) -> None:
    """What a job checks before any run exists; a sweep, once before its jobs (said once).

    Raises:
        ConfigError: a primary column the jobs do not produce, a counterfactual pair or word
            list that cannot work, a model package missing, a cache that cannot be written,
            a group the file does not have.
        DataError: the data directory is missing, a group name that would break keys or
            paths (:func:`preflight_groups`).
    """
    check_primary(settings)
    check_counterfactual(settings)
    check_encoder(settings)
    check_cache_dir(settings)
    if task_named(settings.task).reads_data:
        settings.dataset.data_dir(settings.paths.data_dir)
        preflight_groups(settings)


def check_cache_dir(settings: StudySettings) -> None:
    """The embedding cache's folder is a folder this process can write (checked before a run).

    Raises:
        ConfigError: ``paths.cache_dir`` names a file, or a folder that cannot be created or
            written (a read-only mount): one line naming it and the way out.
    """
    if not task_named(settings.task).loads_encoder:
        return
    folder = Path(settings.paths.cache_dir).expanduser()
    way_out = "point paths.cache_dir (or $REGBIAS_CACHE_DIR) at a writable folder"
    if folder.exists() and not folder.is_dir():
        raise ConfigError(f"paths.cache_dir {folder} is a file, not a folder: {way_out}")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".write-check-"):
            pass
    except OSError as error:
        reason = error.strerror or type(error).__name__
        raise ConfigError(
            f"paths.cache_dir {folder} cannot be written ({reason}): {way_out}"
        ) from None


def check_encoder(settings: StudySettings) -> None:
    """The model's packages, checked before any run when the task loads the encoder.

    Raises:
        ConfigError: a package the model ships in is missing (one line with the install command).
    """
    if task_named(settings.task).loads_encoder:
        settings.encoder.check_available()


def refuse_repeated_values(overrides: list[str]) -> None:
    """A sweep lists each value once: ``seed=0,0,1`` would run seed 0 twice, counted twice.

    Raises:
        ConfigError: an override that sweeps over a value more than once.
    """
    try:
        parsed = OverridesParser.create().parse_overrides(overrides)
    except HydraException:  # Hydra says what is wrong with it
        return
    _refuse_repeated_keys(parsed)
    for override in parsed:
        if not override.is_sweep_override() or isinstance(override.value(), Glob):
            continue
        values = list(override.sweep_string_iterator())
        repeated = [v for i, v in enumerate(values) if v in values[:i] and v not in values[i + 1 :]]
        if repeated:
            raise ConfigError(
                f"{override.input_line} lists {', '.join(repeated)} more than once: a repeated "
                "value would be one job's results counted twice; list each value once"
            )


def _refuse_repeated_keys(parsed: list[Override]) -> None:
    """A key given twice: the last one silently wins (``-m 'seed=range(0,2)' seed=1`` is 1 job)."""
    seen: dict[str, str] = {}
    for override in parsed:
        key = override.get_key_element()
        if key in seen:
            raise ConfigError(
                f"{key} is given twice ({seen[key]} and {override.input_line}): the last one "
                "would win without a word; give it once"
            )
        seen[key] = override.input_line or key


def preflight_groups(settings: StudySettings) -> None:
    """A CSV corpus's groups and training rows (the file is read), before any run exists.

    Raises:
        DataError: a reserved, path-like or colliding group name (:func:`check_group_names`),
            an empty group, or no training rows where the job fine-tunes (a CSV without the
            ``dataset.train_group`` its pool is named by).
        ConfigError: a configured group the file does not have.
    """
    dataset = settings.dataset
    if not (task_named(settings.task).reads_data and dataset.groups_from_rows):
        return
    corpus = dataset.read(dataset.data_dir(settings.paths.data_dir))
    names = select_groups(corpus, dataset.groups, with_baseline=corpus.task == "binary")
    check_group_names(names)
    check_not_empty(corpus, names)
    if settings.finetune.enabled and settings.task == "run":
        require_training_rows(corpus, len(corpus.train))


def check_group_names(names: list[str]) -> None:
    """Group names become parts of MLflow keys and artifact paths: each must stay itself.

    Raises:
        DataError: a name with an empty, ``.`` or ``..`` path part, two names (or two pairs
            ``a__b``) that become the same MLflow key, two names too long for one key, or
            two whose file names would pass 255 bytes (:func:`check_name_bytes`).
    """
    for name in names:
        if any(part in ("", ".", "..") for part in name.split("/")):
            raise DataError(
                f"group name {name!r} cannot name a file or an MLflow key (it has an empty, "
                "'.' or '..' part between slashes): rename the group in the data"
            )
    _check_injective({name: metric_key(name) for name in names}, "groups")
    pairs = [(a, b) for i, a in enumerate(names) for b in names[i + 1 :]]
    _check_injective({f"{a}-{b}": metric_key(f"{a}__{b}") for a, b in pairs}, "pairs")
    longest = max(pairs, key=lambda p: len(metric_key(f"{p[0]}__{p[1]}")), default=None)
    if longest is not None and len(metric_key(f"{longest[0]}__{longest[1]}")) > MAX_PAIR_KEY:
        a, b = longest
        raise DataError(
            f"the group names {_short(a)!r} and {_short(b)!r} ({len(a)} and {len(b)} "
            f"characters) are too long together for an MLflow key (at most {MAX_PAIR_KEY} for "
            "a pair's two names, of MLflow's 250): shorten the group names in the data"
        )
    check_name_bytes(pairs)


def check_name_bytes(pairs: list[tuple[str, str]]) -> None:
    """Every file name regbias derives from a pair of group names fits in 255 bytes (UTF-8).

    A file system counts bytes, not characters: two names of 100 CJK characters pass the key's
    character count and make ``explain/<a>-<b>_typical.csv`` over 600 bytes, which the
    explanations could only fail to write at the end. Checked: the pair's files
    (:func:`~regbias.tracking.artifacts.pair_file_names`, the longest suffix and a hash
    included) and its MLflow key ``<a>__<b>`` (a file of a file store).

    Raises:
        DataError: the pair whose longest file name passes the limit, in one line.
    """
    limit = paths.MAX_NAME_BYTES
    # What regbias adds to two plain names ("a", "b": a byte each) in its longest file name.
    added = max(_bytes(n) for n in paths.pair_file_names("a", "b")) - 2
    for a, b in pairs:
        size = max(_bytes(n) for n in [*paths.pair_file_names(a, b), metric_key(f"{a}__{b}")])
        if size > limit:
            raise DataError(
                f"the group names {_short(a)!r} and {_short(b)!r} ({_bytes(a)} and "
                f"{_bytes(b)} bytes in UTF-8) make a file name of {size} bytes, over the "
                f"{limit} a file system takes: shorten the group names in the data (two names "
                f"together at most {limit - added} bytes; a CJK character takes 3)"
            )


def _bytes(text: str) -> int:
    return len(text.encode("utf-8"))


def _short(name: str, most: int = 40) -> str:
    return name if len(name) <= most else name[: most - 3] + "..."


def _check_injective(keys: dict[str, str], what: str) -> None:
    seen: dict[str, str] = {}
    for name, key in keys.items():
        if key in seen:
            raise DataError(
                f"the {what} {seen[key]!r} and {name!r} both become the MLflow key {key!r} "
                "(keys keep only letters, digits, '_', '-', '.', ' ' and '/'): rename one "
                "group in the data"
            )
        seen[key] = name


def resume_inputs(settings: StudySettings) -> dict[str, str]:
    """What the resume key covers besides the config: data contents and the exact code.

    The data files' fingerprint, the commit and the hash of uncommitted changes (a dirty tree
    resumes only with an identical diff), and a local model folder's content hash.
    """
    dataset, cache_dir = settings.dataset, settings.paths.cache_dir
    files = dataset.files(dataset.data_dir(settings.paths.data_dir))
    state = git_state()
    inputs = {
        "regbias.data_fingerprint": content_fingerprint(
            files, Path(cache_dir) if cache_dir else None
        ),
        "git.commit": state["git.commit"],
        "git.diff_hash": state["git.diff_hash"],
    }
    if settings.encoder.source == "path":  # a local model folder: what its files hold now
        inputs["regbias.encoder_identity"] = settings.encoder.identity
    return inputs
