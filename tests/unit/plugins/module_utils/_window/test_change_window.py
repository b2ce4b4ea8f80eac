# SPDX-License-Identifier: GPL-3.0-or-later
"""_change_window: the window's settings refused with a full match, and its rollback timer names."""

from __future__ import annotations

import hashlib

import pytest

from ansible_collections.lossless.fabric.plugins.filter.change_window_errors import change_window_errors
from ansible_collections.lossless.fabric.plugins.filter.change_window_timer import change_window_timer
from ansible_collections.lossless.fabric.plugins.module_utils._common._rollback_timer import NAME_RE
from ansible_collections.lossless.fabric.plugins.module_utils._window import _change_window
from ansible_collections.lossless.fabric.plugins.module_utils._window._change_window import setting_errors, timer_name

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


# ---------------------------------------------------------------- what the report reads from the hosts


def test_switch_and_subnet_manager_devices_from_what_each_registered():
    hostvars = {"leaf1": {"__change_window_push": {"changed": True}, "__change_window_backup": {"backup": "text"},
                          "__change_window_counters_before": {"c": 1}},
                "leaf2": {},
                "ufm1": {"__change_window_sm_files": [{"path": "/etc/opensm/opensm.conf"}], "__change_window_sm_arm": {"changed": True}}}
    plans = {"leaf1": {"platform": "eos"}, "leaf2": {"platform": "junos"}}
    devices = _change_window.switch_devices(["leaf1", "leaf2"], hostvars, plans, "/r/w-backup", False)
    assert devices["leaf1"] == {"platform": "eos", "push": {"changed": True}, "settle": None, "rollback": None, "backup": "/r/w-backup/leaf1.cfg"}
    assert devices["leaf2"]["backup"] is None and devices["leaf2"]["push"] is None  # the window ended before its backup
    assert _change_window.switch_devices(["leaf1"], hostvars, plans, "/r/w-backup", True)["leaf1"]["backup"] is None  # check mode
    sms = _change_window.sm_devices(["ufm1"], hostvars, "change-window-w1", "/r/w-backup", False)
    assert sms["ufm1"]["kind"] == "subnet_manager" and sms["ufm1"]["timer"] == "change-window-w1-ufm1-opensm"
    assert sms["ufm1"]["backup"] == "/r/w-backup/ufm1.opensm" and sms["ufm1"]["arm"] == {"changed": True} and sms["ufm1"]["settle"] is None
    assert _change_window.counters(["leaf1"], hostvars) == {"leaf1": {"before": {"c": 1}, "middle": None, "after": None}}


def test_nic_devices_from_the_run_once_loops():
    registered = {
        "__change_window_nic_backup": {"results": [{"item": "gpu1", "nics": {}}, {"item": "gpu 2", "msg": "unreachable"}]},
        "__change_window_nic_apply": {"results": [{"item": "gpu1", "changed": True, "timer": {"name": "t"}}]},
        "__change_window_nic_restore": None,
        "__change_window_nic_confirm": {"results": [{"item": {"item": "gpu1"}, "changed": True}]},
    }
    out = _change_window.nic_devices(registered, "/r/w-backup", False, ["/inv/prod", "/inv/with space"], {"gpu1": True, "gpu 2": False})
    assert out["gpu1"]["apply"]["timer"] == {"name": "t"} and out["gpu1"]["confirm"]["changed"] is True and out["gpu1"]["restore"] is None
    assert out["gpu1"]["backup"] == "/r/w-backup/gpu1.nic.json" and out["gpu 2"]["backup"] is None  # no backup read, no file
    assert out["gpu1"]["restore_command"] == ("ansible gpu1 -i /inv/prod -i '/inv/with space' -b -m lossless.fabric.nic_qos "
                                              "-a \"$(cat /r/w-backup/gpu1.nic.json)\"")
    assert " -b " not in out["gpu 2"]["restore_command"]
    assert _change_window.nic_devices({}, "/r", False, [], {}) == {}


def test_session_names_are_valid_one_per_run_and_host():
    from ansible_collections.lossless.fabric.plugins.module_utils._switches import _config as _switch_config
    from ansible_collections.lossless.fabric.plugins.module_utils._window import _change_window

    a = _change_window.session_name("change-window-w1", "2026-12-01T19:00:00+00:00", "leaf1")
    assert a == _change_window.session_name("change-window-w1", "2026-12-01T19:00:00+00:00", "leaf1")
    assert a.startswith("change-window-w1-") and len(a) <= 64
    # another host, or the same window id run again later, never shares a session name
    assert a != _change_window.session_name("change-window-w1", "2026-12-01T19:00:00+00:00", "leaf2")
    assert a != _change_window.session_name("change-window-w1", "2026-12-01T20:00:00+00:00", "leaf1")
    long = _change_window.session_name("change-window-" + "x" * 80, "t", "leaf1.dc1.example.net")
    for name in (a, long):
        assert _switch_config._SESSION_RE.fullmatch(name), name  # pylint: disable=protected-access
    with pytest.raises(ValueError, match="host"):
        _change_window.session_name("change-window-w1", "t", "leaf1\nreboot")


# Issue 33 point 2: a 90-minute window handed NX-OS a 5400 s commit-timeout its driver refuses (30-3600 s),
# after the other switches had committed, and the window rolled them all back.
DEVICES = {"leaf1": {"kind": "switch", "platform": "eos"}, "leaf4": {"kind": "switch", "platform": "nxos"},
           "leaf2": {"kind": "switch", "platform": "junos"}, "leaf3": {"kind": "switch", "platform": "sonic"},
           "gpu1": {"kind": "host"}}


def test_a_window_longer_than_a_switchs_commit_timer_is_refused_naming_the_switch_and_its_limit():
    errors = setting_errors(dict(GOOD, change_window_max_minutes=90), HOSTS, DEVICES)
    assert errors == ["change_window_max_minutes: 90 minutes (5400 s) is longer than the commit timer leaf4 (platform nxos) can hold "
                      "(30-3600 s); the window hands its remaining time to each switch as its timer: at most 60 minutes here"]
    assert change_window_errors(dict(GOOD, change_window_max_minutes=90), HOSTS, DEVICES) == errors


def test_each_platforms_limit_is_its_records():
    # 60 minutes fit every platform; a day is past EOS's commit timer (hh:mm:ss, at most 23:59:59) and NX-OS's
    assert setting_errors(dict(GOOD, change_window_max_minutes=60), HOSTS, DEVICES) == []
    day = setting_errors(dict(GOOD, change_window_max_minutes=24 * 60), HOSTS, DEVICES)
    assert [e.split(" the commit timer ")[1].split(" can hold")[0] for e in day] == ["leaf1 (platform eos)", "leaf4 (platform nxos)"]
    # SONiC's systemd timer and NVUE's --confirm have no documented upper bound: never refused for length
    unbounded = {"s": {"kind": "switch", "platform": "sonic"}, "n": {"kind": "switch", "platform": "nvue"}}
    assert setting_errors(dict(GOOD, change_window_max_minutes=10 ** 6), HOSTS, unbounded) == []
