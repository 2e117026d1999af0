"""Shared setup of the core's op tests.

The test modules are imported by path (``--import-mode=importlib``), so they cannot
import each other; the numpy-oracle helpers live in ``nx_oracle.py`` beside this file,
whose folder is put on ``sys.path`` here.
"""

from __future__ import annotations

import sys
from pathlib import Path

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
