"""The ``regn`` command line: a thin layer of argparse subcommands over the library.

Each subcommand is a module in this package with ``add_parser(subparsers)``
and ``run(args) -> int``; modules are imported only when their command runs
(so ``regn --help`` stays fast), and library errors become one line on
stderr and a non-zero exit, never a traceback. With ``--json`` the error is
also printed to stdout as one JSON object, ``{"error": message, "exit":
code}`` (usage errors too).
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys

from ..inputs.numbers import NEGATIVE_NUMBER

#: command name -> (module, one-line help). The module is imported on use.
COMMANDS = {
    "demo": ("demo_cmd", "build, verify, query and draw a sample asteroid field"),
    "info": ("format_cmds", "summary: counts, bbox, grid, occupancy, sections, byte order"),
    "verify": ("verify_cmd", "run every check of the spec; exit 0 pass, 1 fail, 2 unreadable"),
    "dump": ("format_cmds", "the whole decode, every field (text or --json)"),
    "rewrite": ("format_cmds", "load and write back (same byte order and POF0 dialect)"),
    "build": ("build_cmd", "build a REGN (or a world of tiles) from obstacles, a random field, a level (soup or voxels) or a tet mesh"),
    "locate": ("query_cmds", "tetrahedron holding each point (x y z per line on stdin)"),
    "nearest": ("query_cmds", "closest navigable point for each point on stdin"),
    "path": ("query_cmds", "shortest flight between two points"),
    "paths": ("query_cmds", "shortest flight for every 'x0 y0 z0 x1 y1 z1' line on stdin, "
              "on every core"),
    "field": ("query_cmds", "every tetrahedron's cost to a goal, or each point's next "
              "waypoint toward it"),
    "raycast": ("query_cmds", "walk a segment through the mesh: clear, or the first wall hit"),
    "raycasts": ("query_cmds", "raycast every segment 'x0 y0 z0 x1 y1 z1' on stdin at once"),
    "clearance": ("query_cmds", "unsigned distance to the nearest wall for each point on stdin "
                  "(inside a rock too: test with locate)"),
    "fly": ("fly_cmd", "fly a crowd of agents along their paths, avoiding each other and "
            "the walls; write the trajectories"),
    "serve": ("serve_cmd", "answer JSON-lines queries on stdin/stdout or a local TCP port, "
              "holding the mesh"),
    "export": ("export_cmd", "write the mesh as .vtu/.msh/.obj/.ply/.stl/.npz/.json ..."),
    "render": ("render_cmd", "draw the mesh to a PNG"),
    "view": ("view_cmd", "interactive 3D view as one self-contained HTML file"),
    "scan": ("scan_cmd", "find POF0-relocated objects in any blob"),
    "chunk": ("scan_cmd", "infer the record layout of any POF0 chunk"),
    "diff": ("diff_cmd", "semantic difference of two REGN objects (exit 0 same, 1 differ)"),
}


class _Parser(argparse.ArgumentParser):
    """argparse, whose usage errors are one ``regn:`` line like every other
    error (and also JSON on stdout when the command line asks for ``--json``)."""

    json_errors = False

    def error(self, message):
        command = self.prog.partition(" ")[2]
        line = f"{command + ': ' if command else ''}{message} (see {self.prog} --help)"
        if _Parser.json_errors:
            _print_json_error(line, 2)
        self.exit(2, f"regn: {line}\n")


def _unrecognized(parser, command, extra):
    """The usage error for arguments the command does not take, said by the
    command's own parser (so it points at ``regn COMMAND --help``), with
    the nearest option the command has when one is close."""
    import difflib
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    own = sub.choices.get(command, parser)
    known = [o for a in own._actions for o in a.option_strings if o.startswith("--")]
    typed = next((a.partition("=")[0] for a in extra if a.startswith("--")), None)
    near = difflib.get_close_matches(typed, known, n=1) if typed else []
    own.error(f"unrecognized arguments: {' '.join(extra)}"
              + (f"; did you mean {near[0]}?" if near else ""))


def _print_json_error(message, code):
    print(json.dumps({"error": message, "exit": code}))


def _failed(args, message, code, exc=None):
    """Print the one-line error (and its JSON with ``--json``, unless a
    streamed answer list already ended with it); the exit code."""
    print(f"regn: {message}", file=sys.stderr)
    if getattr(args, "json", False) and not getattr(exc, "reported_in_json", False):
        _print_json_error(message, code)
    return code


def _parser(only=None):
    parser = _Parser(
        prog="regn", description="Read, check, query, build and draw REGN navigation "
        "meshes (the tetrahedral nav meshes of a space-combat title's stages).")
    from .. import __version__
    parser.add_argument("--version", action="version", version=f"regn {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module, help_text) in COMMANDS.items():
        if only == name:
            mod = importlib.import_module(f"{__name__}.{module}")
            mod.add_parser(sub, name, help_text)
        else:
            sub.add_parser(name, help=help_text, add_help=False)
    for p in (parser, *sub.choices.values()):
        p._negative_number_matcher = NEGATIVE_NUMBER    # argparse has no public hook
    return parser


def main(argv=None) -> int:
    """Run the CLI; returns the exit code (tests call this in-process)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    _Parser.json_errors = "--json" in argv
    command = next((a for a in argv if not a.startswith("-")), None)
    parser = _parser(command if command in COMMANDS else None)
    if command not in COMMANDS:
        args = parser.parse_args(argv)
        if args.command is None:
            parser.print_help()
            return 0
    args, extra = parser.parse_known_args(argv)
    if extra:
        _unrecognized(parser, command, extra)
    if sys.stderr.isatty():
        from .._first_compile import on_first_compile
        on_first_compile(_compile_notice)
    from .._atomic import protected_inputs
    from ..errors import RegnError
    try:
        with protected_inputs():            # no command writes over what it reads
            return int(args.func(args) or 0)
    except RegnError as e:
        return _failed(args, str(e), getattr(args, "error_exit", 2), e)
    except BrokenPipeError:
        return 0
    except (OSError, ValueError) as e:
        # Anything the library did not wrap (an unreadable path, a bad number).
        msg = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
        where = f"{e.filename}: " if isinstance(e, OSError) and e.filename else ""
        return _failed(args, f"{where}{msg}", 2, e)
    except KeyboardInterrupt:
        return _failed(args, "interrupted", 130)


def _compile_notice():
    """Said once, at a terminal, when a run compiles kernels (the first use of
    a command on a machine), so that the wait is not taken for a hang."""
    print("regn: compiling its kernels for this machine (first use only; this can "
          "take a minute)", file=sys.stderr, flush=True)


def entry() -> None:
    sys.exit(main())
