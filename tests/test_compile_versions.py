"""How many versions of a kernel numba compiles: one per kernel, whatever
constant or integer width its callers pass (each extra version costs a
machine's first run compile time, not speed)."""

import importlib
import sys
import textwrap

import numpy as np
from numba.core import config as numba_config

MODULE = """
import numpy as np
from regn._jit import kernel


@kernel(borrows=True)
def add(a, i, x, twice):
    a[i] += 2.0 * x if twice else x


@kernel
def caller(a, idx32):
    add(a, 0, 1.0, False)                 # constants
    add(a, np.int64(1), 2.0, True)        # int64 and a bool constant
    add(a, idx32[0], 3.0, a[0] > 0.0)     # an int32 index and a bool variable
    return a
"""


def test_constants_and_narrow_integers_share_one_compiled_helper(tmp_path, monkeypatch):
    (tmp_path / "versions_probe.py").write_text(textwrap.dedent(MODULE))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("REGN_KERNEL_PACK", "0")     # compiled here, not loaded
    mod = importlib.import_module("versions_probe")
    try:
        a = mod.caller(np.zeros(4), np.array([2], dtype=np.int32))
        assert a.tolist() == [1.0, 4.0, 6.0, 0.0]
        assert len(mod.add.overloads) == 1
        (sig,) = mod.add.overloads
        assert [str(t) for t in sig[1:]] == ["int64", "float64", "bool"]
    finally:
        sys.modules.pop("versions_probe", None)
        # numba keeps the cache folder it last read from the environment: read
        # it again once the environment is back, or every later kernel in this
        # process would be compiled into the deleted temporary folder
        monkeypatch.undo()
        numba_config.reload_config()
