# SPDX-License-Identifier: GPL-3.0-or-later
"""Fixtures of the integration tests."""

from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from switchlab import SwitchLab  # noqa: E402  # pylint: disable=wrong-import-position


@pytest.fixture(scope="session", autouse=True)
def _own_home_per_worker(tmp_path_factory):
    """Under pytest-xdist (make integration runs two workers) each worker gets its own HOME, so what the
    collection keeps under ~ - the fabric lock (~/.ansible/lossless-fabric/locks/<fabric>.lock: every lab here
    is fabric 'lab' or 'itest'), ansible's local temp - is the worker's own: two labs of two workers are two
    fabrics, as two sites would be. Within a worker tests run one at a time, as before."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        yield
        return
    home = str(tmp_path_factory.mktemp("home"))
    # async tasks (the localization's launches) write their job files under the shell's async_dir
    # (~/.ansible_async) and async_status reads them back: an absolute path, so both sides agree.
    saved = {key: os.environ.get(key) for key in ("HOME", "ANSIBLE_ASYNC_DIR")}
    os.environ.update(HOME=home, ANSIBLE_ASYNC_DIR=os.path.join(home, ".ansible_async"))
    yield
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


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
