#!/usr/bin/env python3
"""The pyarrow + numpy peer of plies' StreamLoader, for `plies bench loader`.

Does the same work as the Rust loader on the same shards: per epoch, shuffles
the shard order; reads each shard (Arrow IPC, zstd) with pyarrow, one shard
prefetched on a background thread (pyarrow releases the GIL while decoding);
keeps the rows of the split; puts them into a shuffle buffer of
--buffer-rows rows (int8 planes); draws each batch's rows at random (the drawn
rows' places are filled from the end of the buffer, vectorised with numpy);
and produces float32 numpy arrays: planes [B, C, H, W], labels [B, 1] (and
globals [B, G] when the dataset has them).

Prints one JSON line: positions, seconds, positions_per_s, peak_rss_bytes
(resource.getrusage, the whole Python process).

    python scripts/bench_loader_pyarrow.py --data DIR [--batch 1024]
        [--buffer-rows 65536] [--epochs 1] [--split train|valid|test|all]
"""

import argparse
import json
import os
import resource
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.ipc as ipc


def read_shard(path, split, planes_len, globals_len):
    with pa.memory_map(path) as source:
        table = ipc.open_file(source).read_all()
    if split != "all":
        table = table.filter(pc.equal(table["split"], split))
    n = table.num_rows
    planes = (
        table["planes"].combine_chunks().flatten().to_numpy(zero_copy_only=False)
        if n
        else np.zeros(0, np.int8)
    )
    planes = planes.reshape(n, planes_len)
    labels = table["label"].to_numpy().astype(np.float32)
    if globals_len:
        g = table["globals"].combine_chunks().flatten().to_numpy(zero_copy_only=False)
        g = g.reshape(n, globals_len).astype(np.float32)
    else:
        g = np.zeros((n, 0), np.float32)
    return planes, g, labels


class ShuffleBuffer:
    def __init__(self, planes_len, globals_len, rng):
        self.planes = np.zeros((0, planes_len), np.int8)
        self.globals = np.zeros((0, globals_len), np.float32)
        self.labels = np.zeros(0, np.float32)
        self.rng = rng
        self.peak = 0

    def __len__(self):
        return len(self.labels)

    def add(self, planes, globals_, labels):
        self.planes = np.concatenate([self.planes, planes])
        self.globals = np.concatenate([self.globals, globals_])
        self.labels = np.concatenate([self.labels, labels])
        self.peak = max(self.peak, len(self))

    def draw(self, k):
        n = len(self)
        idx = self.rng.choice(n, size=k, replace=False)
        out = (self.planes[idx], self.globals[idx], self.labels[idx])
        # Fill the drawn places below n - k with the undrawn rows of the tail.
        keep = n - k
        holes = idx[idx < keep]
        tail = np.arange(keep, n)
        movers = tail[~np.isin(tail, idx)]
        self.planes[holes] = self.planes[movers]
        self.globals[holes] = self.globals[movers]
        self.labels[holes] = self.labels[movers]
        self.planes = self.planes[:keep]
        self.globals = self.globals[:keep]
        self.labels = self.labels[:keep]
        return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", required=True)
    ap.add_argument("--batch", type=int, default=1024)
    ap.add_argument("--buffer-rows", type=int, default=65536)
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--split", default="train")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    with open(os.path.join(args.data, "manifest.json")) as f:
        manifest = json.load(f)
    c, h, w = manifest["encoder"]["shape"]
    planes_len, globals_len = c * h * w, manifest["encoder"]["globals"]
    shards = [
        s["file"]
        for s in manifest["shards"]
        if (s["rows"] if args.split == "all" else s["rows_per_split"][args.split]) > 0
    ]
    rng = np.random.default_rng(args.seed)
    pool = ThreadPoolExecutor(max_workers=1)
    positions = 0
    t0 = time.perf_counter()
    for _ in range(args.epochs):
        order = list(rng.permutation(len(shards)))
        paths = [os.path.join(args.data, shards[i]) for i in order]
        buf = ShuffleBuffer(planes_len, globals_len, rng)
        pending = pool.submit(read_shard, paths[0], args.split, planes_len, globals_len) if paths else None
        k = 0

        def batch():
            planes, globals_, labels = buf.draw(min(args.batch, len(buf)))
            x = planes.astype(np.float32).reshape(-1, c, h, w)
            y = labels.reshape(-1, 1)
            g = globals_ if globals_len else None
            return x, g, y

        while pending is not None:
            rows = pending.result()
            k += 1
            pending = (
                pool.submit(read_shard, paths[k], args.split, planes_len, globals_len)
                if k < len(paths)
                else None
            )
            buf.add(*rows)
            while len(buf) >= args.buffer_rows:
                x, _, _ = batch()
                positions += len(x)
        while len(buf) > 0:
            x, _, _ = batch()
            positions += len(x)
    seconds = time.perf_counter() - t0
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    if sys.platform != "darwin":
        rss *= 1024  # Linux reports KiB
    print(
        json.dumps(
            {
                "engine": f"pyarrow {pa.__version__} + numpy {np.__version__}",
                "positions": positions,
                "seconds": seconds,
                "positions_per_s": positions / seconds if seconds > 0 else None,
                "peak_rss_bytes": rss,
                "peak_buffer_rows": buf.peak if args.epochs else 0,
            }
        )
    )


if __name__ == "__main__":
    main()
