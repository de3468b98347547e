#!/usr/bin/env python3
"""OpenSpiel's MCTS bot as a long-running move server (JSON lines).

Run with a Python that has open-spiel installed (pip install open-spiel==2.0.2):

    spiel_mcts_bot.py

On start it writes one line, {"ready": true, "open_spiel": VERSION}, or
{"error": WHY} and exits when open-spiel cannot be imported.  Then it reads
one request per line on stdin and answers one line on stdout, until stdin
closes:

  request  {"id": N,                       # echoed back (optional)
            "game": "amazons", "params": {"board_size": 6},
            "history": [a0, a1, ...],       # every OpenSpiel action from the
                                            # start position
            "actions": 3,                   # OpenSpiel actions in one move
            "bot": {"max_simulations": 1000, "rollouts": 1, "uct_c": 2.0,
                    "seed": 7, "solve": false,
                    "impl": "cpp" | "python"}}
  answer   {"id": N, "actions": [b0, b1, b2], "seconds": 0.42,
            "searches": 3}
  error    {"id": N, "error": "why"}

The state is rebuilt from the history on every request, so the process keeps
nothing about a game and may serve any number of games one after another.
One move of `actions` OpenSpiel actions (3 for Amazons: amazon, destination,
arrow) is chosen by that many searches, each from the state the previous
ones reached; the same player must be to move in all of them.

The bot is OpenSpiel's MCTS with random rollouts (solve = false by default):
impl "cpp" is pyspiel.MCTSBot with pyspiel.RandomRolloutEvaluator (C++,
fast), impl "python" open_spiel.python.algorithms.mcts.MCTSBot with its
RandomRolloutEvaluator.  Each search is seeded from the request's seed and
the length of the history it starts from, so an answer depends only on the
request.  Nothing but answers is written to stdout; diagnostics go to stderr.
"""
import json
import sys
import time

SEED_MOD = 2**31 - 1


def search_seed(seed, history_len):
    """The seed of one search: the request seed mixed with the ply."""
    return (int(seed) * 1000003 + history_len * 7919 + 12345) % SEED_MOD


class Server:
    def __init__(self, pyspiel):
        self.pyspiel = pyspiel
        self.games = {}

    def load(self, name, params):
        key = (name, json.dumps(params, sort_keys=True))
        if key not in self.games:
            self.games[key] = self.pyspiel.load_game(name, params)
        return self.games[key]

    def make_bot(self, game, bot, seed):
        rollouts = int(bot.get("rollouts", 1))
        sims = int(bot.get("max_simulations", 1000))
        uct_c = float(bot.get("uct_c", 2.0))
        solve = bool(bot.get("solve", False))
        impl = bot.get("impl", "cpp")
        if rollouts < 1 or sims < 1:
            raise ValueError("rollouts and max_simulations must be at least 1")
        if impl == "cpp":
            evaluator = self.pyspiel.RandomRolloutEvaluator(rollouts, (seed + 1) % SEED_MOD)
            max_memory_mb = int(bot.get("max_memory_mb", 1024))
            return self.pyspiel.MCTSBot(game, evaluator, uct_c, sims, max_memory_mb,
                                        solve, seed, False)
        if impl == "python":
            import numpy as np
            from open_spiel.python.algorithms import mcts
            evaluator = mcts.RandomRolloutEvaluator(
                n_rollouts=rollouts, random_state=np.random.RandomState((seed + 1) % SEED_MOD))
            return mcts.MCTSBot(game, uct_c, sims, evaluator, solve=solve,
                                random_state=np.random.RandomState(seed))
        raise ValueError(f"unknown bot impl {impl!r} (cpp or python)")

    def answer(self, req):
        name = req["game"]
        params = req.get("params") or {}
        history = [int(a) for a in req.get("history", [])]
        count = int(req.get("actions", 1))
        bot = req.get("bot") or {}
        seed = int(bot.get("seed", 0))
        game = self.load(name, params)
        state = game.new_initial_state()
        for i, a in enumerate(history):
            if state.is_terminal():
                raise ValueError(f"history action {i} ({a}): the game is already over")
            if a not in state.legal_actions():
                raise ValueError(f"history action {i} ({a}) is not legal in {name}: "
                                 f"state {str(state)!r}")
            state.apply_action(a)
        if state.is_terminal():
            raise ValueError("the game is over: no move to choose")
        if state.is_chance_node():
            raise ValueError("chance nodes are not supported")
        mover = state.current_player()
        start = time.perf_counter()
        chosen = []
        for k in range(count):
            if state.is_terminal() or state.current_player() != mover:
                raise ValueError(f"after {k} of the move's {count} actions player {mover} "
                                 "is no longer to move")
            b = self.make_bot(game, bot, search_seed(seed, len(history) + k))
            action = int(b.step(state))
            if action not in state.legal_actions():
                raise ValueError(f"the bot chose an illegal action {action}")
            state.apply_action(action)
            chosen.append(action)
        seconds = time.perf_counter() - start
        return {"actions": chosen, "seconds": round(seconds, 6), "searches": count}


def write(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def main():
    try:
        import pyspiel
        from importlib.metadata import version
        spiel_version = version("open_spiel")
    except Exception as e:  # noqa: BLE001 -- reported to the caller, not raised
        write({"error": f"cannot import pyspiel (pip install open-spiel==2.0.2): {e}"})
        sys.exit(1)
    server = Server(pyspiel)
    write({"ready": True, "open_spiel": spiel_version,
           "python": sys.version.split()[0]})
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        req_id = None
        try:
            req = json.loads(line)
            if not isinstance(req, dict):
                raise ValueError("a request is a JSON object")
            req_id = req.get("id")
            out = server.answer(req)
        except Exception as e:  # noqa: BLE001 -- every failure is an error line
            out = {"error": f"{type(e).__name__}: {e}"}
        if req_id is not None:
            out["id"] = req_id
        write(out)


if __name__ == "__main__":
    main()
