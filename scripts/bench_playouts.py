#!/usr/bin/env python3
"""Times uniformly random OpenSpiel playouts; the reference for `plies bench playouts`.

    bench_playouts.py GAME [--size N] [--games K] [--seed S]

GAME: tictactoe | amazons | pentago | gomoku | atari-go (plies' names).
Plays K games from the initial state, one thread: at each step
`random.choice(state.legal_actions())`, `state.apply_action`, until
`state.is_terminal()`.  Prints one JSON object with the same fields as
`plies bench playouts --json` (moves = full moves, not OpenSpiel actions).

OpenSpiel game per plies game:
  tictactoe  tic_tac_toe
  amazons    amazons(board_size=N); one full move is 3 OpenSpiel actions
             (amazon, destination, arrow), each picked uniformly from its own
             list, so full moves are not uniform as in plies (which draws
             from the whole move list) and game lengths differ slightly.
             --full-moves instead lists every (amazon, destination, arrow)
             sequence with state.child() and picks one uniformly: the same
             distribution as plies, and the same work (the whole move list).
  pentago    pentago (one action = placement + rotation, as in plies)
  gomoku     gomoku(size=N) (free-style, five or more wins)
  atari-go   OpenSpiel has no Atari-Go: go(board_size=N) played with random
             non-pass actions until the first capture (the mover wins), as
             scripts/oracles/spiel_oracle.py defines it.  A capture is seen
             when the number of empty points ('+' in str(state)) does not
             drop by one; that check runs after every move and is timed.
             A game also stops if go ends itself (superko draw, length cap)
             or the player to move has only the pass.
"""
import argparse
import json
import random
import time
from importlib.metadata import version

import pyspiel


def load(game, size):
    if game == "tictactoe":
        return pyspiel.load_game("tic_tac_toe"), 1
    if game == "amazons":
        return pyspiel.load_game("amazons", {"board_size": size or 10}), 3
    if game == "pentago":
        return pyspiel.load_game("pentago"), 1
    if game == "gomoku":
        return pyspiel.load_game("gomoku", {"size": size or 15}), 1
    raise ValueError(game)


def tally(returns, t):
    if returns[0] > returns[1]:
        t["first_wins"] += 1
    elif returns[1] > returns[0]:
        t["second_wins"] += 1
    else:
        t["draws"] += 1


def plain_playouts(game, games, rng, t):
    choice = rng.choice
    actions = 0
    for _ in range(games):
        state = game.new_initial_state()
        while not state.is_terminal():
            state.apply_action(choice(state.legal_actions()))
            actions += 1
        tally(state.returns(), t)
    return actions


def amazons_full_move_playouts(game, games, rng, t):
    choice = rng.choice
    moves = 0
    for _ in range(games):
        state = game.new_initial_state()
        while not state.is_terminal():
            full = []
            for a in state.legal_actions():
                s1 = state.child(a)
                for b in s1.legal_actions():
                    s2 = s1.child(b)
                    full.extend((a, b, c) for c in s2.legal_actions())
            for action in choice(full):
                state.apply_action(action)
            moves += 1
        tally(state.returns(), t)
    return moves * 3


def atari_go_playouts(game, games, rng, t, n):
    choice = rng.choice
    pass_action = n * n
    moves = 0
    for _ in range(games):
        state = game.new_initial_state()
        empty = n * n
        while not state.is_terminal():
            legal = state.legal_actions()
            if legal[-1] == pass_action:
                legal = legal[:-1]
            if not legal:
                t["draws"] += 1
                break
            mover = state.current_player()
            state.apply_action(choice(legal))
            moves += 1
            now = str(state).count("+")
            if now != empty - 1:
                t["first_wins" if mover == 0 else "second_wins"] += 1
                break
            empty = now
        else:
            tally(state.returns(), t)
    return moves


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("game", choices=["tictactoe", "amazons", "pentago", "gomoku", "atari-go"])
    ap.add_argument("--size", type=int)
    ap.add_argument("--games", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--full-moves", action="store_true",
                    help="amazons: uniform over full moves (see above)")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    t = {"first_wins": 0, "second_wins": 0, "draws": 0}
    if a.game == "atari-go":
        size = a.size or 9
        game = pyspiel.load_game("go", {"board_size": size})
        start = time.perf_counter()
        moves = atari_go_playouts(game, a.games, rng, t, size)
        seconds = time.perf_counter() - start
    else:
        game, per_move = load(a.game, a.size)
        params = game.get_parameters()
        size = params.get("board_size", params.get("size", 3 if a.game == "tictactoe" else 6))
        start = time.perf_counter()
        if a.full_moves and a.game == "amazons":
            actions = amazons_full_move_playouts(game, a.games, rng, t)
        else:
            actions = plain_playouts(game, a.games, rng, t)
        seconds = time.perf_counter() - start
        moves = actions // per_move
    print(json.dumps({
        "engine": "openspiel", "open_spiel": version("open_spiel"),
        "game": a.game, "size": size,
        "full_moves": bool(a.full_moves and a.game == "amazons"), "games": a.games, "seed": a.seed, "moves": moves,
        "seconds": seconds, "games_per_s": a.games / seconds, "moves_per_s": moves / seconds,
        "mean_length": moves / a.games, **t,
    }))


if __name__ == "__main__":
    main()
