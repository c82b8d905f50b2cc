"""The kernel pack: numba cache entries shipped with regn (regn.compiling.pack).

Each case runs fresh Python processes on their own empty numba cache
(``NUMBA_CACHE_DIR``), as a new machine would, and asks numba whether a
kernel was loaded from the cache or compiled."""

import json
import os
import subprocess
import sys
import zipfile

import pytest

from regn.compiling import pack

SRC = os.path.join(os.path.dirname(__file__), "..", "src")

#: calls one small kernel and prints (answer, cache hits, compiles) as JSON
CALL = """
import json, numpy as np
from regn._jit import copy_items
dst = np.zeros(4)
copy_items(dst, 1, np.arange(5.0), 2, 3)
st = copy_items.stats
print(json.dumps([dst.tolist(), sum(st.cache_hits.values()), sum(st.cache_misses.values())]))
"""


def _run(code, cache, pack_value, cpu=None):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache), PYTHONPATH=os.path.abspath(SRC),
               REGN_COMPILE_AHEAD="0")
    env[pack.ENV] = str(pack_value)
    for k in ("NUMBA_CPU_NAME", "NUMBA_CPU_FEATURES"):
        env.pop(k, None)
    if cpu:
        env["NUMBA_CPU_NAME"], env["NUMBA_CPU_FEATURES"] = cpu
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, check=False,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def small_pack(tmp_path_factory):
    """A pack of one kernel version, compiled for the pack's CPU level."""
    d = tmp_path_factory.mktemp("pack")
    answer, _, compiles = _run(CALL, d / "build-cache", 0, cpu=pack.PACK_CPU)
    assert answer == [0.0, 2.0, 3.0, 4.0] and compiles == 1
    from regn.compiling import packing       # its command line, in this process
    assert packing.main(["collect", str(d / "build-cache"), "-o", str(d / "p.zip")]) == 0
    return d / "p.zip"


def _rewrite(src, dst, change):
    """Copy pack ``src`` to ``dst`` with pack.json changed by ``change``."""
    with zipfile.ZipFile(src) as a, zipfile.ZipFile(dst, "w") as b:
        for item in a.infolist():
            data = a.read(item)
            if item.filename == "pack.json":
                info = json.loads(data)
                change(info)
                data = json.dumps(info).encode()
            b.writestr(item, data)


def test_a_pack_lists_the_kernel_it_holds(small_pack):
    with zipfile.ZipFile(small_pack) as z:
        info = json.loads(z.read("pack.json"))
    (entry,) = [e for e in info["entries"] if e["source"] == "regn/_jit.py"]
    assert entry["versions"] == 1 and entry["index"].startswith("_jit.copy_items-")
    assert info["cpu"] == ["x86-64-v3", ""] and "avx2" in info["needs"]


def test_a_fresh_cache_loads_the_packed_kernel_instead_of_compiling(small_pack, tmp_path):
    answer, hits, compiles = _run(CALL, tmp_path / "cache", small_pack)
    assert answer == [0.0, 2.0, 3.0, 4.0]
    assert (hits, compiles) == (1, 0)
    # installed once: the next process finds the marker and installs nothing
    code = "from regn.compiling import pack; import regn._jit; print(pack.ensure())"
    assert _run(code, tmp_path / "cache", small_pack) == 0


def test_without_the_pack_the_kernel_is_compiled(small_pack, tmp_path):
    answer, hits, compiles = _run(CALL, tmp_path / "cache", 0)
    assert answer == [0.0, 2.0, 3.0, 4.0] and (hits, compiles) == (0, 1)


def test_an_entry_from_other_sources_is_never_installed(small_pack, tmp_path):
    stale = tmp_path / "stale.zip"
    _rewrite(small_pack, stale, lambda i: [e.update(stamp="0" * 64) for e in i["entries"]])
    answer, hits, compiles = _run(CALL, tmp_path / "cache", stale)
    assert answer == [0.0, 2.0, 3.0, 4.0] and (hits, compiles) == (0, 1)


def test_a_pack_for_another_numba_is_ignored(small_pack, tmp_path):
    other = tmp_path / "other.zip"
    _rewrite(small_pack, other, lambda i: i.update(numba="0.0.0"))
    assert _run(CALL, tmp_path / "cache", other)[1:] == [0, 1]


def test_a_cpu_without_the_packs_features_compiles(small_pack, tmp_path):
    other = tmp_path / "future.zip"
    _rewrite(small_pack, other, lambda i: i["needs"].append("a-feature-no-cpu-has"))
    assert _run(CALL, tmp_path / "cache", other)[1:] == [0, 1]


def test_a_damaged_pack_only_means_compiling(tmp_path):
    bad = tmp_path / "bad.zip"
    bad.write_bytes(b"PK\x03\x04 not really a zip")
    answer, hits, compiles = _run(CALL, tmp_path / "cache", bad)
    assert answer == [0.0, 2.0, 3.0, 4.0] and (hits, compiles) == (0, 1)


#: regn demo in this process, counting the kernels numba compiles
DEMO = """
import json, sys
from numba.core import event
compiled = []
class Count(event.Listener):
    def on_start(self, ev): compiled.append(str(ev.data["dispatcher"].py_func.__qualname__))
    def on_end(self, ev): pass
event.register("numba:compile", Count())
from regn.cli import main
code = main(["demo", sys.argv[1]])
print(json.dumps([code, compiled]))
"""


@pytest.mark.skipif(not os.path.isfile(pack.PACK), reason="no kernel pack in this checkout")
def test_the_shipped_pack_lets_a_first_demo_compile_nothing(tmp_path):
    """A new machine's first ``regn demo`` loads every kernel it needs."""
    code = DEMO.replace("sys.argv[1]", repr(str(tmp_path / "demo")))
    status, compiled = _run(code, tmp_path / "cache", pack.PACK)
    assert status == 0
    assert compiled == [], ("src/regn/compiling/kernels.zip is out of date for these kernels "
                            f"({sorted(set(compiled))[:8]}): run "
                            "`python -m regn.compiling.packing build`")
