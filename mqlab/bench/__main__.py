"""``python -m mqlab.bench NAME [options]``: the same as ``python -m mqlab bench NAME``."""

import sys

from mqlab.bench import main

sys.exit(main())
