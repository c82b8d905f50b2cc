"""What a world build's pool costs to start: the README's 8-tile world built
on 2 workers forked from the pool's server (regn's default) and on 2
spawned workers, in turn, each build a fresh process (not part of the tests).

    python benchmarks/bench_pool_start.py [--rounds 4] [--workers 2]

CPU is the whole machine's (``/proc/stat``, Linux): the forked workers are
the server's children, not the build's, so the build's own accounting
misses them. Run it on a quiet machine; it prints the medians and every run.
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(os.path.dirname(HERE), "src")

#: The build, with the pool's start method as the first argument.
BUILD = """
import multiprocessing, sys
import regn.world.tiles as tiles
if sys.argv[1] == "spawn":
    tiles.pool_context = lambda threads=1: multiprocessing.get_context("spawn")
from regn.cli import main
sys.exit(main(sys.argv[2:]))
"""


def machine_cpu():
    """CPU seconds of every core so far (user, nice, system, irq, softirq)."""
    with open("/proc/stat") as f:
        fields = f.readline().split()[1:]
    ticks = sum(int(fields[i]) for i in (0, 1, 2, 5, 6))
    return ticks / os.sysconf("SC_CLK_TCK")


def one_build(method, workers, out):
    env = dict(os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""))
    args = ["build", "--asteroids", "12", "--seed", "3", "--half-extent", "20000",
            "--tile-size", "20000", "--workers", str(workers), "--force", "-o", out]
    c0, t0 = machine_cpu(), time.perf_counter()
    subprocess.run([sys.executable, "-c", BUILD, method, *args], env=env, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return machine_cpu() - c0, time.perf_counter() - t0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args(argv)
    runs = {"forkserver": [], "spawn": []}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.rounds):
            for method in runs:
                runs[method].append(one_build(method, args.workers,
                                              os.path.join(tmp, method, "world.json")))
    print(f"| workers ({args.workers}) | CPU s, median | wall s, median | runs (CPU s / wall s) |")
    print("|---|---|---|---|")
    for method, got in runs.items():
        print(f"| {method} | {statistics.median(c for c, _ in got):.1f} | "
              f"{statistics.median(w for _, w in got):.1f} | "
              + ", ".join(f"{c:.1f}/{w:.1f}" for c, w in got) + " |")


if __name__ == "__main__":
    main()
