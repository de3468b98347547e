#!/usr/bin/env bash
# Positions at scale: self-play records -> a 4M-position Arimaa dataset ->
# verify -> stats -> the streaming loader against cnn3's training step rate
# and against pyarrow; then an Amazons dataset in all three encodings.
# Wall time and peak memory of each stage come from /usr/bin/time.
#
#   bash scripts/bench_dataset.sh [OUT_DIR]      (default runs/bench-dataset)
#
# Needs a release build (cargo build --release) and, for the pyarrow side of
# the loader bench, a Python with pyarrow and numpy ($PLIES_DATA_PYTHON or
# .venv-data; `python3 -m venv .venv-data && .venv-data/bin/pip install pyarrow numpy`).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-runs/bench-dataset}
PLIES=target/release/plies
GAMES=${ARIMAA_GAMES:-45000}
rm -rf "$OUT"
mkdir -p "$OUT"

timed() { # LABEL CMD...: runs CMD, then prints LABEL, wall seconds and peak RSS
  local label=$1
  shift
  /usr/bin/time -f "%e %M" -o "$OUT/.time" "$@"
  read -r secs kb <"$OUT/.time"
  printf '%-44s %8s s %8d MiB peak\n' "$label" "$secs" $((kb / 1024)) | tee -a "$OUT/timings.txt"
}

echo "== Arimaa: $GAMES self-play games (random-steps vs random-steps)"
timed "arimaa selfplay ($GAMES games)" \
  $PLIES selfplay --game arimaa --white random-steps --black random-steps \
  --games "$GAMES" --seed 1 --out "$OUT/arimaa-selfplay" --quiet
timed "arimaa dataset build (arimaa-6x8x8)" \
  $PLIES dataset build --records "$OUT"/arimaa-selfplay/games/part-*.jsonl \
  --encoder arimaa-6x8x8 --last-plies 160 --out "$OUT/arimaa-6x8x8" --quiet
timed "arimaa dataset verify" $PLIES dataset verify "$OUT/arimaa-6x8x8"
$PLIES dataset stats "$OUT/arimaa-6x8x8" | tee "$OUT/arimaa-6x8x8-stats.txt"
$PLIES bench loader --data "$OUT/arimaa-6x8x8" --batch 1024 | tee "$OUT/arimaa-loader.txt"

echo "== Amazons 10x10: 5000 self-play games (random vs random), three encodings"
timed "amazons selfplay (5000 games)" \
  $PLIES selfplay --game amazons --white random --black random \
  --games 5000 --seed 1 --out "$OUT/amazons-selfplay" --quiet
for enc in amazons-units amazons-mobility amazons-bits; do
  timed "amazons dataset build ($enc)" \
    $PLIES dataset build --records "$OUT"/amazons-selfplay/games/part-*.jsonl \
    --encoder "$enc" --out "$OUT/$enc" --quiet
  timed "amazons dataset verify ($enc)" $PLIES dataset verify "$OUT/$enc"
  $PLIES bench loader --data "$OUT/$enc" --batch 1024 --train-steps 10 \
    | tee "$OUT/$enc-loader.txt"
done

echo
cat "$OUT/timings.txt"
