"""The interactive HTML view: its page, its layers and legend, and — in a real
headless Chromium — a screenshot in which the path's pixels are measured."""

import os
import re
import shutil
import subprocess

import numpy as np
import pytest

from regn.cli import main
from regn.export.render import GOAL_COLOUR, PATH_COLOUR, START_COLOUR

CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if os.path.exists(
    "/usr/bin/chromium") else None)
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="chromium is not installed (apt-get install chromium; "
                             ".ci/run installs it): the browser checks of the view cannot run")


@pytest.fixture(scope="module")
def field(tmp_path_factory):
    """The demo asteroid field (40 asteroids in a 100 km cube), saved."""
    import regn
    from regn.builder.generate import demo_field, generate
    bbox, obstacles = demo_field(seed=0)
    mesh = generate(bbox, obstacles, dims=(10, 10, 10), seed=0, coverage_samples=1000)
    path = tmp_path_factory.mktemp("field") / "demo.rgn"
    regn.save(mesh, path)
    return regn.load(path)


@pytest.fixture(scope="module")
def corner_path(field):
    """Free points near two opposite corners: a path along the box diagonal,
    the direction plotly's default camera looks along (issue 20)."""
    pts = field.random_points(4000, seed=1)
    a = pts[np.argmin(np.linalg.norm(pts - field.bbox_min, axis=1))]
    b = pts[np.argmin(np.linalg.norm(pts - field.bbox_max, axis=1))]
    return a, b


def _traces(fig):
    return {t.name.split(" ")[0].rstrip(":"): t for t in fig.data}


def test_layers_legend_and_colours(field, corner_path):
    from regn.export.view import figure
    fig = figure(field, path=corner_path)
    traces = _traces(fig)
    # one legend entry (a click toggles it) per layer
    for layer in ("obstacles", "box", "grid", "corridor", "path", "start", "goal"):
        assert layer in traces, sorted(traces)
        assert traces[layer].showlegend is not False
    assert traces["grid"].visible == "legendonly"
    assert traces["corridor"].visible == "legendonly"
    assert fig.layout.legend.itemclick in (None, "toggle")
    # the start and the goal are separate traces, each one colour, distinct, so
    # the legend's markers are the drawn ones
    start, goal = traces["start"], traces["goal"]
    assert start.marker.color == START_COLOUR and goal.marker.color == GOAL_COLOUR
    assert len({START_COLOUR, GOAL_COLOUR, PATH_COLOUR}) == 3
    assert traces["path"].line.color == PATH_COLOUR
    np.testing.assert_allclose([start.x[0], start.y[0], start.z[0]],
                               np.asarray(corner_path[0]) / 1000)
    np.testing.assert_allclose([goal.x[0], goal.y[0], goal.z[0]],
                               np.asarray(corner_path[1]) / 1000)
    # the corridor: the edges of the tetrahedra the path crosses
    res = field.find_path(*corner_path)
    assert traces["corridor"].name.startswith(f"corridor ({len(res.tets)} tetrahedra)")


def test_walls_round_the_path_on_every_side_are_drawn_see_through(field, corner_path):
    """A level's interior is walled on every side: no camera sees its path,
    so its walls are drawn see-through (and the title says so); the open
    asteroid field keeps them opaque."""
    import regn
    from scipy.spatial import Delaunay

    from regn.export.view import SEE_THROUGH_OPACITY, figure
    h = 1000.0
    room = np.array([[x, y, z] for x in (-h, h) for y in (-h, h) for z in (-h, h)]) / 2
    mesh = regn.build(room, Delaunay(room).simplices, bbox=((-h,) * 3, (h,) * 3),
                      dims=(2, 2, 2))
    fig = figure(mesh, path=((-400.0, -400, -400), (400.0, 400, 400)))
    assert _traces(fig)["obstacles"].opacity == SEE_THROUGH_OPACITY
    assert "walls drawn see-through" in fig.layout.title.text
    # the notes on a second line: one long line ran under plotly's toolbar
    first, second = fig.layout.title.text.split("<br>")
    assert "tetrahedra" in first and "walls drawn see-through" in second
    flight = np.linspace((-400.0, -400, -400), (400.0, 400, 400), 5)[:, None, :]
    played = figure(mesh, trajectories=(flight, 1.0))
    assert _traces(played)["obstacles"].opacity == SEE_THROUGH_OPACITY
    assert _traces(figure(field, path=corner_path))["obstacles"].opacity in (None, 1)


def test_camera_looks_across_the_path(field, corner_path):
    """The eye looks across the path's main direction, not along it, from
    where the ends are not hidden."""
    from regn.export.view import figure
    fig = figure(field, path=corner_path)
    cam = fig.layout.scene.camera
    eye = np.array([cam.eye.x, cam.eye.y, cam.eye.z])
    centre = np.array([cam.center.x, cam.center.y, cam.center.z])
    chord = np.subtract(*corner_path[::-1])
    look = eye - centre
    cos = abs(look @ chord) / np.linalg.norm(look) / np.linalg.norm(chord)
    assert cos < 0.35, cos              # plotly's default (1,1,1) eye gives 0.99 here
    # the eye's world position sees both ends: no asteroid between
    size = float(np.max(field.bbox_max - field.bbox_min))
    mid = (field.bbox_min + field.bbox_max) / 2
    eye_world = mid + eye * size
    for end in corner_path:
        d = eye_world - end
        far = end + d * min(1.0, _box_exit(end, d, field.bbox_min, field.bbox_max) * 0.999)
        assert field.raycast(end, far).status == "clear"
    # camera=None keeps plotly's default; a dict is used as given
    assert figure(field, path=corner_path, camera=None).layout.scene.camera.eye.x is None
    mine = dict(eye=dict(x=2, y=0, z=0.5))
    assert figure(field, path=corner_path, camera=mine).layout.scene.camera.eye.x == 2


def _box_exit(p, d, lo, hi):
    with np.errstate(divide="ignore"):
        s = np.where(d > 0, (hi - p) / d, np.where(d < 0, (lo - p) / d, np.inf))
    return float(s.min())


def test_page_title_and_no_network(field, corner_path, tmp_path):
    out = tmp_path / "v.html"
    assert main(["view", str(field.path), "-o", str(out), "--path",
                 *map(str, np.concatenate(corner_path))]) == 0
    page = out.read_text()
    title = re.search(r"<title>([^<]*)</title>", page).group(1)
    assert title.startswith("demo.rgn: ") and "path " in title and " km" in title
    assert "<script src=\"http" not in page and "cdn.plot.ly" not in page.split("</script>")[-1]
    assert '"type":"mesh3d"' in page.replace(" ", "")
    assert '"visible":"legendonly"' in page.replace(" ", "")      # grid, corridor: hidden


# --- in the browser ----------------------------------------------------------------
def _chromium(page, *extra):
    """What a headless Chromium drawing ``page`` printed (stdout, stderr)."""
    profile = page.parent / f"profile-{page.stem}-{len(extra)}"
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
           "--no-first-run", "--disable-background-networking",
           "--disable-component-update", "--disable-sync", f"--user-data-dir={profile}",
           "--window-size=1000,800", "--virtual-time-budget=5000",
           "--enable-logging=stderr", *extra, page.as_uri()]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
    return r.stdout, r.stderr


def _screenshot(page):
    """(RGB image (H,W,3) int cut to the plot, stderr, DOM) of ``page``, from
    one browser start for both the screenshot and the DOM (a start costs
    about 10 CPU s on the 2-core VM, plotly.js and WebGL whatever the map; a
    Chromium that gives only the screenshot is asked again for the DOM)."""
    import matplotlib.image as mpimg
    shot = page.with_suffix(".png")
    dom, stderr = _chromium(page, f"--screenshot={shot}", "--dump-dom")
    assert shot.exists(), stderr[-2000:]
    if 'class="main-svg"' not in dom:
        dom = _chromium(page, "--dump-dom")[0]
    w, h = (int(float(x)) for x in re.search(
        r'<svg class="main-svg"[^>]* width="([\d.]+)" height="([\d.]+)"', dom).groups())
    img = (mpimg.imread(shot)[:, :, :3] * 255).round().astype(int)
    return img[:h, :w], stderr, dom


@pytest.fixture(scope="module")
def drawn(field, corner_path, tmp_path_factory):
    """The screenshots of the view of the corner path (``framed``), of the
    same path with plotly's default camera (``default``) and of the view
    without a path (``no_path``, written by the CLI)."""
    if CHROMIUM is None:
        pytest.skip("chromium is not installed")
    from regn.export.view import write_html
    where = tmp_path_factory.mktemp("browser")
    res = field.find_path(*corner_path)
    write_html(field, where / "framed.html", path=res)
    write_html(field, where / "default.html", path=res, camera=None)
    assert main(["view", str(field.path), "-o", str(where / "no_path.html")]) == 0
    return {name: _screenshot(where / f"{name}.html")
            for name in ("framed", "default", "no_path")}


def _pixels_of(img, colour, tol=40):
    """(ys, xs) of the pixels within ``tol`` of ``colour`` ('#rrggbb') in the
    scene, i.e. right of the legend's column and below the title."""
    from regn.export.view import SCENE_DOMAIN_X
    rgb = np.array([int(colour[k:k + 2], 16) for k in (1, 3, 5)])
    x0 = int(np.ceil(SCENE_DOMAIN_X[0] * img.shape[1]))
    near = np.abs(img - rgb).max(axis=2) <= tol
    near[:, :x0] = False
    near[:40] = False                              # the title's strip
    return np.nonzero(near)


def _span(ys, xs, img):
    """Share of the scene's width and height the pixels' bounding box spans."""
    from regn.export.view import SCENE_DOMAIN_X
    w = img.shape[1] * (SCENE_DOMAIN_X[1] - SCENE_DOMAIN_X[0])
    return (xs.max() - xs.min() + 1) / w, (ys.max() - ys.min() + 1) / (img.shape[0] - 40)


@needs_chromium
def test_view_frames_the_path_in_chromium(drawn):
    """The issue's case: a corner-to-corner path. Measured on the screenshot:
    the path's pixels span most of the scene, both end markers are visible and
    lie at the two ends of the path's pixels, the legend lists every layer; with
    plotly's default camera the same path is a short squiggle."""
    img, stderr, dom = drawn["framed"]
    errors = [ln for ln in stderr.splitlines()
              if "CONSOLE" in ln and ("Uncaught" in ln or "Error:" in ln)]
    assert not errors, errors
    ys, xs = _pixels_of(img, PATH_COLOUR)
    wide, tall = _span(ys, xs, img)
    assert len(xs) > 800 and max(wide, tall) > 0.55, (len(xs), wide, tall)
    diagonal = np.hypot(np.ptp(xs), np.ptp(ys))
    ends = []
    for colour in (START_COLOUR, GOAL_COLOUR):
        my, mx = _pixels_of(img, colour)
        assert len(mx) >= 30, f"the {colour} end marker is hidden or off screen"
        ends.append((mx.mean(), my.mean()))
    assert np.hypot(*np.subtract(*ends)) > 0.8 * diagonal
    for name in ("obstacles", "box", "grid", "corridor", "path", "start", "goal"):
        assert re.search(r'class="legendtext"[^>]*>' + name, dom), name
    # the default camera, for comparison (the state issue 20 reported)
    before = drawn["default"][0]
    by, bx = _pixels_of(before, PATH_COLOUR)
    before_span = max(_span(by, bx, before)) if len(bx) else 0.0
    assert max(wide, tall) > 3 * before_span, (wide, tall, before_span)


@needs_chromium
def test_view_without_path_in_chromium(drawn):
    """No path: plotly's own camera, the page draws (no script error), the
    scene is not blank."""
    img, stderr, dom = drawn["no_path"]
    errors = [ln for ln in stderr.splitlines()
              if "CONSOLE" in ln and ("Uncaught" in ln or "Error:" in ln)]
    assert not errors, errors
    assert "gl-container" in dom and 'class="legendtext"' in dom
    colours = len(np.unique(img.reshape(-1, 3) // 8, axis=0))
    assert colours > 50, colours
    assert len(_pixels_of(img, "#b88c66", tol=60)[0]) > 2000       # the asteroids drawn
