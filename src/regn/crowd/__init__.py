"""Crowds of flying agents: path corridors, reciprocal avoidance (ORCA in
3D) and walls, every tick (:class:`regn.crowd.crowd.Crowd`)."""
