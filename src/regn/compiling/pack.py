"""Prebuilt kernels: numba cache entries shipped with regn, for any x86-64 CPU.

A machine's first run of regn would otherwise compile a few hundred kernel
versions (about two minutes of CPU on a first ``regn demo``; the same again
for every fresh clone, CI run and upgrade). ``kernels.zip`` beside this file
holds numba's cache entries for those kernels, compiled for the x86-64-v3
level (``NUMBA_CPU_NAME=x86-64-v3``: AVX2 and FMA, which x86-64 CPUs have
had since 2013–2015; compiled for a generic x86-64 CPU the batch queries ran
up to a third slower), together with ``pack.json``: the numba and Python versions, the
target triple and, for each cache index, the regn source it belongs to and
that source's stamp (:func:`regn.compiling.stamps.source_stamp`).

:func:`ensure` (called by :mod:`regn._jit` before numba first looks a
kernel up in its cache) installs the entries into numba's cache for this
machine once, and again only when the pack itself changes:

* only where numba, Python and the triple are the pack's, and only the
  entries whose source stamp equals the source's stamp now: an entry built
  from other sources is never installed, so an edited kernel is compiled
  as it would be without a pack;
* entries go where numba would look for them (:mod:`.stamps`' locators), are
  merged with entries already there, and are written to a temporary file
  then renamed, under a lock, so that processes starting together install
  them once;
* only on a CPU that has every feature of that level (else numba compiles,
  as without a pack). An index key names the CPU its code was compiled for;
  a pack entry is filed under this machine's CPU, which runs it as it is.
  Kernels compiled on this machine after that are compiled for its own CPU.

``REGN_KERNEL_PACK=0`` turns this off (numba compiles every kernel, as it did
before); ``REGN_KERNEL_PACK=PATH`` uses another pack. Nothing here can make
regn fail: a pack that cannot be read or installed only means numba compiles.

``python -m regn.compiling.packing build`` makes the pack (:mod:`.packing`).
"""

from __future__ import annotations

import json
import os
import pickle
import sys
import zipfile

from . import stamps

#: the pack shipped with regn
PACK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kernels.zip")
#: "0" (off, no, false) never installs a pack; a path installs that pack
ENV = "REGN_KERNEL_PACK"
#: what a pack's entries are compiled for (NUMBA_CPU_NAME / NUMBA_CPU_FEATURES)
PACK_CPU = ("x86-64-v3", "")
#: the CPU features that level implies (LLVM's names): a CPU lacking one
#: cannot run the pack's code
PACK_CPU_NEEDS = ("avx", "avx2", "bmi", "bmi2", "cx16", "f16c", "fma", "lzcnt", "movbe",
                  "popcnt", "sahf", "sse3", "sse4.1", "sse4.2", "ssse3", "xsave")
#: the file in a cache folder that records which pack was installed there
MARKER = "regn-kernel-pack.installed"
#: set while this process installs a pack (reading an entry may import a
#: kernel module, whose import asks for the pack again)
_BUSY: list = []


def pack_path():
    """The pack to install, or None when ``REGN_KERNEL_PACK`` turns it off."""
    value = os.environ.get(ENV, "").strip()
    if value.lower() in ("0", "off", "no", "false"):
        return None
    return value or PACK


def _locate(py_file):
    """The folder numba keeps ``py_file``'s cache in (the first of numba's
    locators, regn's first, that accepts it), or None."""
    from numba.core import caching

    class _Where:                 # what a locator reads of a function
        class __code__:
            co_firstlineno = 1
    for cls in caching.CacheImpl._locator_classes:
        try:
            found = cls.from_function(_Where, py_file)
        except Exception:         # noqa: BLE001 (another kind of locator)
            found = None
        if found is not None:
            return found.get_cache_path()
    return None


def _pack_id(path):
    st = os.stat(path)
    return f"{os.path.abspath(path)}:{st.st_size}:{st.st_mtime_ns}"


def ensure() -> int:
    """Install the pack's entries into this machine's numba cache unless
    that was done for this pack already. Returns the number of kernel
    versions installed (0 when nothing was to do); never raises."""
    path = pack_path()
    if path is None or _BUSY or not os.path.isfile(path):
        return 0
    _BUSY.append(path)
    try:
        here = _locate(os.path.join(stamps._PACKAGE, "__init__.py"))
        if here is None:
            return 0
        marker = os.path.join(here, MARKER)
        wanted = _pack_id(path)
        if _read_text(marker) == wanted:
            return 0
        return _install_locked(path, here, marker, wanted)
    except Exception:             # noqa: BLE001 (numba compiles instead)
        return 0
    finally:
        _BUSY.clear()


def _read_text(path):
    try:
        with open(path, encoding="utf-8") as f:
            return f.read().strip()
    except OSError:
        return None


def _install_locked(path, here, marker, wanted):
    import fcntl
    with open(os.path.join(here, MARKER + ".lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if _read_text(marker) == wanted:      # another process just did it
            return 0
        installed = install(path)
        _write_atomic(marker, wanted.encode())
        return installed


def _write_atomic(path, data):
    tmp = f"{path}.tmp.{os.getpid()}"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def host():
    """(numba version, "major.minor" of Python, target triple, magic tuple
    of this machine's CPU codegen)."""
    import numba
    from numba.core.registry import cpu_target
    magic = cpu_target.target_context.codegen().magic_tuple()
    return numba.__version__, "{}.{}".format(*sys.version_info[:2]), magic[0], magic


def install(path) -> int:
    """Install pack ``path``'s fresh entries (see the module docstring);
    returns the number of kernel versions installed."""
    version, python, triple, magic = host()
    with zipfile.ZipFile(path) as z:
        info = json.loads(z.read("pack.json"))
        if (info["numba"], info["python"], info["triple"]) != (version, python, triple):
            return 0
        has = {f[1:] for f in magic[2].split(",") if f.startswith("+")}
        if not set(info["needs"]) <= has:
            return 0
        cpu = tuple(info["cpu"])
        made = 0
        for entry in info["entries"]:
            source = os.path.join(stamps._ROOT, *entry["source"].split("/"))
            if not os.path.isfile(source) or stamps.source_stamp(source) != entry["stamp"]:
                continue
            folder = _locate(source)
            try:
                made += _install_entry(z, entry, folder, magic, cpu) if folder else 0
            except Exception:     # noqa: BLE001 (that kernel is compiled instead)
                continue
    return made


def _load_index(data):
    """(numba version, stamp, overloads) of an index file's bytes."""
    import io
    f = io.BytesIO(data)
    version = pickle.load(f)
    stamp, overloads = pickle.loads(f.read())
    return version, stamp, overloads


def _index_bytes(version, stamp, overloads):
    import io

    from numba.core.serialize import dumps
    f = io.BytesIO()
    pickle.dump(version, f, protocol=-1)
    f.write(dumps((stamp, overloads)))
    return f.getvalue()


def _install_entry(z, entry, folder, magic, cpu):
    """Merge one cache index of the pack into ``folder``'s."""
    version, stamp, packed = _load_index(z.read(entry["member"] + entry["index"]))
    target = os.path.join(folder, entry["index"])
    have = {}
    try:
        with open(target, "rb") as f:
            v, s, o = _load_index(f.read())
        if (v, s) == (version, stamp):
            have = o
    except (OSError, pickle.UnpicklingError, EOFError, ValueError, TypeError):
        pass
    base = entry["index"][:-len(".nbi")]
    taken = set(have.values())
    numbers = (f"{base}.{i}.nbc" for i in range(1, 1 << 30))
    made = 0
    for key, data_name in packed.items():
        sig, built_for, code = key
        if tuple(built_for[1:]) != cpu:
            continue
        mine = (sig, magic, code)
        if mine in have:
            continue
        name = next(n for n in numbers if n not in taken)
        taken.add(name)
        _write_atomic(os.path.join(folder, name), z.read(entry["member"] + data_name))
        have[mine] = name
        made += 1
    if made:
        _write_atomic(target, _index_bytes(version, stamp, have))
    return made

