"""Print the live-pipeline numbers of issue 4 (same as ``dicetable bench``).

Usage: python benchmarks/live_pipeline.py [--reader truth|model] [--seeds N]
"""

import sys

import _checkout  # noqa: F401  (this checkout's vision/ and table/ first on sys.path)

from table.cli import main

if __name__ == "__main__":
    sys.exit(main(["bench", *sys.argv[1:]]))
