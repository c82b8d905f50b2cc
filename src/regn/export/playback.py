"""Trajectory playback in the HTML view (``regn view --trajectories``):
the agents as markers, a frame per shown step, a time slider and
play / pause buttons (plotly animation frames)."""

from __future__ import annotations

import numpy as np

from ..errors import ExportError

#: at most this many frames (steps are sampled evenly beyond)
MAX_FRAMES = 300


def load_trajectories(path):
    """(positions (T+1,N,3), dt) from a ``regn fly`` .npz; ExportError
    naming the file otherwise."""
    from .._atomic import note_input
    try:
        with np.load(path, allow_pickle=False) as z:
            pos = np.asarray(z["positions"], dtype=np.float64)
            dt = float(z["dt"]) if "dt" in z else 1.0
    except (OSError, ValueError, KeyError) as e:
        raise ExportError(f"{path}: not a trajectory .npz with 'positions' ({e})") from None
    note_input(path)
    if pos.ndim != 3 or pos.shape[2] != 3 or pos.shape[0] == 0:
        raise ExportError(f"{path}: positions must be (T+1, N, 3), got {pos.shape}")
    return pos, dt


def add_playback(fig, positions, dt, per_unit):
    """Add the agents' markers, a frame per shown step, a time slider and
    play / pause to plotly figure ``fig`` (coordinates divided by
    ``per_unit``, the metres per unit of its axes)."""
    import plotly.graph_objects as go
    T1 = len(positions)
    shown = np.unique(np.linspace(0, T1 - 1, min(T1, MAX_FRAMES)).round().astype(int))
    q = positions / per_unit

    def marks(k):
        return go.Scatter3d(x=q[k, :, 0], y=q[k, :, 1], z=q[k, :, 2], mode="markers",
                            marker={"size": 3, "color": "crimson"},
                            name=f"{q.shape[1]} agents")
    fig.add_trace(marks(0))
    idx = len(fig.data) - 1
    fig.frames = [go.Frame(data=[marks(k)], traces=[idx], name=str(k)) for k in shown]
    play = {"frame": {"duration": 60, "redraw": True}, "fromcurrent": True, "mode": "immediate",
                "transition": {"duration": 0}}
    fig.update_layout(
        updatemenus=[{"type": "buttons", "direction": "left", "x": 0.02, "y": 0.02, "xanchor": "left",
                          "yanchor": "bottom", "showactive": False,
                          "buttons": [{"label": "play", "method": "animate", "args": [None, play]},
                                   {"label": "pause", "method": "animate",
                                        "args": [[None], {"mode": "immediate",
                                                           "frame": {"duration": 0,
                                                                      "redraw": False}}]}]}],
        sliders=[{"x": 0.15, "y": 0.02, "len": 0.8, "currentvalue": {"prefix": "t = "},
                      "steps": [{"label": f"{k * dt:g} s", "method": "animate",
                                  "args": [[str(k)], {"mode": "immediate",
                                                       "frame": {"duration": 0, "redraw": True}}]}
                             for k in shown]}])
