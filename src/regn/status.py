"""The one status vocabulary of regn's queries.

Kernels return these integer codes (numba reads them as compile-time
constants); the Python API turns them into the names in :data:`NAMES`, which
are what results carry (``Path.status``, ``RaycastHit.status``…) and what
the CLI prints.
"""

OK = 0               # a path was found
CLEAR = 1            # the segment (or swept sphere) touches no wall
HIT = 2              # the segment hits a wall
START_OUTSIDE = 3    # the start is not in the navigable volume
GOAL_OUTSIDE = 4     # the goal is not in the navigable volume
UNREACHABLE = 5      # no corridor joins start and goal
EXCLUDED = 6         # the start's or goal's tetrahedron is excluded
LOST = 7             # a walk gave up (step cap, or degenerate geometry)

NAMES = {OK: "ok", CLEAR: "clear", HIT: "hit", START_OUTSIDE: "start_outside",
         GOAL_OUTSIDE: "goal_outside", UNREACHABLE: "unreachable",
         EXCLUDED: "excluded", LOST: "lost"}
CODES = {name: code for code, name in NAMES.items()}


def name(code: int) -> str:
    """The status name of a kernel's code."""
    return NAMES[int(code)]
