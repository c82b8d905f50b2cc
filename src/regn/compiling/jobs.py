"""The compile jobs: each one calls a group of regn's public functions on a
small map, so that numba compiles (and caches) every kernel they use with
exactly the argument types a real call has.

A job runs in a worker process (``python -m regn.compiling JOB ...``); its
answers are thrown away. The small map, ``data/warmup.rgn`` (326
tetrahedra, six asteroids), is read as any map is, so the kernels see the
same array types as on a user's map. Which job a command needs, and the
kernel that tells whether a job's kernels are in the cache, are in
:mod:`regn.compiling.plan`.
"""

from __future__ import annotations

import os

from .plan import JOBS  # noqa: F401  (the table of the jobs below)


def warmup_mesh():
    """The small map every job queries (read anew: nothing shared)."""
    from ..io import load
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return load(os.path.join(here, "data", "warmup.rgn"))


def _points(mesh, n=8):
    return mesh.random_points(n, seed=1)


def build():
    """The generator and the builder's checks (``regn build``, the demo)."""
    from ..builder.generate import demo_field, generate
    bbox, obstacles = demo_field(seed=1, n=4)
    generate(bbox, obstacles, dims=(3, 3, 3), seed=1, detail=0.03, coverage_samples=2000)


def verify():
    """Every check (``regn verify --strict``)."""
    from ..checks import verify as run
    run(warmup_mesh(), strict=True)


def locate():
    """locate (both methods), random points, walls, nearest."""
    mesh = warmup_mesh()
    p = _points(mesh)
    mesh.locate(p)
    mesh.locate(p[0])
    mesh.locate(p, method="grid", return_barycentric=True)
    mesh.components()
    mesh.distance_to_wall(p)
    mesh.nearest_wall(p)
    mesh.nearest(p + 1e5)
    from ..query.walls.nearest import _wall_grid
    _wall_grid(mesh)
    mesh.distance_to_wall(p)


def paths():
    """find_path, smoothed and not."""
    mesh = warmup_mesh()
    p = _points(mesh)
    for i in range(0, len(p) - 1, 2):
        mesh.find_path(p[i], p[i + 1])
    mesh.find_path(p[0], p[-1], smooth=False)


def sight():
    """raycast, raycast_many, line_of_sight."""
    mesh = warmup_mesh()
    p = _points(mesh)
    mesh.raycast(p[0], p[1])
    mesh.raycast_many(p, p[::-1])
    mesh.line_of_sight(p, p[::-1])


def batch():
    """find_paths, cost fields, blockers, the landmark table."""
    from ..query.paths import landmarks
    from ..query.paths.path import _graph, ensure_landmarks
    mesh = warmup_mesh()
    p = _points(mesh)
    mesh.find_paths(p, p[::-1])
    mesh.cost_field(p[0]).next_waypoint(p)
    landmarks.MIN_FACES = 0                 # the small map gets a table too (this process only)
    ensure_landmarks(_graph(mesh))
    mesh.find_path(p[0], p[1])


def radius():
    """A sphere's paths, room, sweeps."""
    mesh = warmup_mesh()
    r = 200.0
    p = mesh.random_points(4, seed=2, radius=r)
    mesh.find_path(p[0], p[1], radius=r)
    mesh.find_paths(p[:2], p[2:], radius=r)
    mesh.nearest(p + 1e5, radius=r)
    mesh.raycast(p[0], p[1], radius=r)
    mesh.line_of_sight(p[:2], p[2:], radius=r)


RUN = dict(build=build, verify=verify, locate=locate, paths=paths, sight=sight, batch=batch,
           radius=radius)
