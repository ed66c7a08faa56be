"""``python -m compiler`` runs the ``ubc`` command line."""
import sys

from .cli import main

sys.exit(main())
