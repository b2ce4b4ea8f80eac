# SPDX-License-Identifier: GPL-3.0-or-later
"""_vendor_nxos: the NX-OS tables agree with the platform record and refuse what the sources do not allow."""

from __future__ import annotations

import re

import pytest

from ansible_collections.lossless.fabric.plugins.module_utils._platforms import _records
from ansible_collections.lossless.fabric.plugins.module_utils._platforms.nxos import _vendor as _vendor_nxos


def record():
    return next(p for p in _records.DRIVEN + _records.PLANNED if p.name == "nxos")


def test_the_record_and_the_vendor_table_name_the_same_interfaces():
    assert record().interface_pattern == _vendor_nxos.INTERFACE_PATTERN
    assert re.fullmatch(_vendor_nxos.INTERFACE_PATTERN, _vendor_nxos.INTERFACE_EXAMPLE, re.ASCII)
    for name in ("Ethernet1/1", "Ethernet1/64", "Ethernet1/1/4"):
        assert re.fullmatch(_vendor_nxos.INTERFACE_PATTERN, name, re.ASCII)
    for name in ("Eth1/1", "ethernet1/1", "Ethernet1", "Ethernet1/1/1/1", "Ethernet\u0661/1", "port-channel1"):
        assert not re.fullmatch(_vendor_nxos.INTERFACE_PATTERN, name, re.ASCII)


def test_mtu_and_ranges_from_the_dme_model():
    assert _vendor_nxos.MTU_RANGE == (576, 9216) and _vendor_nxos.MAX_MTU == 9216
    assert _vendor_nxos.NETWORK_QOS_MTU_RANGE == (576, 9216)
    assert _vendor_nxos.QOS_GROUP_RANGE == (0, 7) and _vendor_nxos.PFC_COS_RANGE == (0, 7)
    assert _vendor_nxos.PRIORITY_LEVEL_RANGE == (1, 8) and _vendor_nxos.BANDWIDTH_REMAINING_PERCENT_RANGE == (0, 100)
    assert _vendor_nxos.WATCHDOG_INTERFACE_MULTIPLIER_RANGE == (0, 40)


def test_system_classes_of_the_8q_mode():
    assert [_vendor_nxos.queuing_class(g) for g in range(8)] == ["c-out-8q-q-default"] + ["c-out-8q-q%d" % g for g in range(1, 8)]
    assert [_vendor_nxos.network_qos_class(g) for g in range(8)] == ["c-8q-nq-default"] + ["c-8q-nq%d" % g for g in range(1, 8)]


@pytest.mark.parametrize("group", [-1, 8, True, "3", 3.0, None])
def test_system_classes_refuse_a_group_outside_0_7(group):
    for function in (_vendor_nxos.queuing_class, _vendor_nxos.network_qos_class):
        with pytest.raises(ValueError, match="^nxos: qos-group .* is not in 0-7"):
            function(group)


def test_what_no_source_gives_is_none_not_a_guess():
    assert _vendor_nxos.ECN_DEFAULTS is None
    assert _vendor_nxos.ECN_THRESHOLD_UNIT == "kbytes"
    for name in ("ECN_THRESHOLD_BYTES_PER_UNIT", "ECN_THRESHOLD_RANGE", "ECN_DROP_PROBABILITY_RANGE", "ECN_WEIGHT_RANGE", "WATCHDOG_INTERVAL_MS_RANGE"):
        assert getattr(_vendor_nxos, name) is None, name
    # the commit-timeout range is the Nexus 7000 guide's; on the Nexus 9000 it is not verified
    assert _vendor_nxos.COMMIT_TIMEOUT_S_RANGE == (30, 3600) and _vendor_nxos.COMMIT_TIMEOUT_RANGE_VERIFIED_ON_N9K is False


def test_status_words_are_disjoint():
    assert not set(_vendor_nxos.STATUS_UP) & set(_vendor_nxos.STATUS_DOWN)
    assert _vendor_nxos.PFC_MODES == ("auto", "on", "off") and _vendor_nxos.WATCHDOG_INTERVAL_WORDS == ("on", "off")


def test_system_class_names_read_back_to_their_group_and_nothing_else():
    for group in range(8):
        assert _vendor_nxos.queuing_class_group(_vendor_nxos.queuing_class(group)) == group
        assert _vendor_nxos.network_qos_class_group(_vendor_nxos.network_qos_class(group)) == group
    for name in ("c-out-8q-q0", "c-out-8q-q8", "c-out-8q-q", "c-out-8q-q10", "c-8q-nq1", "class-default", ""):
        assert _vendor_nxos.queuing_class_group(name) is None, name
    for name in ("c-8q-nq0", "c-8q-nq8", "c-out-8q-q1", "c-8q-nq-default ", ""):
        assert _vendor_nxos.network_qos_class_group(name) is None, name


def test_the_watchdog_interval_numbers_are_ndfcs_not_the_clis():
    # NDFC's fabric setting pfc_watch_int: 101-1000 ms, blank = the system default 100 ms; the CLI's range stays unverified
    assert _vendor_nxos.NDFC_PFC_WATCH_INT_MS_RANGE == (101, 1000) and _vendor_nxos.WATCHDOG_INTERVAL_DEFAULT_MS == 100
    assert _vendor_nxos.WATCHDOG_INTERVAL_MS_RANGE is None
    assert _vendor_nxos.WATCHDOG_ACTIONS == ("drop",)


def test_every_unverified_value_the_driver_needs_is_named_and_exists():
    assert _vendor_nxos.UNVERIFIED == {"ECN_THRESHOLD_UNITS"}
    # issue 31: the watchdog multipliers' syntax has no source; the driver assumes no default for them any more
    for name in ("WATCHDOG_SHUTDOWN_MULTIPLIER_DEFAULT", "WATCHDOG_AUTO_RESTORE_MULTIPLIER_DEFAULT", "WATCHDOG_SHUTDOWN_MULTIPLIER_RANGE"):
        assert not hasattr(_vendor_nxos, name)
    for name in _vendor_nxos.UNVERIFIED:
        assert getattr(_vendor_nxos, name) is not None, name
    assert _vendor_nxos.ECN_THRESHOLD_UNIT in _vendor_nxos.ECN_THRESHOLD_UNITS
    assert _vendor_nxos.ECN_THRESHOLD_BYTES_PER == {"bytes": 1}  # kbytes/mbytes: 1000 or 1024 is unverified


def test_dscp_names_are_the_standard_code_points():
    names = _vendor_nxos.DSCP_NAMES
    assert names["ef"] == 46 and names["default"] == 0 and names["cs7"] == 56 and names["af41"] == 34 and names["af11"] == 10
    assert all(_vendor_nxos.DSCP_RANGE[0] <= code <= _vendor_nxos.DSCP_RANGE[1] for code in names.values())
