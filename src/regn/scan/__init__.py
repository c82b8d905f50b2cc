"""Find POF0-relocated objects in arbitrary blobs, infer chunk layouts, diff meshes."""

from .finder import Found, scan  # noqa: F401
