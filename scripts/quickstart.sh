#!/usr/bin/env bash
# The main job on the shipped data. Arimaa: prove the rules against
# pyrimaa's games, import the shipped arimaa.com archives, play 4,000 games
# of self-play between 1-ply material players, build the dataset (the
# study's last 160 plies), train Zaffetti's 3-layer CNN and a piece-square
# table on it, export the checkpoints, and evaluate them on the 147 games of
# February 2026 (never trained on) next to a material-only evaluation and
# the paper's figures. Then Tic-tac-toe: the whole chain of the Patist &
# Wiering / Fugers study (database, TD(lambda), supervised training, match,
# one game, both published experiments).
# Everything lands in runs/quickstart/ (replaced on every run) and
# runs/eval-2026/.
set -euo pipefail
cd "$(dirname "$0")/.."
export RAYON_NUM_THREADS="${RAYON_NUM_THREADS:-$(nproc)}"
cargo build --release --quiet
P=./target/release/plies
OUT=runs/quickstart
rm -rf "$OUT"
mkdir -p "$OUT"
step() { printf '\n== %s\n' "$*"; }

step "arimaa: the rules engine against pyrimaa's records, then the arimaa.com archive"
$P rules replay --game arimaa tests/fixtures/arimaa_games.jsonl
$P rules moves --game arimaa --digest data/arimaa/bench_positions.txt > "$OUT/arimaa-digests.txt"
head -3 "$OUT/arimaa-digests.txt"
$P import --game arimaa data/arimaa/allgames2002.txt data/arimaa/fake_archive.txt \
  --out "$OUT/arimaa-games" --show 3
$P bench movegen --game arimaa data/arimaa/bench_positions.txt

step "arimaa: 4,000 self-play games, 1-ply material players with 10% random moves"
$P selfplay --game arimaa --white alphabeta:depth=1,eval=material \
  --black alphabeta:depth=1,eval=material --epsilon 0.1 --games 4000 --seed 11 \
  --out "$OUT/arimaa-selfplay" --quiet

step "arimaa: dataset of the archive and self-play games (last 160 plies of each)"
$P dataset build --records "$OUT/arimaa-games/games.jsonl" "$OUT"/arimaa-selfplay/games/part-*.jsonl \
  --encoder arimaa-6x8x8 --last-plies 160 --terminations all --out "$OUT/arimaa-ds" --quiet
$P dataset stats "$OUT/arimaa-ds" --plot "$OUT/arimaa-ds-heights.png"

step "arimaa: train cnn3 (Nesterov) and a piece-square table started from material values"
$P train --data "$OUT/arimaa-ds" --model cnn3 --optimizer nesterov --lr 0.01 --momentum 0.9 \
  --epochs 8 --batch 256 --seed 1 --out "$OUT/arimaa-cnn3" --quiet
$P train --data "$OUT/arimaa-ds" --model data/arimaa/models/linear-material.json \
  --optimizer nesterov --lr 0.001 --momentum 0.9 --epochs 5 --batch 256 --seed 1 \
  --out "$OUT/arimaa-linear" --quiet

step "arimaa: evaluate on the February 2026 games, next to material and the paper"
PLIES=$P bash scripts/eval_arimaa_2026.sh "$OUT/arimaa-cnn3/best" "$OUT/arimaa-linear/best"

step "arimaa: the CNN plays (1-ply, every turn judged by the checkpoint) against 1-ply material"
$P match --game arimaa --a "greedy:eval=ckpt:$OUT/arimaa-cnn3/best" --b alphabeta:depth=1,eval=material \
  --games 4 --max-plies 60 --seed 1 --quiet

step "arimaa: the loader against the CNN's training speed"
$P bench loader --data "$OUT/arimaa-ds" --batch 256 --train-steps 10 --no-python

step "rules: replay 2,000 OpenSpiel games move for move"
$P rules replay --game tictactoe tests/fixtures/tictactoe_oracle.jsonl

step "data: 40,000 games of a learning network against EXPERT -> Arrow dataset"
$P dataset generate --game tictactoe --a td:80 --b expert --games 40000 --seed 1 --out "$OUT/db"
$P dataset verify "$OUT/db"
$P dataset stats "$OUT/db"

step "train: TD(lambda) over 160,000 games drawn from the train split; export"
$P train td --data "$OUT/db" --hidden 80 --examples 160000 --eval-every 20000 --seed 1 \
  --out "$OUT/ttt-mlp80-td"

step "train: the same network by supervised regression with Nesterov momentum"
$P train supervised --data "$OUT/db" --hidden 80 --optimizer nesterov --lr 0.01 --momentum 0.9 \
  --epochs 5 --batch 64 --seed 1 --out "$OUT/ttt-mlp80-sup"

step "evaluate: the exported checkpoint against EXPERT and RANDOM"
$P match --game tictactoe --a "greedy:$OUT/ttt-mlp80-td" --b expert --games 2000 --seed 2
$P match --game tictactoe --a "greedy:$OUT/ttt-mlp80-td" --b random --games 2000 --seed 2 --json \
  > "$OUT/match-vs-random.json"
echo "wrote $OUT/match-vs-random.json"

step "play: one game of the checkpoint against EXPERT"
$P play --game tictactoe --a "greedy:$OUT/ttt-mlp80-td" --b expert --seed 5

step "experiments: Patist & Wiering / Fugers, 10 simulations each"
$P experiment ttt --exp 2 --sims 10 --seed 1 --out "$OUT/exp2"
$P experiment ttt --exp 1 --sims 10 --seed 1 --out "$OUT/exp1"

printf '\nDone. Checkpoints: %s/arimaa-cnn3, %s/arimaa-linear; 2026 evaluation: runs/eval-2026/*/report; plots: %s/exp2/equity.png, %s/exp1/equity.png, runs/eval-2026/last160/report/height.png\n' "$OUT" "$OUT" "$OUT" "$OUT"
