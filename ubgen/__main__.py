"""``python -m ubgen``: see :mod:`ubgen.cli`."""
import sys

from .cli import main

sys.exit(main())
