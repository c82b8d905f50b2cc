"""Helpers shared by the CLI's subcommands."""

from __future__ import annotations

import json
import sys


def to_jsonable(obj):
    """:func:`regn.export.data.to_jsonable` (numpy imported on first use: a
    query answered by a warm service prints without it)."""
    from ..export.data import to_jsonable as convert
    return convert(obj)


def plain(docstring: str) -> str:
    """A module docstring's text as ``--help`` shows it: without the reST
    literal quotes."""
    return docstring.replace("``", "")


def load_mesh(path, max_tiles=None):
    """Load a REGN file (or a world's manifest, holding at most
    ``max_tiles`` tiles; None: the library's default) for a command
    (errors propagate as RegnError)."""
    from ..io import load
    return load(path, max_tiles=max_tiles)


def add_max_tiles(p):
    """``--max-tiles N``: a world's tiles held at once (a radius path's walk
    needs every tile it crosses)."""
    from ..inputs.numbers import whole
    p.add_argument("--max-tiles", type=whole, default=None, metavar="N",
                   help="a world (world.json): the most tiles held at once (default 8); a "
                        "sphere's path needs every tile it crosses")


def print_json(obj, stream=None, plain=False):
    """One JSON document on a line; ``plain``: ``obj`` holds JSON types only
    (a warm service's answer), printed without numpy's conversions."""
    # json.dumps, not json.dump: only the one-shot path uses the C encoder
    stream = stream or sys.stdout
    stream.write(json.dumps(obj if plain else to_jsonable(obj), allow_nan=False))
    stream.write("\n")


class JsonList:
    """A JSON list written a block of items at a time: the same text
    :func:`print_json` gives for the whole list, without holding it."""

    def __init__(self, stream=None):
        self.stream = stream or sys.stdout
        self.sep = "["

    def extend(self, items):
        if len(items):
            body = json.dumps(to_jsonable(items), allow_nan=False)
            self.stream.write(self.sep + body[1:-1])
            self.sep = ", "

    @property
    def started(self) -> bool:
        return self.sep != "["

    def close(self):
        self.stream.write("[]\n" if self.sep == "[" else "]\n")

    def fail(self, exc: BaseException, code: int = 2):
        """End a list cut short by ``exc``: its last item is the error object
        ``{"error": message, "exit": code}``, so the output stays one JSON
        document, and ``exc`` is marked as reported there."""
        self.extend([{"error": str(exc), "exit": code}])
        self.close()
        exc.reported_in_json = True


def read_points(source=None, *, width=3):
    """Every row of a point (width 3) or segment (width 6) list, from a
    .npy/.csv/.txt file, or text on stdin when ``source`` is None, as one
    (N, width) float64 array (see :mod:`regn.inputs.points`)."""
    from ..inputs.points import load_rows
    return load_rows(source, width)


def iter_points(source=None, *, width=3):
    """The same rows a block at a time (see :func:`regn.inputs.points.iter_rows`)."""
    from ..inputs.points import iter_rows
    return iter_rows(source, width)


def check_output(out, inputs, force=False):
    """ExportError unless ``out`` may be written, by the writer's own rules
    (:mod:`regn._atomic`): never one of ``inputs`` (not even with ``force``),
    an existing file only with ``force``; a device or pipe always. Checked
    before the command does its work."""
    from .._atomic import IsAnInput, check_destination, note_input
    from ..errors import ExportError
    for source in inputs:
        if source is not None:
            note_input(source)
    try:
        check_destination(out, overwrite=force)
    except IsAnInput:
        raise ExportError(f"{out}: is the input file; write somewhere else") from None
    except FileExistsError:
        raise ExportError(f"{out}: exists; pass --force to overwrite it") from None
    except NotADirectoryError as e:
        raise ExportError(f"{out}: cannot write: {e}") from None


def add_json_option(p, what="the summary"):
    """``--json``: every command takes it (answers, or a summary of what a
    writing command wrote; failures as ``{"error": ..., "exit": ...}``)."""
    p.add_argument("--json", action="store_true", help=f"print {what} as JSON")


def report_written(args, doc, text):
    """What a writing command says when done: ``text`` (a line), or with
    ``--json`` the document ``doc`` (``{"output": path, "bytes": n, ...}``)."""
    if getattr(args, "json", False):
        print_json(doc)
    else:
        print(text)


def coordinate(text: str) -> float:
    """An argparse type: a coordinate, a number (:func:`regn.inputs.numbers.number`)
    that is finite: ``nan`` or ``inf`` is an input error naming the argument,
    not a point outside the map."""
    import argparse
    import math

    from ..inputs.numbers import number
    value = number(text)
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite coordinate")
    return value


coordinate.__name__ = "number"      # argparse: "invalid number value" for "1_000"
