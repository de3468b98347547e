#!/usr/bin/env bash
# Regenerates the rules-oracle fixtures in tests/fixtures/ from OpenSpiel
# (PyPI open-spiel==2.0.2). The Rust tests replay them move for move.
#   bash scripts/gen_oracle_fixtures.sh
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=.venv-oracle
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q open-spiel==2.0.2
fi
"$VENV/bin/python" scripts/oracles/spiel_oracle.py tic_tac_toe --n 2000 --seed 7 \
  > tests/fixtures/tictactoe_oracle.jsonl
echo "wrote tests/fixtures/tictactoe_oracle.jsonl ($(wc -l < tests/fixtures/tictactoe_oracle.jsonl) games)"
