"""Print the live-pipeline numbers of issue 4 (same as ``dicetable bench``).

Usage: python benchmarks/live_pipeline.py [--reader truth|model] [--seeds N]
"""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout's vision/ and table/, not an installed copy

from table.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(["bench", *sys.argv[1:]]))
