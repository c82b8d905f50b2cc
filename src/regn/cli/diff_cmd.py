"""``regn diff A B``: semantic difference of two REGN objects."""

from __future__ import annotations

from ..inputs.numbers import number


def add_parser(subparsers, name, help_text):
    p = subparsers.add_parser(name, help=help_text, description=(
        "Compare two REGN objects by meaning: header and grid, vertices moved, "
        "tetrahedra added/removed (matched by vertex positions, not indices), faces "
        "whose adjacency changed, portal costs, cell lists, connected components. "
        "Exit 0 same mesh, 1 differ, 2 unreadable."))
    p.add_argument("a")
    p.add_argument("b")
    p.add_argument("--json", action="store_true", help="the full comparison as JSON")
    p.add_argument("--tol", type=number, default=0.0,
                   help="vertex moves up to this distance do not count (default 0)")
    p.set_defaults(func=run, error_exit=2)
    return p


def run(args) -> int:
    import math

    from ..errors import RegnError
    from ..scan.diff import diff, format_text
    from ._common import load_mesh, print_json
    if not (math.isfinite(args.tol) and args.tol >= 0):
        raise RegnError(f"--tol {args.tol:g}: must be a finite distance >= 0")
    a = load_mesh(args.a)
    b = load_mesh(args.b)
    d = diff(a, b, tol=args.tol)
    if args.json:
        print_json(d)
    else:
        print(format_text(d, args.a, args.b))
    return 0 if d["same"] else 1
