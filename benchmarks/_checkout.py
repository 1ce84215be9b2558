"""Imported first by a benchmark script: this checkout's ``vision/`` and ``table/`` go first on ``sys.path``.

A script run as ``python benchmarks/NAME.py`` would otherwise import a copy installed by ``pip install .``
(whose default folders, such as ``../shared/dice-images``, then point inside the venv) instead of the
code beside it.
"""

import sys
from pathlib import Path

#: The checkout's root folder.
ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path[:1]:
    sys.path.insert(0, str(ROOT))
