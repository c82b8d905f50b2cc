"""Requests per second of ``regn serve`` (not part of the tests).

    pip install -e '.[bench]'
    python benchmarks/bench_serve.py FILE [--n N] [--clients K]

FILE is a REGN file (``regn demo DIR`` writes ``DIR/demo.rgn``). Two kinds of
request: ``locate`` of one point (what the protocol itself costs) and
``path`` between two random free points (smoothed, the default). Each is
sent

* over stdin/stdout to ``regn serve FILE``: in lock step (send one, wait
  for its answer: a client's round trip) and pipelined (send all, then
  read);
* over TCP to ``regn serve FILE --port 0``: one client in lock step, K
  clients in lock step at once (each on its own connection, served by its
  own thread), and one client pipelined.

Every answer is checked to carry its request's id and no error. Figures are
requests per second of wall time, on whatever the machine has free.
"""

import argparse
import json
import socket
import subprocess
import sys
import threading
import time

import numpy as np

import regn

SERVE = [sys.executable, "-c", "from regn.cli import entry; entry()", "serve"]


def requests(mesh, kind, n):
    A, B = mesh.random_points(n, seed=1), mesh.random_points(n, seed=2)
    if kind == "locate":
        reqs = [{"id": i, "query": "locate", "points": [a.tolist()]} for i, a in enumerate(A)]
    else:
        reqs = [{"id": i, "query": "path", "start": a.tolist(), "goal": b.tolist()}
                for i, (a, b) in enumerate(zip(A, B))]
    return [(json.dumps(r) + "\n").encode() for r in reqs]


def check(answers, n):
    got = [json.loads(a) for a in answers]
    assert [a["id"] for a in got] == list(range(n)) and not any("error" in a for a in got)


def over_stdin(path, lines):
    proc = subprocess.Popen(SERVE + [path], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    proc.stdin.write(lines[0])                  # start-up and warm-up, not timed
    proc.stdin.flush()
    proc.stdout.readline()
    t0 = time.perf_counter()
    answers = []
    for line in lines:
        proc.stdin.write(line)
        proc.stdin.flush()
        answers.append(proc.stdout.readline())
    lockstep = time.perf_counter() - t0
    check(answers, len(lines))

    def feed():
        proc.stdin.writelines(lines)
        proc.stdin.flush()
    t0 = time.perf_counter()
    writer = threading.Thread(target=feed)
    writer.start()
    answers = [proc.stdout.readline() for _ in lines]
    pipelined = time.perf_counter() - t0
    writer.join()
    check(answers, len(lines))
    proc.stdin.close()
    proc.wait()
    return lockstep, pipelined


def tcp_lockstep(port, lines, out):
    with socket.create_connection(("127.0.0.1", port)) as s:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        f = s.makefile("rb")
        answers = []
        for line in lines:
            s.sendall(line)
            answers.append(f.readline())
    check(answers, len(lines))
    out.append(len(lines))


def tcp_pipelined(port, lines):
    with socket.create_connection(("127.0.0.1", port)) as s:
        f = s.makefile("rb")
        sender = threading.Thread(target=lambda: s.sendall(b"".join(lines)))
        sender.start()
        answers = [f.readline() for _ in lines]
        sender.join()
    check(answers, len(lines))


def over_tcp(path, lines, clients):
    proc = subprocess.Popen(SERVE + [path, "--port", "0"], stderr=subprocess.PIPE, text=True)
    try:
        port = int(proc.stderr.readline().rsplit(":", 1)[1])
        tcp_lockstep(port, lines[:10], [])      # connection set-up paths warmed
        t0 = time.perf_counter()
        tcp_lockstep(port, lines, [])
        one = time.perf_counter() - t0
        done = []
        threads = [threading.Thread(target=tcp_lockstep, args=(port, lines, done))
                   for _ in range(clients)]
        t0 = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        many = time.perf_counter() - t0
        assert len(done) == clients
        t0 = time.perf_counter()
        tcp_pipelined(port, lines)
        piped = time.perf_counter() - t0
    finally:
        proc.terminate()
        proc.wait()
    return one, many, piped


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file", help="REGN file")
    ap.add_argument("--n", type=int, default=2000, help="requests per run (default 2000)")
    ap.add_argument("--clients", type=int, default=4, help="TCP clients at once (default 4)")
    args = ap.parse_args()
    mesh = regn.load(args.file)
    n, k = args.n, args.clients
    for kind in ("locate", "path"):
        lines = requests(mesh, kind, n)
        lock, piped = over_stdin(args.file, lines)
        print(f"{kind}, stdin/stdout: lock step {n / lock:,.0f} req/s "
              f"({lock / n * 1e6:.0f} us a round trip), pipelined {n / piped:,.0f} req/s")
        one, many, tpiped = over_tcp(args.file, lines, k)
        print(f"{kind}, TCP: 1 client lock step {n / one:,.0f} req/s, {k} clients lock step "
              f"{k * n / many:,.0f} req/s in all, 1 client pipelined {n / tpiped:,.0f} req/s")


if __name__ == "__main__":
    main()
