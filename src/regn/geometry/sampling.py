"""Points spread evenly over the unit sphere."""

from __future__ import annotations

import numpy as np

#: The golden angle, radians: the turn between successive Fibonacci points.
GOLDEN_ANGLE = np.pi * (3 - np.sqrt(5))


def fibonacci_sphere(n, phase=0.0) -> np.ndarray:
    """(n,3) unit vectors of the Fibonacci sphere: heights evenly spaced
    from pole to pole, each point turned by the golden angle from the last
    (then all by ``phase`` radians about the z axis)."""
    i = np.arange(n) + 0.5
    z = 1 - 2 * i / n
    rho = np.sqrt(np.maximum(0.0, 1 - z * z))
    theta = GOLDEN_ANGLE * i + phase
    return np.stack([rho * np.cos(theta), rho * np.sin(theta), z], axis=1)
