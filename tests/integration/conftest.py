# SPDX-License-Identifier: GPL-3.0-or-later
"""Fixtures of the integration tests."""

from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from switchlab import SwitchLab  # noqa: E402  # pylint: disable=wrong-import-position


@pytest.fixture
def switch_lab(tmp_path):
    """Factory: switch_lab({'leaf1': 'eos'}, time_scale=0.01)."""
    labs = []

    def make(switches, time_scale=0.01):
        where = tmp_path / ("lab%d" % len(labs))
        where.mkdir()
        lab = SwitchLab(where, switches, time_scale)
        labs.append(lab)
        return lab.start()

    yield make
    for lab in labs:
        lab.stop()
