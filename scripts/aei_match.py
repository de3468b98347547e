#!/usr/bin/env python3
"""Whole Arimaa games between `plies engine aei` and pyrimaa's simple_engine.

The games are run by the reference controller code of the PyPI package
`aei` (module `pyrimaa`): each engine is started as a `StdioEngine` and
driven by an `EngineController`, and `pyrimaa.game.Game` plays the game
(setups, time control options, `go`, `makemove` to both sides, legality of
every move by pyrimaa's own board). Colours alternate, plies taking gold in
the first game. A turn limit, applied here, ends games that go on too long
(the winner is the side with more pieces, none on a tie).

Prints one JSON object: the games, each result (winner, reason, plies,
turns, seconds, plies' slowest move) and every protocol problem seen: a
`log Error`/`log Warning` from either engine, an illegal move, a timeout, a
resignation, an engine that did not answer, or one that did not exit
cleanly after `quit`. Exits 1 when there was any problem.

    .venv-arimaa/bin/python scripts/aei_match.py \
        --engine target/release/plies --player random --games 2
"""

import argparse
import json
import logging
import queue
import shlex
import sys
import time

from pyrimaa import aei
from pyrimaa.game import Game
from pyrimaa.util import TimeControl

NORMAL_ENDINGS = {"g": "goal", "e": "elimination", "m": "immobilization", "limit": "turn limit"}


class Capture(logging.Handler):
    """Keeps what pyrimaa's game driver logs about the engines."""

    def __init__(self):
        super().__init__(level=logging.INFO)
        self.records = []

    def emit(self, record):
        self.records.append(record)

    def take(self):
        out, self.records = self.records, []
        return out


class LimitedGame(Game):
    """pyrimaa's Game, timing every move and stopping at a turn limit."""

    def __init__(self, *args, max_turns=0, **kwargs):
        super().__init__(*args, **kwargs)
        self.max_turns = max_turns
        self.move_seconds = ([], [])

    def play_next_move(self, starttime):
        side = self.position.color
        started = time.time()
        result = super().play_next_move(starttime)
        self.move_seconds[side].append(time.time() - started)
        if result is None and self.max_turns and not self.insetup:
            if self.movenumber > self.max_turns:
                short = self.position.board_to_str("short")
                gold = sum(short.count(p) for p in "EMHDCR")
                silver = sum(short.count(p) for p in "emhdcr")
                winner = 0 if gold > silver else 1 if silver > gold else None
                return (winner, "limit")
        return result


def start(cmd, name):
    """An EngineController over pyrimaa's StdioEngine running `cmd`."""
    engine = aei.get_engine("stdio", cmd, f"aei_match.{name}")
    try:
        return aei.EngineController(engine)
    except BaseException:
        engine.cleanup()
        raise


def finish(ctl, who, problems):
    """quit, then check the engine exits cleanly and said nothing wrong."""
    try:
        ctl.quit()
    except OSError as exc:
        problems.append(f"{who}: could not send quit: {exc}")
    proc = ctl.engine.proc
    try:
        code = proc.wait(timeout=15)
        if code != 0:
            problems.append(f"{who}: exited with status {code} after quit")
    except Exception:
        problems.append(f"{who}: still running 15 s after quit")
    # Whatever it said after its last move.
    while True:
        try:
            line = ctl.engine.proc_com.outq.get(timeout=0.2)
        except queue.Empty:
            break
        if line.startswith("log Error") or line.startswith("log Warning"):
            problems.append(f"{who} said after the game: {line}")
    ctl.cleanup()


def play_one(index, args, capture):
    plies_gold = index % 2 == 0
    # An empty --player starts the engine with its own default player.
    player = ["--player", args.player] if args.player else []
    plies_cmd = " ".join(
        shlex.quote(x)
        for x in [args.engine, "engine", "aei", *player, "--seed", str(args.seed + index)]
    )
    simple_cmd = f"{shlex.quote(sys.executable)} -m pyrimaa.simple_engine"
    names = ["plies", "simple_engine"] if plies_gold else ["simple_engine", "plies"]
    problems = []
    record = {
        "game": index + 1,
        "plies_side": "g" if plies_gold else "s",
        "winner": None,
        "winner_side": None,
        "reason": None,
        "plies": 0,
        "turns": 0,
        "seconds": 0.0,
        "plies_move_seconds_max": None,
        "plies_move_seconds_mean": None,
    }
    controllers = []
    started = time.time()
    game = None
    try:
        for name in names:
            cmd = plies_cmd if name == "plies" else simple_cmd
            controllers.append(start(cmd, name))
        ident = controllers[names.index("plies")].ident.get("name", "")
        if not ident.startswith("plies"):
            problems.append(f"plies: unexpected id name {ident!r}")
        tc = TimeControl(args.tc) if args.tc else None
        game = LimitedGame(
            controllers[0],
            controllers[1],
            tc,
            min_timeleft=args.stop_time,
            max_turns=args.max_turns,
        )
        winner, reason = game.play()
        record["reason"] = reason
        if winner is not None:
            record["winner_side"] = "gs"[winner]
            record["winner"] = names[winner]
        if reason not in NORMAL_ENDINGS:
            loser = names[1 - winner] if winner is not None else "?"
            problems.append(f"abnormal ending '{reason}' (against {loser})")
    except Exception as exc:  # an engine that died or went silent
        problems.append(f"{type(exc).__name__}: {getattr(exc, 'message', None) or exc}")
    finally:
        for name, ctl in zip(names, controllers):
            finish(ctl, name, problems)
    record["seconds"] = round(time.time() - started, 3)
    if game is not None:
        record["plies"] = len(game.moves)
        record["turns"] = game.movenumber
        times = game.move_seconds[names.index("plies")]
        if times:
            record["plies_move_seconds_max"] = round(max(times), 3)
            record["plies_move_seconds_mean"] = round(sum(times) / len(times), 4)
        if args.moves:
            record["moves"] = game.moves
        record["final_position"] = game.position.board_to_str("short")
    for rec in capture.take():
        msg = rec.getMessage()
        if rec.levelno >= logging.WARNING:
            problems.append(f"controller: {msg}")
        elif " log: Error" in msg or " log: Warning" in msg:
            problems.append(msg)
        elif rec.name == "game" and msg.startswith("Illegal move played"):
            problems.append(msg)
    record["errors"] = problems
    return record


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--engine", default="target/release/plies", help="the plies binary")
    parser.add_argument(
        "--player", default="random", help="plies' player spec ('' for the engine's default)"
    )
    parser.add_argument("--games", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1, help="plies gets seed + game index")
    parser.add_argument(
        "--tc",
        default="3s/30s/100/60s",
        help="pyrimaa time control (move/reserve/percent/max...); 'none' for none",
    )
    parser.add_argument(
        "--stop-time",
        type=float,
        default=1.0,
        help="send stop this many seconds before a move would time out",
    )
    parser.add_argument("--max-turns", type=int, default=300, help="0 for no limit")
    parser.add_argument("--moves", action="store_true", help="include the move lists")
    args = parser.parse_args(argv)
    if args.tc and args.tc.lower() == "none":
        args.tc = None

    capture = Capture()
    for name in ("game", "aei_match"):
        logger = logging.getLogger(name)
        logger.setLevel(logging.INFO)
        logger.addHandler(capture)
        logger.propagate = False

    results = [play_one(i, args, capture) for i in range(args.games)]
    errors = [f"game {r['game']}: {e}" for r in results for e in r["errors"]]
    wins = {"plies": 0, "simple_engine": 0, "none": 0}
    reasons = {}
    for r in results:
        wins[r["winner"] or "none"] += 1
        reasons[r["reason"] or "error"] = reasons.get(r["reason"] or "error", 0) + 1
    summary = {
        "games": len(results),
        "player": args.player,
        "opponent": "pyrimaa.simple_engine",
        "timecontrol": args.tc,
        "max_turns": args.max_turns,
        "wins": wins,
        "reasons": reasons,
        "results": results,
        "errors": errors,
        "ok": not errors,
    }
    json.dump(summary, sys.stdout, indent=1)
    sys.stdout.write("\n")
    return 0 if not errors else 1


if __name__ == "__main__":
    sys.exit(main())
