#!/usr/bin/env bash
# The best Arimaa winner predictor here, end to end: the regression over
# `arimaa-features`' judgements (no board term), trained on the shipped
# archive games and 4,000 self-play games of 1-ply material players (the
# quickstart's, seed 11), then measured on the decisive February 2026
# positions (last 160 plies; never trained on) beside material and the
# paper, with the interval paired by game. About 20 minutes on 2 cores,
# most of it the self-play; every step resumes or is skipped when its
# output is already there, so an interrupted run continues where it was.
#
#   bash scripts/arimaa_judgements.sh
#
# Writes runs/arimaa-features/{ds,eval-2026,judgements,report}; the figures
# are in docs/training.md ("The judgements without the board").
# Env: PLIES (binary, default target/release/plies).
set -euo pipefail
cd "$(dirname "$0")/.."
P=${PLIES:-target/release/plies}
[ -x "$P" ] || cargo build --release --locked
OUT=runs/arimaa-features
SELFPLAY=runs/quickstart/arimaa-selfplay
mkdir -p "$OUT"

# The version of `arimaa-features` the models here take (98 globals).
FEATURES_VERSION=3

step() { printf '\n== %s\n' "$*"; }
built() { [ -f "$1/manifest.json" ]; }
# A judgements dataset of the current encoder version; one of an older
# version (other globals) is rebuilt, and the model trained on it retrained.
current() {
  built "$1" && python3 -c 'import json, sys
m = json.load(open(sys.argv[1] + "/manifest.json"))
sys.exit(m["encoder"].get("version", 1) != int(sys.argv[2]))' "$1" "$FEATURES_VERSION"
}
if built "$OUT/ds" && ! current "$OUT/ds"; then
  echo "the judgements datasets predate arimaa-features version $FEATURES_VERSION: rebuilding"
  rm -rf "$OUT/ds" "$OUT/eval-2026" "$OUT/judgements" "$OUT/report"
fi

step "4,000 self-play games of 1-ply material players (resumes by chunk)"
"$P" selfplay --game arimaa --white alphabeta:depth=1,eval=material \
  --black alphabeta:depth=1,eval=material --epsilon 0.1 --games 4000 --seed 11 \
  --out "$SELFPLAY" --quiet

step "the archive games (training) and the February 2026 games (evaluation only)"
[ -f runs/arimaa-archive/games.jsonl ] || "$P" import --game arimaa \
  data/arimaa/allgames2002.txt data/arimaa/fake_archive.txt --out runs/arimaa-archive
[ -f runs/eval-2026/records/games.jsonl ] || "$P" import --game arimaa \
  data/arimaa/eval/eval-2026-02.txt --out runs/eval-2026/records
# The material baseline's k is fitted on the archive's train split.
built runs/eval-2026/fit-dataset || "$P" dataset build \
  --records runs/arimaa-archive/games.jsonl --encoder arimaa-6x8x8 --terminations all \
  --out runs/eval-2026/fit-dataset --quiet

step "datasets of the judgements"
current "$OUT/ds" || "$P" dataset build --records runs/arimaa-archive/games.jsonl \
  "$SELFPLAY"/games/part-*.jsonl --encoder arimaa-features --last-plies 160 \
  --terminations all --out "$OUT/ds" --force --quiet
current "$OUT/eval-2026" || "$P" dataset build --records runs/eval-2026/records/games.jsonl \
  --encoder arimaa-features --valid 0 --test 1 --last-plies 160 --out "$OUT/eval-2026" --force --quiet

step "the regression over the judgements (200 epochs; resumes)"
"$P" train --data "$OUT/ds" --model data/arimaa/models/linear-judgements.json \
  --optimizer nesterov --lr 0.01 --momentum 0.9 --epochs 200 --batch 256 --seed 1 \
  --out "$OUT/judgements" --resume --quiet

step "on the decisive 2026 positions, beside material and the paper"
"$P" evaluate --checkpoint "$OUT/judgements/best" --baseline material \
  --fit-data runs/eval-2026/fit-dataset --data "$OUT/eval-2026" --split test \
  --out "$OUT/report"
"$P" inspect "$OUT/judgements/best"
