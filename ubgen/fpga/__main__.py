"""``python -m ubgen.fpga``."""
import sys

from .cli import main

sys.exit(main())
