"""Shared test maps: every test object is built by the project itself."""

import os

# The suite runs two workers on two cores: a thread that busy-waits for its
# next piece of work takes the core the other worker needs (regn itself has
# numba's OpenMP threads wait passively: regn.compiling.threads). OpenBLAS
# (numpy's and scipy's) keeps helper threads spinning between calls; here it
# runs on the calling thread instead, one per worker being what two workers
# on two cores can use anyway (test_smooth's SLSQP references spent 2 to 4
# times their CPU on a busy VM). Set before numpy or scipy start a thread;
# the tests' subprocesses inherit it.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from scipy.spatial import Delaunay  # noqa: E402

import regn  # noqa: E402

# The suite runs `regn path` on one map many times over; a map asked twice in a
# row would be kept warm by a background service (regn.cli.warm). Only
# tests/test_warm_service.py, which sets its processes' environment, meets that.
os.environ["REGN_WARM"] = "0"

H = 50_000.0  # half-extent of the usual test box, metres


def box_corners(h=H):
    return np.array([[x, y, z] for z in (-h, h) for y in (-h, h) for x in (-h, h)],
                    dtype=float)


def random_map(n_points=300, seed=0, hole_fraction=0.1, h=H, dims=(10, 10, 10),
               unpinched=False, **kw):
    """Delaunay of the box corners + random points, with some tets removed
    (holes), built into a REGN mesh. Random holes pinch the boundary (two
    tetrahedra meeting only at an edge or a vertex); ``unpinched`` drops the
    few more tetrahedra that make it a closed 2-manifold, as regn's builder
    does."""
    rng = np.random.default_rng(seed)
    pts = np.concatenate([box_corners(h), rng.uniform(-h, h, (n_points, 3))])
    tri = Delaunay(pts)
    tets = tri.simplices
    vol = np.abs(np.einsum("ij,ij->i", np.cross(pts[tets[:, 1]] - pts[tets[:, 0]],
                                                  pts[tets[:, 2]] - pts[tets[:, 0]]),
                           pts[tets[:, 3]] - pts[tets[:, 0]]))
    keep = vol > 1e-6 * vol.max()
    drop = rng.random(len(tets)) < hole_fraction
    tets = tets[keep & ~drop]
    if unpinched:
        from regn.builder.unpinch import unpinch
        tets = unpinch(pts, tets)[0]
    used = np.unique(tets)
    remap = np.full(len(pts), -1)
    remap[used] = np.arange(len(used))
    return regn.build(pts[used], remap[tets], bbox=(-h * np.ones(3), h * np.ones(3)),
                      dims=dims, **kw)


def sphere_holes_map(n=260, seed=0, holes=4, dims=(6, 6, 6), h=H):
    """Delaunay of random points and the box corners with every tet whose
    centroid lies within 0.18 h of one of ``holes`` random centres removed
    (round asteroids). -> (mesh, hole centres)."""
    rng = np.random.default_rng(seed)
    pts = rng.uniform(-h, h, (n, 3))
    corners = np.array([[x, y, z] for x in (-h, h) for y in (-h, h) for z in (-h, h)])
    pts = np.vstack([corners, pts])
    tets = Delaunay(pts).simplices
    cen = pts[tets].mean(axis=1)
    keep = np.ones(len(tets), bool)
    hole_c = rng.uniform(-0.5 * h, 0.5 * h, (holes, 3))
    for c in hole_c:
        keep &= np.linalg.norm(cen - c, axis=1) > 0.18 * h
    return regn.build(pts, tets[keep], bbox=((-h,) * 3, (h,) * 3), dims=dims), hole_c


def assert_numba_not_imported(body):
    """``body`` (after importing regn) leaves numba unimported."""
    import os
    import subprocess
    import sys
    src = os.path.dirname(os.path.dirname(regn.__file__))
    code = (f"import sys; sys.path.insert(0, {src!r})\n" + body
            + "\nassert 'numba' not in sys.modules, 'numba imported'\n")
    subprocess.run([sys.executable, "-c", code], check=True)


#: Defines ``run_commands(argvs)``: the CLI commands (argv lists without
#: "regn") run through the CLI's entry point in order, each with its own
#: captured output; -> [[exit status, stdout, stderr], ...].
RUN_COMMANDS = """
import contextlib, io, json, sys
from regn.cli import main
def run_commands(argvs):
    results = []
    for argv in argvs:
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(argv)
            except SystemExit as e:
                code = e.code if isinstance(e.code, int) else 1
            except BaseException as e:
                code, err = 99, io.StringIO(f"{type(e).__name__}: {e}")
        results.append([code, out.getvalue(), err.getvalue()])
    return results
"""

#: Runs the CLI commands given as JSON on stdin (:data:`RUN_COMMANDS`);
#: writes their results as JSON to the file named by its argument.
COMMAND_RUNNER = RUN_COMMANDS + """
with open(sys.argv[1], "w") as f:
    json.dump(run_commands(json.loads(sys.stdin.read())), f)
"""


def run_json_runner(runner, items, cwd, env=None):
    """Run ``runner`` (Python source) in a fresh interpreter with ``items`` as
    JSON on its stdin; -> what it wrote as JSON to the file named by its argument."""
    import json
    import os
    import subprocess
    import sys
    import tempfile
    fd, results = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    try:
        run = subprocess.run([sys.executable, "-c", runner, results], cwd=cwd, env=env,
                             input=json.dumps(items), capture_output=True, text=True)
        assert run.returncode == 0, f"the runner failed:\n{run.stdout}\n{run.stderr}"
        with open(results, encoding="utf-8") as f:
            return json.load(f)
    finally:
        os.unlink(results)


def run_commands_in_one_process(argvs, cwd, env=None):
    """[(exit status, stdout, stderr)] of each CLI command (argv lists without
    "regn"), run in order in one fresh interpreter: what each would print as
    its own process, paying numba's start-up once."""
    return [tuple(r) for r in run_json_runner(COMMAND_RUNNER, argvs, cwd, env)]


@pytest.fixture(scope="session")
def demo_map():
    """The map `regn demo` builds (8 992 tetrahedra, 3 112 wall triangles)."""
    from regn.builder.generate import DEMO_DIMS, demo_field, generate
    return generate(*demo_field(), dims=DEMO_DIMS, seed=1, coverage_samples=0)


@pytest.fixture(scope="session")
def holes_map():
    """A Delaunay map with five round holes."""
    return sphere_holes_map(400, seed=1, holes=5)[0]


@pytest.fixture(scope="session")
def small_map():
    return random_map(300, seed=1)


@pytest.fixture(scope="session")
def trivial_map():
    """8 vertices at the +-250 000 box corners, 6 tetrahedra, 10x10x10 cells."""
    h = 250_000.0
    tets = np.array([[0, 1, 3, 7], [0, 1, 5, 7], [0, 2, 3, 7], [0, 2, 6, 7],
                     [0, 4, 5, 7], [0, 4, 6, 7]])
    return regn.build(box_corners(h), tets, bbox=(-h * np.ones(3), h * np.ones(3)),
                      dims=(10, 10, 10))


#: The files that take longest (CPU seconds with their subprocesses, measured
#: on the 2-core VM with a per-test CPU plugin, longest first; test_view's
#: browser tests where Chromium is installed, as in CI), run
#: first: with ``--dist loadfile`` a file runs on one worker, and a long file
#: started last leaves the other workers idle at the end. The rest follow in
#: their usual order.
SLOW_FILES = ("test_readme.py", "test_worlds.py", "test_build_fit.py",
              "test_world_radius.py", "test_view.py", "test_levels.py",
              "test_bounded_memory.py", "test_warm_service.py", "test_kernel_pack.py",
              "test_first_run.py", "test_world.py", "test_verify_reference.py",
              "test_templates.py", "test_fuzz_smoke.py", "test_generate_tiles.py",
              "test_first_compile.py", "test_manifold_overlap.py", "test_export.py",
              "test_world_memory.py", "test_level_worlds.py", "test_pickle.py",
              "test_crowd.py", "test_world_walk.py", "test_radius_paths.py",
              "test_walls.py")


def pytest_collection_modifyitems(session, config, items):
    rank = {name: k for k, name in enumerate(SLOW_FILES)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))   # a stable sort


def pytest_configure(config):
    # pytest-xdist >= 3.6 hands the files out largest test count first; keep
    # the order above instead (its longest files are not its most numerous).
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False


#: the 2x2x2 world the world tests share: 12 asteroids in a 40 km box
FIELD_WORLD_H = 20_000.0
FIELD_WORLD_BOX = ((-FIELD_WORLD_H,) * 3, (FIELD_WORLD_H,) * 3)


def field_world_rocks():
    """The 12 asteroids of :func:`field_world` (a single REGN of them is the
    world's yardstick)."""
    from regn.builder.obstacles import random_asteroid_field
    return random_asteroid_field(12, seed=3, half_extent=FIELD_WORLD_H)


@pytest.fixture(scope="session")
def field_world(tmp_path_factory):
    """The folder of a 2x2x2 world of :func:`field_world_rocks` (world.json
    and its tiles), built once a test run (pytest-xdist's workers share it:
    the first to need it builds it, the others wait for it); read only (copy
    it to spoil it)."""
    import fcntl

    from regn.world import build as build_world
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    d = shared / "field_world"
    with open(shared / "field_world.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (d / "world.json").exists():
            build_world(FIELD_WORLD_BOX, field_world_rocks(), out=str(d / "world.json"),
                        tile_size=FIELD_WORLD_H, workers=1, coverage_samples=20_000)
    return d


@pytest.fixture(scope="session")
def field_single():
    """One REGN of :func:`field_world_rocks` at detail 4 (the world's
    yardstick), built once a test process; read only."""
    return regn.generate(FIELD_WORLD_BOX, field_world_rocks(), detail=4.0, coverage_samples=0)


def one_error_line(capsys, code, *needles):
    """The command failed with exit 2 and exactly one ``regn:`` line holding
    every needle."""
    out = capsys.readouterr()
    lines = [ln for ln in out.err.splitlines() if ln.strip()]
    assert code == 2, out
    assert len(lines) == 1 and lines[0].startswith("regn: "), out.err
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]
