"""Recording a crowd's flight step by step, and writing it
(:func:`fly`, :class:`Trajectory`).

Files, by suffix:

* ``.npz``: ``positions`` (T+1, N, 3) and ``velocities`` (T+1, N, 3) at
  every step (row 0 the start), ``status`` (N,) the final status codes
  (:data:`regn.crowd.crowd.STATUS`), ``status_names`` (N,), ``arrived_step``
  (N,; -1 never), ``radius`` (N,), ``dt`` and ``time`` (T+1,) seconds;
* ``.csv``: one line per agent and step, ``step,time,agent,x,y,z,vx,vy,vz``;
* ``.vtp``: VTK XML poly data, a polyline per agent through its positions
  (the tracks at a glance; :mod:`regn.crowd.vtp`);
* ``.pvd``: a ParaView time series, the ``.pvd`` collection and a folder of
  one ``.vtp`` per step, the agents as points (what ParaView plays back;
  :mod:`regn.crowd.pvd`).

``status_steps`` (T+1, N), each step's status codes, is in the ``.npz``
when the flight recorded it (:func:`fly` does).
"""

from __future__ import annotations

import collections
import io
import math
import time as _time
from dataclasses import dataclass

import numpy as np

from ..errors import ExportError
from .crowd import STATUS, STATUS_NAMES


@dataclass
class Trajectory:
    """A recorded flight (see the module docstring for the arrays)."""
    positions: np.ndarray
    velocities: np.ndarray
    status: np.ndarray
    arrived_step: np.ndarray
    radius: np.ndarray
    dt: float
    statuses: np.ndarray | None = None
    #: why the flight ended (:func:`fly`): "steps" (the number asked),
    #: "arrived" (no agent moving or stuck), "stalled" (none got anywhere
    #: for ``stall_time``) or "max_steps"; "" when not recorded by fly
    stopped: str = ""

    def __repr__(self) -> str:
        # the dataclass's repr prints every array: megabytes for a flight
        names, counts = np.unique(STATUS_NAMES[self.status], return_counts=True)
        st = ", ".join(f"{c} {n}" for n, c in zip(names, counts))
        end = f", stopped: {self.stopped}" if self.stopped else ""
        return (f"<Trajectory: {self.positions.shape[1]} agents, {self.steps} steps of "
                f"{self.dt:g} s ({st}){end}>")

    @property
    def time(self) -> np.ndarray:
        return np.arange(len(self.positions)) * self.dt

    @property
    def steps(self) -> int:
        return len(self.positions) - 1

    def arrays(self) -> dict:
        out = {"positions": self.positions, "velocities": self.velocities,
               "status": self.status, "status_names": STATUS_NAMES[self.status],
               "arrived_step": self.arrived_step, "radius": self.radius,
               "dt": np.float64(self.dt), "time": self.time}
        if self.statuses is not None:
            out["status_steps"] = self.statuses
        return out

    def to_bytes(self, suffix: str) -> bytes:
        suffix = suffix.lower()
        if suffix == ".npz":
            buf = io.BytesIO()
            np.savez_compressed(buf, **self.arrays())
            return buf.getvalue()
        if suffix == ".csv":
            return self._csv()
        if suffix == ".vtp":
            from .vtp import vtp_bytes
            return vtp_bytes(self)
        raise ExportError(f"a trajectory is written as .npz, .csv, .vtp or .pvd (a "
                          f"collection of files: write()), not {suffix!r}")

    def write(self, path, *, overwrite=True) -> None:
        """Write to ``path`` (.npz, .csv, .vtp, or .pvd with its folder of
        step files), atomically (file by file for .pvd)."""
        import os

        from .._atomic import atomic_write
        if os.path.splitext(str(path))[1].lower() == ".pvd":
            from .pvd import write_pvd
            write_pvd(self, path, overwrite=overwrite)
            return
        payload = self.to_bytes(os.path.splitext(str(path))[1])
        try:
            atomic_write(path, payload, overwrite=overwrite)
        except FileExistsError:
            raise ExportError(f"{path}: exists; not overwritten") from None
        except OSError as e:
            raise ExportError(f"{path}: cannot write: {e.strerror or e}") from None

    def _csv(self) -> bytes:
        T1, N, _ = self.positions.shape
        step = np.repeat(np.arange(T1), N)
        agent = np.tile(np.arange(N), T1)
        table = np.column_stack([self.positions.reshape(-1, 3),
                                 self.velocities.reshape(-1, 3)])
        buf = io.StringIO()
        buf.write("step,time,agent,x,y,z,vx,vy,vz\n")
        body = np.column_stack([step, step * self.dt, agent, table])
        np.savetxt(buf, body, delimiter=",", fmt=["%d", "%.17g", "%d"] + ["%.17g"] * 6)
        return buf.getvalue().encode()


def fly(crowd, dt, *, steps=None, until_arrived=False, max_steps=100_000,
        progress=None, stall_time=None) -> Trajectory:
    """Step ``crowd`` by ``dt`` seconds ``steps`` times, or with
    ``until_arrived`` until no agent is moving or stuck any more (every one
    arrived, idle or without a path; at most ``max_steps``), recording every
    step. ``progress(done, total or None, seconds)`` is called about twice
    a second.

    ``until_arrived`` also stops when the flight has stalled: for
    ``stall_time`` seconds (default 3 x the crowd's ``stuck_time``, 30 s;
    ``inf``: never) no agent still moving or stuck got a radius closer to
    its goal along its corridor (:meth:`Crowd.distance_left`; or a tenth of
    what its top speed covers in ``stall_time``, when that is less), and
    none arrived for the first time. Such agents will not arrive (most often:
    their goal is nearer another agent's goal than their radii's sum, and
    that one holds it; they circle it or push); without this, the flight
    would run to ``max_steps``, holding every step. The Trajectory's
    ``stopped`` says which end was reached."""
    if (steps is None) == (not until_arrived):
        raise ExportError("give either a number of steps or until_arrived")
    total = int(steps) if steps is not None else int(max_steps)
    if stall_time is None:
        stall_time = 3.0 * crowd.stuck_time
    if not stall_time > 0:
        raise ExportError(f"stall_time must be > 0, got {stall_time}")
    watch = _StallWatch(stall_time, dt) if until_arrived and math.isfinite(stall_time) else None
    pos = [crowd.position.copy()]
    vel = [crowd.velocity.copy()]
    sts = [crowd.status.copy()]
    t0 = last = _time.perf_counter()
    active = (STATUS["moving"], STATUS["stuck"])
    stopped = "steps" if steps is not None else "max_steps"
    for k in range(total):
        crowd.step(dt)
        pos.append(crowd.position.copy())
        vel.append(crowd.velocity.copy())
        sts.append(crowd.status.copy())
        if until_arrived:
            if not np.isin(crowd.status, active).any():
                stopped = "arrived"
                break
            if watch is not None and watch.stalled(k + 1, crowd):
                stopped = "stalled"
                break
        now = _time.perf_counter()
        if progress is not None and now - last > 0.5:
            last = now
            progress(k + 1, None if until_arrived else total, now - t0)
    return Trajectory(np.stack(pos), np.stack(vel), crowd.status.copy(),
                      crowd.arrived_step.copy(), crowd.radius.copy(), float(dt),
                      np.stack(sts), stopped)


class _StallWatch:
    """Samples the agents' distance left along their corridors a few times
    per ``stall_time`` and tells when, over the last ``stall_time``, no
    agent still flying got a radius closer (or a tenth of its top speed's
    reach) and none arrived first."""

    def __init__(self, stall_time, dt):
        self.window = max(1, math.ceil(stall_time / dt))
        self.seconds = self.window * dt
        self.stride = max(1, self.window // 4)
        self.samples = collections.deque()     # (step, distance left, ever arrived)

    def stalled(self, step, crowd) -> bool:
        if step % self.stride:
            return False
        now = (step, crowd.distance_left(), int((crowd.arrived_step >= 0).sum()))
        self.samples.append(now)
        while len(self.samples) > 1 and self.samples[1][0] <= step - self.window:
            self.samples.popleft()
        then = self.samples[0]
        if then[0] > step - self.window or then[2] != now[2]:
            return False
        flying = np.isin(crowd.status, (STATUS["moving"], STATUS["stuck"]))
        gained = then[1][flying] - now[1][flying]     # inf - inf: nan, no gain
        # a radius, or for a big slow ship a tenth of what its top speed covers
        need = np.minimum(crowd.radius[flying], 0.1 * crowd.max_speed[flying] * self.seconds)
        return not bool((gained >= need).any())
