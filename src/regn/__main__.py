"""``python -m regn``: the command line, as the ``regn`` script runs it."""

from .cli import entry

entry()
