"""What a new user waits for: the first run, the start of a command, the tail
of a query stream (not part of the tests).

    python benchmarks/bench_first_run.py            # everything (~5 min on 2 cores)
    python benchmarks/bench_first_run.py --skip-cold   # no fresh-cache demo
    python benchmarks/bench_first_run.py --trace       # + each kernel's compile time

Every figure comes from a process of its own, as a user would start it:

* ``regn demo`` with an empty numba cache (``NUMBA_CACHE_DIR`` pointed at a
  new temporary folder: nothing compiled before; the kernel pack installs
  itself), then again with that cache, then on another empty cache with the
  pack off (``REGN_KERNEL_PACK=0``: every kernel compiled here):
  wall time, CPU time, the largest process's peak resident memory and the
  peak of the whole process tree (compile-ahead workers included, sampled);
* ``regn --help``, ``regn info MAP`` and ``regn path MAP ...`` as whole
  processes (cache warm), the median of several runs, and which heavy
  modules each one imports; ``regn path`` once more while a warm service
  is kept warm by two calls in a row (a background service it starts);
* on a ~15 000-tetrahedron Delaunay map (``bench_query.make``), in a fresh
  process: 10 000 ``find_path`` calls one after another (median, mean, p99,
  max per call), with and without ``mesh.prepare()`` first; each batch query's
  first full-size call after ``prepare()`` against its steady time; one point
  given as a (3,) array, a (1, 3) array, a list, a tuple and a list of one
  list, per call, against the fastest form.

``--trace`` adds a cold demo run in one process (compile-ahead off) that
records numba's compile events: the kernels that take longest to compile
(CPU seconds of the compiling thread, less the kernels compiled inside it:
comparable on a busy machine, where wall time is not), how many versions of
each were compiled, and the total per folder.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(os.path.dirname(HERE), "src")
HEAVY = ("numba", "scipy", "matplotlib", "plotly", "meshio", "llvmlite")


def _env(cache_dir=None, **extra):
    env = dict(os.environ)
    env["PYTHONPATH"] = SRC + os.pathsep + env.get("PYTHONPATH", "")
    if cache_dir:
        env["NUMBA_CACHE_DIR"] = cache_dir
    env.update({k: str(v) for k, v in extra.items()})
    return env


# --- whole processes ------------------------------------------------------------------

def _tree_rss_mb(pid):
    """Resident MB of process ``pid`` and all its descendants (Linux /proc)."""
    total, todo, seen = 0, [pid], set()
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        try:
            with open(f"/proc/{p}/statm") as f:
                total += int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
            with open(f"/proc/{p}/task/{p}/children") as f:
                todo.extend(int(c) for c in f.read().split())
        except OSError:
            pass
    return total / 2 ** 20


def run_process(args, env, timeout=1800):
    """Run ``args``; (wall s, cpu s, largest process's peak MB, peak MB of the
    tree sampled every 50 ms, exit code, stdout)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    peak = [0.0]
    done = threading.Event()

    def sample():
        while not done.wait(0.05):
            peak[0] = max(peak[0], _tree_rss_mb(proc.pid))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out_chunks = []
    reader = threading.Thread(target=lambda: out_chunks.append(proc.stdout.read()), daemon=True)
    reader.start()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    done.set()
    reader.join(timeout)
    proc.returncode = os.waitstatus_to_exitcode(status)
    proc.stderr.read()
    return (wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, peak[0],
            proc.returncode, "".join(out_chunks))


def demo_runs(tmp, no_pack=True):
    """The first demo on an empty cache (the shipped kernel pack installs
    itself), the second on that cache, and, unless ``no_pack`` is False, a
    first demo on another empty cache with the pack off (everything compiled
    on this machine, compile-ahead as the machine's load allows)."""
    runs = [("first `regn demo` (empty cache, kernel pack)", "demo1", "cache", {}),
            ("second `regn demo` (cache warm)", "demo2", "cache", {})]
    if no_pack:
        runs.append(("first `regn demo` (empty cache, `REGN_KERNEL_PACK=0`)", "demo3",
                     "cache-no-pack", {"REGN_KERNEL_PACK": "0"}))
    rows = []
    for label, folder, cache, extra in runs:
        wall, cpu, peak, tree, code, out = run_process(
            [sys.executable, "-m", "regn", "demo", os.path.join(tmp, folder)],
            _env(os.path.join(tmp, cache), **extra))
        said = [ln for ln in out.splitlines() if ln.startswith("done in")]
        rows.append((label, wall, cpu, peak, tree, code, said[0] if said else ""))
    return rows, os.path.join(tmp, "cache")


def median_process(args, env, runs=7):
    """Median wall of ``runs`` whole-process runs after one unmeasured run."""
    run_process(args, env)
    walls = [run_process(args, env)[0] for _ in range(runs)]
    return statistics.median(walls), min(walls), max(walls)


def heavy_imports(cli_args, env):
    """The heavy modules a command imports (its sys.modules at exit)."""
    code = ("import sys\nfrom regn.cli import main\n"
            "import io, contextlib\n"
            f"with contextlib.redirect_stdout(io.StringIO()):\n"
            f"    try:\n        main({cli_args!r})\n    except SystemExit:\n        pass\n"
            f"print(','.join(m for m in {HEAVY!r} if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, timeout=600).stdout.strip().splitlines()
    return out[-1] if out else ""


def start_up_rows(map_path, env):
    """regn --help, regn info MAP, regn path MAP ... as whole processes, each
    answering alone (``REGN_WARM=0``); then ``regn path`` as a shell loop
    meets it: asked twice, it keeps the map warm (a background service,
    :func:`regn.cli.warm.after_cold_query`) and the next calls ask that."""
    py = [sys.executable, "-m", "regn"]
    path = ["path", map_path, "-40000", "-40000", "-40000", "40000", "40000", "40000"]
    cmds = [("regn --help", ["--help"]), ("regn info MAP", ["info", map_path]),
            ("regn path MAP A B", path)]
    rows = []
    alone = dict(env, REGN_WARM="0")
    for label, args in cmds:
        med, lo, hi = median_process(py + args, alone)
        rows.append((label, med, lo, hi, heavy_imports(args, alone)))
    with tempfile.TemporaryDirectory(prefix="rw", dir="/tmp") as run:
        served = dict(env, XDG_RUNTIME_DIR=run)
        served.pop("REGN_WARM", None)
        for _ in range(2):                      # the second call starts the service
            subprocess.run(py + path, env=served, check=True, capture_output=True,
                           timeout=600)
        check = [sys.executable, "-c", "import sys; from regn.cli import warm; "
                 f"sys.exit(warm.status({map_path!r}) is None)"]
        t0 = time.monotonic()
        while subprocess.run(check, env=served, check=False).returncode != 0:
            if time.monotonic() - t0 > 600:
                raise SystemExit("the kept-warm service did not answer within 600 s")
            time.sleep(0.5)
        try:
            med, lo, hi = median_process(py + path, served)
            rows.append(("regn path MAP A B, 3rd call on (kept warm)", med, lo, hi,
                         heavy_imports(path, served)))
        finally:
            subprocess.run(py + ["serve", map_path, "--stop"], env=served,
                           capture_output=True, timeout=60, check=False)
    return rows


# --- one process: the query stream, first calls, point shapes -----------------------

def child_queries(map_path, prepare, n_paths):
    """(In a fresh process.) The stream, first-vs-steady and shape figures."""
    import numpy as np

    import regn
    mesh = regn.load(map_path)
    t0 = time.perf_counter()
    if prepare:
        mesh.prepare()
    t_prepare = time.perf_counter() - t0
    rng = np.random.default_rng(5)
    pts = mesh.random_points(2 * n_paths, seed=7)
    times = np.empty(n_paths)
    for i in range(n_paths):
        a, b = pts[2 * i], pts[2 * i + 1]
        t = time.perf_counter()
        mesh.find_path(a, b)
        times[i] = time.perf_counter() - t
    stream = dict(median=float(np.median(times)), mean=float(times.mean()),
                  p99=float(np.quantile(times, 0.99)), max=float(times.max()),
                  prepare=t_prepare)
    result = dict(stream=stream)
    if prepare:
        result["first"] = first_vs_steady(mesh, rng)
        result["shapes"] = shape_costs(mesh)
    return result


def first_vs_steady(mesh, rng):
    """Each batch query's first full-size call against its median steady call."""
    big = mesh.random_points(100_000, seed=11)
    other = big[rng.permutation(len(big))]
    few = mesh.random_points(2000, seed=13)
    calls = [("locate", lambda: mesh.locate(big)),
             ("distance_to_wall", lambda: mesh.distance_to_wall(big)),
             ("nearest_wall", lambda: mesh.nearest_wall(big)),
             ("nearest", lambda: mesh.nearest(big + 1000.0)),
             ("line_of_sight", lambda: mesh.line_of_sight(big[:20000], other[:20000])),
             ("raycast_many", lambda: mesh.raycast_many(big[:20000], other[:20000])),
             ("find_paths (1 000)", lambda: mesh.find_paths(few[:1000], few[1000:]))]
    rows = []
    for name, call in calls:
        t = time.perf_counter()
        call()
        first = time.perf_counter() - t
        steady = []
        for _ in range(3):
            t = time.perf_counter()
            call()
            steady.append(time.perf_counter() - t)
        rows.append((name, first, statistics.median(steady)))
    return rows


def _per_call(fn, arg, calls=3000, rounds=5):
    best = float("inf")
    for _ in range(rounds):
        t = time.perf_counter()
        for _ in range(calls):
            fn(arg)
        best = min(best, (time.perf_counter() - t) / calls)
    return best


def shape_costs(mesh):
    """Per-call seconds of one point in each form, for the one-point queries."""
    import numpy as np
    p = mesh.random_points(1, seed=17)[0]
    forms = [("(3,) array", p.copy()), ("(1,3) array", p[None, :].copy()),
             ("list", p.tolist()), ("tuple", tuple(p.tolist())),
             ("[[x, y, z]]", [p.tolist()]), ("(3,) float32", p.astype(np.float32))]
    queries = [("locate", mesh.locate), ("distance_to_wall", mesh.distance_to_wall),
               ("nearest", mesh.nearest), ("nearest_wall", mesh.nearest_wall)]
    rows = []
    for qname, fn in queries:
        for form, arg in forms:
            fn(arg)
        rows.append((qname, [(form, _per_call(fn, arg)) for form, arg in forms]))
    return rows


def query_rows(map_path, env, n_paths):
    """Run :func:`child_queries` twice in fresh processes (without and with
    prepare) and return their results."""
    out = {}
    for prepare in (False, True):
        code = (f"import sys, json; sys.path.insert(0, {HERE!r})\n"
                f"import bench_first_run as b\n"
                f"print(json.dumps(b.child_queries({map_path!r}, {prepare}, {n_paths})))")
        proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                              text=True, timeout=1800)
        if proc.returncode:
            raise SystemExit(proc.stderr)
        out[prepare] = json.loads(proc.stdout.strip().splitlines()[-1])
    return out


def make_map(path):
    """The ~15 000-tetrahedron Delaunay map of bench_query.py, saved to ``path``."""
    sys.path.insert(0, HERE)
    from bench_query import make

    import regn
    regn.save(make(2300)[0], path, overwrite=True)


# --- --trace: each kernel's compile time ---------------------------------------------

TRACER = """
import sys, time, json
from numba.core import event
stack, recs = [], []
class Watch(event.Listener):
    def on_start(self, ev):
        stack.append([time.thread_time(), 0.0])
    def on_end(self, ev):
        t0, inner = stack.pop()
        dt = time.thread_time() - t0
        if stack:
            stack[-1][1] += dt
        f = ev.data['dispatcher'].py_func
        recs.append((f"{f.__module__}.{f.__qualname__}", dt - inner))
event.register("numba:compile", Watch())
from regn.cli import main
import contextlib, io
with contextlib.redirect_stdout(io.StringIO()):
    main(sys.argv[1:])
print(json.dumps(recs))
"""


def trace_compiles(tmp):
    """Kernel compile times of a cold demo in one process (no compile-ahead)."""
    env = _env(os.path.join(tmp, "trace-cache"), REGN_COMPILE_AHEAD="0", REGN_KERNEL_PACK="0")
    proc = subprocess.run([sys.executable, "-c", TRACER, "demo", os.path.join(tmp, "trace")],
                          env=env, capture_output=True, text=True, timeout=3600)
    recs = json.loads(proc.stdout.strip().splitlines()[-1])
    by_kernel, by_folder = {}, {}
    for name, secs in recs:
        n, s = by_kernel.get(name, (0, 0.0))
        by_kernel[name] = (n + 1, s + secs)
        folder = ".".join(name.split(".")[:3])
        by_folder[folder] = by_folder.get(folder, 0.0) + secs
    return len(recs), by_kernel, by_folder


# --- the table ------------------------------------------------------------------------

def print_tables(demo, start, queries, trace):
    if demo:
        print("\n| run | wall | CPU | peak RSS, largest process | peak RSS, process tree | exit |")
        print("|---|---|---|---|---|---|")
        for label, wall, cpu, peak, tree, code, said in demo:
            print(f"| {label} | {wall:.1f} s | {cpu:.1f} s | {peak:.0f} MB | {tree:.0f} MB "
                  f"| {code} |")
    if start:
        print("\n| command (whole process, cache warm) | median | min-max | heavy modules |")
        print("|---|---|---|---|")
        for label, med, lo, hi, heavy in start:
            print(f"| `{label}` | {med:.2f} s | {lo:.2f}-{hi:.2f} s | {heavy or 'none'} |")
    if queries:
        print("\n| find_path stream (10 000 calls) | median | mean | p99 | max | "
              "mean/median | p99/median |")
        print("|---|---|---|---|---|---|---|")
        for prepare, res in sorted(queries.items()):
            s = res["stream"]
            label = (f"after `mesh.prepare()` ({s['prepare']:.2f} s)" if prepare
                     else "no prepare")
            print(f"| {label} | {s['median'] * 1e6:.0f} µs | {s['mean'] * 1e6:.0f} µs "
                  f"| {s['p99'] * 1e6:.0f} µs | {s['max'] * 1e3:.1f} ms "
                  f"| {s['mean'] / s['median']:.2f} | {s['p99'] / s['median']:.2f} |")
        res = queries.get(True) or queries.get("true") or {}
        if res.get("first"):
            print("\n| batch query after prepare() | first call | steady | first/steady |")
            print("|---|---|---|---|")
            for name, first, steady in res["first"]:
                print(f"| {name} | {first * 1e3:.1f} ms | {steady * 1e3:.1f} ms "
                      f"| {first / steady:.2f} |")
        if res.get("shapes"):
            forms = [f for f, _ in res["shapes"][0][1]]
            print("\n| one point, µs per call (ratio to fastest) | " + " | ".join(forms) + " |")
            print("|---|" + "---|" * len(forms))
            for qname, row in res["shapes"]:
                best = min(t for _, t in row)
                print(f"| {qname} | " + " | ".join(f"{t * 1e6:.1f} ({t / best:.2f})"
                                                  for _, t in row) + " |")
    if trace:
        n, by_kernel, by_folder = trace
        total = sum(s for _, s in by_kernel.values())
        print(f"\n{n} compiles of {len(by_kernel)} kernels, {total:.1f} CPU s in all "
              "(exclusive of nested compiles)")
        print("\n| kernel | versions | CPU seconds |\n|---|---|---|")
        for name, (c, s) in sorted(by_kernel.items(), key=lambda kv: -kv[1][1])[:30]:
            print(f"| {name} | {c} | {s:.2f} |")
        print("\n| folder | seconds |\n|---|---|")
        for name, s in sorted(by_folder.items(), key=lambda kv: -kv[1])[:12]:
            print(f"| {name} | {s:.1f} |")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--skip-cold", action="store_true", help="no fresh-cache demo runs")
    ap.add_argument("--trace", action="store_true", help="kernel compile times (slow)")
    ap.add_argument("--pack-only", action="store_true",
                    help="no first demo with the kernel pack off (saves ~2 min)")
    ap.add_argument("--paths", type=int, default=10_000, help="find_path calls in the stream")
    ap.add_argument("--only", choices=["demo", "start", "queries"], default=None)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="regn-first-run-") as tmp:
        demo = start = queries = trace = None
        if not args.skip_cold and args.only in (None, "demo"):
            demo, _ = demo_runs(tmp, no_pack=not args.pack_only)
        env = _env()                       # the user's own (warm) cache
        map_path = os.path.join(tmp, "delaunay.rgn")
        if args.only in (None, "start", "queries"):
            subprocess.run([sys.executable, "-c", f"import sys; sys.path.insert(0, {HERE!r})\n"
                            f"import bench_first_run as b; b.make_map({map_path!r})"],
                           env=env, check=True, timeout=1800)
        if args.only in (None, "start"):
            start = start_up_rows(map_path, env)
        if args.only in (None, "queries"):
            queries = query_rows(map_path, env, args.paths)
        if args.trace:
            trace = trace_compiles(tmp)
        print_tables(demo, start, queries, trace)


if __name__ == "__main__":
    main()
