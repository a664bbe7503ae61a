"""A self-contained HTML page that replays meshcat commands with no Python running.

The page holds meshcat's own viewer (``meshcat/viewer/dist/main.min.js``,
~0.85 MB, inlined) and the scene's commands (:mod:`.meshcat_scene`) as
base64 msgpack strings, decoded and applied in order on load, synchronously,
so the scene is complete when the page's scripts end. Meshes are in the file
once and poses are animation tracks, so a Go1 trot weighs 3.0 MB where
pinocchio's ``MeshcatVisualizer`` ``static_html()`` of the same animation is
~82 MB (meshes re-sent per frame).

On top of meshcat's "Animations" panel (play, pause, reset, time slider,
``timeScale``) the page adds a ``speed`` menu (1x = real time, 0.5x, 0.25x,
0.1x) and a caption with the title, the current time and what the arrows
show. A fragment ``#t=SECONDS`` (in the URL, or typed later) pauses the
motion at that time: a link to a moment, and how the tests take screenshots
at chosen times.
"""
from __future__ import annotations

import base64
import html
import importlib.util
import os
from pathlib import Path
from typing import Sequence

from ..atomic_file import atomic_output
from ..atomic_file import prepare_output_path
from .extra import require_viz
from .meshcat_scene import encode

HTML_EXTENSIONS = (".html", ".htm")
#: The speed menu: label -> meshcat ``timeScale``.
SPEEDS = {"1x (real time)": 1.0, "0.5x": 0.5, "0.25x": 0.25, "0.1x": 0.1}

_PAGE = """<!DOCTYPE html>
<html>
<head>
<meta charset="utf-8">
<title>{title}</title>
<style>
body {{ margin: 0; }}
#meshcat-pane {{ width: 100vw; height: 100vh; overflow: hidden; }}
#trajopt-caption {{ position: absolute; left: 8px; bottom: 8px; max-width: 60vw; font: 13px/1.35 sans-serif;
  background: rgba(255, 255, 255, 0.85); padding: 4px 8px; border-radius: 4px; pointer-events: none; }}
</style>
</head>
<body>
<div id="meshcat-pane"></div>
<div id="trajopt-caption"><b>{title}</b><br><span id="trajopt-time"></span>{legend}</div>
<script>
{viewer_js}
</script>
<script>
var viewer = new MeshCat.Viewer(document.getElementById("meshcat-pane"));
(function () {{
  var commands = [
{commands}
  ];
  commands.forEach(function (text) {{
    var raw = atob(text), bytes = new Uint8Array(raw.length);
    for (var i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
    viewer.handle_command_bytearray(bytes);
  }});
  var animator = viewer.animator, duration = {duration};
  var folder = animator.folder.__folders["default"];
  var speed = {{ speed: "1" }};
  folder.add(speed, "speed", {speeds}).onChange(function (value) {{
    animator.mixer.timeScale = Number(value);
    folder.__controllers.forEach(function (c) {{ c.updateDisplay(); }});
  }});
  function seekFromHash() {{
    var match = /(?:^#|&)t=([0-9.eE+-]+)/.exec(window.location.hash);
    if (!match) return;
    var t = Math.min(Math.max(Number(match[1]), 0), duration);
    animator.pause();
    animator.seek(t);
    animator.display_progress(t);
  }}
  seekFromHash();
  window.addEventListener("hashchange", seekFromHash);
  var label = document.getElementById("trajopt-time");
  (function caption() {{
    label.textContent = "t = " + animator.time.toFixed(3) + " s of " + duration.toFixed(3) + " s";
    requestAnimationFrame(caption);
  }})();
}})();
</script>
</body>
</html>
"""


def viewer_script() -> str:
    """meshcat's bundled browser viewer (JavaScript source)."""
    spec = importlib.util.find_spec("meshcat")  # its location only: importing meshcat takes ~0.2 s
    if spec is None or spec.origin is None:
        require_viz("meshcat")  # raises MissingExtraError
    return (Path(spec.origin).parent / "viewer" / "dist" / "main.min.js").read_text(encoding="utf-8")


def page(commands: Sequence[dict], title: str, duration: float, legend: str = "") -> str:
    """The self-contained HTML text that replays ``commands``: meshcat's viewer inlined, the commands as
    base64 msgpack, the speed menu, and a caption with ``title``, the time and ``legend``."""
    encoded = ",\n".join(f'    "{base64.b64encode(encode(c)).decode("ascii")}"' for c in commands)
    speeds = "{" + ", ".join(f'"{k}": {v!r}' for k, v in SPEEDS.items()) + "}"
    return _PAGE.format(
        title=html.escape(title),
        legend=f"<br>{html.escape(legend)}" if legend else "",
        viewer_js=viewer_script(),
        commands=encoded,
        duration=repr(float(duration)),
        speeds=speeds,
    )


def write_page(text: str, path: str | os.PathLike, overwrite: bool = False) -> Path:
    """Write ``text`` to ``path`` (``.html``), whole or not at all (:func:`trajopt.atomic_file.atomic_output`).

    Refuses to replace an existing file (``FileExistsError``) unless ``overwrite``.
    """
    out = prepare_output_path(path, overwrite, HTML_EXTENSIONS)
    with atomic_output(out, overwrite) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return out
