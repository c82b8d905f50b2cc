"""The README's code runs as written, and so does the guide's (docs/guide.md).

Every fenced block is found by parsing README.md and then docs/guide.md, so a
block added later is tested without touching this file:

* ```sh blocks: every ``regn …`` command (a line may chain commands with
  ``&&``; the other ones, such as ``pip install -e .``, set up the environment
  this suite already runs in) must exit 0. They run once, in document order, in
  one empty temporary folder: the first through the installed ``regn`` script
  (what ``pip install -e .`` puts on PATH), the others one after another in one
  more process through the same entry point (``regn.cli.main``), so that the
  suite pays numba's start-up twice, not once a command. (Each command as its
  own process is what the CLI tests elsewhere do.)
* ```python blocks: each runs on its own, as the ``__main__`` module in a fresh
  namespace, in that same folder after the commands, so a block may use the
  files the README's commands wrote (the quick start's ``regn-demo/demo.rgn``)
  and nothing else: this test provides no file of its own. The blocks run in
  the process of the commands after the first (``sys.modules`` is what the
  commands and one block's imports leave, not their names).

The README's test command (the sh block that runs pytest) is what ``.ci/run``
runs, verbatim.
"""

import os
import re
import shlex
import shutil
import subprocess
import sys

import pytest
from conftest import RUN_COMMANDS, run_json_runner

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
README = os.path.join(ROOT, "README.md")
GUIDE = os.path.join(ROOT, "docs", "guide.md")


def fenced_blocks(path=README):
    """[(language, first line number of the code, code)] of every fenced block."""
    blocks, lang, start, body = [], None, 0, []
    with open(path, encoding="utf-8") as fh:
        for number, line in enumerate(fh, 1):
            fence = re.match(r"^\s*```(\S*)\s*$", line)
            if fence and lang is None:
                lang, start, body = fence.group(1), number + 1, []
            elif fence:
                blocks.append((lang, start, "".join(body)))
                lang = None
            elif lang is not None:
                body.append(line)
    assert lang is None, f"{path}: the block opened at line {start - 1} is never closed"
    return blocks


def shell_commands(code):
    """The commands of a shell block: continuation lines joined, comments dropped,
    ``&&`` chains split."""
    commands = []
    for line in code.replace("\\\n", " ").splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            commands += [c.strip() for c in line.split("&&")]
    return commands


BLOCKS = fenced_blocks()
#: (document, line, code) of both documents' blocks, the README's first
DOC_BLOCKS = [("README.md", lang, line, code) for lang, line, code in BLOCKS] + \
    [("docs/guide.md", lang, line, code) for lang, line, code in fenced_blocks(GUIDE)]
REGN_COMMANDS = [(f"{doc}:{line}", cmd) for doc, lang, line, code in DOC_BLOCKS
                 if lang == "sh" for cmd in shell_commands(code) if cmd.split()[0] == "regn"]
PYTHON_BLOCKS = [(f"{doc}:{line}", code) for doc, lang, line, code in DOC_BLOCKS
                 if lang == "python"]


def regn_argv(command):
    """argv for a README ``regn …`` command: the installed ``regn`` script of
    this interpreter's environment (what ``pip install -e .`` puts on PATH)."""
    script = shutil.which("regn", path=os.path.dirname(sys.executable))
    head = [script] if script else [sys.executable, "-c",
                                    "import sys; from regn.cli import entry; "
                                    "sys.argv[0] = 'regn'; entry()"]
    return head + shlex.split(command)[1:]


#: Runs the commands and then the Python blocks given as JSON
#: (``{"commands": [argv...], "blocks": [code...]}``), each block in a fresh
#: ``__main__`` namespace (its own prints go to this process's stdout);
#: writes ``{"commands": [[status, stdout, stderr]...], "blocks": [None or
#: the traceback...]}`` to the file named by its argument.
README_RUNNER = RUN_COMMANDS + """
import traceback
todo = json.loads(sys.stdin.read())
done = {"commands": run_commands(todo["commands"]), "blocks": []}
for code in todo["blocks"]:
    try:
        exec(compile(code, "<block>", "exec"), {"__name__": "__main__"})
        done["blocks"].append(None)
    except BaseException:
        done["blocks"].append(traceback.format_exc())
with open(sys.argv[1], "w") as f:
    json.dump(done, f)
"""


@pytest.fixture(scope="module")
def readme_run(tmp_path_factory):
    """An empty folder in which every README ``regn`` command has run, in
    order, then every Python block; -> (folder, {command: (exit status,
    stdout, stderr)}, {where: None or the block's traceback})."""
    folder = tmp_path_factory.mktemp("readme")
    commands = [command for _, command in REGN_COMMANDS]
    first = subprocess.run(regn_argv(commands[0]), cwd=folder, capture_output=True,
                           text=True, stdin=subprocess.DEVNULL)
    runs = {commands[0]: (first.returncode, first.stdout, first.stderr)}
    done = run_json_runner(README_RUNNER, {
        "commands": [shlex.split(c)[1:] for c in commands[1:]],
        "blocks": [code for _, code in PYTHON_BLOCKS]}, folder)
    runs.update(zip(commands[1:], map(tuple, done["commands"])))
    return folder, runs, dict(zip([where for where, _ in PYTHON_BLOCKS], done["blocks"]))


def test_the_readme_has_code_to_run():
    assert REGN_COMMANDS and PYTHON_BLOCKS


@pytest.mark.parametrize("line,command", REGN_COMMANDS,
                         ids=[where for where, _ in REGN_COMMANDS])
def test_readme_regn_command_exits_0(readme_run, line, command):
    code, out, err = readme_run[1][command]
    assert code == 0, f"{line}: `{command}` exited {code}:\n{out}\n{err}"


@pytest.mark.parametrize("line,code", PYTHON_BLOCKS,
                         ids=[where for where, _ in PYTHON_BLOCKS])
def test_readme_python_block_runs(readme_run, line, code):
    failure = readme_run[2][line]
    assert failure is None, f"{line}: the Python block failed:\n{failure}"


def test_ci_runs_the_readme_test_command_verbatim():
    test_lines = [cmd_line for lang, _, code in BLOCKS if lang == "sh"
                  for cmd_line in code.splitlines() if "pytest" in cmd_line]
    assert len(test_lines) == 1, test_lines
    with open(os.path.join(ROOT, ".ci", "run"), encoding="utf-8") as fh:
        ci_lines = [line.strip() for line in fh]
    assert test_lines[0].strip() in ci_lines
