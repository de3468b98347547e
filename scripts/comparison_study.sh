#!/usr/bin/env bash
# Comparison training (the Bonanza method) and move prediction, end to end:
#   Arimaa: the shipped archive games (allgames2002.txt + fake_archive.txt;
#   never the February 2026 games) -> a piece-square table trained by
#   comparison, with the paper's settings (bonanza) and with a softmax
#   objective -> the rank of the expert's move on the 147 games of February
#   2026, beside material and random.
#   Gomoku: the PlayOK games, split by game (70/10/20) -> linear and cnn3
#   trained by comparison -> move prediction on the held-out test games,
#   beside naive and random.
#
#   bash scripts/comparison_study.sh
#
# Outputs in runs/comparison/ (tables printed, moves.json / moves.csv, the
# trained tables' heatmaps). Env: PLIES (binary, default
# target/release/plies).
set -euo pipefail
cd "$(dirname "$0")/.."
PLIES=${PLIES:-target/release/plies}
OUT=runs/comparison
[ -x "$PLIES" ] || cargo build --release
mkdir -p "$OUT"

# Arimaa
"$PLIES" import --game arimaa data/arimaa/allgames2002.txt data/arimaa/fake_archive.txt \
    --out "$OUT/arimaa-records" --force
"$PLIES" dataset build --records "$OUT/arimaa-records/games.jsonl" --encoder arimaa-6x8x8 \
    --terminations all --out "$OUT/arimaa-ds" --force --quiet
"$PLIES" import --game arimaa data/arimaa/eval/eval-2026-02.txt --out "$OUT/eval-records" --force
"$PLIES" dataset build --records "$OUT/eval-records/games.jsonl" --encoder arimaa-6x8x8 \
    --terminations all --valid 0 --test 1 --out "$OUT/eval-ds" --force --quiet
START=data/arimaa/models/linear-material.json
"$PLIES" train --data "$OUT/arimaa-ds" --model "$START" --optimizer sgd --lr 0 --epochs 1 \
    --out "$OUT/arimaa-start" --overwrite --quiet
"$PLIES" train --data "$OUT/arimaa-ds" --model "$START" --objective bonanza --epochs 3 --seed 1 \
    --out "$OUT/arimaa-bonanza" --overwrite --quiet
"$PLIES" train --data "$OUT/arimaa-ds" --model "$START" --objective comparison \
    --comparison-loss softmax --sample 1024 --optimizer adamw --lr 0.003 --weight-decay 0 \
    --batch 16 --epochs 6 --seed 1 --out "$OUT/arimaa-softmax" --overwrite --quiet
"$PLIES" train --data "$OUT/arimaa-ds" --model "$START" --objective comparison \
    --comparison-loss softmax --sample 1024 --optimizer adamw --lr 0.0003 --weight-decay 0 \
    --batch 16 --epochs 4 --seed 1 --out "$OUT/arimaa-softmax-slow" --overwrite --quiet
"$PLIES" train --data "$OUT/arimaa-ds" --model "$START" --objective comparison \
    --sample 1024 --optimizer adamw --lr 0.0003 --weight-decay 0 \
    --batch 16 --epochs 4 --seed 1 --out "$OUT/arimaa-sigmoid" --overwrite --quiet
# The same objective on arimaa-20x8x8 (a plane for each side's pieces, so a
# table can hold material's advanced-rabbit terms, plus frozen, dominated and
# trap-guard planes): 1,280 weights started at exactly the material
# evaluator's terms (linear-material-rich.json); settings chosen on the
# archive's valid split. About 9 minutes an epoch on 2 busy cores.
"$PLIES" dataset build --records "$OUT/arimaa-records/games.jsonl" --encoder arimaa-20x8x8 \
    --terminations all --out "$OUT/arimaa-rich-ds" --force --quiet
"$PLIES" dataset build --records "$OUT/eval-records/games.jsonl" --encoder arimaa-20x8x8 \
    --terminations all --valid 0 --test 1 --out "$OUT/eval-rich-ds" --force --quiet
RICH=data/arimaa/models/linear-material-rich.json
"$PLIES" train --data "$OUT/arimaa-rich-ds" --model "$RICH" --optimizer sgd --lr 0 --epochs 1 \
    --out "$OUT/rich-start" --overwrite --quiet
"$PLIES" train --data "$OUT/arimaa-rich-ds" --model "$RICH" --objective comparison \
    --comparison-loss softmax --temperature 0.01 --optimizer adamw --lr 0.0003 --weight-decay 0 \
    --batch 16 --epochs 3 --seed 1 --out "$OUT/rich-softmax" --overwrite --quiet
"$PLIES" evaluate --moves --data "$OUT/eval-rich-ds" --split test --baseline material \
    --checkpoint "$OUT/rich-start" --checkpoint "$OUT/rich-softmax/best" \
    --out "$OUT/eval-2026-moves-rich"
# About 15 minutes on 2 shared cores: 10,004 positions of 16,338 moves each.
"$PLIES" evaluate --moves --data "$OUT/eval-ds" --split test --baseline material \
    --checkpoint "$OUT/arimaa-start" --checkpoint "$OUT/arimaa-bonanza" \
    --checkpoint "$OUT/arimaa-softmax" --checkpoint "$OUT/arimaa-softmax-slow" \
    --checkpoint "$OUT/arimaa-sigmoid" --out "$OUT/eval-2026-moves"
# Equal depth (one turn) against material alpha-beta, 200 games each.
for run in rich-softmax/best arimaa-softmax-slow arimaa-bonanza arimaa-start; do
    "$PLIES" match --game arimaa --a "alphabeta:depth=1,eval=ckpt:$OUT/$run" \
        --b alphabeta:depth=1,eval=material --games 200 --seed 1 | tee "$OUT/match-${run%/best}.txt"
done
for run in arimaa-bonanza arimaa-softmax; do
    "$PLIES" inspect "$OUT/$run" --plot "$OUT/$run-psq.png"
done

# Gomoku
"$PLIES" import --game gomoku --format playok-pgn data/gomoku/evacoregen6.pgn \
    data/gomoku/runglathap.pgn --out "$OUT/gomoku-records" --force
"$PLIES" dataset build --records "$OUT/gomoku-records/games.jsonl" --encoder stones-2 \
    --terminations all --valid 0.1 --test 0.2 --out "$OUT/gomoku-ds" --force --quiet
"$PLIES" train --data "$OUT/gomoku-ds" --model linear --objective comparison \
    --comparison-loss softmax --optimizer adamw --lr 0.01 --batch 32 --epochs 10 --seed 1 \
    --out "$OUT/gomoku-linear" --overwrite --quiet
"$PLIES" train --data "$OUT/gomoku-ds" --model cnn3 --objective comparison \
    --comparison-loss softmax --optimizer adamw --lr 0.001 --batch 32 --epochs 2 --seed 1 \
    --out "$OUT/gomoku-cnn3" --overwrite --quiet
"$PLIES" evaluate --moves --data "$OUT/gomoku-ds" --split test --baseline naive \
    --checkpoint "$OUT/gomoku-linear/best" --checkpoint "$OUT/gomoku-cnn3/best" \
    --out "$OUT/gomoku-moves"
