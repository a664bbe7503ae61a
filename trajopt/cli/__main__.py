"""``python -m trajopt.cli``: the ``trajopt`` command."""
import sys

from . import main

sys.exit(main())
