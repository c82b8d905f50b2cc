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
START_TOO_CLOSE = 8  # a path with a radius: the start has less clearance than it
GOAL_TOO_CLOSE = 9   # ... the goal has less clearance than it
TOO_NARROW = 10      # ... a point could fly, but no corridor admits the radius
PARTIAL = 11         # find_path(partial=True): a path to the reachable point nearest the goal

NAMES = {OK: "ok", CLEAR: "clear", HIT: "hit", START_OUTSIDE: "start_outside",
         GOAL_OUTSIDE: "goal_outside", UNREACHABLE: "unreachable",
         EXCLUDED: "excluded", LOST: "lost", START_TOO_CLOSE: "start_too_close",
         GOAL_TOO_CLOSE: "goal_too_close", TOO_NARROW: "too_narrow", PARTIAL: "partial"}
CODES = {name: code for code, name in NAMES.items()}


def name(code: int) -> str:
    """The status name of a kernel's code."""
    return NAMES[int(code)]
