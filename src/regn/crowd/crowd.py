"""A crowd of flying agents: each follows its path corridor, avoids the
others (ORCA in 3D) and never enters rock (:class:`Crowd`).

One :meth:`Crowd.step` runs in fixed phases, each a loop over all agents:

1. *corridors* (Python): agents whose corridor broke are planned again (a
   blocker added to the crowd's filter touches a tetrahedron it crosses; it
   lost sight of its corner, pushed off its corridor; its goal moved; it has
   just become stuck), in batches by radius class
   (:mod:`regn.crowd.corridor`); nothing else is replanned;
2. *neighbour rows*: the agents sorted by rows of cubes half as wide as
   the largest neighbour distance, and by column within a row
   (:func:`regn.crowd._grid_kernels.build_rows`);
3. *plan* (every core): per agent, the corner it steers to (the farthest
   corner of its corridor a sphere of its radius reaches in a straight
   line), its preferred velocity (full speed toward the corner, slowing to
   stop at the goal, changed by at most max_accel dt), the half-spaces of
   velocities that keep its sphere r from every wall triangle within reach
   this step (hard: never relaxed), its neighbours' ORCA half-spaces, and
   the velocity of a 3D linear program nearest the preferred one
   (:mod:`regn.crowd._orca_kernels`);
4. *separate* (every core): the positions the new velocities reach are
   projected apart, Jacobi rounds over every touching pair (a second hash),
   until no two agents overlap by more than SEPARATE_TOL of their radii's
   sum, each move kept inside the agent's wall planes
   (:mod:`regn.crowd._separate_kernels`);
5. *move* (every core): positions become the separated ones, velocities the
   moves made / dt; arrival, the arrival step and the stuck watch are
   updated.

Each agent reads the state before the step and writes only its own rows,
so a step is deterministic for given inputs, whatever the worker count.

Walls. For each wall triangle within ``r + skin + max_speed * max(dt,
wall_horizon)`` of an agent's centre p, with q its closest point at
distance d and u = (p - q) / d, the new velocity must satisfy
``u . v >= -(d - r - skin) / max(dt, wall_horizon)``. The triangle lies
on the far side of the plane through q normal to u (q is its point nearest
p and it is convex), so moving by v dt keeps the centre at least r + skin
from it; a triangle out of reach cannot come within r this step. At most
``WALL_PLANES`` nearest triangles are kept; when more are in reach, the
speed is capped so that the next one cannot be reached. So a velocity
chosen inside the hard planes never takes the sphere into rock; when they
leave none (which only rounding can cause), the agent holds still and is
flagged.

Status per agent (:data:`STATUS`): ``idle`` (no goal), ``moving``,
``arrived`` (its centre within ``arrive_distance`` radii of the goal; it
keeps station there, and flies back if pushed off), ``stuck`` (moving, but
it has not come a tenth of its radius closer along its corridor for
``stuck_time`` seconds; it is replanned once), ``no_path`` (no corridor
admits its radius; retried every ``stuck_time`` seconds).
"""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np

from ..errors import QueryError

#: status codes of ``Crowd.status``, by name (as regn.crowd._step_kernels)
STATUS = {"idle": 0, "moving": 1, "arrived": 2, "stuck": 3, "no_path": 4}
STATUS_NAMES = np.array(sorted(STATUS, key=STATUS.get))

#: wall triangles kept per agent and step (nearest first)
WALL_PLANES = 24
#: at most this many rounds of the separation pass per step
SEPARATE_ROUNDS = 64
#: the separation pass stops once no two agents overlap by more than this
#: fraction of their radii's sum
SEPARATE_TOL = 1e-3
#: skin: agents keep r + SKIN_REL * max(r, 1 m) from walls (margin for rounding)
SKIN_REL = 1e-4

#: What the kernels read: the agents' arrays (one row an agent) and corridors.
State = namedtuple("State", [
    "pos", "vel", "new_vel", "pref", "radius", "max_speed", "max_accel", "goal",
    "priority", "status", "reach", "corner", "cstart", "cpts", "ctail", "flags",
    "arrived_step", "best_left", "idle_time",
    # kept from the plan for the separation pass: the new positions by velocity,
    # each agent's neighbours, wall planes (unit normal, gap) and longest move
    "new_pos", "nbs", "ncount", "wn", "wgap", "wcount", "top",
    # max turn rate (rad/s, inf: none), goal field (-1: a point goal), the
    # statuses before the move
    "max_turn", "field", "prev_status"])
Walls = namedtuple("Walls", ["box", "node", "tri", "tbox", "flat", "depth"])
Grid = namedtuple("Grid", ["lo", "cell", "mask", "start", "order", "skey", "spos"])
Rows = namedtuple("Rows", ["lo", "cell", "dims", "rstart", "order", "scol", "spos"])

#: the per-agent arrays a user reads and sets, with their shape and dtype
_AGENT = {"position": ((3,), np.float64), "velocity": ((3,), np.float64),
          "radius": ((), np.float64), "max_speed": ((), np.float64),
          "max_accel": ((), np.float64), "goal": ((3,), np.float64),
          "priority": ((), np.float64), "max_turn_rate": ((), np.float64)}
_INTERNAL = {"status": ((), np.int8), "arrived_step": ((), np.int64),
             "corner": ((), np.int64), "best_left": ((), np.float64),
             "idle_time": ((), np.float64), "planned_goal": ((3,), np.float64),
             "flags": ((), np.int8), "retry_time": ((), np.float64),
             "field": ((), np.int64)}


def _kernels():
    from . import _step_kernels
    return _step_kernels


def _walls(mesh):
    from ..query.walls.nearest import _wall_bvh
    b = _wall_bvh(mesh)
    if b is None:
        return Walls(np.zeros((0, 6)), np.zeros((0, 2), np.int64), np.zeros((0, 9)),
                     np.zeros((0, 6)), np.zeros(0, np.uint8), 0)
    return Walls(b.box, b.node, b.tri, b.tbox, b.flat, int(b.depth))


def _cells(pos, cell) -> Grid:
    """The spatial hash of ``pos`` (:mod:`regn.crowd._grid_kernels`) with
    cubes ``cell`` wide (wider if the agents spread over more than 2**21 of
    them an axis), about two buckets an agent."""
    from . import _grid_kernels
    lo = pos.min(axis=0)
    ext = float((pos.max(axis=0) - lo).max())
    cell = max(cell, ext / ((1 << 21) - 8), 1e-9)
    mask = (1 << max(6, int(2 * len(pos) - 1).bit_length())) - 1
    start, order, skey, spos = _grid_kernels.build_hash(pos, lo, cell, mask)
    return Grid(lo, float(cell), mask, start, order, skey, spos)


def _rows(pos, cell) -> Rows:
    """The neighbour search's grid of ``pos`` (:func:`regn.crowd.
    _grid_kernels.build_rows`) with cubes ``cell`` wide, wider when there
    would be more than 4 rows (or columns) an agent."""
    from . import _grid_kernels
    lo = pos.min(axis=0)
    ext = pos.max(axis=0) - lo
    most = 4 * len(pos) + 4096
    cell = max(cell, float(ext.max()) / ((1 << 21) - 8), 1e-9)
    dims = np.maximum(np.ceil(ext / cell).astype(np.int64), 1)
    while dims[1] * dims[2] > most or dims[0] > most:
        cell *= 1.25
        dims = np.maximum(np.ceil(ext / cell).astype(np.int64), 1)
    rstart, order, scol, spos = _grid_kernels.build_rows(pos, lo, cell, dims)
    return Rows(lo, float(cell), dims, rstart, order, scol, spos)


def _positive(values, n, name, allow_inf=False):
    a = np.broadcast_to(np.asarray(values, dtype=np.float64), (n,)).copy()
    ok = a > 0 if allow_inf else (a > 0) & np.isfinite(a)
    if not ok.all():
        raise QueryError(f"{name} must be > 0{'' if allow_inf else ' and finite'}, "
                         f"got {a[~ok][0]!r}")
    return a


class Crowd:
    """Agents flying through one mesh, stepped together.

    ``time_horizon`` (s): how far ahead agents avoid each other;
    ``neighbor_dist`` (m): centres nearer than this are neighbours (None:
    per agent, ``time_horizon`` times its top speed plus the fastest one's,
    plus its radius and the largest radius); ``max_neighbors``: the nearest
    ones considered; ``wall_horizon`` (s): walls are approached no faster
    than the gap over this; ``arrive_distance``: arrived within this many
    radii of the goal; ``filter``: a :class:`regn.QueryFilter` of this mesh
    whose blockers paths avoid (a new blocker replans the corridors it
    touches); ``workers``: threads per step (None: every core).

    The agents' state is in arrays, one row an agent, to read and to set
    (in place or whole): ``position``, ``velocity`` (N,3), ``radius``,
    ``max_speed``, ``max_accel`` (inf: none), ``goal`` (N,3; NaN: none),
    ``priority`` (N,; a higher one yields less); ``status`` (N,) int8 codes of
    :data:`STATUS` (``status_names`` as strings), ``arrived_step`` (N,; -1:
    not yet). A crowd pickles (with its mesh and its filter's blockers).
    """

    def __init__(self, mesh, *, time_horizon=2.0, neighbor_dist=None, max_neighbors=10,
                 wall_horizon=0.5, arrive_distance=0.5, stuck_time=10.0, filter=None,
                 workers=None):
        from .._jit import worker_count
        if getattr(mesh, "is_world", False):
            raise QueryError("a crowd flies through one REGN, not a world of tiles (its walls "
                             "and corridors are the mesh's own); build the level as one REGN")
        self.mesh = mesh
        self.time_horizon = float(_positive(time_horizon, 1, "time_horizon")[0])
        self.neighbor_dist = (None if neighbor_dist is None
                              else float(_positive(neighbor_dist, 1, "neighbor_dist")[0]))
        self.max_neighbors = int(max_neighbors)
        if self.max_neighbors < 0:
            raise QueryError(f"max_neighbors must be >= 0, got {max_neighbors}")
        self.wall_horizon = float(wall_horizon)
        self.arrive_distance = float(_positive(arrive_distance, 1, "arrive_distance")[0])
        self.stuck_time = float(_positive(stuck_time, 1, "stuck_time")[0])
        if filter is not None and filter.mesh is not mesh:
            raise QueryError("the filter was made for another mesh")
        self.filter = filter
        self.workers = None if workers is None else worker_count(workers)
        self.steps = 0
        self.time = 0.0
        self._a = {k: np.zeros((0, *shape), dtype) for k, (shape, dtype)
                   in {**_AGENT, **_INTERNAL}.items()}
        self._corridors = []
        self._fields = []
        self._packed = None
        self._blockers_seen = frozenset()

    # --- agents -----------------------------------------------------------------
    def __len__(self):
        return len(self._a["radius"])

    def add_agents(self, positions, goals=None, *, radius, max_speed, max_accel=math.inf,
                   priority=1.0, velocities=None, max_turn_rate=math.inf) -> np.ndarray:
        """Add agents at (K,3) ``positions`` (flying to (K,3) ``goals``, NaN
        or None: no goal); per-agent values broadcast; ``max_turn_rate``
        (rad/s, inf: none) bounds how fast the preferred heading turns.
        Returns their indices."""
        from ..query.common import as_points
        pos = as_points(positions, "positions").copy()
        k = len(pos)
        if not np.isfinite(pos).all():
            raise QueryError("positions must be finite")
        goal = np.full((k, 3), np.nan) if goals is None else \
            np.broadcast_to(as_points(goals, "goals"), (k, 3)).copy()
        vel = np.zeros((k, 3)) if velocities is None else \
            np.broadcast_to(as_points(velocities, "velocities"), (k, 3)).copy()
        new = {"position": pos, "velocity": vel, "goal": goal,
                   "radius": _positive(radius, k, "radius"),
                   "max_speed": _positive(max_speed, k, "max_speed"),
                   "max_accel": _positive(max_accel, k, "max_accel", allow_inf=True),
                   "priority": _positive(priority, k, "priority"),
                   "max_turn_rate": _positive(max_turn_rate, k, "max_turn_rate",
                                              allow_inf=True),
                   "field": np.full(k, -1, np.int64),
                   "status": np.zeros(k, np.int8), "arrived_step": np.full(k, -1, np.int64),
                   "corner": np.ones(k, np.int64), "best_left": np.full(k, np.inf),
                   "idle_time": np.zeros(k), "planned_goal": np.full((k, 3), np.nan),
                   "flags": np.zeros(k, np.int8), "retry_time": np.full(k, -np.inf)}
        first = len(self)
        for key, arr in new.items():
            self._a[key] = np.concatenate([self._a[key], arr])
        self._corridors.extend([None] * k)
        self._packed = None
        return np.arange(first, first + k)

    def set_goals(self, goals=None, ids=None, *, field=None) -> None:
        """Give agents ``ids`` (all when None) new goals (K,3); NaN: none.
        With ``field`` (a :meth:`regn.Mesh.cost_field` of this mesh) instead
        of goals, the agents fly as a group to the field's goal, their
        corridors read off the field (no search each). Their corridors are
        planned again on the next step."""
        from ..query.common import as_points
        ids = np.arange(len(self)) if ids is None else np.atleast_1d(np.asarray(ids, np.int64))
        a = self._a
        if field is not None:
            if goals is not None:
                raise QueryError("give goals or a field, not both")
            if getattr(field, "_mesh", None) is not self.mesh:
                raise QueryError("the field was made for another mesh")
            if field.status != "ok":
                raise QueryError(f"the field has no goal to fly to ({field.status})")
            if not any(f is field for f in self._fields):
                self._fields.append(field)
            k = next(j for j, f in enumerate(self._fields) if f is field)
            a["goal"][ids] = field.goal
            a["field"][ids] = k
        else:
            a["goal"][ids] = np.broadcast_to(as_points(goals, "goals"), (len(ids), 3))
            a["field"][ids] = -1
        a["planned_goal"][ids] = np.nan          # planned again on the next step

    def _field(name):
        def get(self):
            return self._a[name]

        def put(self, value):
            a = self._a[name]
            v = np.asarray(value, dtype=a.dtype)
            if v.shape != a.shape:
                raise QueryError(f"{name} must have shape {a.shape}, got {v.shape}")
            a[...] = v
        return property(get, put, doc=f"(N{',3' if name in ('position', 'velocity', 'goal') else ''}) "
                                      f"each agent's {name.replace('_', ' ')}")

    position = _field("position")
    velocity = _field("velocity")
    radius = _field("radius")
    max_speed = _field("max_speed")
    max_accel = _field("max_accel")
    goal = _field("goal")
    priority = _field("priority")
    max_turn_rate = _field("max_turn_rate")
    del _field

    @property
    def status(self) -> np.ndarray:
        """(N,) int8 status codes (:data:`STATUS`)."""
        return self._a["status"]

    @property
    def status_names(self) -> np.ndarray:
        """(N,) each agent's status as a name."""
        return STATUS_NAMES[self._a["status"]]

    @property
    def arrived_step(self) -> np.ndarray:
        """(N,) the step an agent first arrived at, -1 not yet."""
        return self._a["arrived_step"]

    @property
    def corridors(self) -> list:
        """Each agent's corridor corners (P,3) from where it was last
        planned to its goal, None without one."""
        return [None if c is None else c[0] for c in self._corridors]

    def distance_left(self) -> np.ndarray:
        """(N,) metres each agent has left along its corridor: to its next
        corner, then corner to corner to the goal (inf without a corridor;
        0 for an agent that arrived or is idle)."""
        out = np.full(len(self), np.inf)
        pos, corner, st = self._a["position"], self._a["corner"], self._a["status"]
        for i, c in enumerate(self._corridors):
            if st[i] in (STATUS["arrived"], STATUS["idle"]):
                out[i] = 0.0
            elif c is not None:
                pts = c[0][min(int(corner[i]), len(c[0]) - 1):]
                out[i] = float(np.linalg.norm(pts[0] - pos[i])
                               + np.linalg.norm(np.diff(pts, axis=0), axis=1).sum())
        return out

    # --- one step -----------------------------------------------------------------
    def step(self, dt) -> None:
        """Advance every agent by ``dt`` seconds (see the module docstring)."""
        dt = float(_positive(dt, 1, "dt")[0])
        if len(self) == 0:
            self.steps += 1
            self.time += dt
            return
        self._replan()
        K = _kernels()
        s = self._state()
        g = self._grid(s)
        walls = _walls(self.mesh)
        p = np.array([dt, self.time_horizon, max(self.wall_horizon, dt), SKIN_REL,
                      self.max_neighbors, WALL_PLANES], dtype=np.float64)
        from .._jit import run_chunks
        n = len(self)
        run_chunks(lambda i, j, _: K.plan_chunk(s, walls, g, p, i, j), n, self.workers,
                   chunk=4096, min_chunk=64)
        self._a["corner"] = s.corner - s.cstart[:-1]
        np.multiply(s.new_vel, dt, out=s.new_pos)
        np.add(s.new_pos, s.pos, out=s.new_pos)
        src = self._separate(s, n)
        self.steps += 1
        np.copyto(s.prev_status, s.status)
        run_chunks(lambda i, j, _: K.move_chunk(s, src, dt, self.steps, self.stuck_time,
                                                self.arrive_distance, i, j),
                   n, self.workers, chunk=65536, min_chunk=4096)
        self.time += dt

    def _state(self) -> State:
        """The kernels' view of the agents; ``corner`` there counts from the
        start of the packed corner array (here from the agent's own first)."""
        a = self._a
        if self._packed is None:
            from .corridor import pack
            self._packed = pack(self._corridors)
        cpts, cstart, ctail = self._packed
        counts = np.diff(cstart)
        rel = np.clip(a["corner"], 1, np.maximum(counts - 1, 1))
        corner = cstart[:-1] + np.where(counts >= 2, rel, 0)
        n = len(self)
        if self.neighbor_dist is not None:
            reach = np.full(n, self.neighbor_dist)
        else:
            reach = (self.time_horizon * (a["max_speed"] + a["max_speed"].max())
                     + a["radius"] + a["radius"].max())
        most = max(self.max_neighbors, 1)
        if getattr(self, "_scratch", None) is None or self._scratch[0].shape != (n, 3) \
                or self._scratch[3].shape != (n, most):
            self._scratch = (np.zeros((n, 3)), np.zeros((n, 3)), np.zeros((n, 3)),
                             np.zeros((n, most), np.int64), np.zeros(n, np.int64),
                             np.zeros((n, WALL_PLANES, 3)), np.zeros((n, WALL_PLANES)),
                             np.zeros(n, np.int64), np.zeros(n), np.zeros((n, 3)),
                             np.zeros((n, 3)), np.zeros(n), np.zeros(n, np.int8),
                             np.zeros(n, np.int8))
        new_vel, pref, new_pos, nbs, ncount, wn, wgap, wcount, top = self._scratch[:9]
        return State(a["position"], a["velocity"], new_vel, pref, a["radius"],
                     a["max_speed"], a["max_accel"], a["goal"], a["priority"], a["status"],
                     reach, corner, cstart, cpts, ctail, a["flags"], a["arrived_step"],
                     a["best_left"], a["idle_time"], new_pos, nbs, ncount, wn, wgap, wcount,
                     top, a["max_turn_rate"], a["field"], self._scratch[13])

    def _grid(self, s) -> Rows:
        cell = 0.5 * float(s.reach.max()) if self.max_neighbors else 1.0
        return _rows(s.pos, cell)

    def _separate(self, s, n) -> np.ndarray:
        """The positions after the separation pass (see
        :mod:`regn.crowd._separate_kernels`), from s.new_pos: a first round
        over every agent, then rounds over those near the ones that moved,
        until no pair overlaps by more than SEPARATE_TOL of its radii's sum
        (or SEPARATE_ROUNDS). Jacobi rounds: the same for any workers."""
        from .._jit import run_chunks
        from . import _separate_kernels as S
        a, b, hpos, over, mark = s.new_pos, *self._scratch[9:13]
        want = 2.0 * float(s.radius.max()) * (1.0 + S.SLACK)
        g = _cells(a, want * (1.0 + S.MARGIN))
        hpos[...] = a
        run_chunks(lambda i, j, _: S.separate_chunk(s, a, b, over, g, i, j),
                   n, self.workers, chunk=65536, min_chunk=1024)
        rounds, dmax = 1, 0.0
        while S.worst_overlap(over) > SEPARATE_TOL and rounds < SEPARATE_ROUNDS:
            moved = np.flatnonzero(over > S.NONE)
            dmax = max(dmax, S.drift(b, hpos, moved))
            if dmax > S.MARGIN * want:
                g = _cells(b, want * (1.0 + S.MARGIN))
                hpos[...] = b
                dmax = 0.0
            ids = S.candidates(s, b, g, moved, mark)
            np.copyto(a, b)
            over[...] = S.NONE
            run_chunks(lambda i, j, _, src=b, dst=a, g=g, ids=ids: S.separate_some(
                s, src, dst, over, g, ids, i, j), len(ids), self.workers,
                chunk=65536, min_chunk=1024)
            a, b = b, a
            rounds += 1
        self.separate_rounds = rounds
        return a if S.worst_overlap(over) <= SEPARATE_TOL else b

    # --- corridors ----------------------------------------------------------------
    def _replan(self) -> None:
        """Plan the corridors that broke (see the module docstring)."""
        a = self._a
        st = a["status"]
        goal, planned = a["goal"], a["planned_goal"]
        has_goal = np.isfinite(goal).all(axis=1)
        moved = has_goal & ~(goal == planned).all(axis=1)
        flagged = (a["flags"] & 1).astype(bool) & has_goal
        stuck_new = (st == STATUS["stuck"]) & (a["idle_time"] > self.stuck_time) & \
            (a["retry_time"] < self.time - self.stuck_time)
        retry = (st == STATUS["no_path"]) & has_goal & \
            (a["retry_time"] < self.time - self.stuck_time)
        todo = moved | flagged | stuck_new | retry | self._blocked_corridors()
        gone = ~has_goal & (st != STATUS["idle"])
        if gone.any():
            for i in np.flatnonzero(gone):
                self._corridors[i] = None
            st[gone] = STATUS["idle"]
            a["planned_goal"][gone] = np.nan
            self._packed = None
        rows = np.flatnonzero(todo)
        if len(rows) == 0:
            return
        from .corridor import plan, plan_field
        fid = a["field"][rows]
        got = [None] * len(rows)
        free = np.flatnonzero(fid < 0)
        if len(free):
            for j, c in zip(free, plan(self.mesh, a["position"][rows[free]], goal[rows[free]],
                                       a["radius"][rows[free]], self.filter, self.workers)):
                got[j] = c
        for k in np.unique(fid[fid >= 0]):
            on = np.flatnonzero(fid == k)
            for j, c in zip(on, plan_field(self._fields[k], a["position"][rows[on]])):
                got[j] = c
        for i, c in zip(rows, got):
            self._corridors[i] = c
            a["corner"][i] = 1
        a["planned_goal"][rows] = goal[rows]
        a["best_left"][rows] = np.inf
        a["retry_time"][rows] = self.time
        ok = np.array([c is not None for c in got])
        keep_arrived = st[rows] == STATUS["arrived"]
        st[rows] = np.where(ok, np.where(keep_arrived, STATUS["arrived"], STATUS["moving"]),
                            STATUS["no_path"])
        a["idle_time"][rows[ok & (st[rows] != STATUS["stuck"])]] = 0.0
        a["flags"][rows] = 0
        self._packed = None

    def _blocked_corridors(self) -> np.ndarray:
        """(N,) bool: a blocker added since the last look touches a
        tetrahedron of the agent's corridor."""
        out = np.zeros(len(self), bool)
        f = self.filter
        if f is None:
            return out
        seen = frozenset(f.blockers)
        added = seen - self._blockers_seen
        self._blockers_seen = seen
        if not added:
            return out
        blocked = f.blocked
        for i, c in enumerate(self._corridors):
            if c is not None and len(c[1]) and blocked[c[1]].any():
                out[i] = True
        return out

    # --- pickling -------------------------------------------------------------------
    def __getstate__(self):
        d = dict(self.__dict__)
        d.pop("_scratch", None)
        d["_packed"] = None
        f = d.pop("filter")
        d["_filter_blockers"] = None if f is None else [
            (b.kind, b.shape, b.scale) for b in f.blockers.values()]
        return d

    def __setstate__(self, d):
        blockers = d.pop("_filter_blockers")
        self.__dict__.update(d)
        # a crowd pickled before max_turn_rate and goal fields existed
        n = len(self._a["radius"])
        self._a.setdefault("max_turn_rate", np.full(n, np.inf))
        self._a.setdefault("field", np.full(n, -1, np.int64))
        self.__dict__.setdefault("_fields", [])
        self.filter = None
        if blockers is not None:
            from ..query.paths.filters import QueryFilter
            self.filter = QueryFilter(self.mesh)
            for kind, shape, scale in blockers:
                if kind == "sphere":
                    self.filter.block_sphere(shape[:3], shape[3], scale=scale)
                else:
                    self.filter.block_box(shape[:3], shape[3:], scale=scale)
            self._blockers_seen = frozenset(self.filter.blockers)
