#!/usr/bin/env python3
"""Checks a plies dataset with pyarrow alone, against the rows plies reads.

    python scripts/check_dataset_pyarrow.py DIR ROWS.jsonl [--split S]

DIR is a dataset directory; ROWS.jsonl is the output of
`plies data dump DIR [--split S]` (all rows of the split, stored order).
Without going through plies, this

  - checks every shard's size and sha256 against manifest.json,
  - opens each shard with pyarrow's IPC reader, checks the schema metadata
    (`plies.dataset`: format version, game, encoder as in the manifest) and
    the planes/globals list sizes against the encoder shape,
  - checks each shard's row count and rows per split against the manifest,
  - compares every row and every column with the dumped rows: strings and
    integers equal, nulls as nulls, float32 values bit for bit, planes
    element by element.

Prints a JSON summary; exits 1 on the first mismatch, naming the shard, row
and column.
"""

import argparse
import hashlib
import json
import os
import struct
import sys

import pyarrow as pa
import pyarrow.ipc as ipc


def fail(msg):
    print(json.dumps({"ok": False, "error": msg}))
    sys.exit(1)


def f32_bits(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def same(a, b, typ):
    """a from pyarrow, b from the JSON dump."""
    if a is None or b is None:
        return a is None and b is None
    if pa.types.is_floating(typ):
        if not isinstance(b, (int, float)):
            return False
        return f32_bits(a) == f32_bits(float(b))
    if pa.types.is_fixed_size_list(typ) or pa.types.is_list(typ):
        return (
            isinstance(b, list)
            and len(a) == len(b)
            and all(same(x, y, typ.value_type) for x, y in zip(a, b))
        )
    return type(a) is type(b) and a == b


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir")
    ap.add_argument("rows")
    ap.add_argument("--split", default=None, help="the --split given to plies data dump")
    args = ap.parse_args()

    with open(os.path.join(args.dir, "manifest.json")) as f:
        manifest = json.load(f)
    enc = manifest["encoder"]
    c, h, w = enc["shape"]
    with open(args.rows) as f:
        dumped = [json.loads(line) for line in f if line.strip()]

    k = 0
    rows_seen = 0
    columns = None
    for s, info in enumerate(manifest["shards"]):
        path = os.path.join(args.dir, info["file"])
        with open(path, "rb") as f:
            data = f.read()
        if len(data) != info["bytes"]:
            fail(f"{path}: {len(data)} bytes, the manifest says {info['bytes']}")
        sha = hashlib.sha256(data).hexdigest()
        if sha != info["sha256"]:
            fail(f"{path}: sha256 {sha}, the manifest says {info['sha256']}")
        reader = ipc.open_file(pa.BufferReader(data))
        schema = reader.schema
        meta = json.loads(schema.metadata[b"plies.dataset"])
        expect_meta = {
            "format_version": manifest["format_version"],
            "game": manifest["game"],
            "encoder": enc,
        }
        if meta != expect_meta:
            fail(f"{path}: schema metadata {meta}, expected {expect_meta}")
        planes_t = schema.field("planes").type
        if not (pa.types.is_fixed_size_list(planes_t) and planes_t.list_size == c * h * w
                and planes_t.value_type == pa.int8()):
            fail(f"{path}: planes column is {planes_t}, expected fixed_size_list<int8>[{c * h * w}]")
        if enc["globals"]:
            g_t = schema.field("globals").type
            if not (pa.types.is_fixed_size_list(g_t) and g_t.list_size == enc["globals"]):
                fail(f"{path}: globals column is {g_t}, expected {enc['globals']} float32 values")
        elif "globals" in schema.names:
            fail(f"{path}: a globals column, but the encoder has no global features")
        table = reader.read_all()
        if table.num_rows != info["rows"]:
            fail(f"{path}: {table.num_rows} rows, the manifest says {info['rows']}")
        splits = table["split"].to_pylist()
        for name, n in info["rows_per_split"].items():
            if splits.count(name) != n:
                fail(f"{path}: {splits.count(name)} rows of split {name}, the manifest says {n}")
        columns = schema.names
        cols = {name: table[name].to_pylist() for name in schema.names}
        types = {f.name: f.type for f in schema}
        for i in range(table.num_rows):
            if args.split is not None and splits[i] != args.split:
                continue
            if k >= len(dumped):
                fail(f"{path} row {i}: the dump has only {len(dumped)} rows")
            row = dumped[k]
            for name in schema.names:
                if name not in row:
                    fail(f"{path} row {i}: column `{name}` missing from the dump")
                if not same(cols[name][i], row[name], types[name]):
                    fail(f"{path} row {i}: column `{name}` is {cols[name][i]!r} in the shard, "
                         f"{row[name]!r} in the dump")
            if "globals" not in schema.names and row.get("globals") != []:
                fail(f"{path} row {i}: globals {row.get('globals')!r} in the dump, expected []")
            k += 1
        rows_seen += table.num_rows
    if k != len(dumped):
        fail(f"the dump has {len(dumped)} rows, the shards {k}")
    if rows_seen != manifest["totals"]["rows"]:
        fail(f"the shards hold {rows_seen} rows, the manifest totals say {manifest['totals']['rows']}")
    print(json.dumps({
        "ok": True,
        "pyarrow": pa.__version__,
        "shards": len(manifest["shards"]),
        "rows_compared": k,
        "columns": columns,
    }))


if __name__ == "__main__":
    main()
