#!/usr/bin/env python3
"""Turn the oracle's random Arimaa games into position files for differential tests.

usage: arimaa_positions.py GAMES.jsonl EVERY TURN_START_OUT PARTIAL_OUT

Every EVERY-th position before a move (counted over all games) goes to
TURN_START_OUT as "<side> <board>"; the same positions, with the first
(k mod 4) steps of the move that was played, go to PARTIAL_OUT as
"<side> <board> | <steps>" for the oracle's `steps` command.
"""
import json
import sys


def main():
    games, every, starts_out, partial_out = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    k = 0
    with open(games) as fh, open(starts_out, "w") as starts, open(partial_out, "w") as partial:
        for line in fh:
            game = json.loads(line)
            record, boards = game["record"], game["boards"]
            for i in range(2, len(record)):
                k += 1
                if k % every:
                    continue
                label, _, move = record[i].partition(" ")
                side = label[-1]
                board = boards[i - 1]
                starts.write(f"{side} {board}\n")
                steps = [t for t in move.split() if not t.endswith("x")]
                prefix = steps[: (k // every) % 4]
                # A prefix may not use the whole turn: the oracle's `steps` needs a step left.
                if len(prefix) == 4:
                    prefix = prefix[:3]
                partial.write(f"{side} {board} | {' '.join(prefix)}\n".replace(" | \n", "\n"))


if __name__ == "__main__":
    main()
