#!/usr/bin/env bash
# Writes the Amazons oracle fixtures that tests/amazons_rules.rs replays:
#   tests/fixtures/amazons_oracle_6.jsonl   500 random 6x6 games
#   tests/fixtures/amazons_oracle_8.jsonl   500 random 8x8 games
#   tests/fixtures/amazons_oracle_10.jsonl  500 random 10x10 games
# The 6x6 file starts with 5 and the 8x8 file with 2 FULL games (the
# sorted legal-move list at every ply); all other games are --compact
# (legal_count + legal_fnv digest per ply). The OpenSpiel action ids are
# dropped (the replay ignores them). A file over ~3 MB is stored gzipped
# (NAME.jsonl.gz: the 8x8 and 10x10 ones), which tests/amazons_rules.rs
# unpacks with `gzip -dc`. Games are OpenSpiel's (open-spiel 2.0.2)
# uniformly random games, seeds 1 (full) and 2 (compact).
# Usage: scripts/gen_amazons_fixtures.sh [PYTHON]   (default .venv-oracle/bin/python)
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${1:-.venv-oracle/bin/python}
ORACLE=scripts/oracles/spiel_oracle.py
OUT=tests/fixtures
GAMES=500
mkdir -p "$OUT"
strip() {  # drop "actions", print compact JSON
  "$PY" -c '
import json, sys
for line in sys.stdin:
    g = json.loads(line)
    g.pop("actions", None)
    print(json.dumps(g, separators=(",", ":")))
'
}
for n in 6 8 10; do
  case $n in 6) full=5 ;; 8) full=2 ;; 10) full=0 ;; esac
  f="$OUT/amazons_oracle_$n.jsonl"
  {
    if [ "$full" -gt 0 ]; then "$PY" "$ORACLE" amazons --n "$full" --seed 1 --params board_size=$n; fi
    "$PY" "$ORACLE" amazons --n $((GAMES - full)) --seed 2 --params board_size=$n --compact
  } | strip > "$f.tmp"
  mv "$f.tmp" "$f"
  rm -f "$f.gz"
  games=$(wc -l < "$f")
  if [ "$(wc -c < "$f")" -gt 3000000 ]; then  # like gen_spiel_fixtures.sh
    gzip -9n "$f"
    f="$f.gz"
  fi
  echo "$f: $games games, $(wc -c < "$f") bytes"
done
