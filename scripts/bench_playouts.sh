#!/usr/bin/env bash
# Uniformly random playouts from the start, plies against OpenSpiel 2.0.2 (pyspiel),
# each game timed on both in the same run, one thread each. Prints a table and
# writes it as CSV to runs/bench/playouts.csv.
#   usage: scripts/bench_playouts.sh [SEED]
# The game counts are chosen so each side runs about a second per row; plies
# plays more games than OpenSpiel where it is faster (rates are per game).
# OpenSpiel: `amazons` picks each of its 3 actions per move uniformly from its own
# list; the `amazons*` rows (--full-moves) pick uniformly among all full moves,
# as plies does. atari-go is OpenSpiel `go` until the first capture (see
# scripts/bench_playouts.py).
set -euo pipefail
cd "$(dirname "$0")/.."
seed=${1:-1}
venv=${SPIEL_VENV:-.venv-oracle}
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q open-spiel==2.0.2
fi
cargo build --release --quiet
mkdir -p runs/bench
csv=runs/bench/playouts.csv
rows=$(mktemp)
trap 'rm -f "$rows"' EXIT

# label game size plies_games spiel_games [extra OpenSpiel flags]
cases=(
  "tictactoe tictactoe 3 2000000 200000"
  "amazons amazons 10 3000 5000"
  "amazons* amazons 10 3000 200 --full-moves"
  "amazons amazons 8 6000 8000"
  "amazons* amazons 8 6000 400 --full-moves"
  "pentago pentago 6 200000 30000"
  "gomoku gomoku 15 20000 6000"
  "gomoku gomoku 9 70000 15000"
  "atari-go atari-go 9 15000 5000"
)
for c in "${cases[@]}"; do
  read -r label game size kp ks extra <<<"$c"
  pl=$(RAYON_NUM_THREADS=1 target/release/plies bench playouts --game "$game" --size "$size" \
    --games "$kp" --seed "$seed" --json)
  # shellcheck disable=SC2086
  sp=$("$venv/bin/python" scripts/bench_playouts.py "$game" --size "$size" --games "$ks" \
    --seed "$seed" $extra)
  printf '%s\t%s\t%s\n' "$label" "$pl" "$sp" >>"$rows"
done

python3 - "$rows" "$csv" <<'PY'
import csv, json, sys
head = ["game", "size", "plies_games_per_s", "openspiel_games_per_s", "ratio",
        "plies_mean_len", "openspiel_mean_len", "plies_games", "openspiel_games"]
out = []
for line in open(sys.argv[1]):
    label, pl, sp = line.rstrip("\n").split("\t")
    pl, sp = json.loads(pl), json.loads(sp)
    out.append([label, pl["size"], f"{pl['games_per_s']:.1f}", f"{sp['games_per_s']:.1f}",
                f"{pl['games_per_s'] / sp['games_per_s']:.1f}",
                f"{pl['mean_length']:.1f}", f"{sp['mean_length']:.1f}",
                pl["games"], sp["games"]])
with open(sys.argv[2], "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(head)
    w.writerows(out)
fmt = "{:<10}{:>5}{:>16}{:>16}{:>9}{:>10}{:>10}"
print(fmt.format("game", "size", "plies games/s", "OpenSpiel g/s", "ratio", "plies len", "OS len"))
for r in out:
    print(fmt.format(r[0], r[1], r[2], r[3], r[4] + "x", r[5], r[6]))
print("amazons*: OpenSpiel picks uniformly among full moves (all 3-action sequences),"
      " as plies does; amazons: one uniform pick per OpenSpiel action.")
print(f"written: {sys.argv[2]}")
PY
