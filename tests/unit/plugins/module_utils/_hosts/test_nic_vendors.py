# SPDX-License-Identifier: GPL-3.0-or-later
"""The bnxt (Broadcom bnxt_en / bnxt_re) and ionic (AMD ionic) stacks of nic_qos and nic_counters
(_nic_bnxt.py, _nic_ionic.py), end to end on lab host trees (tests/lab/hostsim): detection by the
bound driver, ETS before PFC on bnxt, the congestion control in bnxt_re's debugfs, the fabric modes'
plans (PFC all off, DCQCN off), what ionic cannot take with the reason, and the counters of each
driver under the snapshot's names."""

from __future__ import annotations

import pathlib
import sys

import pytest

from ansible_collections.lossless.fabric.plugins.module_utils._hosts import _nic, _nic_task
from ansible_collections.lossless.fabric.plugins.module_utils._hosts._nic import Fs, NicError
from ansible_collections.lossless.fabric.plugins.module_utils._hosts._nic_bnxt import ets_for, roce_priority
from ansible_collections.lossless.fabric.plugins.module_utils._intent import _plan
from ansible_collections.lossless.fabric.plugins.module_utils._intent._tables import IntentError

ROOT = pathlib.Path(__file__).resolve().parents[5]
sys.path.insert(0, str(ROOT / "tests" / "lab"))

from hostsim import tools, tree  # noqa: E402  # pylint: disable=wrong-import-position
from hostsim.plugin import make_host  # noqa: E402  # pylint: disable=wrong-import-position

BNXT = [{"name": "bnxt_re0", "netdev": "eth2"}]
IONIC = [{"name": "ionic_0", "netdev": "eth2"}]
INTENT = {"name": "t", "transport": "roce", "roce": {}}


def plan_for(nics, **roce):
    device = {"kind": "host", "nics": [dict(n, speed="400G") for n in nics]}
    return _plan.build_plan(dict(INTENT, roce=roce), {"gpu1": device})["devices"]["gpu1"]


class Host:
    """A lab host tree and an in-process runner over the shims the lab's bin/ calls."""

    def __init__(self, tmp_path, stack, nics, **options):
        self.nics = nics
        self.root = make_host(str(tmp_path / "host"), nics, stack, sys.executable, **options)["lab_host_root"]
        self.calls = []

    def runner(self, argv):
        self.calls.append(list(argv))
        try:
            return 0, tools.TOOLS[argv[0]](self.root, list(argv[1:])), ""
        except tools.ToolError as exc:
            return exc.rc, "", str(exc)

    def which(self, name):
        return name if name in tools.TOOLS else None

    def qos(self, plan=None, check=False, **params):
        args = {"plan": plan or plan_for(self.nics), "root": self.root, "state": "present", "stack": "auto"}
        args.update(params)
        return _nic_task.run_qos(args, self.runner, self.which, check)

    def read(self, rel):
        return pathlib.Path(self.root, rel).read_text().strip()


CC = "sys/kernel/debug/bnxt_re/0000:3b:00.0/cc_config/"


# ---------------------------------------------------------------------------
# detection
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("stack,nics", [("bnxt", BNXT), ("ionic", IONIC), ("mlnx", BNXT), ("upstream", BNXT)])
def test_the_stack_is_the_bound_driver(tmp_path, stack, nics):
    host = Host(tmp_path, stack, nics)
    fs = Fs(host.root)
    assert _nic.nic_driver(fs, "eth2") == {"bnxt": "bnxt_en", "ionic": "ionic"}.get(stack, "mlx5_core")
    assert _nic.detect_stack(fs, {"name": nics[0]["name"], "netdev": "eth2"}) == stack


def test_a_driver_without_a_stack_is_refused_naming_it(tmp_path):
    host = Host(tmp_path, "bnxt", BNXT)
    drivers = pathlib.Path(host.root, "sys/bus/pci/drivers")
    (drivers / "ice").mkdir()
    link = pathlib.Path(host.root, "sys/devices/pci0000:00/0000:3b:00.0/driver")
    link.unlink()
    link.symlink_to("../../../bus/pci/drivers/ice")
    with pytest.raises(NicError, match=r"bnxt_re0 \(eth2\): driver ice has no nic_qos stack \(drivers with one: bnxt_en, ionic, mlx5_core\)"):
        host.qos()


def test_device_data_stack_overrides_detection_and_is_checked(tmp_path):
    host = Host(tmp_path, "bnxt", BNXT)
    plan = plan_for(BNXT)
    plan["nics"][0]["stack"] = "ionic"
    assert host.qos(plan, check=True)["nics"]["bnxt_re0"]["stack"] == "ionic"
    plan["nics"][0]["stack"] = "qlogic"
    with pytest.raises(NicError, match="plan nics stack 'qlogic' is not one of mlnx, upstream, bnxt, ionic"):
        host.qos(plan, check=True)


# ---------------------------------------------------------------------------
# bnxt
# ---------------------------------------------------------------------------


def test_bnxt_first_run_sets_ets_before_pfc_then_changes_nothing(tmp_path):
    host = Host(tmp_path, "bnxt", BNXT)
    plan = plan_for(BNXT)
    first = host.qos(plan)
    report = first["nics"]["bnxt_re0"]
    assert report["stack"] == "bnxt" and report["driver"] == "bnxt_en" and first["drivers"] == {"eth2": "bnxt_en"}
    assert set(report["changes"]) == {"trust", "dscp_map", "ets", "pfc", "global_pause", "dcqcn", "cnp", "rdma_cm_tos", "roce_mode", "mtu"}
    assert [u["setting"] for u in first["unsupported"]] == ["traffic_class"]
    commands = first["commands"]
    ets = next(i for i, c in enumerate(commands) if c.startswith("dcb ets set"))
    assert ets < next(i for i, c in enumerate(commands) if c.startswith("dcb pfc set"))
    # bnxt_setupcc.sh's ETS: RoCE priority in TC 1, the rest in TC 0, 50/50
    assert roce_priority(plan) == 3
    assert commands[ets] == ("dcb ets set dev eth2 tc-tsa 0:ets 1:ets 2:strict 3:strict 4:strict 5:strict 6:strict 7:strict "
                             "tc-bw 0:50 1:50 2:0 3:0 4:0 5:0 6:0 7:0 prio-tc 0:0 1:0 2:0 3:1 4:0 5:0 6:0 7:0")
    state = tree.load(host.root)["nics"]["eth2"]
    assert state["pfc"] == [0, 0, 0, 1, 0, 0, 0, 0] and state["trust"] == "dscp" and [26, 3] in state["app"]
    assert state["ets"] == ets_for(3) and state["pause"] == {"autoneg": "off", "rx": "off", "tx": "off"}
    assert [host.read(CC + f) for f in ("enable_cc", "tos_ecn", "cc_mode", "alt_vlan_dscp", "alt_vlan_pcp")] == ["1", "1", "1", "48", "6"]
    assert host.read("sys/kernel/config/rdma_cm/bnxt_re0/ports/1/default_roce_tos") == "106"
    second = host.qos(plan)
    assert second["changed"] is False and second["commands"] == []
    # persisted as on mlx5: every step again at boot, ETS first
    persist = first["persist"]["eth2"]
    assert persist.index(commands[ets]) < next(i for i, c in enumerate(persist) if c.startswith("dcb pfc set"))
    assert "echo 1 > /sys/kernel/debug/bnxt_re/0000:3b:00.0/cc_config/enable_cc" in persist


def test_bnxt_check_mode_reads_the_real_values(tmp_path):
    host = Host(tmp_path, "bnxt", BNXT)
    host.qos()
    pathlib.Path(host.root, CC + "enable_cc").write_text("0\n")
    checked = host.qos(check=True)
    assert checked["changed"] is True and checked["nics"]["bnxt_re0"]["changes"] == ["dcqcn"]
    assert "bnxt_re0 (eth2) dcqcn: " in checked["diff"]["before"] and host.read(CC + "enable_cc") == "0"
    assert checked["commands"] == ["echo 1 > %s" % ("/" + CC + f) for f in ("enable_cc", "tos_ecn", "cc_mode")]


def test_bnxt_ecn_only_plan_turns_pfc_all_off_and_keeps_dcqcn(tmp_path):
    """roce.mode ecn_only (h/modes): pfc_priorities [], pfc_bitmap zeros: PFC all off, no global-pause change, DCQCN on."""
    host = Host(tmp_path, "bnxt", BNXT)
    host.qos()
    plan = plan_for(BNXT)
    plan["pfc_priorities"] = []
    result = host.qos(plan)
    assert result["nics"]["bnxt_re0"]["changes"] == ["pfc"]
    assert "dcb pfc set dev eth2 prio-pfc 0:off 1:off 2:off 3:off 4:off 5:off 6:off 7:off" in result["commands"]
    assert tree.load(host.root)["nics"]["eth2"]["pfc"] == [0] * 8 and host.read(CC + "enable_cc") == "1"
    assert host.qos(plan)["changed"] is False


def test_bnxt_pfc_only_plan_turns_congestion_control_off(tmp_path):
    """roce.mode pfc_only (h/modes): dcqcn.enabled false -> enable_cc 0 and tos_ecn 0, as bnxt_setupcc.sh does for PFC only."""
    host = Host(tmp_path, "bnxt", BNXT)
    host.qos()
    plan = plan_for(BNXT)
    plan["dcqcn"]["enabled"] = False
    result = host.qos(plan)
    assert result["nics"]["bnxt_re0"]["changes"] == ["dcqcn"]
    assert host.read(CC + "enable_cc") == "0" and host.read(CC + "tos_ecn") == "0"
    assert host.qos(plan)["changed"] is False


def test_bnxt_without_debugfs_says_so_for_congestion_control(tmp_path):
    host = Host(tmp_path, "bnxt", BNXT, debugfs=False)
    reasons = {u["setting"]: u["reason"] for u in host.qos()["unsupported"]}
    assert sorted(reasons) == ["cnp", "dcqcn", "traffic_class"]
    assert reasons["dcqcn"].startswith("bnxt_re congestion control is set through debugfs: mount it")


def test_bnxt_restore_puts_back_what_was_gathered(tmp_path):
    host = Host(tmp_path, "bnxt", BNXT)
    gathered = host.qos(state="gathered")
    host.qos()
    restored = host.qos(plan=None, state="restored", restore=gathered)
    assert restored["changed"] is True
    state = tree.load(host.root)["nics"]["eth2"]
    assert state["ets"] == {"tc_bw": [0] * 8, "tc_tsa": ["strict"] * 8, "prio_tc": [0] * 8}
    assert state["app"] == [] and state["pfc"] == [0] * 8 and host.read(CC + "enable_cc") == "0"


def test_parse_dcb_ets_refuses_what_it_does_not_know():
    ok = _nic.parse_dcb_ets("willing off ets-cap 8 cbs off \ntc-bw 0:50 1:50 2:0 3:0 4:0 5:0 6:0 7:0 \n"
                            "tc-tsa 0:ets 1:ets 2:strict 3:strict 4:strict 5:strict 6:strict 7:strict \n"
                            "prio-tc 0:0 1:0 2:0 3:1 4:0 5:0 6:0 7:0 \n")
    assert ok == ets_for(3)
    with pytest.raises(NicError, match="a TSA is one of strict, cbs, ets, vendor"):
        _nic.parse_dcb_ets("tc-tsa 0:wrr 1:ets 2:strict 3:strict 4:strict 5:strict 6:strict 7:strict\n")
    with pytest.raises(NicError, match="has not 8 entries"):
        _nic.parse_dcb_ets("prio-tc 0:0 1:0\n")


# ---------------------------------------------------------------------------
# ionic
# ---------------------------------------------------------------------------


def test_ionic_takes_what_the_kernel_offers_and_says_why_not_the_rest(tmp_path):
    host = Host(tmp_path, "ionic", IONIC)
    first = host.qos()
    report = first["nics"]["ionic_0"]
    assert report["stack"] == "ionic" and report["driver"] == "ionic"
    assert set(report["changes"]) == {"global_pause", "rdma_cm_tos", "roce_mode", "mtu"}
    reasons = {u["setting"]: u["reason"] for u in first["unsupported"]}
    assert sorted(reasons) == ["cnp", "dcqcn", "dscp_map", "pfc", "traffic_class", "trust"]
    assert reasons["pfc"].startswith("mainline ionic registers no DCBNL ops") and "unverified" in reasons["pfc"]
    assert reasons["dcqcn"].startswith("the ionic RDMA driver (drivers/infiniband/hw/ionic) exposes no congestion-control file")
    assert not any(c[0] == "dcb" for c in host.calls)
    assert tree.load(host.root)["nics"]["eth2"]["pause"] == {"autoneg": "off", "rx": "off", "tx": "off"}
    assert host.qos()["changed"] is False


# ---------------------------------------------------------------------------
# counters
# ---------------------------------------------------------------------------


def _counters(host, nics):
    return _nic_task.run_counters({"root": host.root, "nics": [n["name"] for n in nics], "priorities": [3]}, host.runner, "h1")["counters"]


def test_bnxt_counters_under_the_snapshot_names(tmp_path):
    host = Host(tmp_path, "bnxt", BNXT)
    host.qos()
    pathlib.Path(host.root, "sys/class/infiniband/bnxt_re0/ports/1/hw_counters/tx_cnp_pkts").write_text("7\n")
    pathlib.Path(host.root, "sys/class/infiniband/bnxt_re0/ports/1/hw_counters/oos_drop_count").write_text("2\n")
    # what a lab launch leaves in the host state (mlx5-named stats, tests/lab/traffic.py), rendered under bnxt_en's names
    state = tree.load(host.root)
    state["nics"]["eth2"]["stats"].update({"rx_prio3_bytes": 1048576, "tx_prio3_bytes": 1048576, "rx_prio3_packets": 256,
                                           "tx_prio3_packets": 256, "rx_prio3_pause": 2, "rx_prio3_pause_duration": 10})
    tree.save(host.root, state)
    snap = _counters(host, BNXT)
    port = snap["ports"]["bnxt_re0"]
    assert snap["platform"] == "bnxt"
    # the lab's traffic (DSCP 26 -> priority 3, lossless) under bnxt_en's names, read back under the snapshot's
    assert port["rx_prio_bytes"] == {"3": 1048576} and port["tx_prio_packets"] == {"3": 256}
    assert port["pfc_rx_frames"] == {"3": 2} and port["pfc_rx_duration"] == {"3": 10}
    assert port["np_cnp_sent"] == 7 and port["out_of_sequence"] == 2 and port["packet_seq_err"] == 0
    assert "rx_discards_phy" in snap["not_available"] and "rp_cnp_ignored" in snap["not_available"]
    assert "rx_bytes_pri3: 1048576" in snap["raw"]["ethtool -S eth2"]


def test_ionic_counters_list_what_is_not_there(tmp_path):
    host = Host(tmp_path, "ionic", IONIC)
    snap = _counters(host, IONIC)
    port = snap["ports"]["ionic_0"]
    # trust pcp (no DCB on ionic): the lab's traffic is on priority 0, lossy; priority 3 saw no pause time
    assert port == {"pfc_rx_duration": {"3": 0}, "pfc_tx_duration": {"3": 0}, "rx_crc_errors_phy": 0}
    for name in ("np_cnp_sent", "rp_cnp_handled", "out_of_sequence", "rx_prio_bytes", "pfc_rx_frames"):
        assert name in snap["not_available"]


def test_the_device_data_names_the_stack_over_the_bound_driver(tmp_path):
    """lossless_fabric_device.nics[].stack reaches the host plan, and nic_qos takes it over what the driver link says."""
    host = Host(tmp_path, "bnxt", BNXT)
    plan = plan_for([dict(n, stack="ionic") for n in BNXT])
    assert [n["stack"] for n in plan["nics"]] == ["ionic"] * len(BNXT)
    assert {r["stack"] for r in host.qos(plan)["nics"].values()} == {"ionic"}
    assert {r["stack"] for r in host.qos()["nics"].values()} == {"bnxt"}  # without it: the bound driver's


def test_a_stack_the_collection_does_not_drive_is_refused_naming_the_key():
    with pytest.raises(IntentError, match=r"gpu1: lossless_fabric_device\.nics\[0\]\.stack: 'mlx4' is not a NIC stack"):
        plan_for([dict(BNXT[0], stack="mlx4")])
