#!/usr/bin/env bash
# The ladder that picks an engine's default player: a seeded round robin
# (plies arena --stop-decided) between the candidate players at the think
# time the engine gives a move at its usual clock, with Bradley-Terry
# ratings, 95% intervals and a chart. The best rated candidate is what the
# engine's --player defaults to (src/cli/engine.rs); the ratings go in
# docs/search-and-engines.md.
#
#   bash scripts/engine_ladder.sh arimaa
#
# Arimaa (plies engine aei): at tcmove 2 s and no reserve the engine thinks
# about 1.2 s a move (the clock's share less its safety margins), so the
# timed candidates get TIME=1.2 s: full-move alpha-beta and the step search,
# each with material and with the shipped comparison-trained table
# (builtin:arimaa), against one-turn material alpha-beta, the player the
# engine used to default to. Archive setups, colours alternating, games cut
# at 300 plies count as draws; up to GAMES games a pair (default 20), a pair
# stopped once its score's 99.9% interval excludes an even score. About 40
# minutes on 2 idle cores.
#
# Resumable: a finished arena (OUT/arena.json) is printed, not replayed.
# Env: PLIES (binary, default target/release/plies), GAMES, TIME, SEED, OUT.
set -euo pipefail
cd "$(dirname "$0")/.."
PLIES=${PLIES:-target/release/plies}
GAME=${1:?usage: engine_ladder.sh arimaa}
GAMES=${GAMES:-20}
SEED=${SEED:-1}
[ -x "$PLIES" ] || cargo build --release --bin plies

case "$GAME" in
  arimaa)
    TIME=${TIME:-1.2}
    OUT=${OUT:-runs/engine-ladder/arimaa}
    players=("alphabeta:depth=1,eval=material"
      "alphabeta:time=$TIME,eval=builtin:arimaa"
      "steps:time=$TIME,eval=material"
      "steps:time=$TIME,eval=builtin:arimaa")
    args=(--game arimaa --max-plies 300)
    ;;
  *)
    echo "engine_ladder: no ladder for $GAME (arimaa)" >&2
    exit 2
    ;;
esac

if [ ! -f "$OUT/arena.json" ]; then
  "$PLIES" arena "${args[@]}" --games-per-pair "$GAMES" --stop-decided --seed "$SEED" \
    --out "$OUT" --players "${players[@]}"
fi
cat "$OUT/ratings.csv"
echo "chart: $OUT/ratings.png"
