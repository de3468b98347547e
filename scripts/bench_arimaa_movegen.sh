#!/usr/bin/env bash
# Distinct full-move generation, plies against pyrimaa (PyPI aei==1.4.1), on the
# same positions in the same run, one thread each. Prints both rates and the ratio.
#   usage: scripts/bench_arimaa_movegen.sh [POSITIONS_FILE]   (default: data/arimaa/bench_positions.txt)
set -euo pipefail
cd "$(dirname "$0")/.."
file=${1:-data/arimaa/bench_positions.txt}
venv=${ARIMAA_VENV:-.venv-arimaa}
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q aei==1.4.1
fi
cargo build --release --quiet
echo "positions: $file ($(grep -cv '^\s*\(#\|$\)' "$file") positions)"
py_total=$("$venv/bin/python" scripts/oracles/arimaa_oracle.py bench "$file" | grep '^TOTAL')
plies_json=$(RAYON_NUM_THREADS=1 target/release/plies bench movegen --game arimaa "$file" --json)
python3 - "$py_total" "$plies_json" <<'PY'
import json, sys
py = dict(zip(*[iter(sys.argv[1].split()[1:])] * 2))
pl = json.loads(sys.argv[2])
py_pos, py_moves = float(py["positions_per_s"]), float(py["moves_per_s"])
print(f"{'engine':<28}{'positions/s':>14}{'distinct moves/s':>20}{'steps/s':>16}")
print(f"{'pyrimaa get_moves':<28}{py_pos:>14.2f}{py_moves:>20.0f}{'':>16}")
print(f"{'plies MoveGen':<28}{pl['positions_per_s']:>14.1f}{pl['moves_per_s']:>20.0f}{pl['steps_per_s']:>16.0f}")
print(f"ratio plies/pyrimaa: {pl['positions_per_s'] / py_pos:.0f}x positions/s")
PY
