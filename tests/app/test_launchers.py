"""Cluster launcher configs (they compose; resources follow the preset) and pre-submit checks.

Fast: nothing is submitted. Without the launcher plugins installed, stand-ins of their config
schemas are registered so the configs still compose; with them, the real schemas are used and
the SLURM batch script submitit would write is checked too.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from hydra.core.config_store import ConfigStore
from omegaconf import DictConfig, OmegaConf, open_dict, read_write

from regbias.app.cluster_checks import (
    cluster_kind,
    prepare_cluster_sweep,
    presubmit,
)
from regbias.app.sweep import SweepCallback

CONF = Path(__file__).resolve().parents[2] / "conf"
HAS_SUBMITIT = importlib.util.find_spec("hydra_plugins.hydra_submitit_launcher") is not None
HAS_RAY = importlib.util.find_spec("hydra_plugins.hydra_ray_launcher") is not None
SLURM_TARGET = "hydra_plugins.hydra_submitit_launcher.submitit_launcher.SlurmLauncher"
RAY_TARGET = "hydra_plugins.hydra_ray_launcher.ray_launcher.RayLauncher"
ENV_KEYS = ("REGBIAS_DATA_DIR", "REGBIAS_CACHE_DIR", "MLFLOW_TRACKING_URI", "RAY_ADDRESS")


def _register_stand_ins() -> None:
    """The plugins' schemas, for machines without the plugins (CI installs only .[dev])."""
    store = ConfigStore.instance()
    if not HAS_SUBMITIT:
        slurm_keys = (
            "submitit_folder timeout_min cpus_per_task gpus_per_node tasks_per_node mem_gb "
            "nodes name stderr_to_stdout partition qos comment constraint exclude gres "
            "cpus_per_gpu gpus_per_task mem_per_gpu mem_per_cpu account signal_delay_s "
            "max_num_timeout array_parallelism setup"
        ).split()
        node = {key: None for key in slurm_keys}
        node.update(_target_=SLURM_TARGET, additional_parameters={})
        store.store(group="hydra/launcher", name="submitit_slurm", node=node, provider="test")
    if not HAS_RAY:
        node = {"_target_": RAY_TARGET, "ray": {"init": {"address": None}, "remote": {}}}
        store.store(group="hydra/launcher", name="ray", node=node, provider="test")


@pytest.fixture(autouse=True)
def _clean_env():
    """The checks export variables into os.environ: start without them, restore after."""
    saved = dict(os.environ)
    for key in ENV_KEYS:
        os.environ.pop(key, None)
    yield
    os.environ.clear()
    os.environ.update(saved)


def _compose(*overrides: str) -> DictConfig:
    _register_stand_ins()
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        return compose("config", overrides=list(overrides), return_hydra_config=True)


def _launcher(*overrides: str) -> dict:
    launcher = OmegaConf.to_container(_compose(*overrides).hydra.launcher, resolve=True)
    assert isinstance(launcher, dict)
    return launcher


@pytest.mark.parametrize("preset", ["smoke", "default", "paper"])
@pytest.mark.parametrize("launcher", ["slurm", "ray_cluster"])
def test_launcher_configs_compose(launcher: str, preset: str) -> None:
    config = _compose(f"hydra/launcher={launcher}", f"experiment={preset}")
    assert cluster_kind(config) == ("slurm" if launcher == "slurm" else "ray")


@pytest.mark.parametrize("preset", ["smoke", "default"])
def test_slurm_cpu_presets_ask_for_no_gpu(preset: str) -> None:
    launcher = _launcher("hydra/launcher=slurm", f"experiment={preset}")
    assert launcher["gres"] is None and launcher["gpus_per_node"] is None
    assert launcher["gpus_per_task"] is None
    assert launcher["cpus_per_task"] <= 2 and launcher["mem_gb"] <= 8


def test_slurm_paper_asks_for_one_gpu_per_job() -> None:
    launcher = _launcher("hydra/launcher=slurm", "experiment=paper")
    assert launcher["gres"] == "gpu:1" and launcher["gpus_per_node"] is None
    assert launcher["nodes"] == 1 and launcher["tasks_per_node"] == 1
    assert launcher["cpus_per_task"] == 8 and launcher["timeout_min"] == 240


def test_slurm_settings_are_overridable_on_the_command_line() -> None:
    launcher = _launcher(
        "hydra/launcher=slurm",
        "experiment=paper",
        "hydra.launcher.partition=gpu",
        "hydra.launcher.timeout_min=480",
        "hydra.launcher.mem_gb=32",
        "hydra.launcher.array_parallelism=50",
        "hydra.launcher.gres=gpu:a100:1",
        "+hydra.launcher.additional_parameters.account=lab",
    )
    assert launcher["partition"] == "gpu" and launcher["timeout_min"] == 480
    assert launcher["mem_gb"] == 32 and launcher["array_parallelism"] == 50
    assert launcher["gres"] == "gpu:a100:1"
    assert launcher["additional_parameters"] == {"account": "lab"}


@pytest.mark.parametrize(("preset", "gpus"), [("smoke", 0), ("default", 0), ("paper", 1)])
def test_ray_resources_follow_the_preset(preset: str, gpus: int) -> None:
    ray = _launcher("hydra/launcher=ray_cluster", f"experiment={preset}")["ray"]
    assert ray["remote"]["num_gpus"] == gpus
    assert ray["remote"]["max_retries"] == 0


def test_ray_passes_the_exported_paths_to_workers() -> None:
    os.environ["REGBIAS_DATA_DIR"] = "/shared/data"
    os.environ["RAY_ADDRESS"] = "head:6379"
    init = _launcher("hydra/launcher=ray_cluster")["ray"]["init"]
    assert init["address"] == "head:6379"
    assert init["runtime_env"]["env_vars"]["REGBIAS_DATA_DIR"] == "/shared/data"
    assert set(init["runtime_env"]["env_vars"]) == {
        "REGBIAS_DATA_DIR",
        "REGBIAS_CACHE_DIR",
        "MLFLOW_TRACKING_URI",
    }
    assert "object_store_memory" in init and init["object_store_memory"] is None


def test_sweep_dir_is_absolute() -> None:
    assert Path(_compose().hydra.sweep.dir).is_absolute()


@pytest.mark.skipif(not HAS_SUBMITIT, reason="hydra-submitit-launcher (.[slurm]) not installed")
@pytest.mark.parametrize(("preset", "gres"), [("smoke", None), ("paper", "gpu:1")])
def test_submitit_batch_script(tmp_path: Path, preset: str, gres: str | None) -> None:
    """The sbatch lines submitit would write: one GPU for paper, none for a CPU preset."""
    from submitit.slurm.slurm import _make_sbatch_string

    launcher = _launcher("hydra/launcher=slurm", f"experiment={preset}")
    script = _make_sbatch_string(
        command="python -c pass",
        folder=str(tmp_path),
        job_name="regbias",
        partition=launcher["partition"],
        time=launcher["timeout_min"],
        nodes=launcher["nodes"],
        ntasks_per_node=launcher["tasks_per_node"],
        cpus_per_task=launcher["cpus_per_task"],
        mem=f"{launcher['mem_gb']}GB",
        gres=launcher["gres"],
        gpus_per_node=launcher["gpus_per_node"],
        setup=launcher["setup"],
        array_parallelism=launcher["array_parallelism"],
    )
    gpu_lines = [line for line in script.splitlines() if "gres" in line or "gpus" in line]
    if gres is None:
        assert gpu_lines == []
    else:
        assert gpu_lines == [f"#SBATCH --gres={gres}"]
    assert "OMP_NUM_THREADS=$SLURM_CPUS_PER_TASK" in script


# ---- pre-submit checks ------------------------------------------------------------------


def _cluster_config(tmp_path: Path, launcher: str = "slurm", **keys: object) -> DictConfig:
    """A composed-like config: the real defaults, a cluster launcher's target, ``keys``."""
    config = _compose(f"hydra/launcher={launcher}")
    with read_write(config), open_dict(config):
        for key, value in keys.items():
            OmegaConf.update(config, key.replace("__", "."), value, force_add=True)
    return config


def test_local_launchers_are_left_alone(tmp_path: Path) -> None:
    config = _compose("tracking.uri=sqlite:///relative.db", "paths.cache_dir=rel")
    assert cluster_kind(config) is None
    assert prepare_cluster_sweep(config) == []
    assert "MLFLOW_TRACKING_URI" not in os.environ


def test_defaults_are_made_absolute_for_the_jobs(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    config = _cluster_config(tmp_path)
    problems = prepare_cluster_sweep(config, cwd=tmp_path)
    assert os.environ["REGBIAS_DATA_DIR"] == str(tmp_path / "data")
    assert os.environ["REGBIAS_CACHE_DIR"] == str(tmp_path / ".cache/regbias")
    assert os.environ["MLFLOW_TRACKING_URI"] == f"sqlite:///{tmp_path}/mlruns.db"
    assert config.paths.cache_dir == str(tmp_path / ".cache/regbias")
    assert config.tracking.uri == f"sqlite:///{tmp_path}/mlruns.db"
    assert [p.fatal for p in problems] == [False]  # SQLite on a cluster: one warning
    assert "SQLite" in problems[0].message


def test_relative_paths_given_on_the_command_line_are_reported(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    config = _cluster_config(tmp_path, tracking__uri="sqlite:///runs.db", paths__cache_dir="cache")
    problems = prepare_cluster_sweep(config, cwd=tmp_path)
    lines = [str(p) for p in problems]
    assert len(lines) == 2 and all("\n" not in line for line in lines)
    assert lines[0].startswith("regbias: warning: paths.cache_dir 'cache' is relative")
    assert lines[1].startswith("regbias: error: tracking.uri 'sqlite:///runs.db' is relative")


def test_missing_data_directory_is_fatal(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    config = _cluster_config(tmp_path, paths__data_dir=str(tmp_path / "nowhere"))
    with pytest.raises(SystemExit) as exit_info:
        presubmit(config)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith(f"regbias: error: data directory '{tmp_path / 'nowhere'}'")
    assert "does not exist on the submit host" in err[0]
    assert err[-1] == "regbias: nothing was submitted; fix the lines above"


def test_server_on_loopback_warns_for_a_cluster(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    config = _cluster_config(tmp_path, tracking__uri="http://127.0.0.1:5055")
    problems = prepare_cluster_sweep(config, cwd=tmp_path)
    assert [p.fatal for p in problems] == [False]
    assert "loopback" in problems[0].message


def test_ray_with_a_relative_sweep_dir_is_fatal(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    config = _cluster_config(
        tmp_path, "ray_cluster", hydra__sweep__dir="multirun/x", tracking__uri="http://db:5000"
    )
    problems = prepare_cluster_sweep(config, cwd=tmp_path)
    assert [p.fatal for p in problems] == [True]
    assert "hydra.sweep.dir 'multirun/x' is relative" in problems[0].message


def test_sweep_start_checks_before_opening_the_parent_run(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    config = _cluster_config(
        tmp_path,
        paths__data_dir=str(tmp_path / "nowhere"),
        tracking__uri=f"sqlite:///{tmp_path}/mlruns.db",
    )
    with pytest.raises(SystemExit) as exit_info:
        SweepCallback().on_multirun_start(config)
    assert exit_info.value.code == 2
    assert not (tmp_path / "mlruns.db").exists()  # no parent run was opened
    # The sweep's start first tries to fetch missing data (offline here), then stops in one line.
    errors = [line for line in capsys.readouterr().err.splitlines() if "regbias: error" in line]
    assert len(errors) == 1 and "nowhere" in errors[0]
