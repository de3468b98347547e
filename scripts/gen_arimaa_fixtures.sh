#!/usr/bin/env bash
# Regenerates the Arimaa differential-test fixtures from pyrimaa (PyPI aei==1.4.1).
#   tests/fixtures/arimaa_games.jsonl       120 random oracle games (records, boards, results)
#   tests/fixtures/arimaa_positions.txt     2,005 turn-start positions taken from them
#   tests/fixtures/arimaa_moves_digest.txt  the oracle's `moves --digest` of each
#   tests/fixtures/arimaa_partial.txt       the same positions part-way through the move played
#   tests/fixtures/arimaa_steps.txt         the oracle's `steps` listing of each
# The digests take pyrimaa about 30 CPU minutes; they run in two halves in parallel.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${ARIMAA_VENV:-.venv-arimaa}
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q aei==1.4.1
fi
py="$venv/bin/python"
oracle=scripts/oracles/arimaa_oracle.py
fx=tests/fixtures
"$py" "$oracle" games --n 120 --seed 2026 > "$fx/arimaa_games.jsonl"
python3 scripts/arimaa_positions.py "$fx/arimaa_games.jsonl" 5 "$fx/arimaa_positions.txt" "$fx/arimaa_partial.txt"
"$py" "$oracle" steps "$fx/arimaa_partial.txt" > "$fx/arimaa_steps.txt"
tmp=$(mktemp -d)
split -n l/2 -d "$fx/arimaa_positions.txt" "$tmp/part"
"$py" "$oracle" moves --digest "$tmp/part00" > "$tmp/digest00" &
"$py" "$oracle" moves --digest "$tmp/part01" > "$tmp/digest01" &
wait
cat "$tmp/digest00" "$tmp/digest01" > "$fx/arimaa_moves_digest.txt"
rm -r "$tmp"
wc -l "$fx"/arimaa_*
