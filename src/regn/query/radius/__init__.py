"""Agents with a radius: each portal's clearance and the sphere's path
search, the smoother that keeps a sphere clear of the walls, and the
positions where a sphere fits."""
