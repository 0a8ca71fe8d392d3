"""Every ``python run.py ...`` line of the README composes into valid settings.

The README's commands are what a newcomer types first, so a renamed key, group option or task
must fail here rather than there. Each command is composed with Hydra's compose API and read
into settings; no job runs. A sweep's values (``range(5)``, ``a,b``) stand in by their first.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from regbias.app.settings import read_settings
from regbias.app.tasks import task_named
from tests.conftest import compose_config

README = Path(__file__).resolve().parents[2] / "README.md"


def readme_commands() -> list[str]:
    """The ``python run.py`` lines of the README's bash blocks, without their comments."""
    blocks = re.findall(r"```bash\n(.*?)```", README.read_text(), re.S)
    lines = [line.split("  #", 1)[0].strip() for block in blocks for line in block.splitlines()]
    return [line for line in lines if line.startswith("python run.py")]


def first_value(override: str) -> str:
    """``seed=range(5)`` -> ``seed=0``; ``encoder=a,b`` -> ``encoder=a``: one job of a sweep."""
    key, _, value = override.partition("=")
    if match := re.fullmatch(r"range\((\d+)(,.*)?\)", value):
        return f"{key}={match.group(1) if match.group(2) else 0}"
    if "," in value and not value.startswith("["):
        return f"{key}={value.split(',', 1)[0]}"
    return override


def test_the_readme_shows_the_main_commands():
    commands = readme_commands()
    assert "python run.py -m seed='range(5)'" in commands
    for task in ("describe", "analyze", "power"):
        assert any(f"task={task}" in command for command in commands), task


@pytest.mark.parametrize("command", readme_commands())
def test_a_readme_command_composes_into_valid_settings(command):
    overrides = [first_value(arg) for arg in shlex.split(command)[2:] if arg != "-m"]
    cfg = compose_config(*overrides)
    read_settings(cfg)
    task_named(cfg.task)


def _install_arguments(line: str) -> list[str]:
    """The arguments of a ``pip install`` line, its quiet options aside."""
    words = shlex.split(line)
    start = words.index("install") + 1
    return [w for w in words[start:] if w not in ("--quiet", "--disable-pip-version-check")]


def test_ci_installs_exactly_what_the_readme_says():
    install = README.read_text().split("## Install", 1)[1]
    block = re.findall(r"```bash\n(.*?)```", install, re.S)[0]  # the section's first block
    (readme_line,) = [line for line in block.splitlines() if line.startswith("pip install")]
    ci = (README.parent / ".ci/run").read_text()
    (ci_line,) = [line for line in ci.splitlines() if " -m pip install " in line]
    assert _install_arguments(ci_line) == _install_arguments(readme_line) == ["-e", ".[dev,onnx]"]
    assert "-m venv --clear" in ci and "/.ci-venv/" in (README.parent / ".gitignore").read_text()
