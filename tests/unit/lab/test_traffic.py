# SPDX-License-Identifier: GPL-3.0-or-later
"""The lab's traffic ledger (tests/lab/traffic.py): which priority and queue an NCCL launch's RDMA traffic lands on
from the simulated NIC state and the launch's env, which switch ports it crosses, the counters it moves (bytes,
pauses, ECN marks, CNPs, drops, sequence errors), the four lab_traffic_faults and their validation, the switch
simulator's counter increments, and the launchers' hooks (mpirun shim, k8sim MPIJob)."""
from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tests" / "lab"))

import launcher  # noqa: E402  # pylint: disable=wrong-import-position
import traffic  # noqa: E402  # pylint: disable=wrong-import-position
from hostsim import tools, tree  # noqa: E402  # pylint: disable=wrong-import-position
from nccl import perfmodel  # noqa: E402  # pylint: disable=wrong-import-position
from switchsim.core import Device, SimError  # noqa: E402  # pylint: disable=wrong-import-position

BIN = ROOT / "tests" / "lab" / "nccl" / "bin"
INTENT = {"roce": {"trust": "dscp", "data": {"dscp": 26, "priority": 3}, "cnp": {"dscp": 48, "priority": 6},
                   "pfc": {"priorities": [3]}, "dcqcn": {"enabled": True}}}
NCCL_ENV = {"NCCL_IB_TC": "106"}  # the plan's NCCL_IB_TC: DSCP 26 x 4 + ECT(0)... (26 << 2) | 2
ARGS = ["-b", "1G", "-e", "1G", "-n", "1", "-w", "0"]  # one size, one iteration out of and in place: 2 GiB per host
GIB = 1 << 30


def cable(a, b):
    def end(text):
        dev, name = text.split(":", 1)
        return [dev, "nic" if name.startswith("mlx5") else "port", name]
    return [end(a), end(b), "400G", True]


# The lab's shape: rail 0 of both hosts on leaf1; rail 1 of gpu1 on leaf2, of gpu2 on leaf3 (across a spine).
CABLES = [cable("gpu1:mlx5_0", "leaf1:swp1"), cable("gpu2:mlx5_0", "leaf1:swp2"),
          cable("gpu1:mlx5_1", "leaf2:swp1"), cable("gpu2:mlx5_1", "leaf3:swp2"),
          cable("leaf2:swp31", "spine1:Ethernet1/1"), cable("leaf3:swp31", "spine1:Ethernet2/1")]
NICS = [{"name": "mlx5_0", "netdev": "eth2"}, {"name": "mlx5_1", "netdev": "eth3"}]


def _w(root, rel, value):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("%s\n" % value)


def configure(root, stack):
    """What nic_qos leaves on a lab host for the intent above (trust dscp, 26 -> 3, 48 -> 6, PFC 3, DCQCN on 3, CNPs
    on 6 with DSCP 48; the vendor driver's device-wide class 106)."""
    state = tree.load(root)
    for netdev, nic in state["nics"].items():
        if stack == "ionic":  # no dcbnl: nic_qos can set nothing (it says so)
            continue
        nic["trust"] = "dscp"
        nic["pfc"] = [0, 0, 0, 1, 0, 0, 0, 0]
        net = "sys/class/net/%s" % netdev
        if stack == "mlnx":
            nic["dscp_map"]["26"], nic["dscp_map"]["48"] = 3, 6
            for point in ("np", "rp"):
                _w(root, "%s/ecn/roce_%s/enable/3" % (net, point), 1)
            _w(root, net + "/ecn/roce_np/cnp_802p_prio", 6)
            _w(root, net + "/ecn/roce_np/cnp_dscp", 48)
            _w(root, "sys/class/infiniband/%s/tc/1/traffic_class" % nic["name"], "Global tclass=106")
        elif stack == "bnxt":  # as nic_qos sets it on bnxt (dcb app, cc_config: _nic_bnxt.py)
            nic["app"] = [[26, 3], [48, 6]]
            cc = "sys/kernel/debug/bnxt_re/%s/cc_config" % tree.pci_address(sorted(state["nics"]).index(netdev))
            for name, value in (("enable_cc", 1), ("tos_ecn", 1), ("cc_mode", 1), ("alt_vlan_pcp", 6), ("alt_vlan_dscp", 48)):
                _w(root, "%s/%s" % (cc, name), value)
        else:
            nic["app"] = [[26, 3], [48, 6]]
            cc = "sys/kernel/debug/mlx5/%s/cc_params" % tree.pci_address(sorted(state["nics"]).index(netdev))
            _w(root, cc + "/np_cnp_dscp", 48)
            _w(root, cc + "/np_cnp_prio_mode", 0)
            _w(root, cc + "/np_cnp_prio", 6)
    tree.save(root, state)


def make_lab(run_dir, faults=(), configured=True, intent=None, stacks=(("gpu1", "mlnx"), ("gpu2", "upstream"))):
    run_dir = str(run_dir)
    os.makedirs(run_dir, exist_ok=True)
    with open(os.path.join(run_dir, "wiring.json"), "w", encoding="utf-8") as handle:
        json.dump({"links": CABLES}, handle)
    for host, stack in stacks:
        root = traffic.host_root(run_dir, host)
        tree.build(root, NICS, stack)
        if configured:
            configure(root, stack)
    traffic.write_config(run_dir, list(faults), intent or INTENT, CABLES)
    return run_dir


def launch(run_dir, env=None, hosts=("gpu1", "gpu2")):
    """One all_reduce over both hosts (one rank each, 2 GPUs each: both rails); (switch counters added, decisions)."""
    config = traffic.load_config(run_dir)
    args = perfmodel.parse_test_args(ARGS + ["-g", "2"])
    ledger, decisions = traffic.ledger_for(run_dir, config, "all_reduce", list(hosts), {h: 1 for h in hosts}, args,
                                           dict(NCCL_ENV if env is None else env))
    seen: dict = {}

    def sink(switch, port, counters):
        seen.setdefault(switch, {})[port] = counters
    traffic.apply(run_dir, ledger, sink)
    return seen, {(d["src"], d["dst"]): d for d in decisions}


def stats(run_dir, host, netdev):
    return tree.load(traffic.host_root(run_dir, host))["nics"][netdev]["stats"]


def hw(run_dir, host, nic, name):
    path = os.path.join(traffic.host_root(run_dir, host), "sys/class/infiniband/%s/ports/1/hw_counters/%s" % (nic, name))
    with open(path, encoding="utf-8") as handle:
        return int(handle.read())


def roce_share(st, direction="tx", priority=3):
    total = sum(v for k, v in st.items() if k.startswith(direction + "_prio") and k.endswith("_bytes"))
    return st.get("%s_prio%d_bytes" % (direction, priority), 0) / total


# ------------------------------------------------------------------ a healthy launch

def test_a_healthy_launch_rides_the_roce_priority_and_queue_end_to_end(tmp_path):
    run_dir = make_lab(tmp_path)
    seen, decisions = launch(run_dir)
    assert sorted(decisions) == [("gpu1:mlx5_0", "gpu2:mlx5_0"), ("gpu1:mlx5_1", "gpu2:mlx5_1"),
                                 ("gpu2:mlx5_0", "gpu1:mlx5_0"), ("gpu2:mlx5_1", "gpu1:mlx5_1")]
    same = decisions[("gpu1:mlx5_0", "gpu2:mlx5_0")]
    assert (same["dscp"], same["tx_priority"], same["rx_priority"], same["queues"]) == (26, 3, 3, [3])
    assert same["hops"] == [("leaf1", "swp1", "swp2")]
    assert same["drops"] == 0 and same["marks"] > 0 and same["cnps"] == same["marks"] and same["pauses"] > 0
    assert (same["cnp_priority"], same["cnp_dscp"], same["cnp_queues"], same["cnp_rx_priority"]) == (6, 48, [6], 6)
    across = decisions[("gpu1:mlx5_1", "gpu2:mlx5_1")]
    assert across["hops"] == [("leaf2", "swp1", "swp31"), ("spine1", "Ethernet1/1", "Ethernet2/1"), ("leaf3", "swp31", "swp2")]
    # 2 GiB per host (2 hosts: all_reduce's bus factor 1) over 2 rails: 1 GiB of payload per NIC, in 4096-byte
    # packets with 62 bytes of headers
    packets = GIB // 4096
    for host in ("gpu1", "gpu2"):
        for netdev in ("eth2", "eth3"):
            st = stats(run_dir, host, netdev)
            assert st["tx_prio3_packets"] == packets and st["tx_prio3_bytes"] == GIB + packets * 62
            assert roce_share(st) > 0.999 and roce_share(st, "rx") > 0.999
            assert st["tx_prio6_packets"] > 0 and st["rx_prio6_packets"] > 0  # CNPs on the CNP priority, both ways
            assert st["rx_prio3_pause"] == packets // traffic.PAUSE_EVERY
    for host, nic in (("gpu1", "mlx5_0"), ("gpu2", "mlx5_1")):
        assert hw(run_dir, host, nic, "np_cnp_sent") == hw(run_dir, host, nic, "np_ecn_marked_roce_packets") > 0
        assert hw(run_dir, host, nic, "rp_cnp_handled") > 0
        assert hw(run_dir, host, nic, "out_of_sequence") == hw(run_dir, host, nic, "packet_seq_err") == 0
    # the switch ports: data on queue 3 where each leaf sends to its host and on the uplinks, CNPs on queue 6,
    # marks at the receiver-facing queue, pauses back towards the sender, nothing dropped
    leaf1 = seen["leaf1"]
    assert leaf1["swp2"]["tx_packets"][3] == packets and leaf1["swp1"]["tx_packets"][3] == packets
    assert leaf1["swp2"]["tx_packets"][6] > 0 and leaf1["swp2"]["ecn_marked"][3] > 0
    assert leaf1["swp1"]["pfc_tx"][3] > 0 and "queue_drops" not in leaf1["swp1"]
    assert seen["leaf2"]["swp31"]["tx_packets"][3] == packets and seen["spine1"]["Ethernet2/1"]["tx_packets"][3] == packets
    assert seen["leaf2"]["swp31"]["pfc_rx"][3] > 0  # the spine paused leaf2's uplink on priority 3
    assert sum(seen["leaf3"]["swp2"]["tx_packets"]) - seen["leaf3"]["swp2"]["tx_packets"][3] == seen["leaf3"]["swp2"]["tx_packets"][6]


def test_counters_add_up_over_launches_and_are_deterministic(tmp_path):
    one, two = make_lab(tmp_path / "a"), make_lab(tmp_path / "b")
    first, _d = launch(one)
    launch(two)
    launch(two)
    assert stats(two, "gpu1", "eth2")["tx_prio3_bytes"] == 2 * stats(one, "gpu1", "eth2")["tx_prio3_bytes"]
    assert hw(two, "gpu2", "mlx5_0", "np_cnp_sent") == 2 * hw(one, "gpu2", "mlx5_0", "np_cnp_sent")
    again, _d = launch(make_lab(tmp_path / "c"))
    assert again == first


def test_unconfigured_hosts_send_on_priority_0_and_drop_there(tmp_path):
    """Before nic_qos (trust pcp, no PFC): the NIC puts DSCP 26 on priority 0; the switch still queues it on 3
    (its own DSCP map), the NIC does not honour the pauses on 3, the switch's lossless ingress overflows."""
    run_dir = make_lab(tmp_path, configured=False)
    seen, decisions = launch(run_dir)
    d = decisions[("gpu1:mlx5_0", "gpu2:mlx5_0")]
    assert (d["tx_priority"], d["rx_priority"], d["queues"]) == (0, 0, [3]) and d["drops"] > 0
    assert stats(run_dir, "gpu1", "eth2").get("tx_prio3_bytes", 0) == 0 and stats(run_dir, "gpu1", "eth2")["tx_prio0_bytes"] > 0
    assert seen["leaf1"]["swp1"]["pg_discards"][3] == d["drops"]
    assert hw(run_dir, "gpu2", "mlx5_0", "out_of_sequence") == d["drops"] and hw(run_dir, "gpu1", "mlx5_0", "packet_seq_err") > 0
    # DCQCN: the vendor driver's host has it off on every priority until nic_qos; the upstream one follows the
    # firmware's ROCE_CC_PRIO_MASK (default 255: every priority), so it notifies even on priority 0
    assert hw(run_dir, "gpu1", "mlx5_0", "np_cnp_sent") == 0 and hw(run_dir, "gpu2", "mlx5_0", "np_cnp_sent") > 0


def test_one_host_or_no_config_or_infiniband_moves_nothing(tmp_path):
    run_dir = make_lab(tmp_path)
    seen, decisions = launch(run_dir, hosts=("gpu1",))
    assert (seen, decisions) == ({}, {})
    ib = make_lab(tmp_path / "ib", intent=dict(INTENT, transport="infiniband"))
    assert launch(ib) == ({}, {}) and stats(ib, "gpu1", "eth2") == {}
    assert traffic.record_launch(str(tmp_path / "nowhere"), "all_reduce", ["gpu1", "gpu2"], {"gpu1": 1, "gpu2": 1}, ARGS, {}) == []


def test_ethtool_reads_no_longer_invent_traffic(tmp_path):
    run_dir = make_lab(tmp_path)
    root = traffic.host_root(run_dir, "gpu1")
    before = tools.ethtool(root, ["-S", "eth2"])
    assert tools.ethtool(root, ["-S", "eth2"]) == before
    launch(run_dir)
    after = tools.ethtool(root, ["-S", "eth2"])
    assert "tx_prio3_bytes: %d" % stats(run_dir, "gpu1", "eth2")["tx_prio3_bytes"] in after


# ------------------------------------------------------------------ the faults

def test_no_traffic_class_puts_that_hosts_data_on_priority_0(tmp_path):
    run_dir = make_lab(tmp_path, [{"kind": "no_traffic_class", "host": "gpu1"}])
    seen, decisions = launch(run_dir)
    d = decisions[("gpu1:mlx5_0", "gpu2:mlx5_0")]
    assert (d["dscp"], d["tx_priority"], d["queues"]) == (0, 0, [0]) and d["drops"] > 0
    assert roce_share(stats(run_dir, "gpu1", "eth2")) < 0.01 and roce_share(stats(run_dir, "gpu2", "eth2")) > 0.99
    assert seen["leaf1"]["swp2"]["tx_packets"][0] > 0 and seen["leaf1"]["swp2"]["queue_drops"][0] == d["drops"]
    assert decisions[("gpu2:mlx5_0", "gpu1:mlx5_0")]["tx_priority"] == 3  # gpu2 keeps its class


def test_no_traffic_class_without_the_fault_uses_the_env_then_the_device_class(tmp_path):
    run_dir = make_lab(tmp_path)
    _seen, decisions = launch(run_dir, env={})  # no NCCL_IB_TC: gpu1 (vendor driver) has its device-wide 106
    assert decisions[("gpu1:mlx5_0", "gpu2:mlx5_0")]["dscp"] == 26
    assert decisions[("gpu2:mlx5_0", "gpu1:mlx5_0")]["dscp"] == 0  # the upstream host has none: class 0


def test_pcp_trust_on_one_nic(tmp_path):
    run_dir = make_lab(tmp_path, [{"kind": "pcp_trust", "nic": "gpu1:mlx5_0"}])
    seen, decisions = launch(run_dir)
    d = decisions[("gpu1:mlx5_0", "gpu2:mlx5_0")]
    assert (d["dscp"], d["tx_priority"], d["rx_priority"], d["queues"]) == (26, 0, 3, [3])
    assert roce_share(stats(run_dir, "gpu1", "eth2")) < 0.01 and roce_share(stats(run_dir, "gpu1", "eth3")) > 0.99
    assert seen["leaf1"]["swp1"]["pg_discards"][3] > 0 and seen["leaf1"]["swp1"]["in_discards"] > 0
    assert decisions[("gpu2:mlx5_0", "gpu1:mlx5_0")]["rx_priority"] == 0  # what it receives it classifies by PCP too


def test_switch_map_sends_roce_to_the_default_queue_of_that_switch_only(tmp_path):
    run_dir = make_lab(tmp_path, [{"kind": "switch_map", "switch": "leaf1"}])
    seen, decisions = launch(run_dir)
    d = decisions[("gpu1:mlx5_0", "gpu2:mlx5_0")]
    assert (d["tx_priority"], d["queues"], d["marks"]) == (3, [0], 0) and d["drops"] > 0
    assert seen["leaf1"]["swp2"]["tx_packets"][0] > 0 and seen["leaf1"]["swp2"]["tx_packets"][3] == 0
    assert seen["leaf1"]["swp2"]["queue_drops"][0] == d["drops"]
    assert roce_share(stats(run_dir, "gpu1", "eth2")) > 0.99  # the hosts still send on 3: only the switch is wrong
    assert decisions[("gpu1:mlx5_1", "gpu2:mlx5_1")]["queues"] == [3, 3, 3]  # leaf2, spine1, leaf3 unaffected


def test_no_dcqcn_marks_without_cnps(tmp_path):
    run_dir = make_lab(tmp_path, [{"kind": "no_dcqcn", "nic": "gpu2:mlx5_1"}])
    seen, decisions = launch(run_dir)
    into = decisions[("gpu1:mlx5_1", "gpu2:mlx5_1")]
    assert into["marks"] > 0 and into["cnps"] == 0
    assert seen["leaf3"]["swp2"]["ecn_marked"][3] == into["marks"] and seen["leaf2"]["swp1"]["tx_packets"][6] == 0
    assert hw(run_dir, "gpu2", "mlx5_1", "np_ecn_marked_roce_packets") == into["marks"]
    assert hw(run_dir, "gpu2", "mlx5_1", "np_cnp_sent") == 0 and hw(run_dir, "gpu1", "mlx5_1", "rp_cnp_handled") == 0
    # gpu1 still notifies gpu2's mlx5_1, which ignores the CNPs
    assert hw(run_dir, "gpu2", "mlx5_1", "rp_cnp_handled") == 0 and hw(run_dir, "gpu2", "mlx5_1", "rp_cnp_ignored") > 0
    assert hw(run_dir, "gpu2", "mlx5_0", "np_cnp_sent") > 0  # the other NIC of gpu2 is fine
    assert roce_share(stats(run_dir, "gpu2", "eth3")) > 0.99  # the bytes ride the right class


@pytest.mark.parametrize("faults, message", [
    ({"kind": "pcp_trust"}, "lab_traffic_faults: {'kind': 'pcp_trust'} is not a list"),
    (["gpu1"], "lab_traffic_faults[0]: 'gpu1' is not a mapping"),
    ([{"kind": "slow", "host": "gpu1"}], "lab_traffic_faults[0].kind: 'slow' is not one of no_traffic_class, pcp_trust, switch_map, no_dcqcn"),
    ([{"kind": "no_traffic_class", "host": "gpu9"}], "lab_traffic_faults[0].host: 'gpu9' is no GPU host of the lab wiring (hosts: gpu1, gpu2)"),
    ([{"kind": "pcp_trust", "nic": "gpu1:mlx5_0"}, {"kind": "pcp_trust", "nic": "gpu1:mlx5_7"}],
     "lab_traffic_faults[1].nic: 'gpu1:mlx5_7' is no '<host>:<RDMA device>' of the lab wiring (NICs: gpu1:mlx5_0, "),
    ([{"kind": "no_dcqcn", "nic": "eth3"}], "lab_traffic_faults[0].nic: 'eth3' is no '<host>:<RDMA device>'"),
    ([{"kind": "switch_map", "switch": "leaf9"}],
     "lab_traffic_faults[0].switch: 'leaf9' is no switch of the lab wiring (switches: leaf1, leaf2, leaf3, spine1)"),
    ([{"kind": "switch_map", "host": "leaf1"}], "lab_traffic_faults[0]: switch_map takes kind and switch only, not host"),
])
def test_bad_faults_name_the_key_and_the_value(faults, message):
    with pytest.raises(traffic.TrafficError) as exc:
        traffic.validate_faults(faults, CABLES)
    assert str(exc.value).startswith(message)


def test_modes_change_where_pauses_and_marks_appear(tmp_path):
    ecn_only = {"roce": dict(INTENT["roce"], mode="ecn_only")}
    seen, decisions = launch(make_lab(tmp_path / "e", intent=ecn_only))
    d = decisions[("gpu1:mlx5_0", "gpu2:mlx5_0")]
    assert d["pauses"] == 0 and d["marks"] > 0 and "pfc_tx" not in seen["leaf1"]["swp1"]
    pfc_only = {"roce": dict(INTENT["roce"], mode="pfc_only")}
    _seen, decisions = launch(make_lab(tmp_path / "p", intent=pfc_only))
    d = decisions[("gpu1:mlx5_0", "gpu2:mlx5_0")]
    assert d["pauses"] > 0 and d["marks"] == 0 and d["cnps"] == 0
    with pytest.raises(traffic.TrafficError, match="lossless_fabric.roce.mode: 'both'"):
        traffic.qos_from_intent({"roce": {"mode": "both"}})


# ------------------------------------------------------------------ the switch simulator and the launchers

class _Sim:
    time_scale = 1.0
    config: dict = {}


def test_switch_device_adds_counters_and_refuses_unknown_ones():
    dev = Device({"name": "leaf1", "ports": ["swp1"]}, _Sim())
    dev.add_counters("swp1", {"tx_packets": [0, 0, 0, 5, 0, 0, 0, 0], "ecn_marked": {"3": 2}, "tx_octets": 100})
    dev.add_counters("swp1", {"tx_packets": {"3": 1}, "tx_octets": 1})
    assert dev.counters["swp1"]["tx_packets"][3] == 6 and dev.counters["swp1"]["ecn_marked"][3] == 2
    assert dev.counters["swp1"]["tx_octets"] == 101
    with pytest.raises(SimError, match="unknown counter 'bogus'"):
        dev.add_counters("swp1", {"bogus": 1})
    with pytest.raises(SimError, match="unknown port 'swp9' on leaf1"):
        dev.add_counters("swp9", {"tx_octets": 1})
    with pytest.raises(SimError, match="index 9 out of range for tx_packets"):
        dev.add_counters("swp1", {"tx_packets": {"9": 1}})


def test_mpirun_shim_moves_the_hosts_counters(tmp_path):
    run_dir = make_lab(tmp_path, [{"kind": "no_traffic_class", "host": "gpu2"}])
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", LAB_NCCL_RUN_DIR=run_dir,
               LAB_NCCL_REPLAY="passing", NCCL_IB_TC="106", LAB_NCCL_PYTHON=sys.executable)
    argv = ["-np", "2", "-H", "gpu1,gpu2", "-x", "NCCL_IB_TC", "all_reduce_perf_mpi", "-g", "2"] + ARGS
    out = subprocess.run([str(BIN / "mpirun")] + argv, env=env, capture_output=True, text=True, check=False, timeout=60)
    assert out.returncode == 0, out.stderr
    assert roce_share(stats(run_dir, "gpu1", "eth2")) > 0.99 and roce_share(stats(run_dir, "gpu2", "eth2")) < 0.01
    with open(os.path.join(run_dir, "traffic-launches.jsonl"), encoding="utf-8") as handle:
        assert len(handle.readlines()) == 1


def test_k8sim_mpijob_hook(tmp_path):
    run_dir = make_lab(tmp_path)
    script = "exec mpirun -np 2 --bind-to none -x NCCL_IB_TC all_reduce_perf_mpi -g 2 " + " ".join(ARGS)
    job = {"spec": {"slotsPerWorker": 1, "mpiReplicaSpecs": {"Launcher": {"template": {"spec": {"containers": [
        {"command": ["/bin/sh", "-c", script], "env": [{"name": "NCCL_IB_TC", "value": "106"}]}]}}}}}}
    workers = [{"spec": {"nodeName": "gpu1"}}, {"spec": {"nodeName": "gpu2"}}]
    decisions = traffic.record_mpijob(run_dir, job, workers)
    assert len(decisions) == 4 and all(d["tx_priority"] == 3 for d in decisions)
    assert stats(run_dir, "gpu2", "eth3")["tx_prio3_packets"] == GIB // 4096


def test_launcher_up_writes_traffic_json_from_the_inventory_and_a_bad_knob_stops_the_start(tmp_path, monkeypatch):
    inv = launcher.load_inventory(str(ROOT / "inventories" / "lab"))

    def hostvars(**extra):
        out = json.loads(json.dumps(inv["_meta"]["hostvars"]))
        for hv in out.values():
            hv.update(extra)
        return {"_meta": {"hostvars": out}}
    monkeypatch.setattr(launcher, "SIMULATORS", [])
    monkeypatch.setattr(launcher, "write_generated", lambda *a: None)
    monkeypatch.setattr(launcher, "load_inventory", lambda i, extra=None: hostvars())
    launcher.up(str(tmp_path), str(tmp_path / "run"))
    qos = {"transport": "roce", "dscp": 26, "priority": 3, "cnp_dscp": 48, "cnp_priority": 6, "pfc": [3], "ecn": True,
           "mode": "lossless"}
    assert json.loads((tmp_path / "run" / "traffic.json").read_text()) == {"faults": [], "qos": qos}
    monkeypatch.setattr(launcher, "load_inventory", lambda i, extra=None: hostvars(
        lab_traffic_faults=[{"kind": "switch_map", "switch": "leaf1"}]))
    launcher.up(str(tmp_path), str(tmp_path / "run"))
    assert json.loads((tmp_path / "run" / "traffic.json").read_text())["faults"] == [{"kind": "switch_map", "switch": "leaf1"}]
    monkeypatch.setattr(launcher, "load_inventory", lambda i, extra=None: hostvars(
        lab_traffic_faults=[{"kind": "pcp_trust", "nic": "gpu1:mlx5_9"}]))
    with pytest.raises(launcher.LabError, match=r"lab_traffic_faults\[0\]\.nic: 'gpu1:mlx5_9' is no '<host>:<RDMA device>'"):
        launcher.up(str(tmp_path), str(tmp_path / "run"))
    # the CLI changes the knob of a running lab and checks it the same way
    cli = [sys.executable, str(ROOT / "tests" / "lab" / "traffic.py"), str(tmp_path / "run")]
    ok = subprocess.run(cli + ['[{"kind": "no_dcqcn", "nic": "gpu2:mlx5_1"}]'], capture_output=True, text=True, check=False)
    assert ok.returncode == 0, ok.stderr
    assert json.loads((tmp_path / "run" / "traffic.json").read_text())["faults"] == [{"kind": "no_dcqcn", "nic": "gpu2:mlx5_1"}]
    bad = subprocess.run(cli + ['[{"kind": "no_dcqcn", "host": "gpu2"}]'], capture_output=True, text=True, check=False)
    assert bad.returncode == 1 and "lab_traffic_faults[0]: no_dcqcn takes kind and nic only, not host" in bad.stderr


def test_an_unplugged_cable_moves_nothing_on_its_edges_and_does_not_fail_the_launch(tmp_path):
    run_dir = make_lab(tmp_path)
    with open(os.path.join(run_dir, "wiring.json"), "w", encoding="utf-8") as handle:
        json.dump({"links": [c if c[0] != ["gpu2", "nic", "mlx5_0"] else c[:3] + [False] for c in CABLES]}, handle)
    seen, decisions = launch(run_dir)
    assert "is down" in decisions[("gpu1:mlx5_0", "gpu2:mlx5_0")]["skipped"]
    assert "leaf1" not in seen and "tx_prio3_bytes" not in stats(run_dir, "gpu2", "eth2")
    assert decisions[("gpu1:mlx5_1", "gpu2:mlx5_1")]["tx_priority"] == 3


def test_other_vendors_counters_under_their_own_hw_counter_names(tmp_path):
    """bnxt (Broadcom): DCQCN and the CNP's class from cc_config, CNPs and marks in bnxt_re's hw_counters names;
    ionic (AMD): no DCB (trust pcp: priority 0), no hw_counters files written."""
    run_dir = make_lab(tmp_path, stacks=(("gpu1", "bnxt"), ("gpu2", "ionic")))
    _seen, decisions = launch(run_dir)
    to_bnxt = decisions[("gpu2:mlx5_0", "gpu1:mlx5_0")]
    assert (to_bnxt["tx_priority"], to_bnxt["rx_priority"], to_bnxt["cnp_priority"]) == (0, 3, 6)
    assert hw(run_dir, "gpu1", "mlx5_0", "tx_cnp_pkts") == to_bnxt["cnps"] > 0
    assert hw(run_dir, "gpu1", "mlx5_0", "rx_ecn_marked_pkts") == to_bnxt["marks"]
    assert hw(run_dir, "gpu1", "mlx5_0", "oos_drop_count") == to_bnxt["drops"] > 0  # ionic's priority 0 is not lossless
    for host in ("gpu1", "gpu2"):
        assert not os.path.exists(os.path.join(traffic.host_root(run_dir, host), "sys/class/infiniband/mlx5_0/ports/1/hw_counters/np_cnp_sent"))
    assert stats(run_dir, "gpu2", "eth2")["tx_prio0_bytes"] > 0 and stats(run_dir, "gpu1", "eth2")["tx_prio3_bytes"] > 0
