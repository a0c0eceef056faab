"""``python -m tokenmill``: the command line (see :mod:`tokenmill.cli`)."""

import sys

from tokenmill.cli import main

sys.exit(main())
