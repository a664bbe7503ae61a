"""``trajopt view FILE`` and the 3D-viewer options of ``trajopt solve`` (:mod:`trajopt.viewer`, the ``viz`` extra)."""
from __future__ import annotations

import argparse
import os
from typing import Any, Optional

import problems

from ..solution import Solution
from .arguments import UsageError, check_output_path, command_parser, warn_skipped


def add_viewer_options(group: argparse._ArgumentGroup) -> None:
    """``--html``, ``--view``, ``--no-browser``, ``--host`` and ``--force-scale`` (solve and view commands)."""
    group.add_argument("--html", metavar="FILE", help="write a self-contained 3D replay (.html; meshcat, needs the viz extra)")
    group.add_argument("--view", action="store_true", help="show the solution in a live 3D viewer and serve it until Ctrl-C")
    group.add_argument("--no-browser", action="store_true", help="with --view: only print the URL, open no browser")
    group.add_argument("--host", default="127.0.0.1", metavar="ADDRESS", help="with --view: the address the viewer listens on (default 127.0.0.1: this machine only; 0.0.0.0 for every interface)")
    group.add_argument("--force-scale", type=float, metavar="M_PER_N", help="3D viewer: contact-force arrow length per newton (default: the weight 1.5 base heights long)")


def add_view_parser(sub: Any) -> None:
    """The ``trajopt view FILE`` subcommand."""
    view = command_parser(
        sub, "view", "show a saved solution in the 3D viewer",
        "Show a solution saved with `trajopt solve --save` in a live 3D viewer (until Ctrl-C), or write it as a self-contained HTML replay with --html.",
        "examples:\n  trajopt view trot.npz\n  trajopt view trot.npz --html trot.html\n",
    )
    view.add_argument("file", metavar="FILE", help="a solution file (.npz) written by `trajopt solve --save`")
    group = view.add_argument_group("output")
    add_viewer_options(group)
    group.add_argument("--overwrite", action="store_true", help="replace an existing --html file")


def viewer_unavailable(problem: Any) -> Optional[str]:
    """Why the 3D viewer cannot show ``problem`` here (the ``viz`` extra missing, or a model it
    cannot draw), or ``None`` when it can."""
    from ..viewer import MissingExtraError, check_viewable, check_viz

    try:
        check_viz()
        check_viewable(problem)
    except (MissingExtraError, ValueError) as err:
        return str(err)
    return None


def check_viewer_outputs(args: argparse.Namespace, problem: Any, skip_html: bool = False) -> None:
    """Before any work: the viewer options make sense, ``--html`` can be written, and the viewer can
    show ``problem`` (a usage error otherwise: :func:`viewer_unavailable`). With ``skip_html``
    (``trajopt solve``, whose other outputs go on), an ``--html`` without ``--view`` that the viewer
    cannot make is dropped from ``args`` with one warning line instead."""
    if not (args.view or args.html):
        if args.force_scale is not None or args.no_browser:
            raise UsageError("--force-scale and --no-browser go with --view or --html")
        return
    from ..viewer.html import HTML_EXTENSIONS

    if args.force_scale is not None and not args.force_scale > 0:
        raise UsageError(f"--force-scale: expected a positive length per newton, got {args.force_scale}")
    if args.html is not None:
        check_output_path("--html", args.html, args.overwrite, HTML_EXTENSIONS)
    reason = viewer_unavailable(problem)
    if reason is None:
        return
    if skip_html and not args.view:
        warn_skipped("solve", f"--html {args.html}", reason)
        args.html = None
        return
    raise UsageError(f"--{'view' if args.view else 'html'}: {reason}")


def write_viewer_outputs(args: argparse.Namespace, solution: Solution) -> None:
    """Write ``--html`` and serve ``--view`` (until Ctrl-C), as checked by :func:`check_viewer_outputs`."""
    if not (args.view or args.html):
        return
    import time

    from ..viewer import export_html, show

    start = time.perf_counter()
    options = {"force_scale": args.force_scale}
    if args.html:
        export_html(solution, args.html, overwrite=args.overwrite, **options)
        print(f"wrote {args.html} ({os.path.getsize(args.html) / 1e6:.1f} MB)")
    if args.view:
        viewer = show(solution, open_browser=not args.no_browser, host=args.host, **options)
        print(f"3D viewer at {viewer.url} (ready {time.perf_counter() - start:.2f} s after the solve; Ctrl-C to stop)", flush=True)
        viewer.serve_forever()


def view_command(args: argparse.Namespace) -> int:
    """``trajopt view FILE``: load a saved solution, rebuild its problem, and show or export it."""
    try:
        solution = problems.load_solution(args.file)
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise UsageError(f"{args.file}: {err}") from None
    if not (args.view or args.html):
        args.view = True
    check_viewer_outputs(args, solution.problem)
    print(solution.summary())
    write_viewer_outputs(args, solution)
    return 0
