"""Command-line interface: ``trajopt list``, ``trajopt --version``."""
from __future__ import annotations

import argparse
import sys
from typing import Sequence

from . import __version__


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="trajopt", description="Trajectory optimization for robots.")
    parser.add_argument("--version", action="version", version=f"trajopt {__version__}")
    sub = parser.add_subparsers(dest="command")
    sub.add_parser("list", help="list the registered problems")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "list":
        import problems

        for name in problems.names():
            print(name)
        return 0
    parser.print_help()
    return 0


if __name__ == "__main__":
    sys.exit(main())
