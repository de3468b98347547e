#!/usr/bin/env python3
"""Python's huggingface_hub and safetensors on plies' hub repositories.

Reads HF_ENDPOINT, HF_TOKEN and HF_HUB_CACHE like plies does. Prints one
JSON object on stdout.

  hub_interop.py cached REPO FILE... [--kind model|dataset]
      hf_hub_download(..., local_files_only=True) for each file: finds
      what is in the shared cache without the network; the sha256 of each
      file, and every tensor's shape in *.safetensors files (loaded with
      safetensors.numpy).
  hub_interop.py upload DIR REPO [--kind model|dataset]
      create_repo(exist_ok=True) and upload_folder: the files of DIR.
  hub_interop.py download REPO [--kind model|dataset]
      snapshot_download into the cache; the snapshot path and each file's
      sha256.
"""

import argparse
import hashlib
import json
import os


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def describe(path):
    out = {"sha256": sha256(path)}
    if path.endswith(".safetensors"):
        from safetensors.numpy import load_file

        out["tensors"] = {k: list(v.shape) for k, v in load_file(path).items()}
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("command", choices=["cached", "upload", "download"])
    ap.add_argument("args", nargs="+")
    ap.add_argument("--kind", default="model", choices=["model", "dataset"])
    a = ap.parse_args()
    from huggingface_hub import HfApi, hf_hub_download, snapshot_download

    if a.command == "cached":
        repo, files = a.args[0], a.args[1:]
        result = {}
        for f in files:
            path = hf_hub_download(repo, f, repo_type=a.kind, local_files_only=True)
            result[f] = describe(path)
        print(json.dumps(result))
    elif a.command == "upload":
        folder, repo = a.args
        api = HfApi()
        api.create_repo(repo, repo_type=a.kind, exist_ok=True)
        info = api.upload_folder(folder_path=folder, repo_id=repo, repo_type=a.kind)
        print(json.dumps({"commit": info.oid}))
    else:
        (repo,) = a.args
        path = snapshot_download(repo, repo_type=a.kind)
        files = {}
        for root, _, names in os.walk(path):
            for n in names:
                full = os.path.join(root, n)
                files[os.path.relpath(full, path)] = sha256(full)
        print(json.dumps({"snapshot": path, "files": files}))


if __name__ == "__main__":
    main()
