"""Writes over what is not ours (issue 21): no command writes over one of its
inputs; an existing output needs --force; a symbolic link is written through;
a device, a FIFO or /dev/stdout is written directly, never replaced."""

import os
import stat
import subprocess
import sys
import threading

import pytest

import regn
from regn.cli import main

from conftest import random_map


@pytest.fixture(scope="module")
def map_bytes():
    return random_map(30, seed=6, dims=(2, 2, 2)).dumps()


@pytest.fixture
def rgn(tmp_path, map_bytes):
    path = tmp_path / "in.rgn"
    path.write_bytes(map_bytes)
    return path


def _refused(capsys, code, *needles):
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert code == 2 and len(lines) == 1 and lines[0].startswith("regn: "), err
    for needle in needles:
        assert needle in lines[0], lines[0]


@pytest.mark.parametrize("argv", [
    ["export", "{x}.npz", "{x}.npz", "--force"],
    ["render", "{x}.png", "-o", "{x}.png", "--force", "--view", "grid"],
    ["view", "{x}.html", "-o", "{x}.html", "--force"],
    ["render", "{rgn}", "-o", "{x}.png", "--points", "{x}.png", "--force"],
])
def test_no_command_writes_over_its_input(rgn, tmp_path, capsys, argv):
    """Even with --force, and through a second name (hard link) or a symlink."""
    x = str(tmp_path / "t")
    for ext in (".npz", ".png", ".html"):
        os.link(rgn, x + ext)
    before = rgn.read_bytes()
    _refused(capsys, main([a.format(x=x, rgn=rgn) for a in argv]), "is the input file")
    assert rgn.read_bytes() == before


def test_input_reached_through_a_link_is_not_replaced(rgn, tmp_path, capsys):
    link = tmp_path / "link.rgn"
    link.symlink_to(rgn)
    before = rgn.read_bytes()
    _refused(capsys, main(["rewrite", str(rgn), str(link), "--force"]), "is the input file")
    spheres = tmp_path / "s.csv"
    spheres.write_text("0,0,0,100\n")
    code = main(["build", "--box", "-1e3", "-1e3", "-1e3", "1e3", "1e3", "1e3",
                 "--spheres", str(spheres), "-o", str(spheres), "--force",
                 "--coverage-samples", "0"])
    _refused(capsys, code, "is the input file")
    assert spheres.read_text() == "0,0,0,100\n" and rgn.read_bytes() == before


def test_library_save_over_a_loaded_file_is_allowed(rgn):
    """The rule is the CLI's: a program may save a map over the file it loaded."""
    mesh = regn.load(rgn)
    regn.save(mesh, rgn, byte_order="<")
    assert regn.load(rgn).byte_order == "<"


@pytest.mark.parametrize("argv", [
    ["build", "--asteroids", "3", "--coverage-samples", "0", "-o", "{out}.rgn"],
    ["rewrite", "{rgn}", "{out}.rgn"],
    ["export", "{rgn}", "{out}.vtu"],
    ["render", "{rgn}", "-o", "{out}.png", "--view", "grid"],
    ["view", "{rgn}", "-o", "{out}.html"],
])
def test_an_output_in_a_missing_folder_is_refused_before_any_work(rgn, tmp_path, capsys,
                                                                  argv, monkeypatch):
    import regn.builder.generate as generate
    monkeypatch.setattr(generate, "generate", None)   # building would fail differently
    out = tmp_path / "no-such-folder" / "x"
    _refused(capsys, main([a.format(out=out, rgn=rgn) for a in argv]),
             "cannot write: directory", "does not exist")
    assert not out.parent.exists()


@pytest.mark.parametrize("command", ["render", "view"])
def test_pictures_need_force_to_replace(rgn, tmp_path, capsys, command):
    out = tmp_path / ("a.png" if command == "render" else "a.html")
    out.write_text("mine")
    argv = [command, str(rgn), "-o", str(out)] + (["--view", "grid"] if command == "render"
                                                   else [])
    _refused(capsys, main(argv), "exists; pass --force")
    assert out.read_text() == "mine"
    assert main(argv + ["--force"]) == 0
    assert out.read_bytes() != b"mine"


@pytest.mark.parametrize("name", ["demo.rgn", "demo.png", "hangar.obj", "caves.npy", "agents.csv"])
def test_demo_needs_force_to_replace(tmp_path, capsys, name):
    """regn demo refuses an existing output before doing any work."""
    (tmp_path / name).write_text("mine")
    _refused(capsys, main(["demo", str(tmp_path)]), "exists; pass --force")
    assert (tmp_path / name).read_text() == "mine"
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]


def test_a_symlink_output_is_written_through(rgn, tmp_path, capsys, map_bytes):
    target = tmp_path / "sub" / "target.rgn"
    target.parent.mkdir()
    target.write_bytes(b"old")
    link = tmp_path / "LINK"
    link.symlink_to(target)
    _refused(capsys, main(["rewrite", str(rgn), str(link)]), "exists; pass --force")
    assert main(["rewrite", str(rgn), str(link), "--force"]) == 0
    assert link.is_symlink() and target.read_bytes() == map_bytes
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]
    dangling = tmp_path / "dangling"
    dangling.symlink_to(tmp_path / "new.rgn")
    assert main(["rewrite", str(rgn), str(dangling)]) == 0
    assert dangling.is_symlink() and (tmp_path / "new.rgn").read_bytes() == map_bytes


def test_stdout_is_written_not_replaced(rgn, tmp_path, map_bytes):
    """/dev/stdout redirected to a file, appended with >>, and to a pipe: the
    bytes arrive, /dev/stdout stays the link it was."""
    code = ("import sys; from regn.cli import main; "
            f"sys.exit(main(['rewrite', {str(rgn)!r}, '/dev/stdout', '--force']))")
    before = os.lstat("/dev/stdout")
    out = tmp_path / "out.rgn"
    with open(out, "wb") as fh:
        subprocess.run([sys.executable, "-c", code], stdout=fh, check=True)
    with open(out, "ab") as fh:
        subprocess.run([sys.executable, "-c", code], stdout=fh, check=True)
    assert out.read_bytes() == map_bytes * 2
    piped = subprocess.run([sys.executable, "-c", code], capture_output=True, check=True)
    assert piped.stdout == map_bytes
    after = os.lstat("/dev/stdout")
    assert stat.S_ISLNK(after.st_mode) and after.st_ino == before.st_ino


def _char_device(path, major, minor):
    """A device node like /dev/full (1, 7) or /dev/null (1, 3) in a test
    folder, so that a regression replaces that node, not the system's."""
    try:
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(major, minor))
    except PermissionError:
        pytest.skip("creating a device node needs CAP_MKNOD")
    return path


def test_a_device_is_written_not_replaced(rgn, tmp_path, capsys):
    full = _char_device(tmp_path / "full", 1, 7)
    null = _char_device(tmp_path / "null.vtu", 1, 3)
    _refused(capsys, main(["rewrite", str(rgn), str(full), "--force"]),
             "No space left on device")
    # a stream needs no --force; meshio's writer goes through a temporary file
    assert main(["rewrite", str(rgn), str(null)]) == 0
    assert main(["export", str(rgn), str(null)]) == 0
    for dev in (full, null):
        assert stat.S_ISCHR(os.lstat(dev).st_mode)
    assert sorted(os.listdir(tmp_path)) == ["full", "in.rgn", "null.vtu"]


def test_a_fifo_is_written_not_replaced(rgn, tmp_path, map_bytes):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    assert main(["rewrite", str(rgn), str(fifo)]) == 0
    reader.join(10)
    assert got == [map_bytes] and stat.S_ISFIFO(os.lstat(fifo).st_mode)
