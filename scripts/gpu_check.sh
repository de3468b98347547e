#!/usr/bin/env bash
# The GPU check, in two halves, for GPU machines that have no Rust
# toolchain and no network (docs/gpu.md):
#
#   bash scripts/gpu_check.sh bundle [DIR]   # on a CPU machine: build with CUDA, gather into DIR
#   bash scripts/gpu_check.sh run [DIR]      # on the GPU machine, in a copy of the repository
#
# DIR defaults to target/gpu-check. `bundle` builds `--features cuda`
# (scripts/cuda_toolkit.sh sets the toolkit up) into target/cuda and copies
# the plies binary and the device tests (tests/device.rs, which need no
# other file of the repository). `run` points the loader at the
# CUDA libraries of the machine's PyTorch (never at the link-time driver
# stub), then runs those tests with PLIES_TEST_DEVICE=cuda, and writes what
# it saw to DIR/gpu-check.txt and DIR/gpu-check.json.
set -euo pipefail
cd "$(dirname "$0")/.."
mode="${1:-}"
dir="${2:-target/gpu-check}"

bundle() {
  env_file="$(bash scripts/cuda_toolkit.sh)"
  # shellcheck disable=SC1090
  source "$env_file"
  export CARGO_TARGET_DIR="$PWD/target/cuda"
  cargo build --release --locked --features cuda --bin plies
  mkdir -p "$dir/tests"
  cp "$CARGO_TARGET_DIR/release/plies" "$dir/plies"
  # The test executables, by the JSON messages cargo prints for them.
  cargo test --release --locked --features cuda --test device --no-run \
    --message-format=json 2>/dev/null \
    | python3 -c '
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["profile"]["test"]:
        print(m["target"]["name"], m["executable"])
' | while read -r name exe; do cp "$exe" "$dir/tests/$name"; done
  ls -l "$dir" "$dir/tests"
  echo "bundle ready in $dir: copy the repository with it to the GPU machine, then: bash scripts/gpu_check.sh run $dir"
}

# LD_LIBRARY_PATH with PyTorch's CUDA libraries (cuBLAS, cuRAND, the
# runtime, NVRTC); the driver's libcuda.so.1 comes from the system.
torch_cuda_libs() {
  local py="${PLIES_TORCH_PYTHON:-python3}"
  "$py" - <<'EOF'
import glob, os
try:
    import nvidia
except ImportError:
    raise SystemExit("")
roots = [os.path.dirname(p) for p in getattr(nvidia, "__path__", [])]
libs = sorted({os.path.dirname(f) for r in roots for f in glob.glob(os.path.join(r, "**", "lib*.so*"), recursive=True)})
print(":".join(libs))
EOF
}

run() {
  [ -x "$dir/plies" ] || { echo "no bundle in $dir: run 'bash scripts/gpu_check.sh bundle $dir' on a CPU machine first" >&2; exit 1; }
  local libs
  libs="$(torch_cuda_libs)"
  export LD_LIBRARY_PATH="${libs}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export PLIES_TEST_DEVICE="${PLIES_TEST_DEVICE:-cuda}"
  local report="$dir/gpu-check.txt"
  {
    echo "# plies GPU check, $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null || echo "nvidia-smi: not found"
    echo "PLIES_TEST_DEVICE=$PLIES_TEST_DEVICE"
  } > "$report"
  local status=0 results=()
  for t in "$dir"/tests/*; do
    local name
    name="$(basename "$t")"
    echo "== tests: $name" | tee -a "$report"
    if "$t" --test-threads 1 2>&1 | tee -a "$report" | tail -3; then
      results+=("{\"tests\": \"$name\", \"passed\": true}")
    else
      results+=("{\"tests\": \"$name\", \"passed\": false}")
      status=1
    fi
  done
  local IFS=,
  echo "{\"device\": \"$PLIES_TEST_DEVICE\", \"results\": [${results[*]}]}" > "$dir/gpu-check.json"
  echo "report: $report, $dir/gpu-check.json"
  return $status
}

case "$mode" in
  bundle) bundle ;;
  run) run ;;
  *) echo "usage: bash scripts/gpu_check.sh bundle|run [DIR]" >&2; exit 2 ;;
esac
