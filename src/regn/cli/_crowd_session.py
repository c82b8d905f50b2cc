"""The crowd session of ``regn serve``: one :class:`regn.Crowd` per
service, made on the first ``crowd_add``, shared by every client (one
request at a time on it).

* ``{"query": "crowd_add", "positions": [[x, y, z], ...], "goals": [...],
  "radius": r, "max_speed": v, "max_accel": a, "priority": p,
  "max_turn_rate": w}`` (goals, max_accel, priority, max_turn_rate optional;
  a number or one per agent) -> ``{"ids": [...]}``;
* ``{"query": "crowd_goals", "ids": [...], "goals": [[x, y, z], ...]}`` ->
  ``{"agents": n}``; or, with ``"target": [x, y, z]`` instead of goals, the
  agents fly there as a group down one cost field from it
  (:meth:`regn.Crowd.set_goals` with ``field``);
* ``{"query": "crowd_step", "dt": 0.1, "steps": 1}`` -> ``{"steps": total
  steps, "time": s, "status": {name: count}}``;
* ``{"query": "crowd_state", "ids": [...]}`` (all when omitted) ->
  ``{"ids", "position", "velocity", "status", "arrived_step"}``.
"""

from __future__ import annotations

import threading

import numpy as np

from ..errors import QueryError

FIELDS = {
    "crowd_add": {"positions": True, "goals": False, "radius": True, "max_speed": True,
                  "max_accel": False, "priority": False, "max_turn_rate": False},
    "crowd_goals": {"ids": True, "goals": False, "target": False},
    "crowd_step": {"dt": True, "steps": False},
    "crowd_state": {"ids": False},
}


class CrowdSession:
    """The service's crowd (see the module docstring)."""

    def __init__(self, mesh, workers=None):
        self.mesh = mesh
        self.workers = workers
        self.crowd = None
        self.lock = threading.Lock()

    def answer(self, query, req, rows, numbers):
        with self.lock:
            return getattr(self, "_" + query)(req, rows, numbers)

    def _ids(self, req, numbers):
        if "ids" not in req:
            return np.arange(0 if self.crowd is None else len(self.crowd))
        ids = numbers(req, "ids", "iu").reshape(-1).astype(np.int64)
        n = 0 if self.crowd is None else len(self.crowd)
        bad = ids[(ids < 0) | (ids >= n)]
        if len(bad):
            raise QueryError(f"no agent {int(bad[0])} (the crowd has {n})")
        return ids

    def _crowd_add(self, req, rows, numbers):
        from ..crowd.crowd import Crowd
        if self.crowd is None:
            self.crowd = Crowd(self.mesh, workers=self.workers)
        pos = rows(req, "positions", 3)
        goals = rows(req, "goals", 3) if "goals" in req else None
        kw = {k: numbers(req, k).reshape(-1) for k in ("radius", "max_speed", "max_accel",
                                                       "priority", "max_turn_rate")
              if k in req}
        ids = self.crowd.add_agents(pos, goals, **kw)
        return {"ids": ids.tolist()}

    def _crowd_goals(self, req, rows, numbers):
        ids = self._ids(req, numbers)
        if ("goals" in req) == ("target" in req):
            raise QueryError("crowd_goals takes goals or a target, not both or neither")
        if "target" in req:
            target = rows(req, "target", 3).reshape(3)
            field = self.mesh.cost_field(target)
            if field.status != "ok":
                raise QueryError(f"target {target.tolist()}: {field.status}")
            self.crowd.set_goals(ids=ids, field=field)
        else:
            self.crowd.set_goals(rows(req, "goals", 3), ids)
        return {"agents": len(ids)}

    def _crowd_step(self, req, rows, numbers):
        if self.crowd is None:
            raise QueryError("no crowd yet: add agents first (crowd_add)")
        dt = float(numbers(req, "dt").reshape(-1)[0])
        steps = int(numbers(req, "steps", "iu").reshape(-1)[0]) if "steps" in req else 1
        if steps < 0 or steps > 1_000_000:
            raise QueryError(f"steps must be 0 .. 1000000, got {steps}")
        for _ in range(steps):
            self.crowd.step(dt)
        names, counts = np.unique(self.crowd.status_names, return_counts=True)
        return {"steps": self.crowd.steps, "time": self.crowd.time,
                "status": {str(a): int(b) for a, b in zip(names, counts)}}

    def _crowd_state(self, req, rows, numbers):
        ids = self._ids(req, numbers)
        c = self.crowd
        if c is None:
            return {"ids": [], "position": [], "velocity": [], "status": [],
                    "arrived_step": []}
        return {"ids": ids.tolist(), "position": c.position[ids].tolist(),
                "velocity": c.velocity[ids].tolist(),
                "status": c.status_names[ids].tolist(),
                "arrived_step": c.arrived_step[ids].tolist()}
