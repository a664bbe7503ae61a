"""3D browser viewer of solutions: the robot's meshes, forces, footholds, a timeline (meshcat).

- :func:`export_html` writes one self-contained HTML file that replays a
  solution in any browser with no Python running (:mod:`.html`);
- :func:`show` serves it live from a meshcat server and returns a
  :class:`~.live.LiveViewer` (its ``url``; ``serve_forever()`` until Ctrl-C);
- :func:`contact_simulation_scene` (:mod:`.contact_scene`) draws a capsule
  contact simulation (:class:`trajopt.sim.ContactSimResult`, which both
  functions also take): the capsules, the collision witness points as red
  discs (pinocchio's tutorial's ``displayCollision``) and the contact forces;
- :func:`solution_scene` (:mod:`.scene`) is what both draw: the robot's visual
  meshes (:mod:`.visuals`, :mod:`.shapes`) posed by pinocchio at samples of
  :meth:`Solution.evaluate` (the transcription's interpolation, not only the
  knots), contact forces as arrows coloured by their friction ratio, the
  footholds, the base path and the ground; :mod:`.meshcat_scene` lowers it to
  meshcat commands (meshes once, poses as animation tracks).

The dependencies are the ``viz`` extra (``pip install -e ".[viz]"``: meshcat,
trimesh, fast-simplification); without it these functions raise
:class:`MissingExtraError`, whose message is one line naming the extra.

Why meshcat and not viser: the poses come from pinocchio itself (visual
placements equal ``pinocchio.updateGeometryPlacements``, tested), the mesh
cache makes later views start quickly (:mod:`.shapes`), and the export is
one self-contained HTML file, where viser's recording needs its client and a
web server. Design notes, with the comparison: docs/design/viewer.md.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Optional

from .contact_scene import contact_simulation_scene
from .extra import MissingExtraError, check_viz
from .rollout import rollout_scene
from .scene import Scene, check_viewable, solution_scene
from ..mpc.loop import ClosedLoopResult
from ..sim.contact_sim import ContactSimResult

__all__ = [
    "MissingExtraError",
    "Scene",
    "check_viewable",
    "check_viz",
    "contact_simulation_scene",
    "export_html",
    "scene_of",
    "scene_page",
    "show",
    "solution_scene",
]


def scene_of(item: Any, **scene_options: Any) -> Scene:
    """The scene of a :class:`~trajopt.Solution` (:func:`solution_scene`), of a
    :class:`~trajopt.sim.ContactSimResult` (:func:`contact_simulation_scene`) or of a
    closed loop, given as ``(result, model)`` (:func:`~trajopt.viewer.rollout.rollout_scene`)."""
    if isinstance(item, ContactSimResult):
        return contact_simulation_scene(item, **scene_options)
    if isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], ClosedLoopResult):
        return rollout_scene(item[0], item[1], **scene_options)
    return solution_scene(item, **scene_options)


def scene_page(scene: Scene) -> str:
    """The self-contained HTML text that replays ``scene``."""
    from .html import page
    from .meshcat_scene import scene_commands

    legend = scene.arrows.label if scene.arrows is not None else ""
    return page(scene_commands(scene), scene.title, scene.duration, legend)


def export_html(solution: Any, path: str | os.PathLike, overwrite: bool = False, **scene_options: Any) -> Path:
    """Write a self-contained HTML replay of ``solution`` to ``path`` (``.html``); return the path.

    ``solution`` is a :class:`~trajopt.Solution`, a contact simulation
    (:class:`~trajopt.sim.ContactSimResult`) or a closed loop ``(result, model)``
    (:func:`~trajopt.viewer.rollout.rollout_scene`); ``scene_options`` go to
    :func:`solution_scene` (``samples_per_interval``, ``min_fps``,
    ``force_scale`` [m/N], ``max_faces``) or :func:`contact_simulation_scene`
    (``max_fps``, ``witness_distance`` [m], ``force_scale``, ``max_faces``).
    The file is written to a temporary name and renamed; an existing file is
    replaced only with ``overwrite=True``.
    """
    check_viz()
    from .html import HTML_EXTENSIONS, write_page
    from ..atomic_file import prepare_output_path

    prepare_output_path(path, overwrite, HTML_EXTENSIONS)  # fail before the work
    return write_page(scene_page(scene_of(solution, **scene_options)), path, overwrite)


def show(solution: Any, open_browser: bool = True, zmq_url: Optional[str] = None, host: str = "127.0.0.1", **scene_options: Any) -> Any:
    """Show ``solution`` (as :func:`export_html` takes it) in a live meshcat viewer; return the :class:`~.live.LiveViewer`.

    Starts a meshcat server listening on ``host`` (the loopback address by default: this machine only)
    or connects to ``zmq_url``, sends the scene, and opens the URL in a browser when ``open_browser``
    and a display is available (it never fails for want of one: the URL is in ``viewer.url``).
    """
    check_viz()
    from .live import LiveViewer

    viewer = LiveViewer(zmq_url=zmq_url, host=host)
    viewer.display(scene_of(solution, **scene_options))
    if open_browser:
        viewer.open_browser()
    return viewer
