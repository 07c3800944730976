"""``python -m craits`` is the ``craits`` command."""

import sys

from .cli import main

sys.exit(main())
