"""``python -m tokenmill.cli``: the command line (see :mod:`tokenmill.cli`)."""

import sys

from tokenmill.cli import main

sys.exit(main())
