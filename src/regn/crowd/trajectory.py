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

import io
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
        progress=None) -> Trajectory:
    """Step ``crowd`` by ``dt`` seconds ``steps`` times, or with
    ``until_arrived`` until no agent is moving or stuck any more (every one
    arrived, idle or without a path; at most ``max_steps``), recording every
    step. ``progress(done, total or None, seconds)`` is called about twice
    a second."""
    if (steps is None) == (not until_arrived):
        raise ExportError("give either a number of steps or until_arrived")
    total = int(steps) if steps is not None else int(max_steps)
    pos = [crowd.position.copy()]
    vel = [crowd.velocity.copy()]
    sts = [crowd.status.copy()]
    t0 = last = _time.perf_counter()
    active = (STATUS["moving"], STATUS["stuck"])
    for k in range(total):
        crowd.step(dt)
        pos.append(crowd.position.copy())
        vel.append(crowd.velocity.copy())
        sts.append(crowd.status.copy())
        if until_arrived and not np.isin(crowd.status, active).any():
            break
        now = _time.perf_counter()
        if progress is not None and now - last > 0.5:
            last = now
            progress(k + 1, None if until_arrived else total, now - t0)
    return Trajectory(np.stack(pos), np.stack(vel), crowd.status.copy(),
                      crowd.arrived_step.copy(), crowd.radius.copy(), float(dt),
                      np.stack(sts))
