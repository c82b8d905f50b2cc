"""A numba cache folder with the shipped kernel pack installed, made by the
test process itself rather than by a first run of regn in a process of its
own (which costs a process start and numba's import)."""

import importlib
import json
import os
import sys
import zipfile


def install_a_fresh_pack(cache):
    """Install the kernel pack into numba cache folder ``cache`` as a
    command's first run would (pack.ensure, marker included), when the
    pack is on and every entry of it matches today's sources; -> whether it
    was."""
    from numba.core import config

    from regn.compiling import pack, stamps
    where = pack.pack_path()
    if where is None or not os.path.isfile(where):
        return False
    with zipfile.ZipFile(where) as z:
        entries = json.loads(z.read("pack.json"))["entries"]
    for entry in entries:
        source = os.path.join(stamps._ROOT, *entry["source"].split("/"))
        if not os.path.isfile(source) or stamps.source_stamp(source) != entry["stamp"]:
            return False
        # imported now, so that its kernels keep this process's own cache
        importlib.import_module(stamps._module_of(source))
    stamps.install()                         # regn's cache locators, as regn._jit does
    saved, modules = config.CACHE_DIR, set(sys.modules)
    config.CACHE_DIR = str(cache)            # where NUMBA_CACHE_DIR=cache would put it
    try:
        installed = pack.ensure()
    finally:
        config.CACHE_DIR = saved
    # (reading the entries imports some query modules: none holds a kernel)
    assert not [m for m in set(sys.modules) - modules if m.endswith("kernels")]
    return installed > 0
