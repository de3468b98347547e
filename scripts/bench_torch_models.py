#!/usr/bin/env python3
"""PyTorch side of `plies bench train` / `plies bench infer` (CPU).

Same network, batch and thread count as plies: cnn3 (--arch cnn3) is
Conv2d(C, F, (kh, kw)) -> tanh -> flatten -> Linear(F*oh*ow, hidden) -> tanh
-> Linear(hidden, 1) -> sigmoid; resnet (--arch resnet, plies' ResNet with
its value head only) is
  stem:   Conv2d(C, ch, 3, padding=1, bias=False) -> BatchNorm2d -> relu
  blocks: x + BN(conv3x3(relu(BN(conv3x3(x))))) -> relu   (--blocks of them)
  value:  Conv2d(ch, 1, 1, bias=False) -> BatchNorm2d -> relu -> flatten
          -> Linear(H*W, hidden) -> relu -> Linear(hidden, 1) -> sigmoid.
Inputs are sparse random 0/1 planes and random targets in [0, 1].

  train: forward + MSE + backward + SGD (momentum 0.9, Nesterov) step, in
         train mode (batch norm on the batch's statistics).
  infer: forward under torch.inference_mode(), in eval mode (batch norm on
         the running statistics).

Prints one JSON object: {"torch": version, "threads": n, "results": [...]},
each result {"mode", "batch", "positions_per_s", "seconds", "positions"}.
"""

import argparse
import json
import sys
import time


def build_resnet(torch, nn, a):
    c, h, w = a.input
    ch = a.channels

    def conv_bn(inp, out, k):
        return nn.Sequential(nn.Conv2d(inp, out, k, padding=k // 2, bias=False), nn.BatchNorm2d(out))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = conv_bn(ch, ch, 3)
            self.b = conv_bn(ch, ch, 3)

        def forward(self, x):
            return torch.relu(x + self.b(torch.relu(self.a(x))))

    return nn.Sequential(
        conv_bn(c, ch, 3),
        nn.ReLU(),
        *[Block() for _ in range(a.blocks)],
        conv_bn(ch, 1, 1),
        nn.ReLU(),
        nn.Flatten(),
        nn.Linear(h * w, a.hidden),
        nn.ReLU(),
        nn.Linear(a.hidden, 1),
        nn.Sigmoid(),
    )


def build(torch, nn, a):
    if a.arch == "resnet":
        return build_resnet(torch, nn, a)
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
    p.add_argument("--arch", choices=["cnn3", "resnet"], default="cnn3")
    p.add_argument("--blocks", type=int, default=2)
    p.add_argument("--channels", type=int, default=32)
    p.add_argument("--filters", type=int, default=48)
    p.add_argument("--kernel", type=int, nargs=2, default=[4, 4])
    p.add_argument("--hidden", type=int, default=384, help="cnn3's hidden units or the resnet's value_hidden")
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
