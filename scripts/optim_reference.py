#!/usr/bin/env python3
"""Reference trajectories of PyTorch optimizers for `tests/optim_reference.rs`.

Runs a fixed small float64 problem through torch.optim.SGD (momentum,
dampening, Nesterov, weight decay), torch.optim.RMSprop (momentum, centered,
weight decay) and torch.optim.AdamW, some of them with
torch.nn.utils.clip_grad_norm_ or a learning-rate scheduler, and prints JSON
with the problem data and the parameters after every step. The Rust test
rebuilds the same problem in candle from that JSON and checks that
`plies::optim` follows the same trajectories within 1e-10.

Regenerate the fixture (from the crate root; the venv is git-ignored):

    python3 -m venv .venv-torch && .venv-torch/bin/pip install torch numpy
    .venv-torch/bin/python scripts/optim_reference.py > tests/fixtures/optim_reference.json

The problem: parameters W (3x4) and b (3), inputs X (5x4), targets Y (5x3),

    H    = X @ W.T + b
    loss = mean((tanh(H) - Y)^2) + H2_COEF * mean(H^2)

Each case's "optimizer" object is written in the JSON shape of
`plies::optim::OptimizerConfig` (tagged by "kind"), "schedule" (when present)
in that of `plies::optim::LrSchedule`, so the Rust side deserializes them as
they are. A case's lr for step i (from 0) is the schedule's lr for i with the
optimizer's lr as base; with "clip_max_norm" the gradients are clipped to that
global norm before each step.
"""

import json
import math
import sys

import torch

torch.set_default_dtype(torch.float64)

STEPS = 5
H2_COEF = 0.1

W0 = [
    [0.5, -0.25, 0.75, 0.1],
    [-0.6, 0.3, 0.2, -0.45],
    [0.05, 0.9, -0.35, 0.4],
]
B0 = [0.1, -0.2, 0.3]
X = [
    [1.0, 0.5, -1.5, 2.0],
    [-0.5, 1.25, 0.75, -1.0],
    [2.0, -1.0, 0.25, 0.5],
    [0.0, 0.8, -0.6, 1.2],
    [-1.75, -0.3, 1.1, 0.4],
]
Y = [
    [0.2, -0.7, 0.9],
    [-0.4, 0.6, 0.1],
    [0.8, 0.3, -0.5],
    [0.0, -0.9, 0.45],
    [-0.65, 0.15, 0.35],
]

# (name, OptimizerConfig JSON, extra: clip_max_norm and/or schedule)
CASES = [
    ("sgd", {"kind": "sgd", "lr": 0.1}, {}),
    ("momentum", {"kind": "momentum", "lr": 0.05, "momentum": 0.9}, {}),
    (
        "momentum_dampening",
        {"kind": "momentum", "lr": 0.05, "momentum": 0.9, "dampening": 0.3},
        {},
    ),
    (
        "momentum_dampening_weight_decay",
        {"kind": "momentum", "lr": 0.05, "momentum": 0.8, "dampening": 0.5, "weight_decay": 0.01},
        {},
    ),
    ("nesterov", {"kind": "momentum", "lr": 0.05, "momentum": 0.9, "nesterov": True}, {}),
    (
        "nesterov_weight_decay",
        {"kind": "momentum", "lr": 0.05, "momentum": 0.9, "weight_decay": 0.05, "nesterov": True},
        {},
    ),
    ("rmsprop", {"kind": "rmsprop", "lr": 0.01}, {}),
    ("rmsprop_momentum", {"kind": "rmsprop", "lr": 0.01, "momentum": 0.9}, {}),
    ("rmsprop_centered", {"kind": "rmsprop", "lr": 0.01, "centered": True}, {}),
    (
        "rmsprop_centered_momentum_weight_decay",
        {
            "kind": "rmsprop",
            "lr": 0.005,
            "alpha": 0.9,
            "eps": 1e-6,
            "weight_decay": 0.1,
            "momentum": 0.5,
            "centered": True,
        },
        {},
    ),
    (
        "rmsprop_weight_decay",
        {"kind": "rmsprop", "lr": 0.02, "alpha": 0.8, "weight_decay": 0.2},
        {},
    ),
    (
        "adamw",
        {"kind": "adamw", "lr": 0.01, "beta1": 0.9, "beta2": 0.999, "eps": 1e-8, "weight_decay": 0.1},
        {},
    ),
    (
        "momentum_clipped",
        {"kind": "momentum", "lr": 0.05, "momentum": 0.9},
        {"clip_max_norm": 0.3},
    ),
    (
        "nesterov_cosine",
        {"kind": "momentum", "lr": 0.1, "momentum": 0.9, "nesterov": True},
        {"schedule": {"kind": "cosine", "t_max": 4, "eta_min": 0.01}},
    ),
    (
        "rmsprop_centered_step_schedule_clipped",
        {"kind": "rmsprop", "lr": 0.01, "centered": True, "momentum": 0.3},
        {"schedule": {"kind": "step", "step_size": 2, "gamma": 0.5}, "clip_max_norm": 0.25},
    ),
    (
        "adamw_warmup_cosine",
        {"kind": "adamw", "lr": 0.02, "weight_decay": 0.05},
        {
            "schedule": {
                "kind": "warmup",
                "warmup_steps": 2,
                "start_factor": 0.25,
                "then": {"kind": "cosine", "t_max": 3, "eta_min": 0.001},
            }
        },
    ),
]

# Schedules checked on their own, over more steps: (schedule, base_lr, steps)
SCHEDULES = [
    ({"kind": "step", "step_size": 3, "gamma": 0.5}, 0.2, 12),
    ({"kind": "cosine", "t_max": 7, "eta_min": 0.001}, 0.05, 8),
    (
        {
            "kind": "warmup",
            "warmup_steps": 4,
            "start_factor": 0.1,
            "then": {"kind": "cosine", "t_max": 6, "eta_min": 0.0},
        },
        0.1,
        11,
    ),
    (
        {
            "kind": "warmup",
            "warmup_steps": 3,
            "start_factor": 0.05,
            "then": {"kind": "step", "step_size": 2, "gamma": 0.3},
        },
        1.0,
        9,
    ),
]


def loss_fn(w, b, x, y):
    h = x @ w.T + b
    return ((torch.tanh(h) - y) ** 2).mean() + H2_COEF * (h**2).mean()


def make_optimizer(cfg, params):
    kind = cfg["kind"]
    if kind == "sgd":
        return torch.optim.SGD(params, lr=cfg["lr"], foreach=False)
    if kind == "momentum":
        # Defaults of plies' MomentumConfig (momentum 0.9, not torch's 0).
        return torch.optim.SGD(
            params,
            lr=cfg.get("lr", 0.01),
            momentum=cfg.get("momentum", 0.9),
            dampening=cfg.get("dampening", 0.0),
            weight_decay=cfg.get("weight_decay", 0.0),
            nesterov=cfg.get("nesterov", False),
            foreach=False,
        )
    if kind == "rmsprop":
        return torch.optim.RMSprop(
            params,
            lr=cfg.get("lr", 0.01),
            alpha=cfg.get("alpha", 0.99),
            eps=cfg.get("eps", 1e-8),
            weight_decay=cfg.get("weight_decay", 0.0),
            momentum=cfg.get("momentum", 0.0),
            centered=cfg.get("centered", False),
            foreach=False,
        )
    if kind == "adamw":
        return torch.optim.AdamW(
            params,
            lr=cfg.get("lr", 0.001),
            betas=(cfg.get("beta1", 0.9), cfg.get("beta2", 0.999)),
            eps=cfg.get("eps", 1e-8),
            weight_decay=cfg.get("weight_decay", 0.01),
            foreach=False,
        )
    raise ValueError(f"unknown optimizer kind {kind}")


def make_scheduler(sched, opt):
    kind = sched["kind"]
    if kind == "step":
        return torch.optim.lr_scheduler.StepLR(
            opt, step_size=sched["step_size"], gamma=sched.get("gamma", 0.1)
        )
    if kind == "cosine":
        return torch.optim.lr_scheduler.CosineAnnealingLR(
            opt, T_max=sched["t_max"], eta_min=sched.get("eta_min", 0.0)
        )
    if kind == "warmup":
        warm = sched["warmup_steps"]
        linear = torch.optim.lr_scheduler.LinearLR(
            opt,
            start_factor=sched.get("start_factor", 1.0 / 3.0),
            end_factor=1.0,
            total_iters=warm,
        )
        then = make_scheduler(sched.get("then", {"kind": "constant"}), opt)
        return torch.optim.lr_scheduler.SequentialLR(opt, [linear, then], milestones=[warm])
    if kind == "constant":
        return torch.optim.lr_scheduler.ConstantLR(opt, factor=1.0, total_iters=0)
    raise ValueError(f"unknown schedule kind {kind}")


def tensors():
    w = torch.tensor(W0, requires_grad=True)
    b = torch.tensor(B0, requires_grad=True)
    return w, b, torch.tensor(X), torch.tensor(Y)


def run_case(name, cfg, extra):
    w, b, x, y = tensors()
    opt = make_optimizer(cfg, [w, b])
    sched = make_scheduler(extra["schedule"], opt) if "schedule" in extra else None
    steps = []
    for _ in range(STEPS):
        opt.zero_grad()
        loss = loss_fn(w, b, x, y)
        loss.backward()
        record = {"loss": loss.item(), "lr": opt.param_groups[0]["lr"]}
        if "clip_max_norm" in extra:
            norm = torch.nn.utils.clip_grad_norm_([w, b], extra["clip_max_norm"], foreach=False)
            record["grad_norm"] = norm.item()
        opt.step()
        if sched is not None:
            sched.step()
        record["w"] = w.detach().tolist()
        record["b"] = b.detach().tolist()
        steps.append(record)
    case = {"name": name, "optimizer": cfg, "steps": steps}
    case.update(extra)
    return case


def run_schedule(sched_cfg, base_lr, n):
    p = torch.zeros(1, requires_grad=True)
    opt = torch.optim.SGD([p], lr=base_lr)
    sched = make_scheduler(sched_cfg, opt)
    lrs = []
    for _ in range(n):
        lrs.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    return {"schedule": sched_cfg, "base_lr": base_lr, "lrs": lrs}


def main():
    w, b, x, y = tensors()
    loss = loss_fn(w, b, x, y)
    loss.backward()
    out = {
        "generator": "scripts/optim_reference.py",
        "torch_version": torch.__version__,
        "loss": "mean((tanh(X W^T + b) - Y)^2) + h2_coef * mean((X W^T + b)^2)",
        "h2_coef": H2_COEF,
        "steps": STEPS,
        "problem": {"w": W0, "b": B0, "x": X, "y": Y},
        "initial": {
            "loss": loss.item(),
            "grad_w": w.grad.tolist(),
            "grad_b": b.grad.tolist(),
            "grad_norm": math.sqrt(
                float((w.grad**2).sum().item() + (b.grad**2).sum().item())
            ),
        },
        "cases": [run_case(*c) for c in CASES],
        "schedules": [run_schedule(*s) for s in SCHEDULES],
    }
    json.dump(out, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
