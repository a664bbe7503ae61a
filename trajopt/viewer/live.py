"""The live viewer: a meshcat server that serves a scene until the user stops it.

:class:`LiveViewer` starts meshcat's server (a subprocess: a tornado web
server for the browser and a ZeroMQ socket for Python, both on the loopback
address unless asked otherwise, :mod:`.server`; or connects to a running one
by ``zmq_url``), sends a scene's commands (:mod:`.meshcat_scene`)
and tells where to look: ``url``. A browser that connects later receives the
whole scene from the server, so nothing needs a browser at start.
:meth:`open_browser` opens the URL only where a browser can show it (a
display on Linux, or macOS/Windows) and never raises; :meth:`serve_forever`
sleeps until Ctrl-C and then stops the server.

The ``visualizer`` attribute is the ``meshcat.Visualizer``: pinocchio's
``MeshcatVisualizer`` and user code can draw into the same window.
"""
from __future__ import annotations

import contextlib
import io
import os
import signal
import subprocess
import sys
import threading
import time
import webbrowser
from typing import Any, Optional

from .extra import require_viz
from .meshcat_scene import ROOT, scene_commands
from .scene import Scene
from .server import LOOPBACK, start_server


class _Lowered:
    """A ready meshcat command (what ``meshcat.Visualizer.window.send`` expects: an object with ``lower()``)."""

    def __init__(self, command: dict) -> None:
        self.command = command

    def lower(self) -> dict:
        return self.command


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def has_display() -> bool:
    """True where :func:`webbrowser.open` can show a page: macOS, Windows, or an X11/Wayland display."""
    return sys.platform in ("darwin", "win32") or bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


class LiveViewer:
    """A meshcat server (started, or reached at ``zmq_url``) showing scenes in a browser at :attr:`url`.

    A started server listens on ``host`` only (:mod:`.server`; default the loopback address, so
    that only this machine can open the scene; ``"0.0.0.0"`` serves every interface).
    """

    def __init__(self, zmq_url: Optional[str] = None, host: str = LOOPBACK) -> None:
        meshcat = require_viz("meshcat")["meshcat"]
        #: The server this viewer started (``None`` when it connected to one at ``zmq_url``).
        self.server: Optional[subprocess.Popen] = None
        if zmq_url is None:
            self.server, zmq_url, _ = start_server(host)
        with contextlib.redirect_stdout(io.StringIO()):  # meshcat prints its URL; callers print theirs
            self.visualizer = meshcat.Visualizer(zmq_url=zmq_url)
        #: The viewer's address (``http://127.0.0.1:PORT/static/``), to open in a browser.
        self.url: str = self.visualizer.url()

    def display(self, scene: Scene) -> None:
        """Replace what the viewer shows by ``scene`` (meshes, overlays, camera and animation)."""
        self.visualizer.window.send(_Lowered({"type": "delete", "path": ROOT}))
        for command in scene_commands(scene):
            self.visualizer.window.send(_Lowered(command))

    def open_browser(self) -> bool:
        """Open :attr:`url` in the default browser if one can be shown; True if it was opened."""
        if not has_display():
            return False
        try:
            return bool(webbrowser.open(self.url, new=2))
        except webbrowser.Error:
            return False

    def serve_forever(self, poll: float = 0.5) -> None:
        """Keep serving until Ctrl-C (``KeyboardInterrupt``) or SIGTERM, then stop the server.

        The server runs in its own session (meshcat starts it so), so it sees
        neither signal: it is stopped here, also when SIGTERM ends the wait.
        """
        previous = None
        if threading.current_thread() is threading.main_thread():
            previous = signal.signal(signal.SIGTERM, _interrupt)
        try:
            while self.running():
                time.sleep(poll)
        except KeyboardInterrupt:
            pass
        finally:
            self.close()
            if previous is not None:
                signal.signal(signal.SIGTERM, previous)

    def running(self) -> bool:
        """True while the server this viewer started is alive (always True for a server it connected to)."""
        return self.server is None or self.server.poll() is None

    def close(self) -> None:
        """Stop the server this viewer started and release its output pipes (a server given by ``zmq_url`` keeps running)."""
        proc: Any = self.server
        if proc is not None:
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=5)
                except Exception:
                    proc.kill()
            for pipe in (proc.stdout, proc.stderr):  # the server runs with both piped to us
                if pipe is not None:
                    pipe.close()
        self.visualizer.window.zmq_socket.close(linger=0)
