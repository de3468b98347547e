#!/usr/bin/env bash
# Records the deterministic outputs of the main job's stages, on a smaller
# budget, as one "name sha256" line each: imported records, seeded self-play
# of every game, dataset shards, a CPU training run's checkpoint bytes,
# seeded matches of every game and player family, and the Tic-tac-toe
# tables. Two builds that behave the same print the same lines:
#   bash scripts/behaviour_snapshot.sh OUT_DIR > before.txt   # one build
#   bash scripts/behaviour_snapshot.sh OUT_DIR > after.txt    # the other
#   diff before.txt after.txt
# PLIES names the binary (default target/release/plies). Wall-clock fields
# (seconds, rates) are dropped from JSON before hashing.
set -euo pipefail
cd "$(dirname "$0")/.."
export RAYON_NUM_THREADS=2
P=${PLIES:-./target/release/plies}
OUT=${1:?usage: behaviour_snapshot.sh OUT_DIR}
rm -rf "$OUT"
mkdir -p "$OUT"

# Hash of files in a stable order; JSON with its timing fields removed and
# the output directory written as OUT (so two snapshots in different
# directories compare).
hash_files() { # name files...
  local name=$1
  shift
  printf '%s %s\n' "$name" "$(cat "$@" | sha256sum | cut -d' ' -f1)"
}
untimed() { jq -cS 'walk(if type == "object" then with_entries(select(.key | test("second|elapsed|per_s|rate|time|duration|created"; "i") | not)) else . end)'; }
hash_json() { # name command...
  local name=$1
  shift
  printf '%s %s\n' "$name" "$("$@" | untimed | sed "s|$OUT|OUT|g" | sha256sum | cut -d' ' -f1)"
}

$P import --game arimaa data/arimaa/allgames2002.txt data/arimaa/fake_archive.txt \
  --out "$OUT/arimaa-games" > /dev/null
hash_files import-arimaa "$OUT/arimaa-games/games.jsonl"
$P rules moves --game arimaa --digest data/arimaa/bench_positions.txt > "$OUT/digests.txt"
hash_files arimaa-move-digests "$OUT/digests.txt"

selfplay() { # game white black games extra...
  local game=$1 white=$2 black=$3 games=$4
  shift 4
  $P selfplay --game "$game" --white "$white" --black "$black" --games "$games" --seed 11 \
    --out "$OUT/sp-$game" --quiet "$@" > /dev/null
  hash_files "selfplay-$game" "$OUT/sp-$game"/games/part-*.jsonl
}
selfplay arimaa alphabeta:depth=1,eval=material alphabeta:depth=1,eval=material 60 --epsilon 0.1
selfplay amazons greedy:eval=mindist random 20 --size 6
selfplay pentago greedy naive 20
selfplay gomoku naive random 20 --size 9
selfplay atari-go naive random 20 --size 7
selfplay tictactoe naive random 50

$P dataset build --records "$OUT/arimaa-games/games.jsonl" "$OUT"/sp-arimaa/games/part-*.jsonl \
  --encoder arimaa-6x8x8 --last-plies 160 --terminations all --out "$OUT/arimaa-ds" --quiet > /dev/null
hash_files dataset-arimaa-shards "$OUT"/arimaa-ds/*.arrow
$P train --data "$OUT/arimaa-ds" --model cnn3 --optimizer nesterov --lr 0.01 --momentum 0.9 \
  --epochs 1 --batch 256 --seed 1 --out "$OUT/cnn3" --quiet > /dev/null
hash_files train-cnn3-weights "$OUT/cnn3/best/model.safetensors"

match() { # name game a b games extra...
  local name=$1 game=$2 a=$3 b=$4 games=$5
  shift 5
  hash_json "match-$name" $P match --game "$game" --a "$a" --b "$b" --games "$games" --seed 3 \
    --quiet --json "$@"
}
match arimaa-ckpt arimaa "greedy:eval=ckpt:$OUT/cnn3/best" alphabeta:depth=1,eval=material 2 --max-plies 40
match arimaa-mcts arimaa mcts:sims=64,threads=1 random 2 --max-plies 20
match amazons amazons alphabeta:depth=1,eval=lieberum mcts:sims=64,threads=1 4 --size 6
match pentago pentago alphabeta:depth=1 naive 4
match gomoku gomoku mcts:sims=64,threads=1 naive 4 --size 9
match atari-go atari-go mcts:sims=64,threads=1 random 4 --size 7
match tictactoe tictactoe expert random 50

$P data generate --game tictactoe --a td:20 --b expert --games 2000 --seed 1 --out "$OUT/db" > /dev/null
hash_files ttt-db "$OUT"/db/*.arrow
$P train td --data "$OUT/db" --hidden 20 --examples 4000 --eval-every 2000 --seed 1 \
  --out "$OUT/ttt-td" > /dev/null
hash_files ttt-td-weights "$OUT/ttt-td/model.safetensors"
$P experiment ttt --exp 2 --sims 1 --seed 1 --out "$OUT/exp2" > /dev/null
hash_json ttt-exp2-summary cat "$OUT/exp2/summary.json"
hash_files ttt-exp2-runs "$OUT/exp2/equity_runs.csv"
match ttt-network tictactoe "greedy:$OUT/ttt-td" expert 50
match ttt-network-exact tictactoe "greedy+:$OUT/ttt-td" random 50
$P arena --game gomoku --size 9 --players random naive "alphabeta:depth=1,eval=random" \
  --games-per-pair 4 --seed 5 --out "$OUT/arena" --save-games --quiet > /dev/null
hash_files arena-gomoku-games "$OUT/arena/games.txt" "$OUT/arena/results.csv"
$P arena --game arimaa --players random-steps "greedy:eval=material" \
  --games-per-pair 2 --max-plies 30 --seed 5 --out "$OUT/arena-arimaa" --save-games --quiet > /dev/null
hash_files arena-arimaa-games "$OUT/arena-arimaa/games.txt"
