#!/usr/bin/env python3
"""A loopback server speaking the Hugging Face Hub protocol, for tests.

Only the standard library. It keeps model and dataset repositories in
memory and answers the endpoints the hub clients (plies' hf-hub and
Python's huggingface_hub) call to download and upload:

  POST /api/repos/create                                  create a repo
  GET  /api/{models|datasets}/ORG/NAME[/revision/REV]     revision info
  GET  /api/{models|datasets}/ORG/NAME/tree/REV[/PATH]    file listing
  POST /api/{models|datasets}/ORG/NAME/preupload/REV      upload modes
  POST /api/{models|datasets}/ORG/NAME/commit/REV         NDJSON commit
  POST /api/{models|datasets}/ORG/NAME/branch/BRANCH      new branch
  POST [datasets/]ORG/NAME.git/info/lfs/objects/batch     LFS batch
  PUT  /_lfs/OID, POST /_lfs/verify                       LFS transfers
  HEAD|GET [datasets/]ORG/NAME/resolve/REV/PATH           file metadata and bytes
  GET  /api/whoami-v2                                     the token's user
  POST /api/validate-yaml                                 model card front matter

Errors carry the hub's X-Error-Code (RepoNotFound, RevisionNotFound,
EntryNotFound) and X-Error-Message headers, which both clients map to
their typed errors. Binary files (*.safetensors, *.arrow) are LFS files:
their ETag is the content's sha256, as on the hub; other files' ETag is
the git blob id.

Faults for failure tests: POST /_test/fault {"file": NAME, "kind": K}
with K one of `500` (HEAD answers, GET fails with 500), `cut` (GET sends
half the body, then closes the connection), `corrupt` (GET sends changed
bytes under the true ETag), or, with "value": V, `etag` (HEAD and GET
answer ETag V), `commit` (they answer X-Repo-Commit V), `sha` (the
revision info of every repository names commit V; NAME is ignored); {}
clears them. GET /_test/log lists the requests served.

A hostile repository for the tests of names: POST /_test/repo {"kind": K,
"repo": ORG/NAME, "copy_from": ORG/NAME, "files": {PATH: TEXT}} makes a
repository holding the files of `copy_from`'s main plus `files`, under
names as they are (`../x`, `/abs`, `a\\b`...); a download of a path it
does not hold (a client's URL normalised `..` away) gets the first of
`files`.

Usage: hub_server.py [--token T] [--max-seconds S]; prints
`http://127.0.0.1:PORT` on its first line of stdout, then serves until
killed or S seconds (default 900) have passed.
"""

import argparse
import base64
import hashlib
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote, urlsplit

LFS_SUFFIXES = (".safetensors", ".arrow", ".bin", ".parquet")
GITATTRIBUTES = b"*.safetensors filter=lfs diff=lfs merge=lfs -text\n*.arrow filter=lfs diff=lfs merge=lfs -text\n"


def git_blob_id(data):
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def is_lfs(path):
    return path.endswith(LFS_SUFFIXES)


class HubError(Exception):
    def __init__(self, status, code, message):
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message


class Store:
    """Repositories: (kind, 'org/name') -> {private, branches, commits}."""

    def __init__(self):
        self.lock = threading.Lock()
        self.repos = {}
        self.blobs = {}  # sha256 -> bytes (LFS objects and committed files)
        self.faults = {}  # file name -> kind
        self.fault_value = None  # the value of an `etag`, `commit` or `sha` fault
        self.log = []

    def repo(self, kind, repo_id):
        repo = self.repos.get((kind, repo_id))
        if repo is None:
            raise HubError(404, "RepoNotFound", f"Repository {repo_id} not found")
        return repo

    def commit_of(self, kind, repo_id, revision):
        repo = self.repo(kind, repo_id)
        if revision in repo["branches"]:
            return repo["branches"][revision]
        if revision in repo["commits"]:
            return revision
        raise HubError(404, "RevisionNotFound", f"Invalid rev id: {revision}")

    def create(self, kind, repo_id, private):
        if (kind, repo_id) in self.repos:
            raise HubError(409, None, "You already created this repo")
        repo = {"private": private, "branches": {}, "commits": {}}
        self.repos[(kind, repo_id)] = repo
        files = {".gitattributes": self.put_blob(GITATTRIBUTES)}
        sha = self.new_commit(repo, None, files, "initial commit")
        repo["branches"]["main"] = sha

    def put_blob(self, data):
        key = hashlib.sha256(data).hexdigest()
        self.blobs[key] = data
        return key

    @staticmethod
    def new_commit(repo, parent, files, message):
        h = hashlib.sha1()
        h.update((parent or "").encode())
        h.update(message.encode())
        h.update(str(len(repo["commits"])).encode())
        for path in sorted(files):
            h.update(path.encode() + b"\0" + files[path].encode())
        sha = h.hexdigest()
        repo["commits"][sha] = {"parent": parent, "files": dict(files)}
        return sha


STORE = Store()
TOKEN = None


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "plies-test-hub"

    def log_message(self, fmt, *args):
        pass

    # --- plumbing -----------------------------------------------------

    def body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            out = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return out
                out += self.rfile.read(size)
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def send(self, status, payload=b"", headers=None, content_type="application/json"):
        if not isinstance(payload, bytes):
            payload = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(payload)

    def fail(self, err):
        headers = {"X-Error-Message": err.message}
        if err.code:
            headers["X-Error-Code"] = err.code
        self.send(err.status, {"error": err.message}, headers)

    def user(self):
        """The token's user; a token other than the server's is refused."""
        auth = self.headers.get("Authorization", "")
        if not auth:
            return None
        token = auth[len("Bearer "):] if auth.startswith("Bearer ") else auth
        if TOKEN is not None and token != TOKEN:
            raise HubError(401, None, "Invalid credentials in Authorization header")
        return "tester"

    def require_user(self):
        if self.user() is None:
            raise HubError(401, None, "You must be authenticated to write to the hub")

    def readable(self, kind, repo_id):
        repo = STORE.repo(kind, repo_id)
        if repo["private"] and self.user() is None:
            raise HubError(401, "RepoNotFound", f"Repository {repo_id} not found")
        return repo

    def dispatch(self):
        path = unquote(urlsplit(self.path).path)
        query = urlsplit(self.path).query
        STORE.log.append(f"{self.command} {self.path}")
        try:
            with STORE.lock:
                # As on the hub, a bad token is refused even where none is
                # needed.
                if not path.startswith("/_test/"):
                    self.user()
                self.route(path, query)
        except HubError as err:
            self.fail(err)
        except (BrokenPipeError, ConnectionResetError):
            pass

    do_GET = do_HEAD = do_POST = do_PUT = dispatch

    # --- routes -------------------------------------------------------

    def route(self, path, query):
        parts = [p for p in path.split("/") if p]
        m = self.command
        if parts[:1] == ["_test"]:
            return self.test_control(parts[1:])
        if parts == ["api", "whoami-v2"]:
            user = self.user()
            if user is None:
                raise HubError(401, None, "Invalid user token")
            return self.send(200, {"type": "user", "name": user, "auth": {"accessToken": {"role": "write"}}})
        if parts == ["api", "validate-yaml"] and m == "POST":
            return self.validate_yaml()
        if parts == ["api", "repos", "create"] and m == "POST":
            return self.create_repo()
        if parts[:1] == ["_lfs"]:
            return self.lfs_transfer(parts[1:])
        if parts[:1] == ["api"] and len(parts) >= 4 and parts[1] in ("models", "datasets"):
            kind = parts[1][:-1]
            repo_id = "/".join(parts[2:4])
            rest = parts[4:]
            if not rest and m == "GET":
                return self.revision_info(kind, repo_id, "main")
            if rest[:1] == ["revision"] and m == "GET":
                return self.revision_info(kind, repo_id, "/".join(rest[1:]))
            if rest[:1] == ["tree"] and m == "GET":
                return self.tree(kind, repo_id, rest[1], "/".join(rest[2:]))
            if rest[:1] == ["preupload"] and m == "POST":
                return self.preupload(kind, repo_id, "/".join(rest[1:]))
            if rest[:1] == ["commit"] and m == "POST":
                return self.commit(kind, repo_id, "/".join(rest[1:]))
            if rest[:1] == ["branch"] and m == "POST":
                return self.branch(kind, repo_id, "/".join(rest[1:]))
        kind = "model"
        if parts[:1] == ["datasets"]:
            kind, parts = "dataset", parts[1:]
        if len(parts) >= 5 and parts[2] == "resolve" and m in ("GET", "HEAD"):
            return self.resolve(kind, "/".join(parts[:2]), parts[3], "/".join(parts[4:]))
        if len(parts) == 6 and parts[1].endswith(".git") and parts[2:] == ["info", "lfs", "objects", "batch"]:
            return self.lfs_batch(kind, parts[0] + "/" + parts[1][: -len(".git")])
        raise HubError(404, None, f"no such endpoint: {m} {path}")

    def test_control(self, rest):
        if rest == ["fault"]:
            spec = json.loads(self.body() or b"{}")
            STORE.faults = {spec["file"]: spec["kind"]} if spec else {}
            STORE.fault_value = spec.get("value")
            return self.send(200, {"faults": STORE.faults})
        if rest == ["repo"]:
            spec = json.loads(self.body())
            kind, repo_id = spec.get("kind") or "model", spec["repo"]
            src = spec.get("copy_from")
            files = {}
            if src:
                source = STORE.repo(kind, src)
                files = dict(source["commits"][source["branches"]["main"]]["files"])
            extra = spec.get("files") or {}
            for path, text in extra.items():
                files[path] = STORE.put_blob(text.encode())
            repo = {"private": False, "branches": {}, "commits": {}, "fallback": next(iter(extra), None)}
            STORE.repos[(kind, repo_id)] = repo
            repo["branches"]["main"] = STORE.new_commit(repo, None, files, "hostile")
            return self.send(200, {"repo": repo_id})
        if rest == ["log"]:
            return self.send(200, STORE.log)
        raise HubError(404, None, "no such test endpoint")

    def validate_yaml(self):
        """The model card's front matter: `---` lines around `key: value` lines."""
        content = json.loads(self.body()).get("content", "")
        lines = content.split("\n")
        errors = []
        if lines[:1] == ["---"]:
            if "---" not in lines[1:]:
                errors.append({"message": "the front matter has no closing ---"})
            else:
                for line in lines[1 : lines.index("---", 1)]:
                    if line.strip() and not line.startswith((" ", "-")) and ":" not in line:
                        errors.append({"message": f"not YAML: {line!r}"})
        self.send(400 if errors else 200, {"errors": errors, "warnings": []})

    def create_repo(self):
        self.require_user()
        spec = json.loads(self.body())
        repo_id = f"{spec.get('organization') or 'tester'}/{spec['name']}"
        kind = spec.get("type") or "model"
        STORE.create(kind, repo_id, bool(spec.get("private")))
        prefix = "" if kind == "model" else f"{kind}s/"
        url = f"http://{self.headers.get('Host')}/{prefix}{repo_id}"
        self.send(200, {"url": url, "name": repo_id, "id": repo_id})

    def revision_info(self, kind, repo_id, revision):
        repo = self.readable(kind, repo_id)
        sha = STORE.commit_of(kind, repo_id, revision)
        files = repo["commits"][sha]["files"]
        self.send(
            200,
            {
                "id": repo_id,
                "_id": repo_id,
                "sha": STORE.fault_value if "sha" in STORE.faults.values() else sha,
                "private": repo["private"],
                "siblings": [{"rfilename": p} for p in sorted(files)],
                "tags": [],
                "downloads": 0,
                "likes": 0,
                "lastModified": "2026-01-01T00:00:00.000Z",
            },
        )

    def entry(self, path, key):
        data = STORE.blobs[key]
        e = {"type": "file", "path": path, "size": len(data), "oid": git_blob_id(data)}
        if is_lfs(path):
            e["lfs"] = {"oid": key, "size": len(data), "pointerSize": 134}
        return e

    def tree(self, kind, repo_id, revision, under):
        repo = self.readable(kind, repo_id)
        sha = STORE.commit_of(kind, repo_id, revision)
        files = repo["commits"][sha]["files"]
        prefix = under.rstrip("/") + "/" if under else ""
        self.send(200, [self.entry(p, k) for p, k in sorted(files.items()) if p.startswith(prefix)])

    def resolve(self, kind, repo_id, revision, path):
        repo = self.readable(kind, repo_id)
        sha = STORE.commit_of(kind, repo_id, revision)
        files = repo["commits"][sha]["files"]
        if path not in files and repo.get("fallback") is not None:
            path = repo["fallback"]
        if path not in files:
            raise HubError(404, "EntryNotFound", f"{path} does not exist at {revision}")
        data = STORE.blobs[files[path]]
        etag = files[path] if is_lfs(path) else git_blob_id(data)
        headers = {"X-Repo-Commit": sha, "ETag": f'"{etag}"', "Accept-Ranges": "bytes"}
        if is_lfs(path):
            headers["X-Linked-Etag"] = f'"{etag}"'
            headers["X-Linked-Size"] = str(len(data))
        header_fault = STORE.faults.get(path.rsplit("/", 1)[-1])
        if header_fault == "etag":
            headers["ETag"] = f'"{STORE.fault_value}"'
            headers.pop("X-Linked-Etag", None)
        if header_fault == "commit":
            headers["X-Repo-Commit"] = STORE.fault_value
        fault = STORE.faults.get(path.rsplit("/", 1)[-1]) if self.command == "GET" else None
        if fault == "500":
            raise HubError(500, None, "Internal Error")
        if fault == "corrupt":
            data = bytes([data[0] ^ 0xFF]) + data[1:]
        if fault == "cut":
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(len(data)))
            for k, v in headers.items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data[: len(data) // 2])
            self.wfile.flush()
            self.close_connection = True
            self.connection.shutdown(2)
            return
        self.send(200, data, headers, "application/octet-stream")

    def preupload(self, kind, repo_id, revision):
        self.require_user()
        STORE.repo(kind, repo_id)
        STORE.commit_of(kind, repo_id, revision)
        spec = json.loads(self.body())
        files = [
            {"path": f["path"], "uploadMode": "lfs" if is_lfs(f["path"]) else "regular", "shouldIgnore": False}
            for f in spec.get("files", [])
        ]
        self.send(200, {"files": files, "commitOid": STORE.commit_of(kind, repo_id, revision)})

    def lfs_batch(self, kind, repo_id):
        self.require_user()
        STORE.repo(kind, repo_id)
        spec = json.loads(self.body())
        host = f"http://{self.headers.get('Host')}"
        objects = []
        for o in spec.get("objects", []):
            obj = {"oid": o["oid"], "size": o["size"], "authenticated": True}
            if o["oid"] not in STORE.blobs:
                obj["actions"] = {
                    "upload": {"href": f"{host}/_lfs/{o['oid']}"},
                    "verify": {"href": f"{host}/_lfs/verify"},
                }
            objects.append(obj)
        self.send(200, {"transfer": "basic", "objects": objects}, content_type="application/vnd.git-lfs+json")

    def lfs_transfer(self, rest):
        if self.command == "PUT" and len(rest) == 1:
            data = self.body()
            if hashlib.sha256(data).hexdigest() != rest[0]:
                raise HubError(400, None, "uploaded bytes do not match the oid")
            STORE.blobs[rest[0]] = data
            return self.send(200, b"", content_type="text/plain")
        if self.command == "POST" and rest == ["verify"]:
            spec = json.loads(self.body())
            if spec["oid"] not in STORE.blobs:
                raise HubError(404, None, f"LFS object {spec['oid']} was not uploaded")
            return self.send(200, {})
        raise HubError(404, None, "no such LFS endpoint")

    def commit(self, kind, repo_id, revision):
        self.require_user()
        repo = STORE.repo(kind, repo_id)
        if revision not in repo["branches"]:
            raise HubError(404, "RevisionNotFound", f"Invalid rev id: {revision}")
        parent = repo["branches"][revision]
        files = dict(repo["commits"][parent]["files"])
        message = ""
        for line in self.body().splitlines():
            if not line.strip():
                continue
            op = json.loads(line)
            key, value = op["key"], op["value"]
            if key == "header":
                message = value.get("summary") or ""
                if value.get("parentCommit") and value["parentCommit"] != parent:
                    raise HubError(412, None, "parent commit is not the head of the branch")
            elif key == "file":
                files[value["path"]] = STORE.put_blob(base64.b64decode(value["content"]))
            elif key == "lfsFile":
                if value["oid"] not in STORE.blobs:
                    raise HubError(400, None, f"LFS object {value['oid']} for {value['path']} was not uploaded")
                files[value["path"]] = value["oid"]
            elif key == "deletedFile":
                files.pop(value["path"], None)
            elif key == "deletedFolder":
                prefix = value["path"].rstrip("/") + "/"
                files = {p: k for p, k in files.items() if not p.startswith(prefix)}
            else:
                raise HubError(400, None, f"unknown commit operation {key}")
        sha = STORE.new_commit(repo, parent, files, message)
        repo["branches"][revision] = sha
        host = f"http://{self.headers.get('Host')}"
        prefix = "" if kind == "model" else f"{kind}s/"
        self.send(
            200,
            {
                "commitUrl": f"{host}/{prefix}{repo_id}/commit/{sha}",
                "commitOid": sha,
                "commitMessage": message,
                "pullRequestUrl": None,
                "success": True,
            },
        )

    def branch(self, kind, repo_id, branch):
        self.require_user()
        repo = STORE.repo(kind, repo_id)
        spec = json.loads(self.body() or b"{}")
        if branch in repo["branches"]:
            raise HubError(409, None, f"Reference {branch} already exists")
        start = STORE.commit_of(kind, repo_id, spec.get("startingPoint") or "main")
        repo["branches"][branch] = start
        self.send(200, {})


def main():
    global TOKEN
    ap = argparse.ArgumentParser()
    ap.add_argument("--token", default=None)
    ap.add_argument("--max-seconds", type=float, default=900)
    args = ap.parse_args()
    TOKEN = args.token
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    print(f"http://127.0.0.1:{server.server_address[1]}", flush=True)
    # Serves on a daemon thread; the process (and with it the server) ends
    # after --max-seconds even when nobody stops it.
    threading.Thread(target=server.serve_forever, daemon=True).start()
    time.sleep(args.max_seconds)


if __name__ == "__main__":
    main()
