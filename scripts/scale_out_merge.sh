#!/usr/bin/env bash
# After the N shards of scale_out_shard.sh: one dataset, OUT/dataset, whose
# manifest lists every shard's Arrow files (hard links, not copies), then
# verified (sizes, sha256, rows, splits, no game twice).
#
# Usage: scale_out_merge.sh N OUT
set -euo pipefail
if [ $# -ne 2 ]; then
  echo "usage: $0 N OUT" >&2
  exit 2
fi
N=$1 OUT=$2
PLIES=${PLIES:-plies}
dirs=()
for ((i = 0; i < N; i++)); do
  dirs+=("$OUT/shard-$i/dataset")
done
"$PLIES" dataset merge "${dirs[@]}" --out "$OUT/dataset"
"$PLIES" dataset verify "$OUT/dataset"
