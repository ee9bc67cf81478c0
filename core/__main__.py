"""`python -m core`: the headless command line."""

import sys

from core.cli import main

sys.exit(main())
