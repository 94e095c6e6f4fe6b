"""``python -m hanyi.submit``: the same command as ``hanyi submit``."""

import sys

from hanyi.submit import main

sys.exit(main(prog="python -m hanyi.submit"))
