"""``regn fly MAP --agents AGENTS.csv -o TRAJ.npz``: fly a crowd."""

from __future__ import annotations

import time

from ..inputs.numbers import number
from ._common import check_output, load_mesh

DESCRIPTION = """Fly the agents of AGENTS.csv (a header naming the columns
x,y,z,gx,gy,gz,radius,max_speed,max_accel in metres and seconds, an optional
priority column; one agent a line) through the map, every agent following its
path corridor, avoiding the others (ORCA in 3D) and the walls, and write the
trajectory: .npz (positions (T+1,N,3), velocities (T+1,N,3), status (N,),
arrived_step (N,; -1 never)), .csv (step,time,agent,x,y,z,vx,vy,vz), .pvd
(ParaView plays it: TRAJ.pvd and a folder TRAJ/ of one .vtp per step, the
agents as points with radius, velocity, speed and status) or .vtp (a
polyline per agent, its points carrying time and speed)."""


def add_parser(sub, name, help_text):
    p = sub.add_parser(name, help=help_text, description=DESCRIPTION)
    p.add_argument("file", help="REGN file to read")
    p.add_argument("--agents", required=True, metavar="AGENTS.csv")
    p.add_argument("--dt", type=number, default=0.1, help="seconds per step (default 0.1)")
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--steps", type=int, metavar="N", help="fly N steps")
    g.add_argument("--until-arrived", action="store_true",
                   help="fly until no agent is moving (at most --max-steps)")
    p.add_argument("--max-steps", type=int, default=100_000, metavar="N",
                   help="the most steps --until-arrived flies (default 100000)")
    p.add_argument("--stall-time", type=number, default=30.0, metavar="S",
                   help="--until-arrived also stops when for S seconds no agent still "
                        "flying got a radius away and none arrived (default 30)")
    p.add_argument("--gather", action="store_true",
                   help="agents given the same goal fly to it as a group (down one cost "
                        "field) and gather round it: arrived on touching an arrived "
                        "groupmate (docs/crowd.md)")
    p.add_argument("--time-horizon", type=number, default=2.0, metavar="S",
                   help="seconds ahead agents avoid each other (default 2)")
    p.add_argument("--neighbor-dist", type=number, default=None, metavar="M",
                   help="centres nearer than this are neighbours (default: from speeds)")
    p.add_argument("--max-neighbors", type=int, default=10, metavar="K")
    p.add_argument("--workers", type=int, default=None, metavar="N",
                   help="threads (default: every core)")
    p.add_argument("-o", "--output", required=True, metavar="TRAJ.npz|.csv|.pvd|.vtp")
    p.add_argument("--force", action="store_true", help="overwrite an existing output")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.set_defaults(func=run)


def _gathered(crowd, mesh, agents):
    """--gather: each set of two or more agents with the same goal sent to
    it as a group, down one cost field from it; the number of groups."""
    import numpy as np
    goals, which, counts = np.unique(agents["goal"], axis=0, return_inverse=True,
                                     return_counts=True)
    which = np.asarray(which).ravel()
    groups = 0
    for g in np.flatnonzero(counts > 1):
        crowd.set_goals(ids=np.flatnonzero(which == g), field=mesh.cost_field(goals[g]))
        groups += 1
    return groups


def _progress(args, crowd):
    """``fly``'s progress callback (None when nothing is shown: piped, or
    --json): the step, the share done and the time left on the CLI's bar.
    With --steps N the share is of the steps; with --until-arrived, whose
    step count is not known ahead, it is the share of the straight-line
    distance to the goals already covered (arrived agents count in full)."""
    from ._progress import Progress, shows_progress
    if not shows_progress(args):
        return None
    import numpy as np
    bar = Progress()
    start = np.linalg.norm(crowd.goal - crowd.position, axis=1)
    aimed = np.isfinite(start)
    total_distance = float(start[aimed].sum())

    def fraction():
        left = np.linalg.norm(crowd.goal - crowd.position, axis=1)[aimed]
        done = np.isin(crowd.status_names[aimed], ("arrived", "idle", "no_path"))
        left = np.where(done, 0.0, np.minimum(left, start[aimed]))
        return 1.0 - float(left.sum()) / total_distance if total_distance > 0 else 0.0

    def show(done, total, seconds):
        if total:
            bar(f"step {done} of {total}", done / total)
        else:
            bar(f"flying, step {done}", fraction())
    show.close = bar.close
    return show


def run(args) -> int:
    import os

    import numpy as np

    from ..crowd.crowd import Crowd
    from ..crowd.trajectory import fly
    from ..errors import ExportError, QueryError
    from ..inputs.agents import load_agents
    out = args.output
    suffix = os.path.splitext(out)[1].lower()
    if suffix not in (".npz", ".csv", ".vtp", ".pvd"):
        raise ExportError(f"{out}: a trajectory is written as .npz, .csv, .pvd or .vtp")
    if not args.dt > 0:
        raise QueryError(f"--dt must be > 0, got {args.dt}")
    if args.steps is not None and args.steps < 0:
        raise QueryError(f"--steps must be >= 0, got {args.steps}")
    check_output(out, [args.file, args.agents], args.force)
    if suffix == ".pvd":
        from ..crowd.pvd import step_folder
        folder = step_folder(out)
        if os.path.exists(folder) and not (args.force and os.path.isdir(folder)):
            raise ExportError(f"{folder}: exists (the .pvd's step folder); "
                              f"{'it is not a folder' if args.force else 'pass --force'}")
    if not args.stall_time > 0:
        raise QueryError(f"--stall-time must be > 0, got {args.stall_time}")
    agents = load_agents(args.agents)
    mesh = load_mesh(args.file)
    if getattr(mesh, "is_world", False):
        raise QueryError(f"{args.file}: a world of tiles; regn fly flies through one REGN "
                         "(build the level as one: -o LEVEL.rgn)")
    crowd = Crowd(mesh, time_horizon=args.time_horizon, neighbor_dist=args.neighbor_dist,
                  max_neighbors=args.max_neighbors, workers=args.workers)
    _check_in_map(mesh, args.agents, agents)
    crowd.add_agents(agents["position"], agents["goal"], radius=agents["radius"],
                     max_speed=agents["max_speed"], max_accel=agents["max_accel"],
                     priority=agents["priority"])
    groups = _gathered(crowd, mesh, agents) if args.gather else 0
    t0 = time.perf_counter()
    show = _progress(args, crowd)
    try:
        traj = fly(crowd, args.dt, steps=args.steps, until_arrived=args.until_arrived,
                   max_steps=args.max_steps, progress=show, stall_time=args.stall_time)
    finally:
        if show is not None:
            show.close()
    seconds = time.perf_counter() - t0
    traj.write(out, overwrite=args.force)
    names, n = np.unique(crowd.status_names, return_counts=True)
    counts = {str(k): int(v) for k, v in zip(names, n)}
    late = np.flatnonzero(np.isin(crowd.status_names, ("moving", "stuck", "no_path")))
    summary = {"output": out, "agents": len(crowd), "steps": traj.steps, "dt": args.dt,
               "status": counts, "seconds": round(seconds, 3), "stopped": traj.stopped,
               "not_arrived_lines": agents["line"][late].tolist(), "groups": groups}
    # like verify's 1: the flight was written, and some agents did not get there
    code = 1 if args.until_arrived and len(late) else 0
    if args.json:
        from ._common import print_json
        print_json(summary)
        return code
    st = ", ".join(f"{v} {k}" for k, v in counts.items())
    gathered = f", {groups} group{'s' if groups != 1 else ''} gathered" if args.gather else ""
    print(f"wrote {out}: {len(crowd)} agents{gathered}, {traj.steps} steps of {args.dt:g} s "
          f"({st}) in {seconds:.1f} s")
    if args.until_arrived and len(late):
        why = {"stalled": f"stopped: none of them got a radius closer to its goal in "
                          f"{args.stall_time:g} s (--stall-time; most often its goal is nearer "
                          "another agent's goal than their radii's sum, held by the one that "
                          "arrived first; --gather flies the agents of one goal as a group)",
               "max_steps": f"stopped at --max-steps {args.max_steps}"}.get(traj.stopped, "")
        lines = ", ".join(map(str, agents["line"][late][:10])) + (", ..." if len(late) > 10 else "")
        print(f"  not arrived: {len(late)} ({args.agents} line{'s' if len(late) > 1 else ''} "
              f"{lines})"
              + (f"; {why}" if why else ""))
        lost = np.flatnonzero(crowd.status_names == "no_path")
        if len(lost):
            first = int(lost[0])
            a, b = agents["position"][first], agents["goal"][first]
            print(f"  no_path: {len(lost)} found no corridor wide enough for their radius "
                  "between start and goal (apart in the map, or a passage too narrow); e.g. "
                  f"`regn path {args.file} {' '.join(f'{v:g}' for v in (*a, *b))} --radius "
                  f"{agents['radius'][first]:g}` for line {agents['line'][first]}")
    return code


def _check_in_map(mesh, path, agents) -> None:
    """Refuse an agent list whose starts or goals lie outside the map's
    navigable volume (in rock, or where the map does not reach): such an
    agent would sit out the flight as ``no_path``."""
    from ..errors import QueryError
    for key, what in (("position", "start"), ("goal", "goal")):
        out = (mesh.locate(agents[key]) < 0).nonzero()[0]
        if len(out):
            i = out[0]
            x, y, z = agents[key][i]
            more = f" (and {len(out) - 1} more)" if len(out) > 1 else ""
            raise QueryError(
                f"{path}: line {agents['line'][i]}: the {what} ({x:g}, {y:g}, {z:g}) is outside "
                f"the map's navigable volume{more}; `regn nearest MAP --radius R` gives the "
                "nearest point where a ship of radius R fits")
