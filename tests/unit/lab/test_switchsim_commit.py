# SPDX-License-Identifier: GPL-3.0-or-later
"""The simulators' shared confirmed-commit machine (tests/lab/switchsim/commit.py), the one
platform table (switchsim.GRAMMARS) and the tests' platform list (tests/lab/switch_platforms.py)."""

from __future__ import annotations

import pathlib
import sys
import threading
import types

import pytest
import yaml

ROOT = pathlib.Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tests" / "lab"))

import switchsim  # noqa: E402  # pylint: disable=wrong-import-position
from switch_platforms import SWITCH_PLATFORMS  # noqa: E402  # pylint: disable=wrong-import-position
from switchsim.commit import ConfirmedCommit  # noqa: E402  # pylint: disable=wrong-import-position
from switchsim.core import Device, SimError  # noqa: E402  # pylint: disable=wrong-import-position
from switchsim.server import Simulator  # noqa: E402  # pylint: disable=wrong-import-position

from ansible_collections.lossless.fabric.plugins.module_utils._platforms._drivers import DRIVERS  # noqa: E402  # pylint: disable=wrong-import-position


class _Timer:
    def __init__(self, seconds, fn):
        self.seconds, self.fn, self.cancelled = seconds, fn, False

    def cancel(self):
        self.cancelled = True

    def remaining(self):
        return 0.0 if self.cancelled else self.seconds


class _Device:
    """The part of core.Device the machine uses; its timers fire when the test says so."""

    name = "sw1"

    def __init__(self):
        self.lock = threading.RLock()
        self.timers: list[_Timer] = []

    def start_timer(self, seconds, fn):
        self.timers.append(_Timer(seconds, fn))
        return self.timers[-1]


def _machine(unit_seconds=1.0):
    dev, expired = _Device(), []
    return dev, expired, ConfirmedCommit(dev, lambda before, info: expired.append((before, info)), unit_seconds=unit_seconds)


def test_start_arms_the_timer_in_device_seconds_and_keeps_the_platform_fields():
    dev, _fired, commit = _machine(unit_seconds=60)
    assert not commit and commit.get("rev") is None and commit.remaining() == 0.0
    commit.start(5, "old", rev="7")
    assert commit and commit.active and commit["rev"] == "7" and commit["amount"] == 5 and commit.get("before") == "old"
    assert dev.timers[0].seconds == 300 and commit.remaining() == 300


def test_confirm_stops_the_timer_and_a_late_expiry_does_nothing():
    dev, expired, commit = _machine()
    commit.start(10, "old", name="s1")
    assert commit.confirm() == {"name": "s1", "amount": 10, "before": "old"}
    assert dev.timers[0].cancelled and not commit
    dev.timers[0].fn()  # the timer thread was already past cancel()
    assert expired == [] and not commit


def test_cancel_returns_what_to_restore():
    dev, expired, commit = _machine()
    commit.start(10, "old")
    assert commit.cancel() == "old" and dev.timers[0].cancelled and not commit and expired == []


def test_expiry_goes_idle_then_hands_the_old_config_to_the_platform():
    dev, expired, commit = _machine()
    seen = []
    commit._on_expire = lambda before, info: seen.append((before, info, commit.active))  # pylint: disable=protected-access
    commit.start(10, "old", rev="3")
    dev.timers[0].fn()
    assert seen == [("old", {"rev": "3", "amount": 10}, False)] and expired == []


def test_the_timer_of_a_replaced_commit_does_not_roll_back_the_new_one():
    dev, expired, commit = _machine()
    commit.start(10, "a")
    commit.confirm()
    commit.start(10, "b")
    dev.timers[0].fn()
    assert commit and commit["before"] == "b" and expired == []
    dev.timers[1].fn()
    assert expired == [("b", {"amount": 10})] and not commit


def test_one_pending_commit_at_a_time_and_nothing_to_confirm_when_idle():
    _dev, _fired, commit = _machine()
    with pytest.raises(RuntimeError, match="no confirmed commit is pending"):
        commit.confirm()
    with pytest.raises(RuntimeError, match="no confirmed commit is pending"):
        commit.cancel()
    commit.start(1, "a")
    with pytest.raises(RuntimeError, match="already pending"):
        commit.start(1, "b")


@pytest.mark.parametrize("platform", list(switchsim.GRAMMARS))
def test_every_grammar_is_a_device_of_its_platform(platform):
    cls = switchsim.device_class(platform)
    assert issubclass(cls, Device) and cls.platform == platform
    device = cls({"name": "sw1", "platform": platform}, types.SimpleNamespace(time_scale=0.001))
    assert isinstance(device.pending_state(), dict) and device.pending_state()["pending_commit"] is False


def test_the_server_refuses_a_platform_without_a_grammar():
    with pytest.raises(SimError) as err:
        Simulator({"switches": [{"name": "sw1", "platform": "ios"}]})
    assert str(err.value) == "switch sw1: platform must be one of %s" % sorted(switchsim.GRAMMARS)


def test_the_tests_run_every_driver_on_its_grammar():
    assert SWITCH_PLATFORMS == list(DRIVERS)
    assert set(DRIVERS) <= set(switchsim.GRAMMARS)


def test_the_grammars_are_found_from_the_modules_and_none_is_a_shared_module():
    # Every module here without an underscore that is not one of the simulator's own is a grammar: a new
    # platform's grammar needs no table entry (docs/adding-a-platform.md).
    modules = sorted(p.stem for p in (ROOT / "tests" / "lab" / "switchsim").glob("*.py") if "_" not in p.stem)
    assert sorted(switchsim.GRAMMARS) == [m for m in modules if m not in switchsim.SHARED_MODULES]
    assert all(not hasattr(__import__("switchsim." + m, fromlist=["x"]), "DEVICE") for m in switchsim.SHARED_MODULES)


def test_the_molecule_scenario_has_a_switch_of_every_tested_platform():
    # inventory/hosts.py (an inventory script) writes one host per tested platform from its grammar.
    scenario = ROOT / "extensions" / "molecule" / "switch_qos"
    sys.path.insert(0, str(scenario / "inventory"))
    try:
        import hosts  # pylint: disable=import-outside-toplevel,import-error
    finally:
        sys.path.remove(str(scenario / "inventory"))
    inventory = hosts.inventory()
    platforms = {host: hostvars["lossless_fabric_device"]["platform"] for host, hostvars in inventory["_meta"]["hostvars"].items()}
    assert platforms == {"mol-" + platform: platform for platform in SWITCH_PLATFORMS}
    assert inventory["switches"]["hosts"] == sorted(platforms)
    for host, platform in platforms.items():
        device = inventory["_meta"]["hostvars"][host]["lossless_fabric_device"]
        assert device["ports"] == switchsim.lab_ports(platform)
    # Molecule's own platform list names one of them (it wants one entry; the hosts come from the script).
    listed = [p["name"] for p in yaml.safe_load((scenario / "molecule.yml").read_text())["platforms"]]
    assert set(listed) <= set(platforms)
