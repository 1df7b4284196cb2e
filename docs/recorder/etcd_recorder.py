#!/usr/bin/env python3
"""Record a history of an etcd lock for `fencesim check-history` (docs/recording-histories.md).

Python 3, standard library only, through etcd's v3 JSON gateway (etcd 3.4: /v3/...).

  etcd_recorder.py watch  --endpoint URL --out etcd.jsonl
  etcd_recorder.py worker --endpoint URL --scope S --name worker-A --out a.jsonl [options]
  etcd_recorder.py merge  etcd.jsonl a.jsonl b.jsonl > history.jsonl

`watch` records the lock service's own events from etcd's watch stream, in etcd's order:
a new lock key is `granted` (token = its create_revision), its deletion `released` (the
holder's release txn also puts a marker key at the same revision) or else `expired`.
`worker` acquires the lock key with a lease (put-if-absent), keeps the lease alive, and writes
to a data key: it records its belief and each `write-sent`, and the store's verdict
(`write-accepted` / `write-rejected`, node `store`). `--fencing txn` makes the store compare the
lock key's create_revision with the write's token in the same txn; `--fencing none` writes
unconditionally. `merge` sorts the files by time into one history.

Every event is stamped with CLOCK_MONOTONIC (time.monotonic_ns), one clock for every process on
a Linux host; `merge` makes the first event time 0.
"""

import argparse
import base64
import json
import os
import signal
import sys
import time
import urllib.error
import urllib.request

PREFIX = "/fencesim-recorder/"


def b64(text):
    return base64.b64encode(text.encode()).decode()


def unb64(text):
    return base64.b64decode(text).decode()


def lock_key(scope):
    return PREFIX + "lock/" + scope


def marker_key(scope):
    return PREFIX + "released/" + scope


def data_key(scope):
    return PREFIX + "data/" + scope


class Log:
    """One JSON object per line, flushed at once (a SIGKILL loses nothing already logged)."""

    def __init__(self, path, node):
        self.out = open(path, "a", encoding="utf-8")
        self.node = node

    def event(self, event, node=None, **fields):
        line = {"t_ns": time.monotonic_ns(), "node": node or self.node, "event": event}
        line.update(fields)
        self.out.write(json.dumps(line) + "\n")
        self.out.flush()


def post(endpoint, path, body, timeout=2.0):
    request = urllib.request.Request(
        endpoint + path, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return json.loads(response.read())


def first_kv(response):
    """The first key-value of the first range response in a txn's responses, or None."""
    for r in response.get("responses", []):
        kvs = r.get("response_range", {}).get("kvs", [])
        if kvs:
            return kvs[0]
    return None


def stored_token(kv):
    return int(unb64(kv["value"]).split()[0]) if kv else None


def watch(args):
    log = Log(args.out, "etcd")
    body = {"create_request": {"key": b64(PREFIX), "range_end": b64(PREFIX[:-1] + "0"), "prev_kv": True}}
    request = urllib.request.Request(args.endpoint + "/v3/watch", data=json.dumps(body).encode())
    released_at = {}  # scope -> revision of its last release marker
    with urllib.request.urlopen(request) as stream:
        for line in stream:
            result = json.loads(line).get("result", {})
            if result.get("created"):
                print("watching from revision", result["header"]["revision"], file=sys.stderr, flush=True)
            for e in result.get("events", []):
                kv, key = e["kv"], unb64(e["kv"]["key"])
                kind = e.get("type", "PUT")
                if key.startswith(PREFIX + "released/") and kind == "PUT":
                    released_at[key[len(PREFIX + "released/"):]] = kv["mod_revision"]
                elif key.startswith(PREFIX + "lock/"):
                    scope = key[len(PREFIX + "lock/"):]
                    if kind == "PUT" and kv.get("version") == "1":
                        log.event("granted", scope=scope, holder=unb64(kv["value"]),
                                  token=int(kv["create_revision"]))
                    elif kind == "DELETE":
                        prev = e["prev_kv"]
                        ended = "released" if released_at.get(scope) == kv["mod_revision"] else "expired"
                        log.event(ended, scope=scope, holder=unb64(prev["value"]),
                                  token=int(prev["create_revision"]))


def worker(args):
    log = Log(args.out, args.name)
    ep, scope, lock = args.endpoint, args.scope, b64(lock_key(args.scope))
    # The lease and the lock: put-if-absent with the lease attached, as etcd's
    # concurrency.Mutex does; the token is the lock key's create_revision.
    lease = post(ep, "/v3/lease/grant", {"TTL": str(args.ttl)})["ID"]
    give_up = time.monotonic() + args.acquire_timeout
    while True:
        won = post(ep, "/v3/kv/txn", {
            "compare": [{"key": lock, "target": "CREATE", "result": "EQUAL", "create_revision": "0"}],
            "success": [{"request_put": {"key": lock, "value": b64(args.name), "lease": lease}}],
            "failure": [{"request_range": {"key": lock}}],
        })
        if won.get("succeeded"):
            token = int(won["header"]["revision"])
            break
        if time.monotonic() > give_up:
            sys.exit(f"{args.name}: the lock was not free within {args.acquire_timeout} s")
        post(ep, "/v3/lease/keepalive", {"ID": lease})
        time.sleep(0.1)
    mono_ms = lambda: time.monotonic_ns() / 1e6  # noqa: E731
    log.event("belief-started", scope=scope, token=token, local_deadline_mono_ms=mono_ms() + args.ttl * 1000.0)
    next_keepalive = time.monotonic() + args.ttl / 3
    ended = None
    for n in range(args.writes):
        if time.monotonic() >= next_keepalive:
            left = int(post(ep, "/v3/lease/keepalive", {"ID": lease}).get("result", {}).get("TTL", 0))
            if left <= 0:
                ended = "renew-failed"
                break
            next_keepalive = time.monotonic() + args.ttl / 3
        time.sleep(args.work / 2)  # the work ...
        if n == args.stop_after_writes:
            os.kill(os.getpid(), signal.SIGSTOP)  # ... stopped, as a GC pause or a VM freeze would
        time.sleep(args.work / 2)
        op = os.getpid() * 100_000 + n  # unique among the processes of one recording
        log.event("write-sent", op=op, resource=scope, token=token)
        compare = []
        if args.fencing == "txn":
            compare = [{"key": lock, "target": "CREATE", "result": "EQUAL", "create_revision": str(token)}]
        data = b64(data_key(scope))
        answer = post(ep, "/v3/kv/txn", {
            "compare": compare,
            "success": [{"request_range": {"key": data}},
                        {"request_put": {"key": data, "value": b64(f"{token} {args.name} {n}")}}],
            "failure": [{"request_range": {"key": lock}}],
        })
        write = dict(op=op, resource=scope, lease_scope=scope, writer=args.name, token=token)
        if answer.get("succeeded"):
            log.event("write-accepted", node="store", previous=stored_token(first_kv(answer)), **write)
        else:
            holder = first_kv(answer)  # the lock key now: another holder's, or none
            current = int(holder["create_revision"]) if holder else None
            why = f"created at revision {current}" if holder else "gone"
            log.event("write-rejected", node="store", accepted=current,
                      reason=f"token {token}: the lock key is {why}", **write)
            ended = "write-rejected"
            break
    if ended is None:
        # Release: delete the lock key if it is still ours, with the marker `watch` reads.
        post(ep, "/v3/kv/txn", {
            "compare": [{"key": lock, "target": "CREATE", "result": "EQUAL", "create_revision": str(token)}],
            "success": [{"request_put": {"key": b64(marker_key(scope)), "value": b64(str(token)), "lease": lease}},
                        {"request_delete_range": {"key": lock}}],
        })
        ended = "released"
    log.event("belief-ended", scope=scope, token=token, why=ended, local_mono_ms=mono_ms())
    try:
        post(ep, "/v3/lease/revoke", {"ID": lease})
    except urllib.error.HTTPError as error:
        if error.code != 404:  # 404: the lease expired already
            raise


def merge(args):
    events = []
    for path in args.files:
        with open(path, encoding="utf-8") as f:
            events.extend(json.loads(line) for line in f if line.strip())
    events.sort(key=lambda e: e["t_ns"])  # stable: one file's order is kept on ties
    origin = events[0]["t_ns"] if events else 0
    for e in events:
        e["t_ns"] -= origin
        print(json.dumps(e))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    roles = parser.add_subparsers(dest="role", required=True)
    w = roles.add_parser("watch")
    w.add_argument("--endpoint", required=True)
    w.add_argument("--out", required=True)
    k = roles.add_parser("worker")
    k.add_argument("--endpoint", required=True)
    k.add_argument("--scope", default="job-X")
    k.add_argument("--name", required=True)
    k.add_argument("--out", required=True)
    k.add_argument("--ttl", type=int, default=2, help="lease TTL in seconds")
    k.add_argument("--writes", type=int, default=5)
    k.add_argument("--work", type=float, default=0.3, help="seconds of work before each write")
    k.add_argument("--fencing", choices=["none", "txn"], default="none")
    k.add_argument("--acquire-timeout", type=float, default=30.0)
    k.add_argument("--stop-after-writes", type=int, default=-1,
                   help="SIGSTOP itself in the middle of the work after N writes (something else sends SIGCONT)")
    m = roles.add_parser("merge")
    m.add_argument("files", nargs="+")
    args = parser.parse_args()
    {"watch": watch, "worker": worker, "merge": merge}[args.role](args)


if __name__ == "__main__":
    main()
