# SPDX-License-Identifier: GPL-3.0-or-later
"""Make ``ansible_collections.lossless.fabric`` importable for plain pytest.

The repo root is the collection root; Python needs it under an
``ansible_collections/lossless/fabric`` path, so we keep a symlink farm in the
git-ignored ``.deps/self`` folder (``make setup`` creates it too).
"""
from __future__ import annotations

import os
import sys

_ROOT = os.path.dirname(os.path.abspath(__file__))
_FARM = os.path.join(_ROOT, ".deps", "self")
_LINK = os.path.join(_FARM, "ansible_collections", "lossless", "fabric")

if not os.path.islink(_LINK):
    os.makedirs(os.path.dirname(_LINK), exist_ok=True)
    os.symlink(_ROOT, _LINK)
for _path in (_FARM, os.path.join(_ROOT, ".deps", "collections")):
    if _path not in sys.path:
        sys.path.insert(0, _path)
