#!/usr/bin/env python3
"""PyTorch side of `plies bench train` / `plies bench infer` (CPU).

Same network, batch and thread count as plies: cnn3 is
Conv2d(C, F, (kh, kw)) -> tanh -> flatten -> Linear(F*oh*ow, hidden) -> tanh
-> Linear(hidden, 1) -> sigmoid. Inputs are sparse random 0/1 planes and
random targets in [0, 1].

  train: forward + MSE + backward + SGD (momentum 0.9, Nesterov) step.
  infer: forward under torch.inference_mode().

Prints one JSON object: {"torch": version, "threads": n, "results": [...]},
each result {"mode", "batch", "positions_per_s", "seconds", "positions"}.
"""

import argparse
import json
import sys
import time


def build(torch, nn, a):
    c, h, w = a.input
    kh, kw = a.kernel
    oh, ow = h - kh + 1, w - kw + 1
    return nn.Sequential(
        nn.Conv2d(c, a.filters, (kh, kw)),
        nn.Tanh(),
        nn.Flatten(),
        nn.Linear(a.filters * oh * ow, a.hidden),
        nn.Tanh(),
        nn.Linear(a.hidden, 1),
        nn.Sigmoid(),
    )


def planes(torch, batch, shape, gen):
    return (torch.rand((batch, *shape), generator=gen) < 0.15).float()


def timed(fn, min_seconds, min_iters, rounds):
    """Best of `rounds` rates, each round running >= min_seconds."""
    best = None
    for _ in range(rounds):
        n, t0 = 0, time.perf_counter()
        while True:
            fn()
            n += 1
            dt = time.perf_counter() - t0
            if n >= min_iters and dt >= min_seconds:
                break
        if best is None or n / dt > best[0] / best[1]:
            best = (n, dt)
    return best


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--mode", choices=["train", "infer"], required=True)
    p.add_argument("--batch", type=int, nargs="+", required=True)
    p.add_argument("--threads", type=int, required=True)
    p.add_argument("--input", type=int, nargs=3, default=[6, 8, 8])
    p.add_argument("--filters", type=int, default=48)
    p.add_argument("--kernel", type=int, nargs=2, default=[4, 4])
    p.add_argument("--hidden", type=int, default=384)
    p.add_argument("--seconds", type=float, default=1.0)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--warmup", type=int, default=3)
    a = p.parse_args()
    try:
        import torch
        from torch import nn
    except ImportError as e:
        print(json.dumps({"error": f"torch not importable: {e}"}))
        return 3
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(1)
    net = build(torch, nn, a)
    results = []
    for batch in a.batch:
        x = planes(torch, batch, a.input, gen)
        if a.mode == "train":
            net.train()
            t = torch.rand((batch, 1), generator=gen)
            opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9, nesterov=True)
            loss_fn = nn.MSELoss()

            def step():
                opt.zero_grad(set_to_none=True)
                loss = loss_fn(net(x), t)
                loss.backward()
                opt.step()

            fn = step
        else:
            net.eval()

            def fwd():
                with torch.inference_mode():
                    net(x)

            fn = fwd
        for _ in range(a.warmup):
            fn()
        n, dt = timed(fn, a.seconds, 3, a.rounds)
        results.append(
            {
                "mode": a.mode,
                "batch": batch,
                "positions": n * batch,
                "seconds": dt,
                "positions_per_s": n * batch / dt,
            }
        )
    print(json.dumps({"torch": torch.__version__, "threads": torch.get_num_threads(), "results": results}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
