"""Peak memory and time of the CLI on hostile inputs (issue 21's table).

    python fuzz/hostile.py [--dir DIR] [--big] [--cap-mb 4000] [--timeout 300] [CASE ...]

Builds every input in DIR (a temporary directory by default), runs each
command as its own ``regn`` process and prints one markdown row per case:
exit code, the first line of stderr, the child's peak RSS (``ru_maxrss``
from ``wait4``) and its wall time. A watchdog kills a child whose resident
set passes ``--cap-mb`` or whose run passes ``--timeout`` (the row then says
so), so the script is safe to run on a shared machine. ``--big`` adds the
10-million-point cases (about 1 GB of input files). Naming cases runs only
those (``python fuzz/hostile.py info-pof0-5mb scan-pof0-256mb``).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

REGN = [sys.executable, "-c", "import sys; sys.argv[0] = 'regn'; "
        "from regn.cli import entry; entry()"]

# The child's own peak: VmHWM belongs to the address space exec made, while
# ru_maxrss would also count the parent's pages copied before the exec.
_MEASURED = [sys.executable, "-c", """
import atexit, os, sys
def _peak():
    with open('/proc/self/status') as fh:
        kb = next(int(l.split()[1]) for l in fh if l.startswith('VmHWM:'))
    with open(os.environ['HOSTILE_PEAK_FILE'], 'w') as fh:
        fh.write(str(kb))
atexit.register(_peak)
sys.argv[0] = 'regn'
from regn.cli import entry
entry()
"""]


def _tiny_map(path):
    """A small valid map: Delaunay of 20 random points and the box corners."""
    import regn
    from scipy.spatial import Delaunay
    h = 50_000.0
    rng = np.random.default_rng(1)
    corners = np.array([[x, y, z] for x in (-h, h) for y in (-h, h) for z in (-h, h)])
    pts = np.vstack([corners, rng.uniform(-h, h, (20, 3))])
    tets = Delaunay(pts).simplices
    e = pts[tets[:, 1:]] - pts[tets[:, :1]]
    tets = tets[np.abs(np.linalg.det(e)) > 1e-6 * h ** 3]     # no flat corner tets
    regn.save(regn.build(pts, tets, bbox=((-h,) * 3, (h,) * 3), dims=(2, 2, 2)), path)


def _field_map(path):
    subprocess.run(REGN + ["build", "--asteroids", "12", "--seed", "3",
                           "--coverage-samples", "0", "-o", path, "--force"],
                   check=True, stdout=subprocess.DEVNULL)


def _pof0_table_of(path, src, size):
    """``src`` with its POF0 table replaced by ``size`` bytes of 0x41 (each a
    one-byte entry of delta 1) and the POF0 size field fixed."""
    data = bytearray(open(src, "rb").read())
    data_size = int.from_bytes(data[4:8], "big")
    pof0_at = 16 + data_size
    assert data[pof0_at:pof0_at + 4] == b"POF0"
    out = data[:pof0_at + 4] + size.to_bytes(4, "big") + data[pof0_at + 8:pof0_at + 16]
    with open(path, "wb") as fh:
        fh.write(out + b"\x41" * size)


def _text_rows(path, n, width, seed):
    """``n`` rows of ``width`` numbers in the field map's box, written in
    1 M-row pieces (np.savetxt of 10 M rows at once would itself need GBs)."""
    rng = np.random.default_rng(seed)
    with open(path, "w") as fh:
        for lo in range(0, n, 1_000_000):
            rows = rng.uniform(-60_000, 60_000, (min(1_000_000, n - lo), width))
            np.savetxt(fh, rows, fmt="%.3f")


def _npy_rows(path, n, seed):
    rng = np.random.default_rng(seed)
    arr = np.lib.format.open_memmap(path, mode="w+", dtype=np.float64, shape=(n, 3))
    for lo in range(0, n, 1_000_000):
        arr[lo:lo + 1_000_000] = rng.uniform(-60_000, 60_000, (min(1_000_000, n - lo), 3))
    arr.flush()
    del arr


def _huge_shape_npy(path):
    """128 bytes: an .npy header claiming 10^13 float64 and no data."""
    header = "{'descr': '<f8', 'fortran_order': False, 'shape': (10000000000000,), }"
    header += " " * (128 - 10 - len(header) - 1) + "\n"
    with open(path, "wb") as fh:
        fh.write(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode())


def cases(d, big):
    """(name, inputs to make: [(file, maker)], argv, stdin file or None)."""
    tiny, field = f"{d}/tiny.rgn", f"{d}/field.rgn"
    out = [
        ("info-pof0-5mb", [(f"{d}/pof0-5mb.rgn", lambda p: _pof0_table_of(p, tiny, 5 << 20))],
         ["info", f"{d}/pof0-5mb.rgn"], None),
        ("info-pof0-20mb", [(f"{d}/pof0-20mb.rgn",
                             lambda p: _pof0_table_of(p, tiny, 20 << 20))],
         ["info", f"{d}/pof0-20mb.rgn"], None),
        ("scan-pof0-256mb", [(f"{d}/pof0-256mb.bin",
                              lambda p: open(p, "wb").write(b"POF0" * (64 << 20)))],
         ["scan", f"{d}/pof0-256mb.bin"], None),
        ("info-dev-zero", [], ["info", "/dev/zero"], None),
        ("info-dev-urandom", [], ["info", "/dev/urandom"], None),
        ("scan-pipe", [], ["scan", "/dev/stdin"], tiny),
        ("scan-dev-zero", [], ["scan", "/dev/zero"], None),
        ("verify-dev-urandom", [], ["verify", "/dev/urandom"], None),
        ("npy-huge-shape", [(f"{d}/huge.npy", _huge_shape_npy)],
         ["path", field, "0", "0", "0", "1", "1", "1", "--cost-scale", f"{d}/huge.npy"], None),
        ("locate-3m-stdin", [(f"{d}/points-3m.txt", lambda p: _text_rows(p, 3_000_000, 3, 1))],
         ["locate", field], f"{d}/points-3m.txt"),
        ("locate-200k-stdin", [(f"{d}/points-200k.txt",
                                lambda p: _text_rows(p, 200_000, 3, 2))],
         ["locate", field], f"{d}/points-200k.txt"),
        ("raycasts-1m-stdin", [(f"{d}/segments-1m.txt",
                                lambda p: _text_rows(p, 1_000_000, 6, 3))],
         ["raycasts", field], f"{d}/segments-1m.txt"),
        ("nearest-1m-npy-json", [(f"{d}/points-1m.npy", lambda p: _npy_rows(p, 1_000_000, 4))],
         ["nearest", field, "--points", f"{d}/points-1m.npy", "--json"], None),
    ]
    if big:
        out += [
            ("scan-pof0-1gb", [(f"{d}/pof0-1gb.bin",
                                lambda p: open(p, "wb").write(b"POF0" * (256 << 20)))],
             ["scan", f"{d}/pof0-1gb.bin"], None),
            ("locate-10m-stdin", [(f"{d}/points-10m.txt",
                                   lambda p: _text_rows(p, 10_000_000, 3, 5))],
             ["locate", field], f"{d}/points-10m.txt"),
            ("nearest-10m-npy-json", [(f"{d}/points-10m.npy",
                                       lambda p: _npy_rows(p, 10_000_000, 6))],
             ["nearest", field, "--points", f"{d}/points-10m.npy", "--json"], None),
        ]
    return out


def _rss_mb(pid):
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def run_case(argv, stdin, cap_mb, timeout):
    """-> (exit code or 'killed ...', first stderr line, peak RSS MB, seconds);
    the peak is the child's VmHWM (or the watchdog's largest sample when the
    child was killed)."""
    err = tempfile.TemporaryFile()
    fin = open(stdin, "rb") if stdin else subprocess.DEVNULL
    peak_file = tempfile.NamedTemporaryFile(delete=False)
    env = dict(os.environ, HOSTILE_PEAK_FILE=peak_file.name)
    t0 = time.perf_counter()
    child = subprocess.Popen(_MEASURED + argv, stdin=fin, stdout=subprocess.DEVNULL,
                             stderr=err, env=env)
    killed = None
    peak = 0.0
    while True:
        pid, status, _ = os.wait4(child.pid, os.WNOHANG)
        if pid:
            break
        rss = _rss_mb(child.pid)
        peak = max(peak, rss)
        if rss > cap_mb:
            killed = f"killed above {cap_mb} MB"
        elif time.perf_counter() - t0 > timeout:
            killed = f"killed after {timeout} s"
        if killed:
            child.kill()
            pid, status, _ = os.wait4(child.pid, 0)
            break
        time.sleep(0.05)
    seconds = time.perf_counter() - t0
    child.returncode = os.waitstatus_to_exitcode(status)
    if stdin:
        fin.close()
    err.seek(0)
    lines = err.read().decode(errors="replace").strip().splitlines()
    with open(peak_file.name) as fh:
        text = fh.read()
    os.unlink(peak_file.name)
    peak = max(peak, int(text) / 1024 if text else 0.0)
    return killed or child.returncode, lines[0] if lines else "", peak, seconds


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("names", nargs="*", metavar="CASE")
    ap.add_argument("--dir", help="where the inputs are made (kept; default a temp dir)")
    ap.add_argument("--big", action="store_true", help="add the 10 M-point and 1 GB cases")
    ap.add_argument("--cap-mb", type=float, default=4000)
    ap.add_argument("--timeout", type=float, default=300)
    args = ap.parse_args(argv)
    tmp = None if args.dir else tempfile.TemporaryDirectory()
    d = args.dir or tmp.name
    os.makedirs(d, exist_ok=True)
    for path, maker in ((f"{d}/tiny.rgn", _tiny_map), (f"{d}/field.rgn", _field_map)):
        if not os.path.exists(path):
            maker(path)
    print("| case | command | exit | stderr | peak RSS | time |")
    print("|---|---|---|---|---|---|")
    for name, inputs, cmd, stdin in cases(d, args.big):
        if args.names and name not in args.names:
            continue
        for path, maker in inputs:
            if not os.path.exists(path):
                maker(path)
        code, line, rss, secs = run_case(cmd, stdin, args.cap_mb, args.timeout)
        shown = "regn " + " ".join(os.path.basename(a) if a.startswith(d) else a
                                   for a in cmd)
        if stdin:
            shown += f" < {os.path.basename(stdin)}"
        line = line if len(line) <= 90 else line[:87] + "..."
        print(f"| {name} | `{shown}` | {code} | {line.replace('|', '/')} | "
              f"{rss:.0f} MB | {secs:.2f} s |", flush=True)
    if tmp is not None:
        tmp.cleanup()


if __name__ == "__main__":
    main()
