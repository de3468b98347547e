#!/usr/bin/env bash
# Regenerates the Gomoku / Atari-Go / Pentago / Connect Four rules-oracle
# fixtures in tests/fixtures/ from OpenSpiel (PyPI open-spiel==2.0.2), 500
# random games each (Connect Four: 3000). tests/stones_rules.rs and
# tests/connect_four_rules.rs replay them move for move.
# Options after the params go to the oracle (--n N overrides the 500 games).
# Large boards use --compact (legal-move count + FNV digest per ply); a file
# still over ~3 MB (the per-ply board strings) is stored gzipped as
# NAME_oracle.jsonl.gz, which tests/stones_rules.rs unpacks with `gzip -dc`.
#   bash scripts/gen_spiel_fixtures.sh               # all of them
#   bash scripts/gen_spiel_fixtures.sh connect_four  # only the named ones
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=.venv-oracle
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q open-spiel==2.0.2
fi
ORACLE=scripts/oracles/spiel_oracle.py
ONLY="$*"
gen() { # name game seed params [oracle options: --compact, --n N]
  if [ -n "$ONLY" ] && [[ " $ONLY " != *" $1 "* ]]; then return; fi
  local out="tests/fixtures/$1_oracle.jsonl"
  "$VENV/bin/python" "$ORACLE" "$2" --n 500 --seed "$3" --params "$4" "${@:5}" > "$out.tmp"
  mv "$out.tmp" "$out"
  rm -f "$out.gz"
  if [ "$(wc -c < "$out")" -gt 3000000 ]; then
    gzip -9n "$out"
    out="$out.gz"
  fi
  echo "wrote $out ($(du -k "$out" | cut -f1) KiB)"
}
gen gomoku_9 gomoku 11 size=9 --compact
gen gomoku_15 gomoku 12 size=15 --compact
gen atari_go_5 atari_go 13 board_size=5
gen atari_go_9 atari_go 14 board_size=9 --compact
gen atari_go_13 atari_go 15 board_size=13 --compact
gen pentago pentago 16 "" --compact
gen connect_four connect_four 17 "" --n 3000
