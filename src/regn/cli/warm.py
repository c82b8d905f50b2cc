"""A warm service: one background ``regn serve`` holding a map, which the
query commands (``regn path``, ``regn raycast``) ask instead of loading it.

A process that loads a map pays for Python's, numpy's and numba's imports
and numba's target set-up before its first answer (about 1.5–2 s on a
2-core machine, cache warm); a shell script asking many single queries pays
it each time. ``regn serve MAP --background`` starts a service that holds
MAP, its query structures and its kernels, listening on a Unix socket, and
returns once it answers. While it runs, ``regn path MAP ...`` finds its
socket, sends the query as one JSON line (the protocol of ``regn serve``)
and prints the answer exactly as it would have printed its own; it imports
neither numpy nor numba. Without a service (none started, stopped, exited
after ``--idle`` seconds without a request, or ``REGN_WARM=0``) the command
answers in its own process as before.

A map asked twice within :data:`AUTO_AFTER` seconds by commands that each
had to load it is kept warm without being asked (:func:`after_cold_query`):
the second command starts its service in the background after answering,
so a shell loop of queries pays the start-up twice and then 0.07 s a query,
while a single query leaves no process behind. The service started this
way exits after :data:`AUTO_IDLE` idle seconds. ``REGN_WARM=manual`` uses
running services but never starts one; ``REGN_WARM=0`` neither.

The socket is found by the map alone: its name is a hash of the map's real
path, device, inode, size and modification time, so a rewritten map is not
answered by the service of its old contents. Sockets live in a directory
only this user can enter (``$XDG_RUNTIME_DIR/regn``, else
``/tmp/regn-UID``); one owned by someone else or open to others is not
used.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import stat
import sys
import time

from ..errors import QueryError, RegnError

#: seconds a background service waits for a request before it exits
DEFAULT_IDLE = 900
#: a Unix socket's path holds at most 107 bytes: the directory's share
_LONGEST_DIR = 107 - len("/") - 24 - len(".sock")
#: seconds ``--background`` waits for the service to load its map
START_TIMEOUT = 600
#: a second cold query of a map within this many seconds starts its service
AUTO_AFTER = 60.0
#: seconds without a request before a service started that way exits
AUTO_IDLE = 300.0
#: seconds a service started that way has to answer before another may be started
AUTO_GRACE = 120.0


def runtime_dir(create=False):
    """This user's directory of warm-service sockets, or None when it is
    missing (and not ``create``) or not private to this user."""
    if not hasattr(os, "getuid") or not hasattr(socket, "AF_UNIX"):
        return None                   # (Windows: no private socket directory; no services)
    base = os.environ.get("XDG_RUNTIME_DIR")
    uid = os.getuid()
    where = os.path.join(base, "regn") if base and os.path.isdir(base) else ""
    if not where or len(where) > _LONGEST_DIR:       # a socket's path is short
        where = os.path.join("/tmp", f"regn-{uid}")
    if create:
        try:
            os.mkdir(where, 0o700)
        except FileExistsError:
            pass
    try:
        st = os.lstat(where)
    except OSError:
        return None
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != uid or st.st_mode & 0o077:
        return None
    return where


def _key(path):
    """The service name of map ``path``: a hash of what identifies its
    contents (None when it cannot be read)."""
    try:
        real = os.path.realpath(path)
        st = os.stat(real)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    ident = f"{real}\0{st.st_dev}\0{st.st_ino}\0{st.st_size}\0{st.st_mtime_ns}"
    return hashlib.sha256(ident.encode()).hexdigest()[:24]


def _beside(where, suffix):
    """The file of the service on socket ``where`` with ``suffix`` (its log,
    its markers)."""
    return where[:-len(".sock")] + suffix


def socket_path(path, create=False):
    """Where the warm service of map ``path`` listens (None: no usable place)."""
    key = _key(path)
    where = runtime_dir(create) if key else None
    return os.path.join(where, key + ".sock") if where else None


def enabled() -> bool:
    """Whether the commands ask running services (``REGN_WARM`` is not 0)."""
    return os.environ.get("REGN_WARM", "1") != "0"


def auto_enabled() -> bool:
    """Whether a repeated cold query starts a service (``REGN_WARM`` unset or 1)."""
    return os.environ.get("REGN_WARM", "1") == "1"


def ask(path, request):
    """The warm service's answer (a dict, without ``id``) to ``request``, or
    None when no service holds map ``path``. An error answer raises
    :class:`QueryError` with the service's message, as the query would
    have raised in this process."""
    if not enabled():
        return None
    return _ask_socket(socket_path(path), request)


def running() -> list:
    """The status documents of this user's running warm services (``file``,
    ``pid``, ``up_seconds``, ``idle_exit``, ``answered``, and ``socket``)."""
    where = runtime_dir()
    if where is None:
        return []
    docs = []
    for name in sorted(os.listdir(where)):
        if name.endswith(".sock"):
            try:
                doc = _ask_socket(os.path.join(where, name), {"query": "status"})
            except QueryError:
                doc = None
            if doc is not None:
                docs.append(dict(doc, socket=os.path.join(where, name)))
    return docs


def _ask_socket(where, request):
    """:func:`ask`, of the service listening at ``where``."""
    if where is None or not os.path.exists(where):
        return None
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.connect(where)
            s.sendall(json.dumps(request).encode() + b"\n")
            s.shutdown(socket.SHUT_WR)
            data = b""
            while not data.endswith(b"\n"):
                chunk = s.recv(1 << 16)
                if not chunk:
                    break
                data += chunk
    except OSError:                 # gone (or going): answer here instead
        return None
    try:
        doc = json.loads(data)
    except ValueError:
        return None
    if "error" in doc:
        raise QueryError(doc["error"])
    doc.pop("id", None)
    return doc


def status(path):
    """The warm service's status document for map ``path`` (None: none runs;
    whatever ``REGN_WARM`` says, which is for the query commands)."""
    try:
        return _ask_socket(socket_path(path), {"query": "status"})
    except QueryError:
        return None


def stop(path) -> bool:
    """Stop the warm service of map ``path``; whether one was running."""
    return _stop(status(path), socket_path(path))


def stop_all() -> list:
    """Stop every running warm service of this user, and those a repeated
    query has started that are still loading; their status documents."""
    docs = running()
    stopped = [doc for doc in docs if _stop(doc, doc["socket"])]
    for doc in loading():
        try:
            os.kill(doc["pid"], 15)
        except OSError:
            continue
        for name in (doc["socket"], _beside(doc["socket"], ".starting")):
            if os.path.exists(name):
                os.unlink(name)
        stopped.append(doc)
    return stopped


def loading() -> list:
    """The services a repeated query started (:func:`after_cold_query`)
    that do not answer yet: ``{"pid", "file", "socket", "loading": True}``
    each, from their markers (younger than :data:`AUTO_GRACE`, their
    process alive and a ``regn serve``)."""
    where = runtime_dir()
    if where is None:
        return []
    out, now = [], time.time()
    for name in sorted(os.listdir(where)):
        if not name.endswith(".starting"):
            continue
        marker = os.path.join(where, name)
        sock = marker[:-len(".starting")] + ".sock"
        try:
            with open(marker, encoding="utf-8") as f:
                doc = json.loads(f.read())
            pid = int(doc["pid"])
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if now - _mtime(marker) > AUTO_GRACE or not _is_service(pid) or \
                _ask_socket(sock, {"query": "status"}) is not None:
            continue
        out.append({"pid": pid, "file": doc.get("file"), "socket": sock, "loading": True})
    return out


def _is_service(pid) -> bool:
    """Is process ``pid`` alive and (where the system says) a ``regn serve``?"""
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            args = f.read().split(b"\0")
    except OSError:
        return True                 # no /proc: alive is all there is to know
    return b"regn" in args and b"serve" in args


def _stop(doc, where) -> bool:
    if doc is None:
        return False
    try:
        os.kill(int(doc["pid"]), 15)
    except (OSError, KeyError, ValueError):
        return False
    for _ in range(200):                 # until it has removed its socket
        if where is None or not os.path.exists(where):
            break
        time.sleep(0.05)
    return True


def start(path, idle=DEFAULT_IDLE, workers=None, say=None):
    """Start a background service for map ``path`` (unless one runs) and
    wait until it answers; its socket path. ``say(text)`` reports progress."""
    where = socket_path(path, create=True)
    if where is None:
        raise RegnError(f"serve --background: {path}: no private directory for the "
                        "service's socket (check $XDG_RUNTIME_DIR or /tmp)")
    if status(path) is not None:
        return where
    if os.path.exists(where):             # a service that died: its socket stays
        os.unlink(where)
    log = _beside(where, ".log")
    child = _spawn(path, where, idle, workers)
    t0 = time.monotonic()
    while status(path) is None:
        if child.poll() is not None:
            raise RegnError(_failure(path, log))
        if time.monotonic() - t0 > START_TIMEOUT:
            child.kill()
            raise RegnError(f"serve --background: {path}: the service did not answer "
                            f"within {START_TIMEOUT} s (its log: {log})")
        if say:
            say(f"loading {path} ({time.monotonic() - t0:.0f} s)")
        time.sleep(0.1)
    return where


def _spawn(path, where, idle, workers=None):
    """The service process for map ``path`` on socket ``where``, detached:
    a session of its own, no terminal, stdin and stdout closed, stderr to
    its log (a caller capturing this command's output does not wait for
    it)."""
    import subprocess
    cmd = [sys.executable, "-m", "regn", "serve", path, "--unix", where,
           "--idle", repr(float(idle))]
    if workers is not None:
        cmd += ["--workers", str(workers)]
    with open(_beside(where, ".log"), "wb") as err:
        return subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=err, start_new_session=True, close_fds=True)


def after_cold_query(path, say=None) -> bool:
    """After a command answered a query on map ``path`` in its own process:
    remember when, and when the previous such query of the map was less
    than :data:`AUTO_AFTER` seconds ago, start the map's service in the
    background (not waiting for it) so that the next query is answered
    warm. ``say(text)`` tells a terminal. Whether a service was started."""
    if not auto_enabled():
        return False
    where = socket_path(path, create=True)
    if where is None:
        return False
    asked, starting = _beside(where, ".asked"), _beside(where, ".starting")
    now = time.time()
    if now - _mtime(starting) < AUTO_GRACE:          # one is loading already
        return False
    if now - _mtime(asked) > AUTO_AFTER:
        try:
            with open(asked, "wb"):
                pass
            os.utime(asked)
        except OSError:
            pass
        return False
    try:                        # only one of two commands racing here wins the rename
        os.rename(asked, starting)
        os.utime(starting)
        child = _spawn(path, where, AUTO_IDLE)
        with open(starting, "w", encoding="utf-8") as f:   # for --list and --stop-all
            f.write(json.dumps({"pid": child.pid, "file": path}))
    except OSError:
        return False
    if say:
        say(f"keeping {path} warm for the next queries (a service that exits after "
            f"{AUTO_IDLE:g} s without one; 'regn serve {path} --stop' stops it, "
            "REGN_WARM=0 turns this off)")
    return True


def _mtime(path) -> float:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return float("-inf")


def _failure(path, log):
    """The service's own error line from its log (it exited before answering)."""
    try:
        with open(log, encoding="utf-8", errors="replace") as f:
            lines = [ln.strip() for ln in f if ln.strip()]
    except OSError:
        lines = []
    said = next((ln[len("regn: "):] for ln in reversed(lines) if ln.startswith("regn: ")),
                lines[-1] if lines else "it exited before answering")
    return f"serve --background: {said}"


# --- the service's side ------------------------------------------------------------
def serve_unix(service, where, limit, idle, answer_stream):
    """Answer requests on a Unix socket at ``where`` until no request came
    for ``idle`` seconds (or SIGTERM). The socket is bound under a temporary
    name and renamed into place once the service is ready, so a client
    never meets a service still loading; it is removed on the way out."""
    import socketserver
    import threading

    class Handler(socketserver.StreamRequestHandler):
        def handle(self):
            with lock:
                active[0] += 1
            try:
                answer_stream(self.server.service, self.rfile, self.wfile.write, limit)
            except OSError:
                pass                      # the client went away
            finally:
                with lock:
                    active[0] -= 1
                    last[0] = time.monotonic()

    lock, active, last = threading.Lock(), [0], [time.monotonic()]
    tmp = os.path.join(os.path.dirname(where), f"{os.getpid()}.tmp")
    server = socketserver.ThreadingUnixStreamServer(tmp, Handler)
    server.daemon_threads = True
    server.service = service
    os.chmod(tmp, 0o600)
    os.replace(tmp, where)
    ino = os.stat(where).st_ino

    def watch():
        while True:
            time.sleep(min(1.0, idle / 4))
            with lock:
                quiet = active[0] == 0 and time.monotonic() - last[0] > idle
            if quiet:
                server.shutdown()
                return

    threading.Thread(target=watch, daemon=True).start()
    try:
        serve_until_stopped(server)
    finally:
        try:
            if os.stat(where).st_ino == ino:      # still ours (not a newer service's)
                os.unlink(where)
                if os.path.exists(_beside(where, ".starting")):
                    os.unlink(_beside(where, ".starting"))
                log = _beside(where, ".log")
                if os.path.getsize(log) == 0:     # nothing went wrong: no log to keep
                    os.unlink(log)
        except OSError:
            pass


def serve_until_stopped(server):
    """``server.serve_forever()`` until it is shut down, Ctrl-C or SIGTERM;
    the server closed after."""
    import signal

    def stop(*_):
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, stop)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
