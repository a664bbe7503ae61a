"""meshcat's server listening on one address, the loopback by default: ``python -m trajopt.viewer.server --host H``.

meshcat's own server binds its ZeroMQ socket (for Python) to 127.0.0.1 but
its web server (for the browser) to every interface: tornado's
``listen(port)`` without an address. Anyone on the network could then open
the scene. This entry point runs meshcat's bridge with both on ``--host``
(:data:`LOOPBACK` unless asked otherwise), and :func:`start_server` starts it
as a subprocess in its own session and reads the two addresses it prints.
"""
from __future__ import annotations

import argparse
import functools
import subprocess
import sys
from typing import Any, List, Optional, Tuple

#: The address the viewer listens on by default: this machine only.
LOOPBACK = "127.0.0.1"


def bridge_class() -> Any:
    """meshcat's ``ZMQWebSocketBridge`` with its web server listening on the bridge's ``host`` too."""
    from meshcat.servers.zmqserver import ZMQWebSocketBridge

    class HostBridge(ZMQWebSocketBridge):
        def make_app(self) -> Any:
            app = super().make_app()
            app.listen = functools.partial(app.listen, address=self.host)
            return app

    return HostBridge


def main(argv: Optional[List[str]] = None) -> None:
    """Serve meshcat's files and commands on ``--host`` until stopped; print ``zmq_url=`` and ``web_url=`` lines."""
    parser = argparse.ArgumentParser(prog="python -m trajopt.viewer.server", description=__doc__.splitlines()[0])
    parser.add_argument("--host", default=LOOPBACK, help=f"address of the web and ZeroMQ servers (default {LOOPBACK}: this machine only)")
    args = parser.parse_args(argv)
    bridge = bridge_class()(host=args.host)
    print(f"zmq_url={bridge.zmq_url}", flush=True)
    print(f"web_url={bridge.web_url}", flush=True)
    try:
        bridge.run()
    except KeyboardInterrupt:
        pass


def start_server(host: str = LOOPBACK) -> Tuple[subprocess.Popen, str, str]:
    """Start :func:`main` as a subprocess (its own session, so that Ctrl-C in the caller leaves it to be stopped
    by the caller); return ``(process, zmq_url, web_url)``. ``RuntimeError`` with its error output if it stops first."""
    proc = subprocess.Popen([sys.executable, "-u", "-m", "trajopt.viewer.server", "--host", host], stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    urls = {}
    while len(urls) < 2:
        raw = proc.stdout.readline()
        if not raw:  # the server's output ended: it stopped
            proc.wait(timeout=10)
            error = proc.stderr.read().decode(errors="replace").strip().splitlines()
            proc.stdout.close()
            proc.stderr.close()
            raise RuntimeError(f"viewer: meshcat's server stopped at start ({error[-1] if error else 'no output'})")
        key, _, value = raw.decode(errors="replace").strip().partition("=")
        if key in ("zmq_url", "web_url"):
            urls[key] = value
    return proc, urls["zmq_url"], urls["web_url"]


if __name__ == "__main__":
    main()
