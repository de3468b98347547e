#!/usr/bin/env bash
# The GPU check, in two halves, for GPU machines that have no Rust
# toolchain and no network (docs/gpu.md):
#
#   bash scripts/gpu_check.sh bundle [DIR]      # on a CPU machine: build with CUDA, gather into DIR
#   bash scripts/gpu_check.sh run [DIR] [PART]  # on the GPU machine, in a copy of the repository
#
# `bundle` also strips the binaries' debug information and packs DIR into
# DIR.tar.xz (refused over 30 MB): carry that one file to the GPU machine
# (the repository's tracked files and carried paths travel under 64 MiB),
# and `run` unpacks it when DIR is missing. PART 1 runs the device tests
# and the small networks' benchmarks (cnn3, resnet 6x64), PART 2 the large
# ones (resnet 20x256, the MDRNNs) and the MCTS rows: each is meant to fit
# one command of 8 minutes on an H100; without PART, both run.
#
# DIR defaults to target/gpu-check. `bundle` builds `--features cuda`
# (scripts/cuda_toolkit.sh sets the toolkit up) into target/cuda and copies
# the plies binary, the device tests (tests/device.rs, which need no other
# file of the repository) and the PyTorch peer's scripts into DIR. `run`
# points the loader at the CUDA libraries of the machine's PyTorch (never
# at the link-time driver stub), runs those tests with
# PLIES_TEST_DEVICE=cuda, then `plies bench device` on the same device
# against PyTorch eager and torch.compile (PLIES_BENCH_ARGS adds flags,
# e.g. --quick), then (PART 1) `plies train` on a real dataset: Arimaa
# games of 1-ply material players, made there, trained by cnn3 and
# resnet-6x64 at batch 1,024 in f32 and bf16, cnn3 once more on the
# CPU (the same seed, to compare f32 with), resnet-6x64 once more through
# candle's stock ops (PLIES_KERNELS=candle, what the device ops bring),
# and `plies bench loader` on the device. It writes DIR/gpu-check.txt
# (the tests' output, the benchmark table, the training runs) and
# DIR/gpu-check.json (the tests' results, the benchmark's JSON with its
# targets, and each training run's positions/s and validation loss beside
# the bench's step rate).
set -euo pipefail
cd "$(dirname "$0")/.."
mode="${1:-}"
dir="${2:-target/gpu-check}"
part="${3:-}"

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
  # The PyTorch peer of `plies bench device`, found as scripts/ beside the binary.
  mkdir -p "$dir/scripts"
  cp scripts/bench_torch_device.py scripts/torch_models.py "$dir/scripts/"
  # Debug line tables make the binaries ten times larger; the GPU check
  # needs none of them.
  strip --strip-debug "$dir/plies" "$dir"/tests/*
  tar -C "$dir" -cf - plies tests scripts | xz -6 -T0 > "$dir.tar.xz.tmp"
  mv "$dir.tar.xz.tmp" "$dir.tar.xz"
  ls -l "$dir" "$dir/tests" "$dir/scripts" "$dir.tar.xz"
  local bytes
  bytes=$(stat -c %s "$dir.tar.xz")
  if [ "$bytes" -gt $((30 * 1000 * 1000)) ]; then
    echo "bundle: $dir.tar.xz is $bytes bytes, over the 30 MB that travel with the repository" >&2
    exit 1
  fi
  echo "bundle ready: $dir.tar.xz ($bytes bytes). Carry it to the GPU machine, then: bash scripts/gpu_check.sh run $dir 1; bash scripts/gpu_check.sh run $dir 2"
}

# `plies train` on the device on a dataset made there (PLIES_TRAIN_GAMES
# games, 1,500 by default; the bundle carries no data): cnn3 and
# resnet-6x64, batch 1,024, 2 epochs, f32 then bf16. Each run's
# metrics.jsonl gives its positions/s and validation loss.
train_runs() {
  local work="$1" p="$dir/plies"
  case "$p" in /*) ;; *) p="$PWD/$p" ;; esac
  rm -rf "$work"
  mkdir -p "$work"
  echo "== training: plies train --device $PLIES_TEST_DEVICE on Arimaa material players' games"
  "$p" selfplay --game arimaa --white alphabeta:depth=1,eval=material \
    --black alphabeta:depth=1,eval=material --epsilon 0.1 --games "${PLIES_TRAIN_GAMES:-1500}" \
    --seed 11 --dataset arimaa-6x8x8 --out "$work/selfplay" --quiet
  printf '%s\n' '{"kind": "resnet", "blocks": 6, "channels": 64, "value_hidden": 128}' \
    > "$work/resnet-6x64.json"
  local model precision
  for model in cnn3 "$work/resnet-6x64.json"; do
    for precision in f32 bf16; do
      local name
      name="$(basename "$model" .json)-$precision"
      "$p" train --data "$work/selfplay/dataset" --model "$model" --device "$PLIES_TEST_DEVICE" \
        --precision "$precision" --batch 1024 --epochs 2 --lr 0.01 --seed 1 \
        --out "$work/$name" --quiet || return 1
      echo "$name: $(tail -1 "$work/$name/metrics.jsonl")"
    done
  done
  # The same seeded f32 cnn3 run on the CPU: the device's validation loss
  # should match it within 1e-3 relative.
  "$p" train --data "$work/selfplay/dataset" --model cnn3 --device cpu --batch 1024 --epochs 2 \
    --lr 0.01 --seed 1 --out "$work/cnn3-cpu-f32" --quiet || return 1
  echo "cnn3-cpu-f32: $(tail -1 "$work/cnn3-cpu-f32/metrics.jsonl")"
  # What the device ops (cuDNN convolutions, batch-norm kernels, the
  # one-launch optimizer step) bring: the f32 residual run once more
  # through candle's stock ops, one epoch.
  PLIES_KERNELS=candle "$p" train --data "$work/selfplay/dataset" --model "$work/resnet-6x64.json" \
    --device "$PLIES_TEST_DEVICE" --batch 1024 --epochs 1 --lr 0.01 --seed 1 \
    --out "$work/resnet-6x64-candle-f32" --quiet || return 1
  echo "resnet-6x64-candle-f32: $(tail -1 "$work/resnet-6x64-candle-f32/metrics.jsonl")"
  # The loader (int8 planes widened on the device) against cnn3's step
  # rate on the device: the fastest step, so a loader ahead of it is
  # ahead of every model's.
  echo "== loader: plies bench loader --device $PLIES_TEST_DEVICE"
  "$p" bench loader --data "$work/loader-data" --synthetic 400000 --device "$PLIES_TEST_DEVICE" \
    --batch 1024 --no-python || return 1
}

# The self-play loop on the device and on the CPU (PART 2): a rehearsal of
# data/loop/gomoku-15-gpu.json, the config sized for one H100 hour, cut to
# 2 generations of 64 games at 40 simulations (a sixth of the shipped
# config's games at a quarter of its simulations), once on the device
# under test in the config's precision and once on the machine's CPU cores
# in f32. Each
# generation's timing.json gives the stages' seconds; the JSON report sets
# them side by side and projects the shipped config's hour from the
# device's rehearsal.
loop_runs() {
  local work="$1" p="$dir/plies" py="${PLIES_TORCH_PYTHON:-python3}"
  case "$p" in /*) ;; *) p="$PWD/$p" ;; esac
  rm -rf "$work"
  mkdir -p "$work"
  "$py" - data/loop/gomoku-15-gpu.json "$work" "$(nproc)" "$PLIES_TEST_DEVICE" <<'PY'
import json, sys
shipped, work, cores, device = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
with open(shipped) as f:
    cfg = json.load(f)
# The device under test (a CPU rehearsal of the check runs it in f32).
cfg.update(generations=2, threads=64, device=device)
if device == "cpu":
    cfg.update(precision="f32")
# Generation 0 by random players, whom the first network beats at the
# gate, so that generation 1's self-play is the network's on the device.
cfg["selfplay"].update(games=64, sims=40, bootstrap="random", batch=64)
cfg["train"].update(epochs=2)
cfg["gate"].update(games=8, sims=40, margin=0.0, z=0.0)
cfg["anchors"].update(players=["naive"], games=2)
with open(f"{work}/device.json", "w") as f:
    json.dump(cfg, f, indent=1)
cfg.update(device="cpu", precision="f32", threads=cores)
with open(f"{work}/cpu.json", "w") as f:
    json.dump(cfg, f, indent=1)
PY
  local where
  for where in device cpu; do
    echo "== loop rehearsal ($where): plies loop --config $work/$where.json"
    "$p" loop --game gomoku --config "$work/$where.json" --out "$work/$where" --quiet || return 1
    cat "$work/$where"/gen-*/timing.json "$work/$where"/gen-*/gate.json 2>/dev/null || true
  done
}

# DIR from DIR.tar.xz when only the archive travelled.
unpack() {
  if [ ! -x "$dir/plies" ] && [ -f "$dir.tar.xz" ]; then
    mkdir -p "$dir"
    xz -dc "$dir.tar.xz" | tar -C "$dir" -xf -
  fi
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
  unpack
  [ -x "$dir/plies" ] || { echo "no bundle in $dir: run 'bash scripts/gpu_check.sh bundle $dir' on a CPU machine first" >&2; exit 1; }
  # Which half: the device tests and the small networks, or the large
  # networks and MCTS.
  local nets="" tests=1 mcts="" suffix=""
  case "$part" in
    "") ;;
    1) nets="--nets cnn3,resnet-6x64"; mcts="--no-mcts"; suffix="-1" ;;
    # MCTS's evaluator on the native backend (its backend is named in
    # the progress log); candle's MCTS figures are the first run's.
    2) nets="--nets resnet-20x256,mdrnn-k10-9x9,mdrnn-k64-9x9,mdrnn-k10-19x19,mdrnn-k64-19x19"; tests=""; suffix="-2"
       export PLIES_BACKEND="${PLIES_BACKEND:-native}" ;;
    *) echo "PART is 1 or 2, got $part" >&2; exit 2 ;;
  esac
  # --quick has its own tiny networks: a rehearsal splits by MCTS only.
  case " ${PLIES_BENCH_ARGS:-} " in *" --quick "*) nets="" ;; esac
  local libs
  libs="$(torch_cuda_libs)"
  export LD_LIBRARY_PATH="${libs}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export PLIES_TEST_DEVICE="${PLIES_TEST_DEVICE:-cuda}"
  local report="$dir/gpu-check$suffix.txt" bench="bench$suffix"
  {
    echo "# plies GPU check${part:+, part $part}, $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null || echo "nvidia-smi: not found"
    echo "PLIES_TEST_DEVICE=$PLIES_TEST_DEVICE"
  } > "$report"
  local status=0 results=()
  for t in "$dir"/tests/*; do
    [ -n "$tests" ] || break
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
  local tests_json
  tests_json="[$(IFS=,; echo "${results[*]}")]"
  [ -z "$tests" ] || train_runs "$dir/train-check" >> "$report" 2>&1 || status=1

  # The benchmarks, from inside the bundle so that its scripts/ are used
  # (a relative interpreter path is made absolute first).
  local py="${PLIES_TORCH_PYTHON:-python3}"
  case "$py" in */*) py="$(cd "$(dirname "$py")" && pwd)/$(basename "$py")" ;; esac
  echo "== benchmarks: plies bench device --device $PLIES_TEST_DEVICE $nets $mcts ${PLIES_BENCH_ARGS:-}" | tee -a "$report"
  rm -rf "${dir:?}/$bench"
  # shellcheck disable=SC2086
  if ! (cd "$dir" && ./plies bench device --device "$PLIES_TEST_DEVICE" --out "$bench" \
      --python "$py" $nets $mcts ${PLIES_BENCH_ARGS:-}) >> "$report" 2> >(tee "$dir/$bench-progress.log" >&2); then
    echo "plies bench device failed: see $dir/$bench-progress.log" | tee -a "$report"
    status=1
  fi
  # Part 2 (or both parts): the loop, last, so that a timeout cuts it and
  # not the benchmarks.
  if [ "$part" != 1 ]; then
    loop_runs "$dir/loop-check" >> "$report" 2>&1 || status=1
  fi
  "$py" - "$dir" "$tests_json" "$PLIES_TEST_DEVICE" "$bench" "$suffix" <<'EOF'
import json, os, sys
folder, tests, device, bench_dir, suffix = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
path = os.path.join(folder, bench_dir, "device-bench.json")
bench = None
if os.path.exists(path):
    with open(path) as f:
        bench = json.load(f)
# The training runs beside the bench's step rate for the same net and batch.
train = {}
runs = os.path.join(folder, "train-check")
for name in sorted(os.listdir(runs)) if os.path.isdir(runs) else []:
    metrics = os.path.join(runs, name, "metrics.jsonl")
    if not os.path.exists(metrics):
        continue
    with open(metrics) as f:
        last = [json.loads(line) for line in f][-1]
    net, precision = name.rsplit("-", 1)
    step = [r for r in (bench or {}).get("train", []) if r["net"] == net and r["batch"] == 1024]
    rate = step and step[0].get("plies_bf16" if precision == "bf16" else "plies")
    train[name] = {
        "positions_per_s": last["positions_per_s"],
        "valid_loss": last["valid_loss"],
        "bench_step_rate": rate or None,
        "of_bench": last["positions_per_s"] / rate if rate else None,
    }
for net in sorted({n.rsplit("-", 1)[0] for n in train}):
    a, b = train.get(net + "-f32"), train.get(net + "-bf16")
    if a and b:
        b["valid_loss_over_f32"] = b["valid_loss"] / a["valid_loss"]
    cpu = train.get(net + "-cpu-f32")
    if a and cpu:
        a["valid_loss_over_cpu"] = a["valid_loss"] / cpu["valid_loss"]
    stock = train.get(net + "-candle-f32")
    if a and stock:
        a["rate_over_candle_ops"] = a["positions_per_s"] / stock["positions_per_s"]
# The loop rehearsal: each stage's seconds on the device beside the CPU's,
# and the shipped config's hour projected from the device's rehearsal.
loop = None
rehearsal = os.path.join(folder, "loop-check")
def timings(where):
    root = os.path.join(rehearsal, where)
    out = {}
    for gen in sorted(os.listdir(root)) if os.path.isdir(root) else []:
        path = os.path.join(root, gen, "timing.json")
        if os.path.exists(path):
            with open(path) as f:
                out[gen] = json.load(f)
    return out
if os.path.isdir(rehearsal):
    dev, cpu = timings("device"), timings("cpu")
    loop = {"device": dev, "cpu": cpu, "cpu_over_device": {}}
    for gen in sorted(set(dev) & set(cpu)):
        loop["cpu_over_device"][gen] = {
            k: (cpu[gen][k] / dev[gen][k] if dev[gen][k] else None)
            for k in ("selfplay_wall", "train_wall", "matches_wall")
        }
    last = dev.get("gen-001")
    small_path = os.path.join(rehearsal, "device.json")
    if last and os.path.exists(small_path):
        with open(small_path) as f:
            small = json.load(f)
        with open("data/loop/gomoku-15-gpu.json") as f:
            full = json.load(f)
        sp, fs = small["selfplay"], full["selfplay"]
        # Self-play scaled by games x simulations, training by games (the
        # window's size), matches by games (gate and anchors) x
        # simulations: rough, and an upper bound for self-play, whose
        # rehearsal plays 64 games at once against the config's 256 (so
        # smaller batches).
        def games(c):
            return c["gate"]["games"] + c["anchors"]["games"] * len(c["anchors"]["players"])
        gen_s = (last["selfplay_wall"] * (fs["games"] * fs["sims"]) / (sp["games"] * sp["sims"])
                 + last["train_wall"] * fs["games"] / sp["games"]
                 + last["matches_wall"] * (games(full) * full["gate"]["sims"])
                 / (games(small) * small["gate"]["sims"]))
        loop["projected_generation_s"] = gen_s
        loop["projected_run_s"] = gen_s * full["generations"]
report = {"device": device, "gpu": bench and bench.get("gpu"), "tests": tests, "bench": bench, "train": train, "loop": loop}
tmp = os.path.join(folder, ".gpu-check.json.tmp")
with open(tmp, "w") as f:
    json.dump(report, f, indent=1)
os.replace(tmp, os.path.join(folder, f"gpu-check{suffix}.json"))
EOF
  echo "report: $report, $dir/gpu-check$suffix.json"
  return $status
}

case "$mode" in
  bundle) bundle ;;
  run) run ;;
  *) echo "usage: bash scripts/gpu_check.sh bundle|run [DIR]" >&2; exit 2 ;;
esac
