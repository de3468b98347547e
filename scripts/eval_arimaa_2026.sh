#!/usr/bin/env bash
# The 147 arimaa.com games of February 2026 (data/arimaa/eval/, evaluation
# only): import -> datasets -> plies evaluate, for the material baseline and
# any checkpoints given as arguments, into runs/eval-2026/.
#
#   bash scripts/eval_arimaa_2026.sh [CHECKPOINT_DIR...]
#
# Three datasets of the same games, every game in the test split:
#   all/       every termination (time, resignation included)
#   decisive/  the default terminations: goal, elimination, immobilization
#   last160/   decisive, last 160 plies of each game (Zaffetti's filter)
# The material baseline's k is fitted on the train split of the archive games
# shipped for training (allgames2002.txt + fake_archive.txt), never on these.
# Each runs/eval-2026/<dataset>/report/ holds metrics.json, by_height.csv,
# by_height_buckets.csv, by_ply.csv, height.png and height.svg.
# Env: PLIES (binary, default target/release/plies), DEVICE (default cpu).
set -euo pipefail
cd "$(dirname "$0")/.."
PLIES=${PLIES:-target/release/plies}
DEVICE=${DEVICE:-cpu}
OUT=runs/eval-2026
[ -x "$PLIES" ] || cargo build --release
mkdir -p "$OUT"

CKPTS=()
for c in "$@"; do CKPTS+=(--checkpoint "$c"); done

"$PLIES" import --game arimaa data/arimaa/eval/eval-2026-02.txt --out "$OUT/records" --force
"$PLIES" import --game arimaa data/arimaa/allgames2002.txt data/arimaa/fake_archive.txt \
    --out "$OUT/fit-records" --force
"$PLIES" dataset build --records "$OUT/fit-records/games.jsonl" --encoder arimaa-6x8x8 \
    --terminations all --out "$OUT/fit-dataset" --force --quiet

build() { # NAME FLAGS...
    local name=$1; shift
    "$PLIES" dataset build --records "$OUT/records/games.jsonl" --encoder arimaa-6x8x8 \
        --valid 0 --test 1 --out "$OUT/$name/dataset" --force --quiet "$@"
}
build all --terminations all
build decisive
build last160 --last-plies 160

for name in all decisive last160; do
    echo "== $name"
    "$PLIES" evaluate "${CKPTS[@]}" --baseline material --fit-data "$OUT/fit-dataset" \
        --data "$OUT/$name/dataset" --split test --device "$DEVICE" \
        --out "$OUT/$name/report" | tee "$OUT/$name/report.txt"
done
