# SPDX-License-Identifier: GPL-3.0-or-later
"""The host simulator's Broadcom (bnxt) and AMD (ionic) hosts: the trees (driver links, bnxt_re debugfs,
hw_counters), the rules of the real drivers behind the dcb and ethtool shims (each would pass against the
mlx5-only simulator), and the lab knob lab_nic_driver that makes a mixed host set."""

from __future__ import annotations

import os
import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tests" / "lab"))

from hostsim import plugin, tools, tree  # noqa: E402  # pylint: disable=wrong-import-position

NICS = [{"name": "nic0", "netdev": "eth2"}]


def build(tmp_path, stack, **options):
    root = str(tmp_path / "root")
    tree.build(root, NICS, stack, **options)
    return root


@pytest.mark.parametrize("stack,driver,ids", [("bnxt", "bnxt_en", ("0x14e4", "0x1760")), ("ionic", "ionic", ("0x1dd8", "0x1002")),
                                              ("upstream", "mlx5_core", ("0x15b3", "0x1021"))])
def test_each_nic_is_bound_to_its_driver(tmp_path, stack, driver, ids):
    root = build(tmp_path, stack)
    dev = os.path.join(root, "sys/class/net/eth2/device")
    assert os.path.basename(os.path.realpath(os.path.join(dev, "driver"))) == driver
    assert (pathlib.Path(dev, "vendor").read_text().strip(), pathlib.Path(dev, "device").read_text().strip()) == ids


def test_bnxt_tree_has_cc_config_and_bnxt_re_counters_ionic_has_neither(tmp_path):
    bnxt = build(tmp_path / "b", "bnxt")
    cc = pathlib.Path(bnxt, "sys/kernel/debug/bnxt_re/0000:3b:00.0/cc_config")
    assert {"enable_cc", "tos_ecn", "cc_mode", "alt_vlan_pcp", "alt_vlan_dscp"} <= set(os.listdir(cc))
    counters = set(os.listdir(pathlib.Path(bnxt, "sys/class/infiniband/nic0/ports/1/hw_counters")))
    assert {"tx_cnp_pkts", "rx_cnp_pkts", "oos_drop_count"} <= counters and "np_cnp_sent" not in counters
    assert not pathlib.Path(build(tmp_path / "n", "bnxt", debugfs=False), "sys/kernel/debug/bnxt_re").exists()
    ionic = build(tmp_path / "i", "ionic")
    assert not pathlib.Path(ionic, "sys/class/infiniband/nic0/ports/1/hw_counters").exists()
    assert not pathlib.Path(ionic, "sys/kernel/debug").exists()


def test_bnxt_refuses_pfc_until_the_host_set_ets(tmp_path):
    """bnxt_dcb.c bnxt_hwrm_queue_pfc_cfg: -EINVAL while bp->ieee_ets is NULL (the mlx5 shim takes PFC at once)."""
    root = build(tmp_path, "bnxt")
    with pytest.raises(tools.ToolError, match="^Error when attempting to set attribute: Invalid argument$"):
        tools.dcb(root, ["pfc", "set", "dev", "eth2", "prio-pfc", "3:on"])
    assert tree.load(root)["nics"]["eth2"]["pfc"] == [0] * 8
    tools.dcb(root, ["ets", "set", "dev", "eth2", "tc-tsa", "0:ets", "1:ets", "tc-bw", "0:50", "1:50", "prio-tc", "3:1"])
    tools.dcb(root, ["pfc", "set", "dev", "eth2", "prio-pfc", "3:on"])
    assert tree.load(root)["nics"]["eth2"]["pfc"] == [0, 0, 0, 1, 0, 0, 0, 0]
    shown = tools.dcb(root, ["ets", "show", "dev", "eth2"])
    assert "tc-bw 0:50 1:50 2:0 3:0 4:0 5:0 6:0 7:0 \n" in shown and "prio-tc 0:0 1:0 2:0 3:1 4:0 5:0 6:0 7:0 \n" in shown


def test_dcb_ets_checks_bandwidth_and_tsa_like_dcb_and_bnxt_en(tmp_path):
    root = build(tmp_path, "bnxt")
    with pytest.raises(tools.ToolError, match=r"^Bandwidth percentages in tc-bw sum to 60%, expected 100%$"):
        tools.dcb(root, ["ets", "set", "dev", "eth2", "tc-tsa", "0:ets", "tc-bw", "0:60"])
    with pytest.raises(tools.ToolError, match="Unknown error 524"):
        tools.dcb(root, ["ets", "set", "dev", "eth2", "tc-tsa", "0:cbs"])
    assert tree.load(root)["nics"]["eth2"]["ets_host"] is False


def test_ionic_has_no_dcb(tmp_path):
    """net/dcb/dcbnl.c dcb_doit: no dcbnl_ops -> -EOPNOTSUPP; dcb reads first and says so (dcb.c perror)."""
    root = build(tmp_path, "ionic")
    for argv in (["app", "show", "dev", "eth2"], ["pfc", "set", "dev", "eth2", "prio-pfc", "3:on"], ["ets", "show", "dev", "eth2"]):
        with pytest.raises(tools.ToolError, match="^Attribute read: Operation not supported$"):
            tools.dcb(root, argv)


def test_ethtool_statistics_carry_each_drivers_names(tmp_path):
    bnxt, ionic = build(tmp_path / "b", "bnxt"), build(tmp_path / "i", "ionic")
    state = tree.load(bnxt)
    state["nics"]["eth2"]["stats"] = {"rx_prio3_bytes": 5, "rx_prio3_pause": 2, "rx_prio3_pause_duration": 9}
    tree.save(bnxt, state)
    out = tools.ethtool(bnxt, ["-S", "eth2"])
    assert "rx_prio3_bytes" not in out and "rx_pfc_ena_frames_pri3: " in out and "pfc_pri3_rx_duration_us: " in out
    assert "rx_bytes_pri3: 5" in out and "rx_bytes_pri0: 0" in out  # a read moves nothing (the lab's launches do: tests/lab/traffic.py)
    out = tools.ethtool(ionic, ["-S", "eth2"])
    assert "rx_pripause_3_1us_count: 0" in out and "frames_rx_pri_0: 0" in out and "rx_prio" not in out


def test_ionic_reports_pause_autoneg_off(tmp_path):
    assert "Autonegotiate:\toff" in tools.ethtool(build(tmp_path, "ionic"), ["-a", "eth2"])


def test_lab_nic_driver_picks_the_vendor(tmp_path):
    assert plugin.lab_stack("gpu3", {"lab_nic_driver": "bnxt_re"}) == "bnxt"
    assert plugin.lab_stack("gpu4", {"lab_nic_drivers": {"gpu4": "ionic"}}) == "ionic"
    assert plugin.lab_stack("gpu1", {"lab_nic_stacks": {"gpu1": "mlnx"}}) == "mlnx"
    assert plugin.lab_stack("gpu2", {}) == "upstream"
    with pytest.raises(ValueError, match="gpu5: lab_nic_driver 'qede' is not one of mlx5, bnxt_re, ionic"):
        plugin.lab_stack("gpu5", {"lab_nic_driver": "qede"})
