"""3D browser viewer of solutions: the robot's meshes, forces, footholds, a timeline (meshcat).

- :func:`export_html` writes one self-contained HTML file that replays a
  solution in any browser with no Python running (:mod:`.html`);
- :func:`show` serves it live from a meshcat server and returns a
  :class:`~.live.LiveViewer` (its ``url``; ``serve_forever()`` until Ctrl-C);
- :func:`solution_scene` (:mod:`.scene`) is what both draw: the robot's visual
  meshes (:mod:`.visuals`, :mod:`.shapes`) posed by pinocchio at samples of
  :meth:`Solution.evaluate` (the transcription's interpolation, not only the
  knots), contact forces as arrows coloured by their friction ratio, the
  footholds, the base path and the ground; :mod:`.meshcat_scene` lowers it to
  meshcat commands (meshes once, poses as animation tracks).

The dependencies are the ``viz`` extra (``pip install -e ".[viz]"``: meshcat,
trimesh, fast-simplification); without it these functions raise
:class:`MissingExtraError`, whose message is one line naming the extra.

Why meshcat and not viser (measured with ``bench/viewer_libraries.py`` on this
2-core machine, loaded by other jobs; meshcat 0.3.2, viser 1.1.1, Go1 trot):

- rendering correctness: our poses come from pinocchio itself (visual
  placements equal ``pinocchio.updateGeometryPlacements`` to 1e-15, tested);
  viser's URDF path goes through yourdfpy, whose joint order differs from
  pinocchio's (its Go1 order starts with the front-right leg) and needs a
  name mapping, after which it agrees to ~1e-7 m (float32 transforms);
  both draw correctly in headless Chromium (screenshots in the tests for ours);
- start time: a meshcat server subprocess is up in ~0.3 s; viser's in-process
  server in ~0.2 s plus ~2 s for yourdfpy to load the Go1 meshes (which we
  cache decimated: ~0.02 s warm);
- export: meshcat's viewer is one 0.85 MB script and its command stream can
  be inlined, so one self-contained HTML of the Go1 trot is ~2 MB; viser's
  static export is its client build plus a ``.viser`` recording that the page
  fetches over HTTP (it does not open from a file:// URL), and its recording
  re-sends every mesh pose as a message per frame.

See the bench's output (README) for the numbers of the latest run.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Optional

from .extra import MissingExtraError, check_viz
from .scene import Scene, check_viewable, solution_scene

__all__ = ["MissingExtraError", "Scene", "check_viewable", "check_viz", "export_html", "scene_page", "show", "solution_scene"]


def scene_page(scene: Scene) -> str:
    """The self-contained HTML text that replays ``scene``."""
    from .html import page
    from .meshcat_scene import scene_commands

    legend = scene.arrows.label if scene.arrows is not None else ""
    return page(scene_commands(scene), scene.title, scene.duration, legend)


def export_html(solution: Any, path: str | os.PathLike, overwrite: bool = False, **scene_options: Any) -> Path:
    """Write a self-contained HTML replay of ``solution`` to ``path`` (``.html``); return the path.

    ``scene_options`` go to :func:`solution_scene` (``samples_per_interval``,
    ``min_fps``, ``force_scale`` [m/N], ``max_faces``). The file is written
    to a temporary name and renamed; an existing file is replaced only with
    ``overwrite=True``.
    """
    check_viz()
    from .html import HTML_EXTENSIONS, write_page
    from ..plotting.output import prepare_output_path

    prepare_output_path(path, overwrite, HTML_EXTENSIONS)  # fail before the work
    return write_page(scene_page(solution_scene(solution, **scene_options)), path, overwrite)


def show(solution: Any, open_browser: bool = True, zmq_url: Optional[str] = None, **scene_options: Any) -> Any:
    """Show ``solution`` in a live meshcat viewer; return the :class:`~.live.LiveViewer`.

    Starts a meshcat server (or connects to ``zmq_url``), sends the scene,
    and opens the URL in a browser when ``open_browser`` and a display is
    available (it never fails for want of one: the URL is in ``viewer.url``).
    """
    check_viz()
    from .live import LiveViewer

    viewer = LiveViewer(zmq_url=zmq_url)
    viewer.display(solution_scene(solution, **scene_options))
    if open_browser:
        viewer.open_browser()
    return viewer
