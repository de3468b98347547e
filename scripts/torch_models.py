#!/usr/bin/env python3
"""plies' models in PyTorch, for parity tests and for use from Python.

Each model reads a plies checkpoint directory (config.json + model.safetensors)
with the same tensor names, and computes what the Rust model computes in
evaluation mode: a value per position and, for models with a policy head,
one logit per board point (row-major).

    python scripts/torch_models.py CHECKPOINT INPUTS OUT [CHECKPOINT INPUTS OUT ...]

INPUTS is a .safetensors file with `planes` [B, C, H, W] (float32) and, when
the encoder has global features, `globals` [B, G]. OUT receives `value` [B]
and, where the model has one, `policy` [B, H*W] (float32).

Needs torch and safetensors (pip install torch safetensors numpy).
"""

import json
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F
from safetensors.torch import load_file, save_file


def output_activation(name, x):
    if name == "sigmoid":
        return torch.sigmoid(x)
    if name == "tanh":
        return torch.tanh(x)
    if name == "identity":
        return x
    raise ValueError(f"unknown output activation {name!r}")


def hidden_activation(cfg, x):
    kind = cfg["kind"]
    if kind == "elliott":
        bx = cfg["beta"] * x
        return bx / (1.0 + bx.abs())
    if kind == "tanh":
        return torch.tanh(x)
    if kind == "relu":
        return torch.relu(x)
    raise ValueError(f"unknown activation {kind!r}")


class LinearModel(nn.Module):
    """value = output(sum(planes * psq) + globals . g + bias)."""

    def __init__(self, cfg):
        super().__init__()
        c, h, w = cfg["input"]["planes"]
        g = cfg["input"].get("globals", 0)
        self.output = cfg.get("output", "sigmoid")
        self.psq = nn.Module()
        # `"board": false`: no plane weights, a regression over the globals.
        self.board = cfg.get("board", True)
        if self.board:
            self.psq.weight = nn.Parameter(torch.zeros(c, h, w))
        self.psq.bias = nn.Parameter(torch.zeros(1))
        if g > 0:
            self.globals = nn.Module()
            self.globals.weight = nn.Parameter(torch.zeros(g))
        else:
            self.globals = None

    def forward(self, planes, globals=None):
        y = planes.new_zeros(planes.shape[0])
        if self.board:
            y = y + planes.flatten(1) @ self.psq.weight.flatten()
        if self.globals is not None:
            y = y + globals @ self.globals.weight
        return output_activation(self.output, y + self.psq.bias), None


class Mlp(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.act = cfg["activation"]
        self.output = cfg.get("output", "identity")
        sizes = [cfg["inputs"]] + list(cfg["hidden"])
        self.hidden = nn.ModuleList(nn.Linear(a, b) for a, b in zip(sizes, sizes[1:]))
        self.out = nn.Linear(sizes[-1], 1)

    def forward(self, planes, globals=None):
        x = planes.flatten(1)
        if globals is not None and globals.shape[1] > 0:
            x = torch.cat([x, globals], 1)
        for layer in self.hidden:
            x = hidden_activation(self.act, layer(x))
        return output_activation(self.output, self.out(x).squeeze(1)), None


class Cnn3(nn.Module):
    """Zaffetti's net: conv (valid) -> tanh -> hidden -> tanh -> out -> sigmoid | relu."""

    def __init__(self, cfg):
        super().__init__()
        c, h, w = cfg["input"]["planes"]
        f = cfg.get("filters", 48)
        kh, kw = cfg.get("kernel", [4, 4])
        hidden = cfg.get("hidden", 384)
        self.output = cfg.get("output", "sigmoid")
        self.conv = nn.Conv2d(c, f, (kh, kw))
        self.hidden = nn.Linear(f * (h - kh + 1) * (w - kw + 1), hidden)
        self.out = nn.Linear(hidden, 1)

    def forward(self, planes, globals=None):
        x = torch.tanh(self.conv(planes)).flatten(1)
        x = torch.tanh(self.hidden(x))
        y = self.out(x).squeeze(1)
        return (torch.sigmoid(y) if self.output == "sigmoid" else torch.relu(y)), None


class ConvBn(nn.Module):
    def __init__(self, cin, cout, k):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, k, padding=k // 2, bias=False)
        self.bn = nn.BatchNorm2d(cout, eps=1e-5, momentum=0.1)

    def forward(self, x):
        return self.bn(self.conv(x))


class Block(nn.Module):
    def __init__(self, ch):
        super().__init__()
        self.conv1 = nn.Conv2d(ch, ch, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(ch)
        self.conv2 = nn.Conv2d(ch, ch, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(ch)

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        return torch.relu(x + self.bn2(self.conv2(y)))


class ValueHead(nn.Module):
    def __init__(self, ch, hw, globals, hidden):
        super().__init__()
        self.conv = nn.Conv2d(ch, 1, 1, bias=False)
        self.bn = nn.BatchNorm2d(1)
        self.fc1 = nn.Linear(hw + globals, hidden)
        self.fc2 = nn.Linear(hidden, 1)


class PolicyHead(nn.Module):
    def __init__(self, ch, hw):
        super().__init__()
        self.conv = nn.Conv2d(ch, 2, 1, bias=False)
        self.bn = nn.BatchNorm2d(2)
        self.fc = nn.Linear(2 * hw, hw)


class ResNet(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        c, h, w = cfg["input"]["planes"]
        g = cfg["input"].get("globals", 0)
        ch = cfg["channels"]
        self.output = cfg.get("output", "sigmoid")
        self.stem = ConvBn(c, ch, 3)
        self.blocks = nn.ModuleList(Block(ch) for _ in range(cfg["blocks"]))
        self.value = ValueHead(ch, h * w, g, cfg["value_hidden"])
        self.policy = PolicyHead(ch, h * w) if cfg.get("policy", False) else None

    def forward(self, planes, globals=None):
        x = torch.relu(self.stem(planes))
        for b in self.blocks:
            x = b(x)
        v = torch.relu(self.value.bn(self.value.conv(x))).flatten(1)
        if globals is not None and globals.shape[1] > 0:
            v = torch.cat([v, globals], 1)
        v = self.value.fc2(torch.relu(self.value.fc1(v))).squeeze(1)
        p = None
        if self.policy is not None:
            p = torch.relu(self.policy.bn(self.policy.conv(x))).flatten(1)
            p = self.policy.fc(p)
        return output_activation(self.output, v), p


class Mdrnn(nn.Module):
    """Schaul & Schmidhuber's MDRNN, computed point by point.

    u(i,j) = tanh(wi in(i,j) + wh u(i-1,j) + wh u(i,j-1)) for the unit swiping
    down-right, wb outside the board; the other three units run on the board
    flipped. out(i,j) = sum of wo . u(i,j) over the four units; the value is
    output(mean of out).
    """

    def __init__(self, cfg):
        super().__init__()
        c = cfg["input"]["planes"][0]
        k = cfg["hidden"]
        self.output = cfg.get("output", "sigmoid")
        self.wi = nn.Parameter(torch.zeros(k, c))
        self.wh = nn.Parameter(torch.zeros(k, k))
        self.wb = nn.Parameter(torch.zeros(k))
        self.wo = nn.Parameter(torch.zeros(k))

    def sweep(self, planes):
        b, _, h, w = planes.shape
        proj = torch.einsum("bchw,kc->bhwk", planes, self.wi)
        wb = self.wb.expand(b, -1)
        u = [[None] * w for _ in range(h)]
        for i in range(h):
            for j in range(w):
                up = u[i - 1][j] if i > 0 else wb
                left = u[i][j - 1] if j > 0 else wb
                u[i][j] = torch.tanh(proj[:, i, j] + (up + left) @ self.wh.T)
        out = torch.stack([torch.stack(row, 1) for row in u], 1)  # [B, H, W, k]
        return out @ self.wo  # [B, H, W]

    def sweep_diagonals(self, planes):
        """`sweep` one anti-diagonal at a time: the points of a diagonal
        depend only on the previous one, so each of the H + W - 1 steps is
        one batched product instead of one per point."""
        b, _, h, w = planes.shape
        proj = torch.einsum("bchw,kc->bhwk", planes, self.wi)
        wb = self.wb.expand(b, 1, -1)
        outs, order, prev, prev_lo = [], [], None, 0
        for d in range(h + w - 1):
            lo, hi = max(0, d - w + 1), min(d, h - 1)
            rows = list(range(lo, hi + 1))
            p = proj[:, rows, [d - i for i in rows]]  # [B, n, k]
            if prev is None:
                up = left = wb
            else:
                # Row r of the previous diagonal sits at r - prev_lo + 1;
                # the ends are the boundary's wb.
                padded = torch.cat([wb, prev, wb], 1)
                up = padded[:, lo - prev_lo : hi - prev_lo + 1]
                left = padded[:, lo - prev_lo + 1 : hi - prev_lo + 2]
            u = torch.tanh(p + (up + left) @ self.wh.T)
            outs.append(u @ self.wo)
            order.extend(i * w + d - i for i in rows)
            prev, prev_lo = u, lo
        inverse = torch.argsort(torch.tensor(order, device=planes.device))
        return torch.cat(outs, 1)[:, inverse].reshape(b, h, w)

    # The benchmark peer sets this: same function, fewer steps.
    by_diagonals = False

    def forward(self, planes, globals=None):
        out = 0
        sweep = self.sweep_diagonals if self.by_diagonals else self.sweep
        for dims in [[], [3], [2], [2, 3]]:
            flipped = planes.flip(dims) if dims else planes
            o = sweep(flipped)
            out = out + (o.flip([d - 1 for d in dims]) if dims else o)
        policy = out.flatten(1)
        return output_activation(self.output, policy.mean(1)), policy


MODELS = {
    "linear": LinearModel,
    "mlp": Mlp,
    "cnn3": Cnn3,
    "resnet": ResNet,
    "mdrnn": Mdrnn,
}


def load(checkpoint):
    """The PyTorch model of a plies checkpoint directory, in eval mode."""
    with open(f"{checkpoint}/config.json") as f:
        cfg = json.load(f)["model"]
    model = MODELS[cfg["kind"]](cfg)
    state = load_file(f"{checkpoint}/model.safetensors")
    missing, unexpected = model.load_state_dict(state, strict=False)
    missing = [m for m in missing if not m.endswith("num_batches_tracked")]
    if missing or unexpected:
        raise ValueError(f"{checkpoint}: missing {missing}, unexpected {unexpected}")
    return model.eval()


def main(argv):
    if len(argv) == 0 or len(argv) % 3 != 0:
        print(__doc__, file=sys.stderr)
        return 2
    torch.set_num_threads(1)
    for i in range(0, len(argv), 3):
        checkpoint, inputs, out = argv[i : i + 3]
        model = load(checkpoint)
        x = load_file(inputs)
        with torch.no_grad():
            value, policy = model(x["planes"], x.get("globals"))
        result = {"value": value.contiguous()}
        if policy is not None:
            result["policy"] = policy.contiguous()
        save_file(result, out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
