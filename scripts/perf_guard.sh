#!/usr/bin/env bash
# The CPU speed guard: runs the benchmarks that print a ratio against a
# named peer in the same run (cnn3 and resnet-tiny training and inference
# against PyTorch, the batched evaluator against PyTorch's forward pass, the
# loader against pyarrow) and fails when a ratio falls more than 20% under
# the figure recorded for this processor in scripts/perf_baseline.tsv.
# Ratios, not raw speeds, so a busy or slower machine moves both sides.
# Not a CI test (too noisy on shared machines): run it on an idle machine
# before every change to src/model/kernels/, and record new figures with
# --record after a re-measurement (then keep, for each row, the lower of at
# least two runs: PyTorch's 2-thread figure alone moves 10-20% run to run).
# The loader's ratios are printed but not guarded (too short to be stable
# on the shipped archive). A benchmark with a row under its floor is run
# once more and each row keeps the better of its two ratios, so one noisy
# run does not fail the guard; a real slowdown fails both.
#
#   bash scripts/perf_guard.sh            # check against the table
#   bash scripts/perf_guard.sh --record   # measure and replace this processor's rows
#   PERF_GUARD_TOLERANCE=0.3 bash scripts/perf_guard.sh
#
# Env: PLIES (binary, default target/release/plies), RAYON_NUM_THREADS
# (default 2: the table's figures are for 2 threads on both sides),
# PLIES_TORCH_PYTHON / PLIES_DATA_PYTHON (the peers' Python, else
# .venv-torch / .venv-data). Prints the processor, every ratio beside its
# recorded figure, and writes the run to runs/perf-guard/last.json.
set -euo pipefail
cd "$(dirname "$0")/.."
PLIES=${PLIES:-target/release/plies}
export RAYON_NUM_THREADS=${RAYON_NUM_THREADS:-2}
TABLE=scripts/perf_baseline.tsv
OUT=runs/perf-guard
RECORD=0
[ "${1:-}" = "--record" ] && RECORD=1
[ -x "$PLIES" ] || cargo build --release --bin plies
mkdir -p "$OUT"

processor=$(grep -m1 '^model name' /proc/cpuinfo | sed 's/^model name[[:space:]]*:[[:space:]]*//')
isa=$(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -xE 'avx2|avx512f|avx512_bf16|amx_tile' | tr '\n' ' ' | sed 's/ $//')
key="$processor [$isa]"
echo "processor: $key; $RAYON_NUM_THREADS threads; commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"

# A small Arimaa dataset for the loader (the shipped archive games).
DS="$OUT/arimaa-ds"
if [ ! -f "$DS/manifest.json" ]; then
  "$PLIES" import --game arimaa data/arimaa/allgames2002.txt data/arimaa/fake_archive.txt \
    --out "$OUT/arimaa-records" --force >/dev/null
  "$PLIES" dataset build --records "$OUT/arimaa-records/games.jsonl" --encoder arimaa-6x8x8 \
    --terminations all --out "$DS" --force --quiet >/dev/null
fi

run() { # folder, name, then the bench command's arguments
  local dir=$1 name=$2
  shift 2
  mkdir -p "$dir"
  echo "  $name: plies bench $*" >&2
  "$PLIES" bench "$@" --json >"$dir/$name.json"
}
BENCHES=(
  "train-cnn3 train --model cnn3 --batch 1024 --rounds 3"
  "infer-cnn3 infer --model cnn3 --batch 1,64,1024 --rounds 3"
  "train-resnet-tiny train --model resnet-tiny --batch 1024 --steps 3 --rounds 3 --seconds 2"
  "infer-resnet-tiny infer --model resnet-tiny --batch 1,64,1024 --rounds 3"
  "evaluator-cnn3 evaluator --model cnn3 --clients 8,32 --max-batch 64,256 --rounds 2"
  "loader loader --data $DS --train-steps 10 --epochs 20"
)
rm -rf "$OUT/retry"
for spec in "${BENCHES[@]}"; do
  # shellcheck disable=SC2086
  run "$OUT" $spec
done

check() { # pass number: 1, or 2 after the failing benchmarks ran again
python3 - "$OUT" "$TABLE" "$key" "$RECORD" "${PERF_GUARD_TOLERANCE:-0.2}" \
  "$(git rev-parse --short HEAD 2>/dev/null || echo '?')" "$1" <<'EOF'
import csv, datetime, json, os, sys

out, table, key, record, tolerance, commit, guard_pass = sys.argv[1:8]
record, tolerance = record == "1", float(tolerance)

def collect(folder):
    """Each guarded row's ratio (and the benchmark it came from) in one folder."""
    def load(name):
        path = os.path.join(folder, name + ".json")
        if not os.path.exists(path):
            return None
        with open(path) as f:
            return json.load(f)
    ratios = {}
    for name in ("train-cnn3", "infer-cnn3", "train-resnet-tiny", "infer-resnet-tiny"):
        for row in (load(name) or {}).get("rows", []):
            if row.get("plies_over_torch") is not None:
                ratios[f"{name} batch {row['batch']} / PyTorch"] = (row["plies_over_torch"], name)
    for row in (load("evaluator-cnn3") or {}).get("forward", []):
        if row.get("service_over_torch") is not None:
            ratios[f"evaluator-cnn3 batch {row['batch']} / PyTorch forward"] = (
                row["service_over_torch"], "evaluator-cnn3")
    loader = load("loader")
    if loader is not None:
        if loader.get("loader_over_pyarrow") is not None:
            ratios["loader / pyarrow"] = (loader["loader_over_pyarrow"], "loader")
        ratios["loader / cnn3 training"] = (loader["loader_over_training"], "loader")
    return ratios

first = collect(out)
again = collect(os.path.join(out, "retry"))
source = {b: name for b, (_, name) in first.items()}
ratios = {b: max(v, again.get(b, (v,))[0]) for b, (v, _) in first.items()}

header = ["processor", "benchmark", "ratio", "date", "commit"]
rows = []
if os.path.exists(table):
    with open(table) as f:
        rows = [r for r in csv.DictReader(f, delimiter="\t")]
recorded = {r["benchmark"]: r for r in rows if r["processor"] == key}

# The loader's ratios are printed, not guarded: on the small shipped
# archive an epoch lasts milliseconds and two idle runs differ twofold.
INFO = {"loader / pyarrow", "loader / cnn3 training"}
failed = []
print(f"{'benchmark':<52} {'ratio':>8} {'recorded':>9} {'floor':>7}  verdict")
for bench, ratio in ratios.items():
    r = recorded.get(bench)
    if r is None:
        print(f"{bench:<52} {ratio:>8.2f} {'-':>9} {'-':>7}  no figure for this processor")
        continue
    want = float(r["ratio"])
    floor = want * (1 - tolerance)
    verdict = "ok" if ratio >= floor else "SLOWER"
    if bench in INFO:
        verdict = "info (not guarded)"
    elif ratio < floor:
        failed.append(bench)
    print(f"{bench:<52} {ratio:>8.2f} {want:>9.2f} {floor:>7.2f}  {verdict} (recorded {r['date']}, {r['commit']})")
with open(os.path.join(out, "last.json"), "w") as f:
    json.dump({"processor": key, "commit": commit, "ratios": ratios, "failed": failed}, f, indent=1)

if record:
    today = datetime.date.today().isoformat()
    rows = [r for r in rows if r["processor"] != key]
    rows += [{"processor": key, "benchmark": b, "ratio": f"{v:.3f}", "date": today, "commit": commit}
             for b, v in ratios.items()]
    with open(table + ".tmp", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=header, delimiter="\t", lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    os.replace(table + ".tmp", table)
    print(f"recorded {len(ratios)} figures for {key} in {table}")
elif not recorded:
    print(f"no figures recorded for {key}: run with --record on an idle machine to add them")
elif failed and guard_pass == "1":
    names = sorted({source[b] for b in failed})
    with open(os.path.join(out, "retry.list"), "w") as f:
        f.write("\n".join(names) + "\n")
    print(f"{len(failed)} ratio(s) under the floor; running {', '.join(names)} once more")
    sys.exit(3)
elif failed:
    print(f"FAILED: {len(failed)} ratio(s) more than {tolerance:.0%} under the recorded figure "
          + "in two runs: " + "; ".join(failed))
    sys.exit(1)
else:
    print(f"all {len(ratios)} ratios within {tolerance:.0%} of the recorded figures")
EOF
}

set +e
check 1
status=$?
set -e
if [ "$status" = 3 ]; then
  for spec in "${BENCHES[@]}"; do
    name=${spec%% *}
    if grep -qx "$name" "$OUT/retry.list"; then
      # shellcheck disable=SC2086
      run "$OUT/retry" $spec
    fi
  done
  check 2
else
  exit "$status"
fi
