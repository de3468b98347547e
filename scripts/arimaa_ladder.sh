#!/usr/bin/env bash
# The Arimaa strength ladder: a seeded round robin (plies arena, setups from
# the shipped archives, colours alternating) between
#   random                          uniform turns
#   alphabeta:depth=1,eval=material material at 1 ply (one whole turn)
#   alphabeta:depth=1,eval=RICH     the comparison-trained 20x8x8 table in the
#                                   same search (equal depth)
#   steps:time=T,eval=material      material alpha-beta over steps, T seconds
#                                   a move
#   steps:time=T,eval=TABLE         the comparison-trained 6x8x8 table in the
#                                   same search (equal time; both evaluations
#                                   are updated per step at the same cost)
#   alphabeta:depth=1,...regression a table trained on game results
#   greedy:eval=ckpt:cnn3           the cnn3 checkpoint at 1 ply (the main
#                                   job's when it has run)
# with Bradley-Terry ratings and 95% intervals (ratings.csv, ratings.png).
#
#   bash scripts/arimaa_ladder.sh
#
# Budget: up to GAMES games per pair (default 100) over 21 pairs, a pair
# stopped once decided (arena --stop-decided: blocks of 10 games, 99.9%
# interval); T = TIME seconds a move (default 0.2). Nothing is trained on
# the February 2026 games: the comparison tables as
# scripts/comparison_study.sh makes them and the regression table on the
# shipped archive games, cnn3 as below. Resumable by
# stage: a finished stage (a checkpoint, the arena's arena.json) is kept,
# an unfinished one is run again. Env: PLIES, GAMES, TIME, SEED, OUT.
set -euo pipefail
cd "$(dirname "$0")/.."
PLIES=${PLIES:-target/release/plies}
GAMES=${GAMES:-100}
TIME=${TIME:-0.2}
SEED=${SEED:-1}
OUT=${OUT:-runs/ladder}
CMP=runs/comparison
[ -x "$PLIES" ] || cargo build --release
mkdir -p "$OUT" "$CMP"

if [ ! -f "$CMP/arimaa-ds/manifest.json" ]; then
    "$PLIES" import --game arimaa data/arimaa/allgames2002.txt data/arimaa/fake_archive.txt \
        --out "$CMP/arimaa-records" --force
    "$PLIES" dataset build --records "$CMP/arimaa-records/games.jsonl" --encoder arimaa-6x8x8 \
        --terminations all --out "$CMP/arimaa-ds" --force --quiet
fi
START=data/arimaa/models/linear-material.json
if [ ! -f "$CMP/arimaa-softmax-slow/config.json" ]; then
    "$PLIES" train --data "$CMP/arimaa-ds" --model "$START" --objective comparison \
        --comparison-loss softmax --sample 1024 --optimizer adamw --lr 0.0003 --weight-decay 0 \
        --batch 16 --epochs 4 --seed 1 --out "$CMP/arimaa-softmax-slow" --overwrite --quiet
fi
if [ ! -f "$CMP/rich-softmax/best/config.json" ]; then
    "$PLIES" dataset build --records "$CMP/arimaa-records/games.jsonl" --encoder arimaa-20x8x8 \
        --terminations all --out "$CMP/arimaa-rich-ds" --force --quiet
    "$PLIES" train --data "$CMP/arimaa-rich-ds" --model data/arimaa/models/linear-material-rich.json \
        --objective comparison --comparison-loss softmax --temperature 0.01 --optimizer adamw \
        --lr 0.0003 --weight-decay 0 --batch 16 --epochs 3 --seed 1 --out "$CMP/rich-softmax" \
        --overwrite --quiet
fi
if [ ! -f "$OUT/arimaa-regression/config.json" ]; then
    "$PLIES" train --data "$CMP/arimaa-ds" --model "$START" --optimizer nesterov --lr 0.001 \
        --momentum 0.9 --epochs 5 --batch 256 --seed 1 --out "$OUT/arimaa-regression" \
        --overwrite --quiet
fi
# The cnn3 checkpoint: the main job's (archive and 4,000 self-play games)
# when scripts/quickstart.sh has run, else one trained on the archive alone.
CNN3=runs/quickstart/arimaa-cnn3/best
if [ ! -f "$CNN3/config.json" ]; then
    CNN3=$OUT/arimaa-cnn3
    if [ ! -f "$CNN3/config.json" ]; then
        "$PLIES" train --data "$CMP/arimaa-ds" --model cnn3 --optimizer nesterov --lr 0.01 \
            --momentum 0.9 --epochs 8 --batch 256 --seed 1 --out "$CNN3" --overwrite --quiet
    fi
fi
echo "cnn3 checkpoint: $CNN3"

TABLE=ckpt:$CMP/arimaa-softmax-slow
RICH=ckpt:$CMP/rich-softmax/best
if [ ! -f "$OUT/arena/arena.json" ]; then
    "$PLIES" arena --game arimaa --games-per-pair "$GAMES" --stop-decided --seed "$SEED" \
        --max-plies 300 --out "$OUT/arena" \
        --players random alphabeta:depth=1,eval=material "alphabeta:depth=1,eval=$RICH" \
        "steps:time=$TIME,eval=material" "steps:time=$TIME,eval=$TABLE" \
        "alphabeta:depth=1,eval=ckpt:$OUT/arimaa-regression" \
        "greedy:eval=ckpt:$CNN3"
fi
cat "$OUT/arena/ratings.csv"
echo "chart: $OUT/arena/ratings.png"
