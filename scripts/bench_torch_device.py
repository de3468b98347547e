#!/usr/bin/env python3
"""PyTorch side of `plies bench device`, on the same device in the same run.

    python scripts/bench_torch_device.py PLAN.json

PLAN (written by plies) names the device ("cpu", "cuda", "cuda:N", "metal"),
seconds per timed round, rounds, a seed, and the networks: for each, a plies
checkpoint (loaded by scripts/torch_models.py: the same weights), an inputs
file (`planes` [N, C, H, W] as uint8, `expected`: plies' f32 values of the
first rows), inference batch sizes, the training batches, and whether to
try torch.compile.

For each network: max |PyTorch - plies| over `expected` (the same function),
then positions/s of the forward pass (torch.inference_mode, eval mode) at
every batch size and of training steps (train mode, MSE against seeded
targets, SGD lr 0.01 momentum 0.9 Nesterov) at every training batch, eager,
under torch.compile and under bf16 autocast (CUDA and CPU; f32 weights,
the loss in f32).
Inputs are on the device before timing; the device is synchronised after
every call; TF32 is off (full f32 products, as plies'). The MDRNN runs its anti-diagonal sweep (`Mdrnn.sweep_diagonals`,
the same function in H + W - 1 steps). A compile that fails leaves its
figures empty with the reason.

On CUDA it also runs PyTorch the way its users tune it, beside eager f32:
cudnn.benchmark on throughout; TF32 products; bf16 autocast; CUDA-graph
replay (f32 and bf16 autocast) at batch <= 64; torch.compile at batch >=
1024 only (below that its launches are what a graph removes).

Prints one JSON object: {"torch", "device_name", "nets": [{"name",
"max_abs_diff", "infer": [[batch, eager, compiled]...], "tuned": [[batch,
{"tf32", "bf16", "graph", "graph_bf16"}]...], "train": [[batch, eager,
compiled, bf16]...], "compile_note", "tuned_note"}]}; progress goes to
stderr.
"""

import contextlib

import copy
import json
import os
import sys
import time


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def timed(fn, sync, seconds, rounds):
    """Best calls/s of `rounds` rounds, each >= `seconds` and 3 calls."""
    best = 0.0
    for _ in range(max(1, rounds)):
        n, t0 = 0, time.perf_counter()
        while True:
            fn()
            sync()
            n += 1
            dt = time.perf_counter() - t0
            if n >= 3 and dt >= seconds:
                break
        best = max(best, n / dt)
    return best


def rate(fn, sync, seconds, rounds, batch):
    """Positions/s of `fn` on `batch` positions, after 3 warm-up calls."""
    for _ in range(3):
        fn()
    sync()
    return timed(fn, sync, seconds, rounds) * batch


def short(e):
    text = f"{type(e).__name__}: {e}".strip().splitlines()
    return text[0][:300] if text else type(e).__name__


def main(argv):
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    with open(argv[0]) as f:
        plan = json.load(f)
    import torch
    from safetensors.torch import load_file

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import torch_models

    name = plan["device"]
    device = torch.device("mps" if name == "metal" else name)
    if device.type == "cuda":
        # Full f32 products, as candle's: PyTorch's convolutions would
        # otherwise run in TF32 on Ampere and later.
        torch.backends.cudnn.allow_tf32 = False
        torch.backends.cuda.matmul.allow_tf32 = False
        # Each shape's fastest convolution, as a tuned user runs.
        torch.backends.cudnn.benchmark = True
        sync = lambda: torch.cuda.synchronize(device)  # noqa: E731
        device_name = torch.cuda.get_device_name(device)
    elif device.type == "mps":
        sync = torch.mps.synchronize
        device_name = "Apple MPS"
    else:
        sync = lambda: None  # noqa: E731
        device_name = None
    seconds, rounds = plan["seconds"], plan["rounds"]
    torch.manual_seed(plan["seed"])
    gen = torch.Generator().manual_seed(plan["seed"])
    results = []
    for net in plan["nets"]:
        model = torch_models.load(net["checkpoint"]).to(device)
        if isinstance(model, torch_models.Mdrnn):
            model.by_diagonals = True
        data = load_file(net["inputs"])
        planes = data["planes"].to(device).float()
        expected = data["expected"]
        with torch.inference_mode():
            value, _ = model(planes[: len(expected)])
        diff = (value.float().cpu() - expected).abs().max().item()
        log(f"{net['name']}: max |PyTorch - plies| {diff:.2e}")
        compile_note = None if net["compile"] else "not tried (--quick compiles the first network only)"

        def infer_rate(m, batch):
            x = planes[:batch]

            def fwd():
                with torch.inference_mode():
                    m(x)

            return rate(fwd, sync, seconds, rounds, batch)

        def tuned_rates(batch):
            """TF32, bf16 autocast and CUDA-graph replay at `batch`; the
            reason for each that fails goes to the note."""
            x = planes[:batch]
            out, notes = {}, []

            def precision(tf32, bf16):
                torch.backends.cudnn.allow_tf32 = tf32
                torch.backends.cuda.matmul.allow_tf32 = tf32
                if bf16:
                    return torch.autocast("cuda", dtype=torch.bfloat16)
                return contextlib.nullcontext()

            def eager(tf32, bf16):
                def fwd():
                    with torch.inference_mode(), precision(tf32, bf16):
                        model(x)

                return rate(fwd, sync, seconds, rounds, batch)

            def graph(bf16):
                static_x = x.clone()
                side = torch.cuda.Stream(device)
                side.wait_stream(torch.cuda.current_stream(device))
                with torch.cuda.stream(side):
                    for _ in range(3):
                        with torch.inference_mode(), precision(False, bf16):
                            model(static_x)
                torch.cuda.current_stream(device).wait_stream(side)
                g = torch.cuda.CUDAGraph()
                with torch.inference_mode(), precision(False, bf16):
                    with torch.cuda.graph(g):
                        model(static_x)
                return rate(g.replay, sync, seconds, rounds, batch)

            runs = [("tf32", lambda: eager(True, False)), ("bf16", lambda: eager(False, True))]
            if batch <= 64:
                runs += [("graph", lambda: graph(False)), ("graph_bf16", lambda: graph(True))]
            for key, run in runs:
                try:
                    out[key] = run()
                except Exception as e:  # the reason goes into the report
                    out[key] = None
                    notes.append(f"{key} at {batch}: {short(e)}")
                finally:
                    precision(False, False)
            return out, notes

        compiled = None
        if net["compile"]:
            try:
                compiled = torch.compile(model, dynamic=False)
            except Exception as e:  # the reason goes into the report
                compile_note = short(e)
        infer, tuned, tuned_notes = [], [], []
        # On a GPU torch.compile is timed at large batches only.
        compile_from = 1024 if device.type == "cuda" else 0
        for batch in net["batches"]:
            eager = infer_rate(model, batch)
            fast = None
            if device.type == "cuda":
                rates, notes = tuned_rates(batch)
                tuned.append([batch, rates])
                tuned_notes += notes
                log(f"{net['name']} batch {batch}: tuned {rates}")
            if compiled is not None and batch >= compile_from:
                try:
                    fast = infer_rate(compiled, batch)
                except Exception as e:
                    compile_note, compiled = short(e), None
            log(f"{net['name']} batch {batch}: eager {eager:.0f}/s, compiled {fast}")
            infer.append([batch, eager, fast])

        def train_rate(m, params, batch, bf16):
            x = planes[:batch]
            t = torch.rand(batch, generator=gen).to(device)
            opt = torch.optim.SGD(params, lr=0.01, momentum=0.9, nesterov=True)
            cast = (
                torch.autocast(device.type, dtype=torch.bfloat16)
                if bf16
                else contextlib.nullcontext()
            )

            def step():
                opt.zero_grad(set_to_none=True)
                with cast:
                    v, _ = m(x)
                loss = ((v.float() - t) ** 2).mean()
                loss.backward()
                opt.step()

            return rate(step, sync, seconds, rounds, batch)

        train = []
        for batch in net["train_batches"]:
            trained = copy.deepcopy(model).train()
            eager = train_rate(trained, trained.parameters(), batch, False)
            fast = None
            if compiled is not None:
                trained = copy.deepcopy(model).train()
                try:
                    fast = train_rate(
                        torch.compile(trained, dynamic=False), trained.parameters(), batch, False
                    )
                except Exception as e:
                    compile_note, compiled = short(e), None
            bf16 = None
            if device.type in ("cuda", "cpu"):
                trained = copy.deepcopy(model).train()
                try:
                    bf16 = train_rate(trained, trained.parameters(), batch, True)
                except Exception as e:
                    tuned_notes.append(f"bf16 autocast training: {short(e)}")
            log(
                f"{net['name']} training at {batch}: eager {eager:.0f}/s, "
                f"compiled {fast}, bf16 autocast {bf16}"
            )
            train.append([batch, eager, fast, bf16])
        results.append(
            {
                "name": net["name"],
                "max_abs_diff": diff,
                "infer": infer,
                "train": train,
                "compile_note": compile_note,
                "tuned": tuned,
                "tuned_note": "; ".join(tuned_notes) or None,
            }
        )
        del model, compiled, planes
        if device.type == "cuda":
            torch.cuda.empty_cache()
    print(json.dumps({"torch": torch.__version__, "device_name": device_name, "nets": results}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
