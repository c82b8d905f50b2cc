"""Functions test_pickle.py runs in other processes (a module of its own, so
that a spawned worker can import them by name)."""

import numpy as np

_MESH = None


def keep_mesh(mesh):
    """Pool initializer: the mesh each worker process queries."""
    global _MESH
    _MESH = mesh


def answers(mesh, points, starts, goals):
    """Every query a worker answers, as plain arrays to compare."""
    costs = []
    corners = []
    for a, b in zip(starts, goals):
        p = mesh.find_path(a, b)
        costs.append(p.cost)
        corners.append(p.points)
    return {"locate": mesh.locate(points),
            "line_of_sight": mesh.line_of_sight(starts, goals),
            "distance_to_wall": mesh.distance_to_wall(points),
            "path_cost": np.array(costs),
            "path_points": corners}


def answers_of_kept_mesh(points, starts, goals):
    return answers(_MESH, points, starts, goals)


def path_costs(mesh, pairs):
    """One Dask task: the unsmoothed cost and portal corridor of each (a, b)."""
    out = []
    for a, b in pairs:
        p = mesh.find_path(a, b, smooth=False)
        out.append((p.cost, p.portals))
    return out


def scratch_is_empty(mesh):
    from regn.query.common import scratch
    return not scratch(mesh)
