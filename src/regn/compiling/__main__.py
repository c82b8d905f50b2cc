"""A compile worker: ``python -m regn.compiling`` reads job names, one a
line, from stdin, runs each (:mod:`regn.compiling.jobs`) and answers
``<job> ok`` or ``<job> failed`` on stdout; it exits at the end of its input.
``python -m regn.compiling JOB ...`` runs the named jobs and exits."""

import sys

from .jobs import RUN


def _run(job) -> str:
    try:
        RUN[job]()
        return f"{job} ok"
    except Exception as e:                  # noqa: BLE001 (the caller compiles instead)
        return f"{job} failed: {type(e).__name__}: {e}".replace("\n", " ")


def main(argv) -> int:
    if argv:
        bad = [r for r in map(_run, argv) if not r.endswith(" ok")]
        print("\n".join(bad) or "ok")
        return 1 if bad else 0
    for line in sys.stdin:
        job = line.strip()
        if job:
            print(_run(job), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
