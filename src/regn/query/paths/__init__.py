"""Paths for a point: the bidirectional A* (``find_path``), its landmark
bounds, the corridor smoother and waypoint polish, batches (``find_paths``),
cost fields, partial paths and ``QueryFilter`` blockers."""
