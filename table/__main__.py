"""Allow ``python -m table`` as a synonym for the ``dicetable`` script."""

import sys

from table.cli import main

sys.exit(main())
