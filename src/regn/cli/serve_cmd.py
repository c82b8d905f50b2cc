"""``regn serve FILE``: one process holding a mesh, answering JSON-lines
queries on stdin/stdout or, with ``--port``, on a local TCP port.

A request is one JSON object on one line: ``{"id": 7, "query": "path",
"start": [x, y, z], "goal": [x, y, z]}`` plus that query's options; the
answer is one line with the same ``id`` and the fields of the query's
``--json`` output (:mod:`regn.cli._queries` builds both), or ``"result"``
holding it when that output is a list. A request that cannot be answered
gets ``{"id": ..., "error": "..."}`` (``id`` null when the line is not a
JSON object) and the service goes on. docs/queries.md has the protocol.

TCP clients are served on one thread each; the mesh's query caches are
built before the first request and only read after, and path searches on
several threads use separate search slots (:func:`regn.query.paths.path.search_slot`).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from collections import OrderedDict

import numpy as np

from ..errors import QueryError, RegnError
from ..inputs.numbers import number, whole
from . import _queries as Q
from . import warm
from ._common import load_mesh, to_jsonable
from ._crowd_session import FIELDS as CROWD_FIELDS

#: default bound on a request line, in bytes (the newline not counted)
MAX_REQUEST = 16 << 20
#: cost fields kept for requests that ask again (same goal and options)
FIELD_CACHE = 8

#: every query's fields besides "id" and "query": name -> required?
PATH_OPTIONS = {"cost_scale": False, "exclude": False, "block_sphere": False,
                "block_box": False, "block_scale": False}
FIELDS = {
    "locate": {"points": True},
    "nearest": {"points": True, "radius": False},
    "clearance": {"points": True, "wall": False},
    "raycast": {"a": True, "b": True, "radius": False},
    "raycasts": {"segments": True, "radius": False},
    "path": {"start": True, "goal": True, "smooth": False, "radius": False, "partial": False,
             **PATH_OPTIONS},
    "paths": {"segments": True, "smooth": False, "radius": False, "partial": False,
              **PATH_OPTIONS},
    "field": {"goal": True, "points": False, **PATH_OPTIONS},
    "status": {},
    **CROWD_FIELDS,
}


def add_parser(subparsers, name, help_text):
    p = subparsers.add_parser(name, help=help_text, description=help_text)
    p.add_argument("file", nargs="?", help="REGN file (or a world's world.json)")
    p.add_argument("--port", type=whole, metavar="N",
                   help="serve TCP clients on this port (0: any free one) instead of "
                        "stdin/stdout")
    p.add_argument("--host", default="127.0.0.1",
                   help="address to bind with --port (default 127.0.0.1: this machine only)")
    p.add_argument("--max-request", type=whole, default=MAX_REQUEST, metavar="BYTES",
                   help=f"longest request line accepted (default {MAX_REQUEST})")
    p.add_argument("--workers", type=whole, metavar="N",
                   help="threads of one 'paths' request (default: one per core)")
    p.add_argument("--background", action="store_true",
                   help="start a warm service for FILE and return once it answers: "
                        "'regn path FILE ...' and 'regn raycast FILE ...' then ask it "
                        "instead of loading FILE (docs/queries.md)")
    p.add_argument("--idle", type=number, default=warm.DEFAULT_IDLE, metavar="SECONDS",
                   help="with --background: exit after this long without a request "
                        f"(default {warm.DEFAULT_IDLE})")
    p.add_argument("--stop", action="store_true",
                   help="stop FILE's warm service (exit 1 when none runs)")
    p.add_argument("--list", action="store_true",
                   help="list this user's running warm services (started with --background "
                        "or kept warm by repeated 'regn path'/'regn raycast'), without FILE")
    p.add_argument("--json", action="store_true", help="with --list/--stop-all: one JSON list")
    p.add_argument("--stop-all", action="store_true",
                   help="stop every warm service of this user, without FILE")
    p.add_argument("--unix", help=argparse.SUPPRESS)     # the background service's socket
    p.set_defaults(func=_serve)
    return p


def _not_json(token):
    raise ValueError(f"{token} is not a JSON number")


def _numbers(req, key, kinds="iuf"):
    """A request field as a numpy array of JSON numbers (``kinds="biu"``:
    booleans or whole numbers); strings, nulls and ragged lists are refused.
    Shapes are the query's to check."""
    value = req[key]
    try:
        a = np.asarray(value)
    except ValueError:                   # ragged
        a = None
    if a is None or a.dtype.kind not in kinds or (kinds == "iuf" and _holds_bool(value)):
        what = "numbers" if kinds == "iuf" else "booleans or tetrahedron indices"
        raise QueryError(f"{key}: must be {what}, got {json.dumps(value)[:60]}")
    return a


def _holds_bool(value) -> bool:
    """Whether a JSON value holds ``true`` or ``false`` (numpy would take
    them for 1 and 0 beside numbers)."""
    if not isinstance(value, list):
        return type(value) is bool
    if value and isinstance(value[0], list):
        return any(_holds_bool(v) for v in value)
    return any(type(x) is bool or isinstance(x, list) and _holds_bool(x) for x in value)


def _rows(req, key, width):
    """A request field as rows of ``width`` numbers (one row alone, or none,
    is fine)."""
    a = _numbers(req, key)
    if a.size == 0:
        a = a.reshape(0, width)
    elif a.shape == (width,):
        a = a[None]
    if a.ndim != 2 or a.shape[1] != width:
        raise QueryError(f"{key}: must be rows of {width} numbers, got shape {a.shape}")
    return a


class Service:
    """Answers request lines for one mesh (thread-safe)."""

    def __init__(self, mesh, workers=None, source=None):
        self.mesh = mesh
        self.workers = workers
        self.source = source
        self.idle = None                # seconds without a request before a warm service exits
        self.started = time.time()
        self.answered = 0               # queries answered (status requests not counted)
        self._fields = OrderedDict()
        self._fields_lock = threading.Lock()
        self._crowd = None
        # a world (a manifest) reads and drops tiles as queries go: one at a time
        self._world_lock = threading.Lock() if getattr(mesh, "is_world", False) else None

    def warm_up(self):
        """Build every cache the queries use (and load their kernels) now, so
        the first requests are as fast as the rest and the caches are only
        read while clients are served."""
        if self.mesh.n_tets == 0 or self._world_lock is not None:
            return                      # (a world reads its tiles when asked)
        self.mesh.prepare(workers=self.workers)     # structures, kernels, landmark table
        p = self.mesh.random_points(2, seed=0)
        Q.path_options(self.mesh, spheres=[[*p[0], 0.0]], boxes=[[*p[0], *p[0]]])

    # --- one request ------------------------------------------------------------
    def answer(self, line) -> str:
        """The answer line (no newline) to one request line (bytes or str)."""
        rid = None
        try:
            try:
                req = json.loads(line, parse_constant=_not_json)
            except (ValueError, RecursionError) as exc:      # (UnicodeDecodeError too)
                raise QueryError(f"not valid JSON ({exc})") from None
            if not isinstance(req, dict):
                raise QueryError("a request must be a JSON object")
            rid = req.get("id")
            if self._world_lock is None:
                doc = self._dispatch(req)
            else:
                with self._world_lock:
                    doc = self._dispatch(req)
            out = {"id": rid, **doc} if isinstance(doc, dict) else {"id": rid, "result": doc}
            return json.dumps(to_jsonable(out), allow_nan=False)
        except RegnError as exc:
            return self.error(rid, str(exc))
        except Exception as exc:        # a bug: report it, keep serving
            print(f"regn serve: internal error: {exc!r}", file=sys.stderr)
            return self.error(rid, f"internal error: {exc!r}")

    @staticmethod
    def error(rid, message) -> str:
        return json.dumps({"id": to_jsonable(rid), "error": message})

    def _dispatch(self, req):
        query = req.get("query")
        if query not in FIELDS:
            raise QueryError(f"unknown query {json.dumps(query)}; one of "
                             f"{', '.join(FIELDS)}")
        fields = FIELDS[query]
        unknown = sorted(set(req) - set(fields) - {"id", "query"})
        if unknown:
            raise QueryError(f"{query}: unknown field(s) {', '.join(unknown)}")
        missing = [k for k, required in fields.items() if required and k not in req]
        if missing:
            raise QueryError(f"{query}: missing field(s) {', '.join(missing)}")
        if query != "status":
            with self._fields_lock:
                self.answered += 1
        if query in CROWD_FIELDS:
            if self._world_lock is not None:
                raise QueryError(f"{query}: crowds are not available for a world (serve "
                                 "a tile's .rgn)")
            return self._crowd_session().answer(query, req, _rows, _numbers)
        return getattr(self, "_" + query)(req)

    def _crowd_session(self):
        """The service's crowd session (made on first use)."""
        with self._fields_lock:
            if self._crowd is None:
                from ._crowd_session import CrowdSession
                self._crowd = CrowdSession(self.mesh, self.workers)
            return self._crowd

    # --- the queries ----------------------------------------------------------------
    def _status(self, req):
        """Which map, which process, how long, how many requests so far."""
        return {"file": self.source, "pid": os.getpid(), "world": self._world_lock is not None,
                "up_seconds": round(time.time() - self.started, 3), "idle_exit": self.idle,
                "answered": self.answered}

    def _locate(self, req):
        return Q.locate_doc(self.mesh.locate(_rows(req, "points", 3)))

    def _nearest(self, req):
        return Q.nearest_doc(self.mesh.nearest(_rows(req, "points", 3), radius=_radius(req)))

    def _clearance(self, req):
        if _flag(req, "wall"):
            return Q.wall_doc(self.mesh.nearest_wall(_rows(req, "points", 3)))
        return Q.clearance_doc(self.mesh.distance_to_wall(_rows(req, "points", 3)))

    def _raycast(self, req):
        return Q.raycast_doc(self.mesh.raycast(_numbers(req, "a"), _numbers(req, "b"),
                                               radius=_radius(req)))

    def _raycasts(self, req):
        seg = _rows(req, "segments", 6)
        return Q.raycasts_doc(self.mesh.raycast_many(seg[:, :3], seg[:, 3:],
                                                     radius=_radius(req)))

    def _path(self, req):
        return Q.path_doc(self.mesh.find_path(_numbers(req, "start"), _numbers(req, "goal"),
                                              smooth=_smooth(req), radius=_radius(req),
                                              partial=_flag(req, "partial"),
                                              **self._options(req)))

    def _paths(self, req):
        seg = _rows(req, "segments", 6)
        return Q.paths_doc(self.mesh.find_paths(seg[:, :3], seg[:, 3:], smooth=_smooth(req),
                                                workers=self.workers, radius=_radius(req),
                                                partial=_flag(req, "partial"),
                                                **self._options(req)))

    def _field(self, req):
        goal = _numbers(req, "goal")
        points = _rows(req, "points", 3) if "points" in req else None
        key = json.dumps({k: req[k] for k in ("goal", *PATH_OPTIONS) if k in req},
                         sort_keys=True)
        with self._fields_lock:
            field = self._fields.get(key)
            if field is not None:
                self._fields.move_to_end(key)
        if field is None:
            field = self.mesh.cost_field(goal, **self._options(req))
            with self._fields_lock:
                self._fields[key] = field
                while len(self._fields) > FIELD_CACHE:
                    self._fields.popitem(last=False)
        return Q.field_doc(field, points)

    def _options(self, req) -> dict:
        """find_path's keyword arguments from a request's path options."""
        scale = req.get("block_scale")
        if scale is not None and (isinstance(scale, bool)
                                  or not isinstance(scale, (int, float))):
            raise QueryError(f"block_scale: must be a number or null, got {json.dumps(scale)}")
        return Q.path_options(
            self.mesh, cost_scale=_numbers(req, "cost_scale") if "cost_scale" in req else None,
            exclude=_numbers(req, "exclude", "biu") if "exclude" in req else None,
            spheres=_rows(req, "block_sphere", 4) if "block_sphere" in req else (),
            boxes=_rows(req, "block_box", 6) if "block_box" in req else (),
            block_scale=scale)


def _radius(req):
    """The request's agent radius in metres (0 without one); the library
    checks it is finite and >= 0."""
    radius = req.get("radius", 0.0)
    if isinstance(radius, bool) or not isinstance(radius, (int, float)):
        raise QueryError(f"radius: must be a number of metres, got {json.dumps(radius)[:60]}")
    return radius


def _smooth(req):
    return _flag(req, "smooth", True)


def _flag(req, key, default=False):
    """A request's true/false field (``default`` when absent)."""
    value = req.get(key, default)
    if not isinstance(value, bool):
        raise QueryError(f"{key}: must be true or false, got {json.dumps(value)[:60]}")
    return value


# --- transports -------------------------------------------------------------------------
def request_lines(stream, limit):
    """Request lines (bytes) from a binary stream; a line longer than
    ``limit`` bytes is read to its end, dropped and given as None. Blank
    lines are skipped."""
    while True:
        line = stream.readline(limit + 1)
        if not line:
            return
        if len(line) > limit and not line.endswith(b"\n"):
            while line and not line.endswith(b"\n"):
                line = stream.readline(limit + 1)
            yield None
        elif line.strip():
            yield line


def answer_stream(service, rfile, write, limit):
    """Answer every request of ``rfile`` through ``write(bytes)``, in order."""
    for line in request_lines(rfile, limit):
        text = service.answer(line) if line is not None else \
            service.error(None, f"request longer than {limit} bytes")
        write(text.encode() + b"\n")


def tcp_server(service, host, port, limit):
    """A threading TCP server answering each connection's requests with
    ``server.service`` (which may be set after binding: connections wait in
    the backlog until ``serve_forever`` runs)."""
    import socketserver

    class Handler(socketserver.StreamRequestHandler):
        def handle(self):
            try:
                answer_stream(self.server.service, self.rfile, self.wfile.write, limit)
            except (ConnectionError, OSError):
                pass                     # the client went away

    class Server(socketserver.ThreadingTCPServer):
        daemon_threads = True
        allow_reuse_address = True

    server = Server((host, port), Handler)
    server.service = service
    return server


def _serve(args) -> int:
    if args.max_request < 1:
        raise QueryError("--max-request must be at least 1 byte")
    if args.workers is not None and args.workers < 1:
        raise QueryError("--workers must be at least 1")
    if args.port is not None and not 0 <= args.port <= 65535:
        raise QueryError(f"--port must be in 0..65535, got {args.port}")
    if not args.idle > 0:
        raise QueryError(f"--idle must be more than 0 seconds, got {args.idle}")
    if args.list or args.stop_all:
        return _list(args)
    if args.file is None:
        raise QueryError("serve: give the FILE to serve (or --list, --stop-all)")
    if args.stop:
        return _stop(args)
    if args.background:
        return _background(args)
    server = None
    if args.port is not None:       # bind first: a taken port fails before the load
        try:
            server = tcp_server(None, args.host, args.port, args.max_request)
        except OSError as e:        # in use, not this machine's address, no such host
            raise RegnError(f"cannot listen on {args.host}:{args.port}: "
                            f"{e.strerror or e}") from None
    try:
        service = Service(load_mesh(args.file), workers=args.workers,
                          source=os.path.abspath(args.file))
        service.warm_up()
    except BaseException:
        if server is not None:
            server.server_close()
        raise
    if args.unix is not None:
        service.idle = args.idle
        warm.serve_unix(service, args.unix, args.max_request, args.idle, answer_stream)
        return 0
    if server is None:
        out = sys.stdout.buffer

        def write(data):
            out.write(data)
            out.flush()
        answer_stream(service, sys.stdin.buffer, write, args.max_request)
        return 0
    server.service = service
    host, port = server.server_address[:2]
    print(f"regn serve: listening on {host}:{port}", file=sys.stderr, flush=True)
    warm.serve_until_stopped(server)
    return 0


def _background(args) -> int:
    """``--background``: start FILE's warm service (or find it running)."""
    if args.port is not None:
        raise QueryError("--background listens on a private Unix socket: not with --port")
    if not os.path.isfile(args.file):
        raise RegnError(f"{args.file}: no such file")
    tty = sys.stderr.isatty()

    def say(text):
        if tty:
            print(f"\rregn serve: {text}", end="", file=sys.stderr, flush=True)
    where = warm.start(args.file, idle=args.idle, workers=args.workers, say=say)
    if tty:
        print(file=sys.stderr)
    doc = warm.status(args.file) or {}
    print(f"regn serve: {args.file} warm (pid {doc.get('pid')}, socket {where}); "
          f"'regn path' and 'regn raycast' on it ask the service; it exits after "
          f"{doc.get('idle_exit', args.idle):g} s without a request ('regn serve {args.file} --stop' before)")
    return 0


def _list(args) -> int:
    """``--list`` / ``--stop-all``: one line a running warm service."""
    if args.file is not None:
        raise QueryError("serve --list and --stop-all take no FILE")
    docs = warm.stop_all() if args.stop_all else warm.running() + warm.loading()
    if args.json:
        print(json.dumps(docs))
        return 0
    for d in docs:
        what = ("still loading" if d.get("loading") else
                f"up {d['up_seconds']:.0f} s, {d['answered']} answered, exits after "
                f"{d['idle_exit']:g} s idle")
        print(f"{'stopped ' if args.stop_all else ''}pid {d['pid']}: {d['file']} ({what})")
    if not docs:
        print("regn serve: no warm service runs")
    return 0


def _stop(args) -> int:
    if warm.stop(args.file):
        print(f"regn serve: stopped the warm service of {args.file}")
        return 0
    print(f"regn serve: no warm service of {args.file} runs")
    return 1
