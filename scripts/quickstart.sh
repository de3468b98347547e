#!/usr/bin/env bash
# The main job on the shipped default (Tic-tac-toe): build, prove the rules
# against OpenSpiel's records, make a database of games, train an Elliott
# MLP by TD(lambda) on it, evaluate it against EXPERT, export it as a
# checkpoint, play with it, and reproduce the published experiments. Then
# Arimaa: prove the rules against pyrimaa's games, list distinct moves,
# import the shipped arimaa.com archives and time move generation.
# Everything lands in runs/quickstart/ (replaced on every run).
set -euo pipefail
cd "$(dirname "$0")/.."
export RAYON_NUM_THREADS="${RAYON_NUM_THREADS:-$(nproc)}"
cargo build --release --quiet
P=./target/release/plies
OUT=runs/quickstart
rm -rf "$OUT"
mkdir -p "$OUT"
step() { printf '\n== %s\n' "$*"; }

step "rules: replay 2,000 OpenSpiel games move for move"
$P rules replay --game tictactoe tests/fixtures/tictactoe_oracle.jsonl

step "data: 40,000 games of a learning network against EXPERT -> Arrow dataset"
$P data generate --game tictactoe --a td:80 --b expert --games 40000 --seed 1 --out "$OUT/db"
$P data verify "$OUT/db"
$P data stats "$OUT/db"

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

step "arimaa: the rules engine against pyrimaa's records, then the arimaa.com archive"
$P rules replay --game arimaa tests/fixtures/arimaa_games.jsonl
$P rules moves --game arimaa --digest data/arimaa/bench_positions.txt > "$OUT/arimaa-digests.txt"
head -3 "$OUT/arimaa-digests.txt"
$P import --game arimaa data/arimaa/allgames2002.txt data/arimaa/fake_archive.txt \
  --out "$OUT/arimaa-games" --show 3
$P bench movegen --game arimaa data/arimaa/bench_positions.txt

step "arimaa: a dataset of the archive games (the study's filters), then self-play into a dataset"
$P dataset build --records "$OUT/arimaa-games/games.jsonl" --encoder arimaa-6x8x8 \
  --last-plies 160 --out "$OUT/arimaa-archive-ds" --force --quiet
$P selfplay --game arimaa --white random-steps --black alphabeta:depth=1,eval=material \
  --epsilon 0.1 --alternate --games 200 --seed 1 --out "$OUT/arimaa-selfplay" --force --quiet \
  --dataset arimaa-20x8x8
$P dataset stats "$OUT/arimaa-selfplay/dataset"
$P bench loader --data "$OUT/arimaa-selfplay/dataset" --batch 256 --train-steps 10 --no-python

printf '\nDone. Plots: %s/exp2/equity.png, %s/exp1/equity.png\n' "$OUT" "$OUT"
