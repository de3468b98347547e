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

Games OpenSpiel lacks are defined here on its own games: "atari_go"
(params {"board_size": N}) is OpenSpiel's go without passes, won by the
first capture and drawn when the player to move has no legal move.  Only
the Python bot searches these (OpenSpiel's C++ bot cannot search a game
defined in Python).

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


PYTHON_GAMES = ("atari_go",)


def register_atari_go(pyspiel):
    """Registers "atari_go": go without passes, the first capture wins."""
    game_type = pyspiel.GameType(
        short_name="atari_go",
        long_name="Atari-Go (first capture wins)",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.DETERMINISTIC,
        information=pyspiel.GameType.Information.PERFECT_INFORMATION,
        utility=pyspiel.GameType.Utility.ZERO_SUM,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=2,
        min_num_players=2,
        provides_information_state_string=False,
        provides_information_state_tensor=False,
        provides_observation_string=True,
        provides_observation_tensor=False,
        parameter_specification={"board_size": 9})

    class AtariGoGame(pyspiel.Game):
        def __init__(self, params=None):
            params = params or {}
            self.size = int(params.get("board_size", 9))
            # Komi never matters: no game is scored.
            self.go = pyspiel.load_game("go", {"board_size": self.size, "komi": 0.5})
            cells = self.size * self.size
            info = pyspiel.GameInfo(
                num_distinct_actions=cells, max_chance_outcomes=0, num_players=2,
                min_utility=-1.0, max_utility=1.0, utility_sum=0.0,
                max_game_length=cells)
            super().__init__(game_type, info, params)

        def new_initial_state(self):
            return AtariGoState(self, self.go.new_initial_state())

    class AtariGoState(pyspiel.State):
        def __init__(self, game, go_state):
            super().__init__(game)
            self.size = game.size
            self.go_state = go_state
            self.winner = None
            self.over = False

        def current_player(self):
            if self.over:
                return pyspiel.PlayerId.TERMINAL
            return self.go_state.current_player()

        def _legal_actions(self, player):
            pass_action = self.size * self.size
            return [a for a in self.go_state.legal_actions() if a != pass_action]

        def _empty_points(self):
            return str(self.go_state).count("+")

        def _apply_action(self, action):
            mover = self.go_state.current_player()
            before = self._empty_points()
            self.go_state.apply_action(action)
            # A stone fills one point; more empty points means a capture.
            if self._empty_points() != before - 1:
                self.winner = mover
                self.over = True
            elif not self._legal_actions(None):
                self.over = True

        def _action_to_string(self, player, action):
            return self.go_state.action_to_string(player, action)

        def is_terminal(self):
            return self.over

        def returns(self):
            if self.winner is None:
                return [0.0, 0.0]
            return [1.0, -1.0] if self.winner == 0 else [-1.0, 1.0]

        def __str__(self):
            return str(self.go_state)

        def __deepcopy__(self, memo):
            copy = AtariGoState(self.get_game(), self.go_state.clone())
            copy.winner, copy.over = self.winner, self.over
            return copy

    pyspiel.register_game(game_type, AtariGoGame)


class Server:
    def __init__(self, pyspiel):
        self.pyspiel = pyspiel
        self.games = {}

    def load(self, name, params):
        key = (name, json.dumps(params, sort_keys=True))
        if key not in self.games:
            if name == "atari_go" and "atari_go" not in self.pyspiel.registered_names():
                register_atari_go(self.pyspiel)
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
        if impl == "cpp" and game.get_type().short_name in PYTHON_GAMES:
            raise ValueError(f"{game.get_type().short_name} is defined in Python on OpenSpiel's "
                             "games, and OpenSpiel's C++ MCTS bot cannot search it: use impl "
                             "\"python\"")
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
