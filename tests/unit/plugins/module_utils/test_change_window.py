# SPDX-License-Identifier: GPL-3.0-or-later
"""_change_window: the window's settings refused with a full match, and its rollback timer names."""

from __future__ import annotations

import hashlib

import pytest

from ansible_collections.lossless.fabric.plugins.filter.change_window_errors import change_window_errors
from ansible_collections.lossless.fabric.plugins.filter.change_window_timer import change_window_timer
from ansible_collections.lossless.fabric.plugins.module_utils._change_window import setting_errors, timer_name
from ansible_collections.lossless.fabric.plugins.module_utils._rollback_timer import NAME_RE

GOOD = {"change_window_id": "", "change_window_max_minutes": 30, "change_window_repeats": 5, "change_window_settle_seconds": 0,
        "change_window_confirm_margin_seconds": 30, "change_window_report_dir": "/reports", "change_window_rollback_timer_dir": "",
        "change_window_ib_diag_bin": "", "change_window_ib_counters_host": "", "change_window_nic_hosts": ["gpu1"],
        "change_window_nic_change_hosts": []}
HOSTS = ["leaf1", "gpu1", "ufm1"]


def _errors(**changes):
    return setting_errors(dict(GOOD, **changes), HOSTS)


def test_good_settings_pass():
    assert _errors() == []
    assert _errors(change_window_id="2026-12-01.w_1", change_window_max_minutes="20", change_window_ib_counters_host="ufm1",
                   change_window_rollback_timer_dir="/var/lib/x", change_window_nic_change_hosts=["gpu1"]) == []
    assert _errors(change_window_id="a" * 61) == []


@pytest.mark.parametrize("window_id", ["w1\n", "w1\r", "w1\nreboot", "-w1", ".w1", "w 1", "w1;x", "w1/..", "a" * 62, "w\u0661", 7])
def test_an_id_that_is_not_a_whole_id_is_refused(window_id):
    # a trailing newline passed `match('^...$')`: the check is a full match now
    errors = _errors(change_window_id=window_id)
    assert len(errors) == 1 and errors[0].startswith("change_window_id: ") and "is not an id" in errors[0], errors


def test_the_refusal_shows_the_value_escaped():
    assert _errors(change_window_id="w1\n")[0].startswith('change_window_id: "w1\\n" is not an id')


@pytest.mark.parametrize(("key", "value", "said"), [
    ("change_window_max_minutes", 0, "change_window_max_minutes: 0 is below 1"),
    ("change_window_max_minutes", "5\n", 'change_window_max_minutes: "5\\n" is not a whole number'),
    ("change_window_repeats", True, "change_window_repeats: True is not a whole number"),
    ("change_window_settle_seconds", -1, "change_window_settle_seconds: -1 is below 0"),
    ("change_window_report_dir", "", "change_window_report_dir: empty (set it, or lossless_fabric_report_dir)"),
    ("change_window_report_dir", "/r\nx", 'change_window_report_dir: "/r\\nx" is not a path'),
    ("change_window_rollback_timer_dir", "rel/dir", 'change_window_rollback_timer_dir: "rel/dir" is not an absolute path'),
    ("change_window_ib_diag_bin", "/usr/sbin\t", 'change_window_ib_diag_bin: "/usr/sbin\\t" is not a path'),
    ("change_window_ib_counters_host", "sm9", 'change_window_ib_counters_host: "sm9" is not an inventory host'),
    ("change_window_nic_change_hosts", ["gpu1", "gpu9"], 'change_window_nic_change_hosts: "gpu9" not inventory hosts'),
    ("change_window_nic_hosts", "gpu1", 'change_window_nic_hosts: "gpu1" is not a list of inventory hosts'),
])
def test_each_bad_setting_is_named_with_its_value(key, value, said):
    errors = _errors(**{key: value})
    assert len(errors) == 1 and errors[0].startswith(said), errors


def test_settle_and_margin_must_leave_time():
    assert _errors(change_window_max_minutes=1, change_window_settle_seconds=40) == [
        "change_window_settle_seconds + change_window_confirm_margin_seconds: 70 s leave no time in a window of 1 minute(s)"]


def test_the_filter_adapter():
    assert change_window_errors(GOOD, HOSTS) == []
    with pytest.raises(Exception, match="the settings are a dict"):
        change_window_errors(["x"], HOSTS)


def test_timer_names_one_per_host_and_kind_always_valid():
    assert timer_name("change-window-w1", "ufm1", "opensm") == "change-window-w1-ufm1-opensm"
    assert change_window_timer("gpu1", "change-window-w1", "nic") == "change-window-w1-gpu1-nic"
    long_host = "sm-" + "x" * 70
    hosts = ["ufm1", "sm:a", "sm_a", long_host]
    names = {h: timer_name("change-window-w1", h, "opensm") for h in hosts}
    for host in ("sm:a", long_host):
        base = "change-window-w1-%s" % host
        digest = hashlib.sha1((base + "-opensm").encode()).hexdigest()[:10]
        assert names[host] == "%s-%s-opensm" % (base.replace(":", "_")[:46], digest)
    assert all(NAME_RE.match(n) and len(n) <= 64 for n in names.values()) and len(set(names.values())) == len(hosts)
    # the NIC timer of a host is not its OpenSM timer, and the cut keeps to 64 characters for every suffix
    assert timer_name("change-window-w1", long_host, "nic") != names[long_host]
    assert len(timer_name("change-window-w1", long_host, "nic")) == 64
    with pytest.raises(ValueError, match="suffix"):
        timer_name("change-window-w1", "ufm1", "Bad-1")
