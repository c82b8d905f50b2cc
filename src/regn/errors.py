"""The one error tree of regn.

Everything the library raises on purpose derives from :class:`RegnError`, so a
caller (and the CLI) can catch one class. Format errors carry the file name and
the byte offset of what was wrong, and ``str(err)`` is the one line the CLI
prints.
"""

from __future__ import annotations


class RegnError(Exception):
    """Base class of every error regn raises on purpose."""


class FormatError(RegnError, ValueError):
    """The bytes are not a readable REGN (or POF0-relocated) object.

    ``offset`` is the object-relative byte offset of the offending field, or
    ``None`` when the problem is not at one place (an empty file, say).
    """

    def __init__(self, message: str, *, offset: int | None = None,
                 path: str | None = None, section: str | None = None):
        self.message = message
        self.offset = offset
        self.path = path
        self.section = section
        super().__init__(self._render())

    def _render(self) -> str:
        parts = []
        if self.path:
            parts.append(str(self.path))
        if self.offset is not None:
            parts.append(f"offset {self.offset:#x}")
        where = f"{self.section}: " if self.section else ""
        parts.append(where + self.message)
        return ": ".join(parts)

    def with_path(self, path) -> "FormatError":
        """The same error, naming the file it came from."""
        return FormatError(self.message, offset=self.offset, path=str(path),
                           section=self.section)


class LimitError(RegnError, ValueError):
    """A mesh does not fit the format: a u16 count (or another limit) is exceeded.

    ``what`` names the count (``"faces"``, ``"cell references"`` ...) and
    ``count`` how many were needed, when known.
    """

    def __init__(self, message: str, *, what: str | None = None, count: int | None = None):
        super().__init__(message)
        self.what = what
        self.count = count


class BuildError(RegnError, ValueError):
    """The input to a builder is not a valid tetrahedral mesh (or obstacle set)."""


class QueryError(RegnError, ValueError):
    """A query got input it cannot answer (wrong shape, wrong mask length...)."""


class ExportError(RegnError):
    """An export or picture could not be written (unknown extension, bad path)."""
