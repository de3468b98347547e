#!/usr/bin/env bash
# Rebuilds a shipped checkpoint from the shipped configuration and seeds,
# rates it in an arena against the game's baselines, and writes the folder
# `checkpoints/` embeds (model.safetensors, config.json, and the model card
# with the arena's ratings appended). CPU runs with the same seed give the
# same weights; the arena's ratings come with 95% intervals.
#   bash scripts/ship_checkpoints.sh connect-four|atari-go|pentago|amazons|gomoku|arimaa [WORK_DIR]
# A finished training stage is kept, so a second run only rates again.
# Connect Four: the 16-generation self-play loop (data/loop/connect-four-16.json,
# about 20 minutes on 2 cores), then its best network's MCTS at 400
# simulations against naive, alpha-beta at depth 4 on the threats evaluator,
# plain UCT at 400 simulations and OpenSpiel's MCTS at 400 (PLIES_SPIEL_PYTHON
# names the Python with open_spiel; without it that player is left out).
# Arimaa: the piece-square table of arimaa-20x8x8 trained by comparison
# (softmax) on the shipped archive games, never the February 2026 ones, with
# the settings of scripts/comparison_study.sh (3 epochs, about 5 minutes
# on 2 idle cores, up to 30 on busy ones), then rated in one-turn alpha-beta against material at one
# turn, material's step search at 0.2 s a move and random (no OpenSpiel
# Arimaa exists).
# Atari-Go 9x9: the 8-generation loop of data/loop/atari-go-9.json (about
# 30 minutes on 2 idle cores), its best network's MCTS at 400 simulations
# against naive, plain UCT at 400 and OpenSpiel's MCTS (on its go) at 100.
# Pentago: the last generation of the loop taught by alpha-beta at depth 2
# on the paper's hand features (data/loop/pentago-alphabeta-d2.json, about
# 10 minutes on 2 idle cores), its MCTS at 200 simulations against naive,
# the paper's greedy player, the teacher, plain UCT at 400 and OpenSpiel's
# MCTS at 400, then 500 games against the greedy player.
# Amazons 10x10: the thesis' network fitted on Lieberum's depth-2 search
# values over the study's self-play database (`plies experiment amazons`,
# one network; 38 minutes on 2 cores shared with other jobs), in alpha-beta at depth 2
# and with no lookahead, against the good player (Lieberum, depth 2), the
# simple one (minimal distance, no lookahead) and plain UCT at 300
# (OpenSpiel's Amazons is 6x6 only).
# Gomoku 15x15: cnn3 (48 5x5 filters, 64 hidden units) trained by
# comparison on the shipped PlayOK games to rank the played move first
# (4 epochs, about 18 minutes on 2 cores), in the threat player and one
# ply deep, against the threat player on the hand patterns and on the
# pattern weights it learned by self-play (gomoku-tuned), naive and
# OpenSpiel's MCTS at 1,000 simulations.
# PLIES names the binary (default target/release/plies).
set -euo pipefail
cd "$(dirname "$0")/.."
P=$(realpath "${PLIES:-./target/release/plies}")
GAME=${1:?usage: ship_checkpoints.sh GAME [WORK_DIR]}
WORK=${2:-runs/ship}
export RAYON_NUM_THREADS=${RAYON_NUM_THREADS:-2}

match_args=()
# The best network of a self-play loop (a finished loop is kept, an
# interrupted one resumed): its folder, or an error when none was promoted.
loop_best() { # config
  local loop_dir="$WORK/loop-$GAME"
  mkdir -p "$WORK"
  "$P" loop --game "$GAME" --config "$1" --out "$loop_dir" --quiet > "$WORK/loop-$GAME.txt"
  best=$("$P" loop --game "$GAME" --config "$1" --out "$loop_dir" --json \
    | python3 -c 'import json, sys; print(json.load(sys.stdin)["best"] or "")')
  [ -n "$best" ] || { echo "ship_checkpoints: no network of $loop_dir was promoted" >&2; exit 1; }
  made_by="the best network of \`plies loop --game $GAME --config $1\`"
}

# The last generation's network of a loop whose gate promoted none (its
# self-play stayed with the bootstrap teacher; each generation trained on
# more of the teacher's games).
loop_last() { # config
  local loop_dir="$WORK/loop-$GAME"
  mkdir -p "$WORK"
  "$P" loop --game "$GAME" --config "$1" --out "$loop_dir" --quiet > "$WORK/loop-$GAME.txt"
  local last
  last=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["generations"] - 1)' "$1")
  best="$loop_dir/gen-$(printf %03d "$last")/net"
  [ -f "$best/model.safetensors" ] || { echo "ship_checkpoints: $best holds no network" >&2; exit 1; }
  made_by="the last generation's network of \`plies loop --game $GAME --config $1\`"
}

case "$GAME" in
  connect-four)
    folder=checkpoints/connect-four-resnet-tiny-loop
    loop_best data/loop/connect-four-16.json
    players=("mcts:sims=400,eval=ckpt:NET,reuse=off" naive "alphabeta:depth=4,eval=threats" "mcts:sims=400")
    if [ -n "${PLIES_SPIEL_PYTHON:-}" ]; then players+=("spiel-mcts:sims=400"); fi
    arena_args=(--game connect-four --games-per-pair 40 --random-opening 2 --seed 7)
    ;;
  atari-go)
    folder=checkpoints/atari-go-9-resnet-tiny-loop
    loop_best data/loop/atari-go-9.json
    # OpenSpiel has no Atari-Go: its Python bot plays it on OpenSpiel's go
    # (scripts/spiel_mcts_bot.py), about 0.9 ms a simulation, so it gets
    # the loop's anchor budget of 100.
    players=("mcts:sims=400,eval=ckpt:NET,reuse=off" naive "mcts:sims=400")
    if [ -n "${PLIES_SPIEL_PYTHON:-}" ]; then players+=("spiel-mcts:sims=100"); fi
    arena_args=(--game atari-go --size 9 --games-per-pair 40 --random-opening 2 --seed 7)
    ;;
  pentago)
    folder=checkpoints/pentago-resnet-tiny-loop
    loop_last data/loop/pentago-alphabeta-d2.json
    # The paper's greedy player on the hand features, the depth-2 alpha-beta
    # that taught the loop, plain UCT and OpenSpiel's MCTS; 6 random plies
    # open every game, as in the paper's protocol.
    players=("mcts:sims=200,eval=ckpt:NET,reuse=off,decisive=on" naive "greedy:eval=pentago-features"
      "alphabeta:depth=2,eval=pentago-features" "mcts:sims=400,decisive=on")
    if [ -n "${PLIES_SPIEL_PYTHON:-}" ]; then players+=("spiel-mcts:sims=400"); fi
    arena_args=(--game pentago --games-per-pair 40 --random-opening 6 --seed 7)
    match_args=(--game pentago --a "mcts:sims=200,eval=ckpt:NET,reuse=off,decisive=on"
      --b "greedy:eval=pentago-features" --games 500 --random-opening 6 --seed 1)
    ;;
  amazons)
    folder=checkpoints/amazons-10-elliott80-search
    # The thesis' network (609 territory inputs, 80 Elliott units) fitted on
    # the depth-2 search values of Lieberum's evaluator over the study's
    # 1,200-game database: the study's first round, level with the good
    # player at equal depth. Only the cheap no-lookahead equity cells are
    # played here; the arena below rates it in search.
    "$P" experiment amazons --out "$WORK/amazons" --encoders amazons-territory --hidden 80 --runs 1 \
      --searches no-lookahead --value-nets elliott-80+search --quiet > "$WORK/amazons.txt"
    best="$WORK/amazons/value-nets/elliott-80+search"
    made_by="the \`elliott-80+search\` network of \`plies experiment amazons --encoders amazons-territory --hidden 80 --runs 1 --searches no-lookahead --value-nets elliott-80+search\`"
    players=("alphabeta:depth=2,eval=ckpt:NET" "alphabeta:depth=2,eval=lieberum" "greedy:eval=mindist"
      "greedy:eval=ckpt:NET" "mcts:sims=300")
    arena_args=(--game amazons --size 10 --games-per-pair 40 --random-opening 2 --seed 7)
    # The pair that matters, the good player at equal depth, over more games.
    match_args=(--game amazons --size 10 --a "alphabeta:depth=2,eval=ckpt:NET"
      --b "alphabeta:depth=2,eval=lieberum" --games 200 --random-opening 2 --seed 1)
    ;;
  gomoku)
    folder=checkpoints/gomoku-15-cnn3-comparison
    best="$WORK/gomoku-cnn3/best"
    mkdir -p "$WORK"
    if [ ! -f "$best/config.json" ]; then
      "$P" import --game gomoku --format playok-pgn data/gomoku/evacoregen6.pgn data/gomoku/runglathap.pgn \
        --out "$WORK/gomoku-records" --force >/dev/null
      "$P" dataset build --records "$WORK/gomoku-records/games.jsonl" --encoder stones-2 \
        --terminations all --valid 0.1 --test 0.2 --out "$WORK/gomoku-ds" --force --quiet
      "$P" train --data "$WORK/gomoku-ds" --model data/gomoku/models/cnn3-5x5-h64.json \
        --objective comparison --comparison-loss softmax --optimizer adamw --lr 0.001 --batch 32 \
        --epochs 4 --seed 1 --out "$WORK/gomoku-cnn3" --overwrite --quiet
    fi
    made_by="the network \`plies train --objective comparison\` kept as best by validation loss over 4 epochs on the shipped PlayOK games (\`$WORK/gomoku-cnn3/best\`)"
    # In the threat player it values the quiet moves (wins, blocks and
    # forced wins by fours are the player's own); one ply deep it plays
    # on what it learned alone.
    players=("threats:eval=ckpt:NET" "greedy:eval=ckpt:NET" "threats:eval=gomoku-tuned" threats naive)
    if [ -n "${PLIES_SPIEL_PYTHON:-}" ]; then players+=("spiel-mcts:sims=1000"); fi
    arena_args=(--game gomoku --size 15 --games-per-pair 40 --random-opening 2 --seed 7)
    ;;
  arimaa)
    folder=checkpoints/arimaa-table-20x8x8-comparison
    best="$WORK/arimaa-rich/best"
    mkdir -p "$WORK"
    if [ ! -f "$best/config.json" ]; then
      "$P" import --game arimaa data/arimaa/allgames2002.txt data/arimaa/fake_archive.txt \
        --out "$WORK/arimaa-records" --force >/dev/null
      "$P" dataset build --records "$WORK/arimaa-records/games.jsonl" --encoder arimaa-20x8x8 \
        --terminations all --out "$WORK/arimaa-rich-ds" --force --quiet
      "$P" train --data "$WORK/arimaa-rich-ds" --model data/arimaa/models/linear-material-rich.json \
        --objective comparison --comparison-loss softmax --temperature 0.01 --optimizer adamw \
        --lr 0.0003 --weight-decay 0 --batch 16 --epochs 3 --seed 1 --out "$WORK/arimaa-rich" --quiet
    fi
    players=("alphabeta:depth=1,eval=ckpt:NET" "alphabeta:depth=1,eval=material"
      "steps:time=0.2,eval=material" random)
    arena_args=(--game arimaa --games-per-pair 20 --max-plies 300 --seed 7)
    # The arena's 20 games a pair leave wide intervals; the match against
    # material that docs/training.md quotes narrows the one that matters.
    match_args=(--game arimaa --a "alphabeta:depth=1,eval=ckpt:NET" --b "alphabeta:depth=1,eval=material"
      --games 200 --seed 1)
    made_by="the table \`plies train --objective comparison\` kept as best by validation loss over 3 epochs on the shipped archive games (\`$WORK/arimaa-rich/best\`)"
    ;;
  *)
    echo "ship_checkpoints: no recipe for $GAME (connect-four, atari-go, pentago, amazons, gomoku, arimaa)" >&2
    exit 2
    ;;
esac

# The network is rated from a copy named NET in the work folder, so the
# card's tables name it NET and keep their columns.
rm -rf "$WORK/NET"
mkdir -p "$WORK/NET"
cp "$best/model.safetensors" "$best/config.json" "$best/README.md" "$WORK/NET/"
(cd "$WORK" && "$P" arena "${arena_args[@]}" --players "${players[@]}" --out "arena-$GAME" --quiet) \
  > "$WORK/arena-$GAME.txt"
if [ "${#match_args[@]}" -gt 0 ]; then
  (cd "$WORK" && "$P" match "${match_args[@]}" --quiet) > "$WORK/match-$GAME.txt"
fi

staged="$WORK/$(basename "$folder")"
rm -rf "$staged"
mkdir -p "$staged"
cp "$best/model.safetensors" "$best/config.json" "$staged/"
# The card names the network NET and the work folder WORK, not this
# machine's paths.
{
  cat "$best/README.md"
  echo
  echo "## Ratings"
  echo
  echo "Made by \`bash scripts/ship_checkpoints.sh $GAME\` ($made_by), then rated by"
  echo "\`plies arena ${arena_args[*]} --players ${players[*]}\`"
  echo "(NET is this network; WORK, below, the script's work folder):"
  echo
  echo '```text'
  grep -v '^wrote ' "$WORK/arena-$GAME.txt"
  echo '```'
  if [ "${#match_args[@]}" -gt 0 ]; then
    echo
    echo "And \`plies match ${match_args[*]}\`:"
    echo
    echo '```text'
    cat "$WORK/match-$GAME.txt"
    echo '```'
  fi
} | sed -e "s|$WORK/|WORK/|g" > "$staged/README.md"
rm -rf "$folder"
mv "$staged" "$folder"
# The arena's chart is the game's ladder in the docs.
cp "$WORK/arena-$GAME/ratings.png" "docs/images/ladder-$GAME.png"
echo "wrote $folder (from $best); ratings in $WORK/arena-$GAME"
