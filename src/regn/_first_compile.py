"""A callback for the first time this process compiles a kernel.

numba compiles a kernel the first time it is used on a machine and loads it
from its cache after; the first run of a command can spend most of a minute
compiling. The CLI registers a callback here (this module imports nothing, so
``regn --help`` stays fast) to tell a user at a terminal why the first run is
slow; ``regn._jit`` calls :func:`fire` whenever numba starts a real compile
(not a cache load), and the callback runs once.
"""

from __future__ import annotations

_CALLBACK = [None]


def on_first_compile(callback) -> None:
    """Call ``callback()`` (no arguments) when a kernel is next compiled."""
    _CALLBACK[0] = callback


def fire() -> None:
    """A compile is starting: run the callback, if any, and forget it."""
    callback, _CALLBACK[0] = _CALLBACK[0], None
    if callback is not None:
        callback()
