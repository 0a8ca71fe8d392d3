#!/usr/bin/env bash
# The prepared GPU check (about 6 minutes on one H200 with 16 cores): JAX's CUDA plugin, the
# GPU-marked tests, one repetition of the paper preset's distance stage and one epoch of full
# fine-tuning (benchmarks/paper_cost.py), every figure written as JSON.
#
#   bash benchmarks/gpu_check.sh                  # on a CUDA machine; figures in ./gpu_check/
#   bash benchmarks/gpu_check.sh --cpu            # the same steps on the CPU (~15 min on 2 cores)
#   bash benchmarks/gpu_check.sh --out DIR --wheels DIR
#
# Needs regbias installed (README), or --wheels: a folder of wheels (regbias's dependencies,
# and jax's CUDA plugin matching the installed jax) for a machine without a registry; and the
# data (REGBIAS_DATA_DIR, default ../shared/data, else ./data).
set -euo pipefail
cd "$(dirname "$0")/.."

cpu=0
out="${OUT:-gpu_check}"
wheels=""
finetune_texts=2048
while [ $# -gt 0 ]; do
  case "$1" in
    --cpu) cpu=1; finetune_texts=256 ;;
    --out) out="$2"; shift ;;
    --wheels) wheels="$2"; shift ;;
    --finetune-texts) finetune_texts="$2"; shift ;;
    *) echo "gpu_check: unknown option $1 (use --cpu, --out DIR, --wheels DIR)" >&2; exit 2 ;;
  esac
  shift
done
mkdir -p "$out"
python="${PYTHON:-python3}"
log() { echo "gpu_check: $*" >&2; }
started=$(date +%s)

if [ -z "${REGBIAS_DATA_DIR:-}" ]; then
  for dir in ../shared/data data; do
    if [ -d "$dir" ]; then export REGBIAS_DATA_DIR="$(cd "$dir" && pwd)"; break; fi
  done
fi
[ -n "${REGBIAS_DATA_DIR:-}" ] || { log "no data: set REGBIAS_DATA_DIR"; exit 1; }
export REGBIAS_CACHE_DIR="${REGBIAS_CACHE_DIR:-$out/cache}"

install() {
  if [ -n "$wheels" ]; then
    "$python" -m pip install -q --no-index --find-links "$wheels" "$@"
  else
    "$python" -m pip install -q "$@"
  fi
}

if ! "$python" -c "import regbias" 2>/dev/null; then
  log "installing regbias (-e .)"
  install -e .
fi
if [ "$cpu" = 1 ]; then
  export JAX_PLATFORMS=cpu CUDA_VISIBLE_DEVICES=""
else
  command -v nvidia-smi >/dev/null || { log "no nvidia-smi: not a CUDA machine (use --cpu)"; exit 1; }
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader >"$out/gpu.txt"
  if [ "$("$python" -c 'import jax; print(jax.default_backend())')" != gpu ]; then
    version="$("$python" -c 'import jax; print(jax.__version__)')"
    log "installing jax[cuda12]==$version (JAX's CUDA plugin)"
    install "jax[cuda12]==$version"
  fi
fi

"$python" - >"$out/environment.json" <<'EOF'
import json, platform
import jax, torch
print(json.dumps({
    "python": platform.python_version(),
    "jax": jax.__version__,
    "jax_backend": jax.default_backend(),
    "jax_devices": [str(d) for d in jax.devices()],
    "torch": torch.__version__,
    "torch_cuda": torch.cuda.is_available(),
    "torch_device": torch.cuda.get_device_name(0) if torch.cuda.is_available() else "cpu",
}, indent=2))
EOF
log "environment: $(tr -d '\n' <"$out/environment.json")"
if [ "$cpu" = 0 ] && ! grep -q '"jax_backend": "gpu"' "$out/environment.json"; then
  log "JAX still sees no GPU after the install: see $out/environment.json"; exit 1
fi

log "GPU-marked tests (pytest -m gpu)"
tests_rc=0
timeout 120 "$python" -m pytest -q -m gpu -rs tests/gpu >"$out/gpu_tests.txt" 2>&1 || tests_rc=$?
tail -3 "$out/gpu_tests.txt" >&2

log "paper preset: one distance repetition (us vs uk) and one fine-tuning epoch"
cost_rc=0
cost_timeout=420  # on a GPU host; the CPU (2 cores) needs longer: exact OT runs on the cores
[ "$cpu" = 1 ] && cost_timeout=1800
timeout "$cost_timeout" "$python" benchmarks/paper_cost.py --groups us uk \
  --finetune-texts "$finetune_texts" --json "$out/paper_cost.json" \
  >"$out/paper_cost.txt" 2>&1 || cost_rc=$?
tail -25 "$out/paper_cost.txt" >&2

"$python" - "$out" "$tests_rc" "$cost_rc" "$(( $(date +%s) - started ))" "$cpu" <<'EOF'
import json, sys
from pathlib import Path
out, tests_rc, cost_rc, seconds, cpu = sys.argv[1:]
out = Path(out)
summary = {
    "mode": "cpu" if cpu == "1" else "gpu",
    "environment": json.loads((out / "environment.json").read_text()),
    "gpu_tests_exit": int(tests_rc),
    "gpu_tests": (out / "gpu_tests.txt").read_text().strip().splitlines()[-1:],
    "paper_cost_exit": int(cost_rc),
    "paper_cost": json.loads((out / "paper_cost.json").read_text())
    if (out / "paper_cost.json").exists() else None,
    "wall_s": int(seconds),
}
(out / "gpu_check.json").write_text(json.dumps(summary, indent=2))
print(f"gpu_check: figures in {out / 'gpu_check.json'} ({seconds} s)")
EOF
[ "$tests_rc" = 0 ] && [ "$cost_rc" = 0 ]
