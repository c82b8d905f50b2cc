"""Reaching the walls (regn.levels.snap): level builds with and without it.

    python benchmarks/bench_level_snap.py OUT_DIR [--levels room,room5,room50,hangar]

Levels: ``room`` a closed 100 x 100 x 30 m box of quads with two closed
crates on its floor (agent radius 1), ``room5`` / ``room50`` the same 5 and
50 times larger (radius 5, 50), ``hangar`` the demo's hangar (radius 0.5).
Each is built twice, ``generate_level(..., snap=True)`` and ``snap=False``,
each in a fresh process (its CPU, user + sys, and peak memory from
``os.wait4``). Prints, without -> with: the free-volume coverage, the floor
(the lowest height found inside the map at four places on the floor, in
steps of 1 % of the radius; the room's floor is at z = 0, so the agent's
centre can go down to the radius) and CPU seconds and peak MB of the build.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

import numpy as np

BUILD = """
import json, sys
import regn
from regn.levels import generate_level, read_soup
level, radius, snap, out = sys.argv[1], float(sys.argv[2]), sys.argv[3] == "1", sys.argv[4]
m = generate_level(None, read_soup(level), agent_radius=radius, snap=snap)
regn.save(m, out)
print(json.dumps({"coverage": m.build_report.get("coverage")}))
"""


def room_obj(scale):
    from regn.levels.examples import _Obj
    obj = _Obj()
    s = float(scale)
    obj.box("room", (0, 0, 0), (100 * s, 100 * s, 30 * s))
    obj.box("crate_a", (20 * s, 20 * s, 0), (30 * s, 30 * s, 10 * s))
    obj.box("crate_b", (60 * s, 55 * s, 0), (75 * s, 70 * s, 8 * s))
    return "\n".join(obj.lines) + "\n"


def levels(out):
    from regn.levels.examples import hangar_obj
    made = {}
    for name, scale, radius in (("room", 1, 1.0), ("room5", 5, 5.0), ("room50", 50, 50.0)):
        path = os.path.join(out, f"{name}.obj")
        with open(path, "w") as f:
            f.write(room_obj(scale))
        made[name] = (path, radius, [(x * scale, y * scale) for x, y in
                                     ((10, 10), (90, 10), (10, 90), (50, 90))])
    path = os.path.join(out, "hangar.obj")
    with open(path, "w") as f:
        f.write(hangar_obj())
    made["hangar"] = (path, 0.5, [(10, 40), (50, 10), (90, 50), (60, 40)])
    return made


def build(level, radius, snap, out):
    p = subprocess.Popen([sys.executable, "-c", BUILD, level, str(radius), "1" if snap else "0",
                          out], stdout=subprocess.PIPE, text=True)
    text = p.stdout.read()
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode:
        raise SystemExit(f"build of {level} failed")
    doc = json.loads(text.strip().splitlines()[-1])
    doc.update(cpu=ru.ru_utime + ru.ru_stime, peak_mb=ru.ru_maxrss / 1024)
    return doc


def floor(path, radius, places):
    import regn
    m = regn.load(path)
    z = np.arange(0.0, 5 * radius, 0.01 * radius)
    lows = []
    for x, y in places:
        inside = m.locate(np.column_stack([np.full_like(z, x), np.full_like(z, y), z])) >= 0
        lows.append(z[np.argmax(inside)] if inside.any() else np.inf)
    return float(min(lows))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--levels", default="room,room5,room50,hangar")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    made = levels(a.out)
    for name in a.levels.split(","):
        level, radius, places = made[name]
        got = {}
        for snap in (False, True):
            rgn = os.path.join(a.out, f"{name}-{'snap' if snap else 'plain'}.rgn")
            got[snap] = build(level, radius, snap, rgn)
            got[snap]["floor"] = floor(rgn, radius, places)
        b, s = got[False], got[True]
        print(f"{name} (radius {radius:g}): coverage {100 * b['coverage']:.1f} -> "
              f"{100 * s['coverage']:.1f} %, floor {b['floor']:.3g} -> {s['floor']:.3g} m, "
              f"CPU {b['cpu']:.1f} -> {s['cpu']:.1f} s, peak {b['peak_mb']:.0f} -> "
              f"{s['peak_mb']:.0f} MB", flush=True)


if __name__ == "__main__":
    main()
