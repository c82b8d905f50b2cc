"""Seeded structure-aware fuzz campaign over REGN objects.

    python fuzz/run.py --seed S --count N [--jobs 2] [--start I]

Input i of seed S is ``mutate.input_for(bases, S, i)``; a finding is written
to fuzz/findings/<kind>-s<S>-i<i>.rgn (+ .txt with the traceback) and is
reproduced with ``python fuzz/run.py --seed S --start i --count 1``.

Oracle: every stage returns normally or raises regn.errors.RegnError. Other
findings: another exception, > --timeout s of process CPU time for one input
(SIGPROF/ITIMER_PROF: CPU time, so a busy machine does not fake a hang;
paused while numba compiles, see fuzz/cpu_limit.py), a
tracemalloc peak > 10 x input size + 50 MB, a located tetrahedron that does
not contain the point, a path leaving the volume, and a verify report with
ok=True for bytes the writer does not reproduce (outside the known-benign
canonicalisations: POF0 table encoding and alignment padding).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import resource
import sys
import tempfile
import time
import traceback
import tracemalloc

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import cpu_limit  # noqa: E402
import mutate  # noqa: E402
from cpu_limit import Timeout  # noqa: E402
import regn  # noqa: E402
import regn.cli  # noqa: E402
from regn.errors import RegnError  # noqa: E402

from regn.checks import verify as _verify  # noqa: E402


class Finding(Exception):
    def __init__(self, kind, detail):
        super().__init__(f"{kind}: {detail}")
        self.kind = kind
        self.detail = detail


def _stage(name, fn, *a, **kw):
    try:
        return fn(*a, **kw)
    except (RegnError, Finding):
        raise
    except Timeout:
        raise
    except BaseException as e:  # noqa: BLE001
        raise Finding(f"{name}-{type(e).__name__}", traceback.format_exc())


def _benign_diff(data: bytes, out: bytes, mesh) -> bool:
    """True when ``out`` (the writer's bytes) differs from ``data`` only in
    the POF0 table encoding/size and alignment padding."""
    fr = mesh.parts.frame
    cut = fr.pof0_start
    if len(out) < cut or out[:cut] == data[:cut]:
        return len(out) >= cut
    a = np.frombuffer(data[:cut], np.uint8)
    b = np.frombuffer(out[:cut], np.uint8)
    diff = np.nonzero(a != b)[0]
    # padding: bytes outside every section span and the header
    d0 = fr.data_start
    inside = np.zeros(cut, bool)
    inside[:d0 + 0x80] = True
    from regn.format.layout import FACE_SENTINELS, STRIDES
    for k, (off, n) in enumerate(zip(mesh.parts.section_offsets, mesh.parts.counts)):
        end = d0 + off + n * STRIDES[k] + (FACE_SENTINELS * STRIDES[2] if k == 2 else 0)
        inside[d0 + off:min(cut, end)] = True
    return not inside[diff].any()


def check_locate(mesh, pts):
    t = mesh.locate(pts)
    hit = np.nonzero(t >= 0)[0]
    if not len(hit):
        return
    P = np.asarray(mesh.tet_points, float)[t[hit]]          # (k,4,3)
    p = pts[hit]
    # barycentric by solving
    M = np.stack([P[:, 1] - P[:, 0], P[:, 2] - P[:, 0], P[:, 3] - P[:, 0]], axis=2)
    ok = np.abs(np.linalg.det(M)) > 0
    if not ok.any():
        return
    lam = np.linalg.solve(M[ok], (p[ok] - P[ok, 0])[..., None])[..., 0]
    bc = np.concatenate([1 - lam.sum(1, keepdims=True), lam], axis=1)
    if np.any(np.isfinite(bc).all(1) & (bc.min(1) < -1e-3)):
        raise Finding("locate-outside", f"located tet does not contain point: {bc.min(1)}")


SMOOTH = True    # what users run (find_path's default); --no-smooth turns it off


def check_path(mesh, a, b):
    pts = mesh.find_path(a, b, smooth=SMOOTH).points
    if len(pts):
        inside = mesh.locate(pts) >= 0
        if not inside.all():
            raise Finding("path-leaves-volume", f"path points outside: {pts[~inside][:3]}")


def _handler(argv):
    """The command's handler without building the argparse tree (what
    regn.cli.main does after parsing)."""
    from argparse import Namespace
    from regn.cli import format_cmds
    cmd = argv[0]
    if cmd == "rewrite":
        args = Namespace(input=argv[2], output=argv[3], in_place=False, force=True,
                         byte_order=None, pof0_dialect=None, json=False)
        fn = format_cmds.run_rewrite
    else:
        args = Namespace(file=argv[-1], json=True)
        fn = format_cmds.run_info if cmd == "info" else format_cmds.run_dump
    try:
        return int(fn(args) or 0)
    except RegnError as e:
        print(f"regn: {e}", file=sys.stderr)
        return 2


def run_one(data: bytes, tmp: str, rng: np.random.Generator):
    """All stages on one input. Raises Finding; returns a tag string."""
    try:
        mesh = _stage("loads", regn.loads, data)
        _stage("pof0_dialect", lambda: mesh.pof0_dialect)
        _stage("vertices", lambda: mesh.vertices)
    except RegnError:
        mesh = None
    try:
        rep = _stage("verify", _verify, data)
    except RegnError:
        rep = None
    trusted = rep is not None and rep.ok
    if trusted and mesh is not None:
        try:
            out = mesh.dumps()
        except RegnError:
            out = None
        if out is not None and out != data and not _benign_diff(data, out, mesh):
            raise Finding("verify-ok-not-canonical",
                          "verify ok=True but dumps() differs outside POF0/padding")
    with open(tmp, "wb") as fh:
        fh.write(data)
    sink = io.StringIO()
    full = int(rng.integers(16)) == 0   # 1 in 16 through the whole argparse path
    for argv in (["info", "--json", tmp], ["dump", "--json", tmp],
                 ["rewrite", "--force", tmp, tmp + ".out"]):
        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
            if full:
                code = _stage("cli-" + argv[0], regn.cli.main, argv)
            else:
                code = _stage("cli-" + argv[0], _handler, argv)
        if code not in (0, 2, None):
            raise Finding(f"cli-{argv[0]}-exit{code}", sink.getvalue()[-2000:])
        sink.seek(0)
        sink.truncate()
    if mesh is None:
        return "rejected"
    try:
        lo = np.asarray(mesh.bbox_min, float)
        hi = np.asarray(mesh.bbox_max, float)
    except RegnError:
        return "loaded"
    if not (np.isfinite(lo).all() and np.isfinite(hi).all()):
        lo, hi = -np.ones(3), np.ones(3)
    pts = lo + (hi - lo) * rng.random((6, 3))
    # geometric invariants only on objects verify accepts: on a rejected one
    # (e.g. vertices outside the header bbox) the queries need only not crash
    for name, fn in (("locate", lambda: check_locate(mesh, pts) if trusted
                      else mesh.locate(pts)),
                     ("nearest", lambda: mesh.nearest(pts)),
                     ("find_path", lambda: check_path(mesh, pts[0], pts[1]) if trusted
                      else mesh.find_path(pts[0], pts[1], smooth=SMOOTH)),
                     ("raycast", lambda: mesh.raycast(pts[2], pts[3]))):
        try:
            _stage(name, fn)
        except RegnError:
            pass
    return "loaded"


def worker(args):
    seed, start, count, timeout, outdir, trace_every = args
    bases = mutate.make_bases()
    tmpdir = tempfile.mkdtemp(prefix="regn-fuzz-")
    tmp = os.path.join(tmpdir, "in.rgn")
    findings = []
    slowest = (0.0, None)
    peak_mem = 0
    rss_peak = 0
    tags = {}
    # warm-up (imports, first-use caches) so they are not charged to input 0
    try:
        run_one(bases[0].data, tmp, np.random.default_rng(0))
    except Finding:
        pass
    for i in range(start, start + count):
        try:
            data, desc = mutate.input_for(bases, seed, i)
        except Exception:   # a bug in the mutator, not in regn: count it, go on
            tags["mutator-error"] = tags.get("mutator-error", 0) + 1
            continue
        rng = np.random.default_rng([seed, i, 1])
        trace = trace_every > 0 and i % trace_every == 0
        rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss   # KiB, high-water
        if trace:
            tracemalloc.start()
        t0 = time.perf_counter()
        cpu_limit.arm(timeout)
        kind = detail = None
        try:
            tags_i = run_one(data, tmp, rng)
            tags[tags_i] = tags.get(tags_i, 0) + 1
        except Finding as f:
            kind, detail = f.kind, f.detail
        except Timeout:
            kind, detail = "timeout", f"> {timeout} s"
        finally:
            cpu_limit.disarm()
        dt = time.perf_counter() - t0
        if trace:
            _, peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
            peak_mem = max(peak_mem, peak)
            if kind is None and peak > 10 * len(data) + 50 * 2 ** 20:
                kind, detail = "memory", f"peak {peak} bytes"
        # every input: the process's peak RSS may not grow by more than the
        # bound (a high-water mark, so this catches the first input that
        # allocates too much, traced or not)
        growth = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss0) * 1024
        rss_peak = max(rss_peak, growth)
        if kind is None and growth > 10 * len(data) + 50 * 2 ** 20:
            kind, detail = "memory-rss", f"peak RSS grew by {growth} bytes"
        if kind == "timeout":
            # tracemalloc slows allocation-heavy stages several-fold, and a
            # first use builds caches: only an input that is too slow twice,
            # untraced, counts as a hang
            t0 = time.perf_counter()
            cpu_limit.arm(timeout)
            try:
                run_one(data, tmp, np.random.default_rng([seed, i, 1]))
                kind = None
            except Finding as f:
                kind, detail = f.kind, f.detail
            except Timeout:
                pass
            finally:
                cpu_limit.disarm()
            dt = time.perf_counter() - t0
        if dt > slowest[0]:
            slowest = (dt, i)
        if kind is not None:
            name = f"{kind}-s{seed}-i{i}"
            findings.append((i, kind, desc))
            if outdir:
                os.makedirs(outdir, exist_ok=True)
                with open(os.path.join(outdir, name + ".rgn"), "wb") as fh:
                    fh.write(data)
                with open(os.path.join(outdir, name + ".txt"), "w") as fh:
                    fh.write(f"seed {seed} index {i}\nmutation: {desc}\n{detail}\n")
    for p in (tmp, tmp + ".out"):
        if os.path.exists(p):
            os.unlink(p)
    os.rmdir(tmpdir)
    return {"count": count, "findings": findings, "slowest": slowest,
            "peak": peak_mem, "rss_growth": rss_peak, "tags": tags}


def campaign(seed, count, start=0, jobs=1, timeout=1.0, outdir=None, trace_every=1):
    chunks = []
    per = -(-count // jobs)
    for j in range(jobs):
        s = start + j * per
        n = min(per, start + count - s)
        if n > 0:
            chunks.append((seed, s, n, timeout, outdir, trace_every))
    if jobs == 1:
        results = [worker(c) for c in chunks]
    else:
        import multiprocessing as mp
        with mp.get_context("fork").Pool(jobs) as pool:
            results = pool.map(worker, chunks)
    out = {"count": sum(r["count"] for r in results),
           "findings": [f for r in results for f in r["findings"]],
           "slowest": max(r["slowest"] for r in results),
           "peak": max(r["peak"] for r in results),
           "rss_growth": max(r["rss_growth"] for r in results), "tags": {}}
    for r in results:
        for k, v in r["tags"].items():
            out["tags"][k] = out["tags"].get(k, 0) + v
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--count", type=int, default=1000)
    ap.add_argument("--start", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=1.0)
    ap.add_argument("--trace-every", type=int, default=100,
                    help="run tracemalloc on every K-th input (0: never; it "
                         "slows an input ~6x, so the default samples 1 in 100; "
                         "the peak-RSS bound is checked on every input)")
    ap.add_argument("--no-smooth", dest="smooth", action="store_false",
                    help="find_path(smooth=False): the centroid polyline only")
    ap.add_argument("--findings", default=os.path.join(HERE, "findings"))
    a = ap.parse_args(argv)
    global SMOOTH
    SMOOTH = a.smooth
    t0 = time.perf_counter()
    r = campaign(a.seed, a.count, a.start, a.jobs, a.timeout, a.findings,
                 a.trace_every)
    dt = time.perf_counter() - t0
    print(f"seed {a.seed} inputs {a.start}..{a.start + r['count'] - 1}: "
          f"{r['count']} tried in {dt:.1f} s ({r['count'] / dt:.0f}/s, {a.jobs} jobs)")
    print(f"outcomes: {r['tags']}")
    print(f"findings: {len(r['findings'])}")
    for i, kind, desc in r["findings"][:50]:
        print(f"  i={i} {kind}: {desc}")
    print(f"slowest input: {r['slowest'][0] * 1000:.1f} ms (index {r['slowest'][1]})")
    print(f"peak traced memory for one (traced) input: {r['peak'] / 2 ** 20:.1f} MB; "
          f"largest peak-RSS growth over one input: {r['rss_growth'] / 2 ** 20:.1f} MB")
    return 1 if r["findings"] else 0


if __name__ == "__main__":
    sys.exit(main())
