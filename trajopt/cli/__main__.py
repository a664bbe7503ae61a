"""``python -m trajopt.cli``: the ``trajopt`` command."""
import sys

from . import main

if __name__ == "__main__":  # not when a process started by multiprocessing's spawn imports this module
    sys.exit(main())
