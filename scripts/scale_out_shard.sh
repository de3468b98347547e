#!/usr/bin/env bash
# One shard of a self-play run spread over N machines: its games and their
# dataset, in OUT/shard-I. The Slurm array job and the Kubernetes Indexed
# Job of docs/scale-out.md run this script; so does tests/scale_out.rs
# (with a small GAMES and fast players).
#
# Usage: scale_out_shard.sh I N OUT    (0 <= I < N)
# The defaults are the main job's self-play (scripts/quickstart.sh); the
# environment overrides them: GAMES SEED WHITE BLACK EPSILON CHUNK_GAMES
# ENCODER LAST_PLIES THREADS, and PLIES (the binary).
set -euo pipefail
if [ $# -ne 3 ]; then
  echo "usage: $0 I N OUT" >&2
  exit 2
fi
I=$1 N=$2 OUT=$3
PLIES=${PLIES:-plies}
"$PLIES" selfplay --game "${GAME:-arimaa}" \
  --white "${WHITE:-alphabeta:depth=1,eval=material}" \
  --black "${BLACK:-alphabeta:depth=1,eval=material}" \
  --epsilon "${EPSILON:-0.1}" --games "${GAMES:-4000}" --seed "${SEED:-11}" \
  --chunk-games "${CHUNK_GAMES:-256}" --shard "$I/$N" \
  --dataset "${ENCODER:-arimaa-6x8x8}" --last-plies "${LAST_PLIES:-160}" \
  --threads "${THREADS:-0}" --out "$OUT/shard-$I" --quiet
