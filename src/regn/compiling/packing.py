"""Making the kernel pack (:mod:`.pack`): ``python -m regn.compiling.packing build``.

A pack is made by running regn's work on an empty numba cache with the CPU
set to the pack's level (``NUMBA_CPU_NAME=x86-64-v3``), so that every kernel version
that work compiles lands in that cache, then zipping the cache's regn
entries with ``pack.json``. The work is ``regn demo`` and, from a clone, the
test suite (which runs every README block and every command), so the pack
holds what a first user and a first CI run would otherwise compile.

Run it after changing kernels (a pack entry whose sources changed is never
installed, so an old pack only makes first runs slower, never wrong).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile

from . import pack
from .stamps import _PACKAGE, _ROOT, source_stamp

_REPO = os.path.dirname(_ROOT)


def _env(cache):
    env = dict(os.environ, NUMBA_CACHE_DIR=cache, NUMBA_CPU_NAME=pack.PACK_CPU[0],
               NUMBA_CPU_FEATURES=pack.PACK_CPU[1], REGN_COMPILE_AHEAD="0")
    env[pack.ENV] = "0"
    env["PYTHONPATH"] = _ROOT              # this checkout's regn, nothing else
    return env


def build(out, *, suite=True, keep=None, tests=None) -> dict:
    """Run the work on a fresh cache for the pack's CPU and write the pack
    to ``out``. ``keep``: compile into that folder and keep it (a later
    build with the same folder compiles only what changed); ``tests``:
    pytest arguments instead of the whole suite."""
    work = tempfile.mkdtemp(prefix="regn-pack-")
    cache = keep or os.path.join(work, "cache")
    try:
        env = _env(cache)
        steps = [[sys.executable, "-m", "regn", "demo", os.path.join(work, "demo")]]
        only, tests = tests, os.path.join(_REPO, "tests")
        if suite and os.path.isdir(tests):
            # one process (-n0): workers saving one kernel's cache index at once
            # could each drop the version the other added
            steps.append([sys.executable, "-m", "pytest", "-q", "-n0", "-p", "no:cacheprovider"]
                         + (only or [tests]))
        for cmd in steps:
            t0 = time.time()
            print("pack:", " ".join(cmd[1:]), flush=True)
            # a failing test still compiled its kernels: they are packed all the same
            done = subprocess.run(cmd, env=env, cwd=_REPO if "pytest" in cmd else work,
                                  check="pytest" not in cmd)
            print(f"pack: done in {time.time() - t0:.0f} s (exit {done.returncode})", flush=True)
        return collect(cache, out)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _folders():
    """numba's cache sub-folder name (``NUMBA_CACHE_DIR`` layout) -> regn
    source folder."""
    from numba.core.caching import _CacheLocator
    found = {}
    for folder, dirs, files in os.walk(_PACKAGE):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        if any(f.endswith(".py") for f in files):
            sub = _CacheLocator.get_suitable_cache_subpath(os.path.join(folder, "x.py"))
            found[sub] = folder
    return found


def collect(cache, out) -> dict:
    """Zip the fresh, generic regn entries of cache folder ``cache``
    (laid out as numba lays out ``NUMBA_CACHE_DIR``) into pack ``out``."""
    version, python, triple, _ = pack.host()
    entries, versions = [], 0
    tmp = out + ".tmp"
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        for sub, folder in sorted(_folders().items()):
            where = os.path.join(cache, sub)
            if not os.path.isdir(where):
                continue
            rel = os.path.relpath(folder, _ROOT).replace(os.sep, "/")
            for name in sorted(os.listdir(where)):
                if not name.endswith(".nbi"):
                    continue
                module = name.split(".", 1)[0]
                source = os.path.join(folder, module + ".py")
                with open(os.path.join(where, name), "rb") as f:
                    v, stamp, overloads = pack._load_index(f.read())
                if (v != version or not os.path.isfile(source)
                        or stamp != source_stamp(source)):
                    continue
                kept = {k: d for k, d in overloads.items()
                        if tuple(k[1][1:]) == pack.PACK_CPU}
                if not kept:
                    continue
                member = f"cache/{rel}/"
                z.writestr(member + name, pack._index_bytes(v, stamp, kept))
                for d in kept.values():
                    z.write(os.path.join(where, d), member + d)
                entries.append(dict(source=f"{rel}/{module}.py", member=member, index=name,
                                    stamp=stamp, versions=len(kept)))
                versions += len(kept)
        info = dict(numba=version, python=python, triple=triple, cpu=list(pack.PACK_CPU),
                    needs=list(pack.PACK_CPU_NEEDS),
                    versions=versions, entries=entries)
        z.writestr("pack.json", json.dumps(info, indent=1))
    os.replace(tmp, out)
    print(f"pack: {out}: {versions} kernel versions from {len(entries)} kernels, "
          f"{os.path.getsize(out) / 2**20:.1f} MiB")
    return info


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m regn.compiling.packing",
                                 description="make regn's kernel pack")
    sub = ap.add_subparsers(dest="what", required=True)
    b = sub.add_parser("build", help="compile regn's work on a generic CPU and pack it")
    b.add_argument("-o", "--out", default=pack.PACK)
    b.add_argument("--no-suite", action="store_true", help="only regn demo's kernels")
    b.add_argument("--keep-cache", help="compile into this folder (kept) instead of a temporary one")
    b.add_argument("--tests", nargs="+", help="run these pytest arguments, not the whole suite")
    c = sub.add_parser("collect", help="pack the regn entries of a NUMBA_CACHE_DIR folder")
    c.add_argument("cache")
    c.add_argument("-o", "--out", default=pack.PACK)
    a = ap.parse_args(argv)
    if a.what == "build":
        build(a.out, suite=not a.no_suite, keep=a.keep_cache, tests=a.tests)
    else:
        collect(a.cache, a.out)
    return 0


if __name__ == "__main__":
    import sys
    sys.exit(main())
