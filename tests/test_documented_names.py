"""Every dotted ``regn…`` name the README and docs/ mention exists: a module
imports, an attribute is found on it (so a move of the code cannot leave the
documentation pointing nowhere)."""

import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
NAME = re.compile(r"`(regn(?:\.[A-Za-z_][A-Za-z0-9_]*)+)")
#: file names that look like dotted names (regn.ksy, regn.bt ...)
FILE_SUFFIXES = {"ksy", "bt", "hexpat", "rgn", "json", "csv", "npz", "md", "py"}


def documented_names():
    found = {}
    for doc in DOCS:
        for n, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1):
            for m in NAME.finditer(line):
                if m.group(1).rpartition(".")[2] in FILE_SUFFIXES:
                    continue
                found.setdefault(m.group(1), f"{doc.relative_to(ROOT)}:{n}")
    return sorted(found.items())


def resolve(dotted):
    """The object a dotted name names: the longest importable module prefix,
    then attributes."""
    parts = dotted.split(".")
    for k in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:k]))
        except ModuleNotFoundError:
            continue
        for attr in parts[k:]:
            obj = getattr(obj, attr)
        return obj
    raise ModuleNotFoundError(dotted)


NAMES = documented_names()


def test_the_docs_name_code():
    assert len(NAMES) > 20


@pytest.mark.parametrize("dotted,where", NAMES, ids=[n for n, _ in NAMES])
def test_documented_name_exists(dotted, where):
    try:
        resolve(dotted)
    except (ImportError, AttributeError) as exc:
        pytest.fail(f"{where}: `{dotted}` does not exist ({exc})")
