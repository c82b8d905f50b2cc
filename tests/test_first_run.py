"""The first run and the start of a command: compiling ahead into numba's
cache, ``mesh.prepare()``, and one point given in any shape.

What a user would check by hand: after ``prepare()`` the queries load no
kernel they did not have (nothing left to compile or load in the middle of
a stream); a point as a (3,) array, a (1, 3) array, a list, a tuple or a
list of one list gets the same answer; a cache folder that lacks a job's
kernels is filled by the compile-ahead workers so that the next process
compiles nothing; and
``REGN_COMPILE_AHEAD=0`` starts nothing.
"""

import glob
import os
import subprocess
import sys

import numpy as np
import pytest

import regn
from conftest import random_map

SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")

#: counts numba's compile events and the compiled (or loaded) versions of
#: every regn kernel, printed as "compiles loaded"
COUNTERS = """
import sys
from numba.core import event
from numba.core.dispatcher import Dispatcher
compiles = [0]
class Count(event.Listener):
    def on_start(self, ev):
        compiles[0] += 1
    def on_end(self, ev):
        pass
event.register("numba:compile", Count())
def loaded():
    n = 0
    for name, mod in list(sys.modules.items()):
        if name.startswith("regn.") and name.endswith("kernels"):
            n += sum(len(d.overloads) for d in vars(mod).values() if isinstance(d, Dispatcher))
    return n
"""


def _python(code, cache_dir=None, timeout=900, pack=False, **env):
    e = dict(os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""))
    if cache_dir is not None:
        e["NUMBA_CACHE_DIR"] = str(cache_dir)
        if not pack:
            e["REGN_KERNEL_PACK"] = "0"      # an empty cache stays empty: compiled here
    e.update(env)
    proc = subprocess.run([sys.executable, "-c", code], env=e, capture_output=True, text=True,
                          timeout=timeout)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.split()


def test_after_prepare_the_queries_load_no_kernel(tmp_path):
    path = tmp_path / "map.rgn"
    regn.save(random_map(300, seed=4), path)
    code = COUNTERS + f"""
import regn
m = regn.load({str(path)!r})
m.prepare()
before = loaded()
compiles[0] = 0
p = m.random_points(50, seed=3)
for one in (p[0], p[:1], p[0].tolist(), tuple(p[0].tolist()), [p[0].tolist()]):
    m.locate(one); m.distance_to_wall(one); m.nearest(one); m.nearest_wall(one)
m.locate(p); m.distance_to_wall(p); m.nearest(p + 1e4); m.nearest_wall(p)
for i in range(0, 40, 2):
    m.find_path(p[i], p[i + 1])
m.find_path(p[0], p[1], smooth=False)
m.find_paths(p[:10], p[10:20])
m.raycast(p[0], p[1]); m.raycast_many(p[:5], p[5:10]); m.line_of_sight(p[:5], p[5:10])
m.cost_field(p[0]).next_waypoint(p[:3])
print(compiles[0], loaded() - before)
"""
    compiles, newly_loaded = map(int, _python(code)[-2:])
    assert (compiles, newly_loaded) == (0, 0)


def test_prepare_builds_the_landmark_table_and_says_how_long(tmp_path):
    from regn.query.common import scratch
    from regn.query.paths import landmarks
    mesh = random_map(300, seed=6)           # 3 798 faces, over MIN_FACES: gets a table
    assert mesh.n_faces >= landmarks.MIN_FACES
    spent = mesh.prepare()
    assert set(spent) >= {"kernels", "structures", "total"}
    g = scratch(mesh)["path"]
    assert g["marks_done"] and g["graph"].landmarks.shape[1] > 0
    again = mesh.prepare()                   # a second call finds it all built
    assert g["graph"].landmarks is scratch(mesh)["path"]["graph"].landmarks
    assert again["total"] >= 0


SHAPES = [
    lambda p: p.copy(),                      # (3,) float64
    lambda p: p[None, :].copy(),             # (1, 3)
    lambda p: p.tolist(),                    # [x, y, z]
    lambda p: tuple(p.tolist()),             # (x, y, z)
    lambda p: [p.tolist()],                  # [[x, y, z]]
    lambda p: np.asfortranarray(p[None, :]),
    lambda p: p.astype(np.float32),          # (the points below are float32 values)
    lambda p: list(p),                       # three numpy floats
]


@pytest.mark.parametrize("query", ["locate", "distance_to_wall", "nearest", "nearest_wall"])
def test_one_point_in_any_shape_gets_the_same_answer(query):
    mesh = random_map(300, seed=2)
    pts = np.vstack([mesh.random_points(5, seed=9), [[1e9, 0, 0]]])
    for p in pts.astype(np.float32).astype(np.float64):
        answers = [getattr(mesh, query)(shape(p)) for shape in SHAPES]
        first = answers[0]
        for a in answers[1:]:
            for x, y in zip(first if isinstance(first, tuple) else (first,),
                            a if isinstance(a, tuple) else (a,)):
                np.testing.assert_array_equal(np.asarray(x), np.asarray(y))
                assert np.shape(x) == np.shape(y)


def test_find_path_and_raycast_take_an_end_in_any_shape():
    mesh = random_map(300, seed=2)
    a, b = mesh.random_points(2, seed=12).astype(np.float32).astype(np.float64)
    paths = [mesh.find_path(s(a), s(b)) for s in SHAPES]
    hits = [mesh.raycast(s(a), s(b)) for s in SHAPES]
    for p in paths[1:]:
        assert p.status == paths[0].status and p.cost == paths[0].cost
        np.testing.assert_array_equal(p.points, paths[0].points)
    for h in hits[1:]:
        assert h.clear == hits[0].clear and h.face == hits[0].face


def test_compile_ahead_fills_a_fresh_cache_and_the_next_process_compiles_nothing(tmp_path):
    # A cache with the shipped kernels installed, less the "locate" job's
    # telltale kernel: the job is then not cached, and its worker compiles
    # that kernel (and whatever else of the job the pack lacks) instead of
    # every kernel of the job, which is what costs minutes on a cold cache.
    cache = tmp_path / "numba-cache"
    _python("from regn.compiling.pack import ensure; ensure()", cache, pack=True)
    for f in glob.glob(str(cache / "**" / "_nearest_kernels.nearest_walls_grid-*"),
                       recursive=True):
        os.remove(f)
    first = """
from regn.compiling.pool import compile_ahead, is_cached
print(is_cached("locate"))
ahead = compile_ahead(["locate"])
ahead.close()
print(ahead.total, len(ahead.procs), is_cached("locate"))
"""
    # (forced on: "auto" starts nothing on a machine with no idle core)
    assert _python(first, cache, pack=True, REGN_COMPILE_AHEAD="1")[-4:] == \
        ["False", "1", "1", "True"]
    second = COUNTERS + """
from regn.compiling.pool import compile_ahead
from regn.compiling.jobs import RUN
ahead = compile_ahead(["locate"])        # all cached: starts nothing
RUN["locate"]()
print(ahead.total, compiles[0])
"""
    assert _python(second, cache, pack=True, REGN_COMPILE_AHEAD="1")[-2:] == ["0", "0"]


def test_compile_ahead_off_starts_nothing(tmp_path):
    code = """
from regn.compiling.pool import compile_ahead, enabled, is_cached
ahead = compile_ahead(["locate", "paths"])
print(enabled(), ahead.total, is_cached("locate"))
"""
    out = _python(code, tmp_path / "cache", REGN_COMPILE_AHEAD="0")
    assert out[-3:] == ["False", "0", "False"]


def test_a_kernel_goes_stale_when_a_module_it_imports_changes():
    from regn.compiling import stamps
    import regn.query.paths._path_kernels as path_kernels
    import regn.query.locating._locate_kernels as locate_kernels
    import regn.tolerances as tolerances
    path_file = path_kernels.__file__
    before = stamps.source_stamp(path_file)
    deps = stamps._read(locate_kernels.__file__)
    saved = dict(stamps._STAMPS), dict(stamps._READ)
    try:
        stamps._STAMPS.clear()
        stamps._READ[os.path.abspath(locate_kernels.__file__)] = (deps[0] + b"\n# edited", deps[1])
        assert stamps.source_stamp(path_file) != before        # a helper it calls changed
        stamps._STAMPS.clear()
        stamps._READ.clear()
        assert stamps.source_stamp(path_file) == before        # as it was: fresh again
        tol = os.path.abspath(tolerances.__file__)
        reach = set()
        todo = [os.path.abspath(locate_kernels.__file__)]
        while todo:
            f = todo.pop()
            if f not in reach:
                reach.add(f)
                todo.extend(stamps._read(f)[1])
        assert tol in reach                  # the constants it freezes in count too
    finally:
        stamps._STAMPS.clear()
        stamps._STAMPS.update(saved[0])
        stamps._READ.clear()
        stamps._READ.update(saved[1])


def test_every_job_names_a_kernel_that_exists():
    import importlib

    from numba.core.dispatcher import Dispatcher

    from regn.compiling.jobs import RUN
    from regn.compiling.plan import DEMO_JOBS, JOBS, QUERY_JOBS
    assert set(JOBS) == set(RUN) and set(DEMO_JOBS) | set(QUERY_JOBS) <= set(JOBS)
    for module, name, after in JOBS.values():
        assert isinstance(getattr(importlib.import_module(module), name), Dispatcher)
        assert set(after) <= set(JOBS)
