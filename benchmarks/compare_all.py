"""Every side-by-side comparison of the query benches, in one table (not
part of the tests).

    pip install -e '.[bench]'
    python benchmarks/compare_all.py [--quick] [--rounds N] [--demo demo.rgn]

Maps: bench_query.py's Delaunay map (~15 000 tetrahedra, a few large holes)
and the demo asteroid field (``regn demo DIR`` writes it; built here the same
way unless ``--demo`` names that file). Each bench module that defines
``comparison_rows(maps, quick, rounds)`` contributes its rows: bench_query.py
(locate, one-point locate, find_path), bench_walls.py (distance_to_wall),
bench_raycast.py (line_of_sight against Embree). For each row:
regn's time and the alternative's, measured in interleaved rounds in this
process (ranges over the rounds), the ratio per round, how many answers are
the same, peak memory, CPU time over wall time (cores used), the issue's goal
and the bench that runs the row on its own.
"""

import argparse
import importlib
import os
import platform
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_query import demo_map, make  # noqa: E402
from compare import max_rss_mb, print_table  # noqa: E402

BENCHES = ("bench_query", "bench_walls", "bench_raycast")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="smaller batches, for a check")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--demo", help="the demo map as `regn demo DIR` wrote it (DIR/demo.rgn)")
    args = ap.parse_args()
    import regn
    t0 = time.perf_counter()
    delaunay, pts = make(2300)
    demo = regn.load(args.demo) if args.demo else demo_map()
    maps = [("Delaunay", delaunay, pts), ("demo", demo, None)]
    for name, m, _ in maps:
        print(f"{name} map: {m.n_tets} tetrahedra, {m.n_faces} faces, "
              f"{len(m.boundary_faces)} wall triangles")
    print(f"maps ready in {time.perf_counter() - t0:.1f} s; {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} cores, Python {platform.python_version()}")
    rows, missing = [], []
    for module in BENCHES:
        bench = importlib.import_module(module)
        rows_of = getattr(bench, "comparison_rows", None)
        if rows_of is None:
            missing.append(module)
            continue
        t0 = time.perf_counter()
        rows += rows_of(maps, args.quick, args.rounds)
        print(f"{module}: {time.perf_counter() - t0:.0f} s")
    print()
    print_table(rows)
    for module in missing:
        print(f"({module}.py has no comparison_rows(maps, quick, rounds) yet: run it on its own)")
    print(f"process max RSS {max_rss_mb():.0f} MiB")


if __name__ == "__main__":
    main()
