"""The one spelling of a number regn reads, wherever it is written (a point
file, stdin, a command-line argument): decimal as C's ``strtod`` reads it --
``-1e4``, ``.5``, ``nan``, ``-inf`` -- and not Python's extras (``1_000``,
``0x10``, ``1j``); a whole number is decimal digits. Only :mod:`re`, so that the CLI's parsers stay cheap."""

from __future__ import annotations

import re

_UNSIGNED = r"(\d+\.?\d*([eE][+-]?\d+)?|\.\d+([eE][+-]?\d+)?|nan|inf|infinity)"

#: a number, sign included.
NUMBER = re.compile(rf"[+-]?{_UNSIGNED}", re.ASCII | re.IGNORECASE)
#: what argparse is to take for a negative number rather than an option
#: (its own pattern misses -1e4, -1.5e3, -inf, -nan).
NEGATIVE_NUMBER = re.compile(rf"^-{_UNSIGNED}$", re.ASCII | re.IGNORECASE)


#: a whole number, sign included (decimal digits only).
WHOLE = re.compile(r"[+-]?\d+", re.ASCII)


def whole(text: str) -> int:
    """``text`` as an int; ValueError unless it is decimal digits with an
    optional sign (argparse reports "invalid whole value")."""
    if not WHOLE.fullmatch(text.strip()):
        raise ValueError(f"not a whole number: {text!r}")
    return int(text)


def number(text: str) -> float:
    """``text`` as a float; ValueError unless it is spelled as above (argparse
    reports that as "invalid number value")."""
    if not NUMBER.fullmatch(text.strip()):
        raise ValueError(f"not a number: {text!r}")
    return float(text)
