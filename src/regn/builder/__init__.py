"""Builders: a REGN mesh from a tetrahedral mesh, and from the world's obstacles."""
