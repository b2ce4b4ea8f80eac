# SPDX-License-Identifier: GPL-3.0-or-later
"""A mixed GPU host set, one host per NIC vendor - gpu1 NVIDIA mlx5 (upstream stack), gpu2 Broadcom bnxt_en /
bnxt_re, gpu3 AMD ionic - built by the host simulator (tests/lab/hostsim, lab_nic_driver) and configured by
ansible-playbook with the role nic_qos as a user runs it: the first run changes all three (each on its own
stack, persisted with a udev rule on its own driver), a second run changes nothing, a value changed behind our
back shows in --check --diff without being written, and nic_counters reads each driver's counters under the
snapshot's names."""

from __future__ import annotations

import json
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from labrun import BIN, ROOT, run  # noqa: E402  # pylint: disable=import-error,wrong-import-position
from switchlab import recap, results  # noqa: E402  # pylint: disable=import-error,wrong-import-position

sys.path.insert(0, os.path.join(ROOT, "tests", "lab"))
import traffic  # noqa: E402  # pylint: disable=import-error,wrong-import-position
from hostsim import plugin, tree  # noqa: E402  # pylint: disable=import-error,wrong-import-position

HOSTS = {  # host -> (lab_nic_driver, its NIC)
    "gpu1": ("mlx5", {"name": "mlx5_0", "netdev": "eth2"}),
    "gpu2": ("bnxt_re", {"name": "bnxt_re0", "netdev": "eth2"}),
    "gpu3": ("ionic", {"name": "ionic_0", "netdev": "eth2"}),
}

PLAY = """
- name: Lossless RoCE on a mixed host set
  hosts: gpu_hosts
  gather_facts: false
  roles:
    - role: lossless.fabric.nic_qos
"""

COUNTERS_PLAY = """
- name: NIC counters of every vendor, after the role
  hosts: gpu_hosts
  gather_facts: false
  tasks:
    - name: Snapshot
      lossless.fabric.nic_counters:
        device: "{{ inventory_hostname }}"
        root: "{{ lab_host_root }}"
        bin_dir: "{{ lab_host_bin }}"
        priorities: [3]
      register: snap
    - name: Show
      ansible.builtin.debug:
        msg: "RESULT {{ {'host': inventory_hostname, 'counters': snap.counters} | to_json }}"
"""


@pytest.fixture
def mixed(tmp_path):
    hosts = {}
    for host, (driver, nic) in HOSTS.items():
        stack = plugin.lab_stack(host, {"lab_nic_driver": driver})
        hosts[host] = dict(plugin.make_host(str(tmp_path / "hosts" / host), [nic], stack, sys.executable, host=host),
                           lossless_fabric_device={"kind": "host", "nics": [dict(nic, speed="400G")]})
    inventory = {"all": {"children": {"gpu_hosts": {
        "hosts": hosts,
        "vars": {"ansible_connection": "local", "ansible_python_interpreter": sys.executable,
                 "lossless_fabric": {"name": "mixed", "transport": "roce", "roce": {}},
                 "lossless_fabric_lock_dir": str(tmp_path / "locks"), "fabric_plan_show_summary": False,
                 "nic_qos_root": "{{ lab_host_root }}", "nic_qos_bin_dir": "{{ lab_host_bin }}",
                 "nic_qos_become": False, "nic_qos_manage_services": False}}}}}
    (tmp_path / "inventory.json").write_text(json.dumps(inventory))
    # What a lab launch would have moved on each NIC (tests/lab/traffic.py writes it under mlx5's names into the host
    # simulator; each driver's shim renders its own names): read back under the snapshot's names below.
    moved = {"stats": {"rx_prio3_bytes": 4096, "rx_prio3_packets": 1, "rx_prio3_pause": 2, "rx_prio3_pause_duration": 20},
             "hw": {"np_cnp_sent": 3, "rp_cnp_handled": 3}}
    traffic.apply(str(tmp_path), {"nics": {host: {nic["name"]: moved} for host, (_driver, nic) in HOSTS.items()}})
    # One playbook: the role, then the counters (nic_counters never changes anything, so the recap still counts nic_qos).
    (tmp_path / "play.yml").write_text(PLAY + COUNTERS_PLAY)

    def playbook(name, *args):
        return run([os.path.join(BIN, "ansible-playbook"), "-i", str(tmp_path / "inventory.json"), str(tmp_path / name), *args])

    return playbook, {host: v["lab_host_root"] for host, v in hosts.items()}


def _read(root, rel):
    with open(os.path.join(root, rel), encoding="utf-8") as handle:
        return handle.read().strip()


def test_one_host_per_vendor_apply_rerun_check_diff_and_counters(mixed):
    playbook, roots = mixed
    first = playbook("play.yml")
    assert first.returncode == 0, first.stdout + first.stderr
    assert all(recap(first)[h]["changed"] >= 1 for h in HOSTS), first.stdout
    # each on its own stack
    assert tree.load(roots["gpu2"])["nics"]["eth2"]["pfc"] == [0, 0, 0, 1, 0, 0, 0, 0]
    assert _read(roots["gpu2"], "sys/kernel/debug/bnxt_re/0000:3b:00.0/cc_config/enable_cc") == "1"
    assert _read(roots["gpu1"], "sys/kernel/debug/mlx5/0000:3b:00.0/cc_params/np_cnp_dscp") == "48"
    assert "ionic_0: pfc: mainline ionic registers no DCBNL ops" in first.stdout + first.stderr
    for host, driver in (("gpu1", "mlx5_core"), ("gpu2", "bnxt_en"), ("gpu3", "ionic")):
        assert _read(roots[host], "sys/class/net/eth2/mtu") == "9000"
        rule = _read(roots[host], "etc/udev/rules.d/70-lossless-fabric-nic-qos.rules")
        assert 'KERNEL=="eth2", DRIVERS=="%s"' % driver in rule, rule
    script = _read(roots["gpu2"], "etc/lossless-fabric/nic-qos/eth2.sh")
    assert script.index("dcb ets set dev eth2") < script.index("dcb pfc set dev eth2")

    again = playbook("play.yml")
    assert again.returncode == 0, again.stdout + again.stderr
    assert all(recap(again)[h]["changed"] == 0 for h in HOSTS), again.stdout

    # Behind our back: congestion control off on the Broadcom host, the MTU back to 1500 on the AMD one.
    cc = os.path.join(roots["gpu2"], "sys/kernel/debug/bnxt_re/0000:3b:00.0/cc_config/enable_cc")
    with open(cc, "w", encoding="utf-8") as handle:
        handle.write("0\n")
    with open(os.path.join(roots["gpu3"], "sys/class/net/eth2/mtu"), "w", encoding="utf-8") as handle:
        handle.write("1500\n")
    checked = playbook("play.yml", "--check", "--diff")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    counts = recap(checked)
    assert counts["gpu1"]["changed"] == 0 and counts["gpu2"]["changed"] >= 1 and counts["gpu3"]["changed"] >= 1, checked.stdout
    assert "-ionic_0 (eth2) mtu: 1500\n+ionic_0 (eth2) mtu: 9000" in checked.stdout, checked.stdout
    assert '-bnxt_re0 (eth2) dcqcn: {"np": {"0": 0, "1": 0, "2": 0, "3": 0,' in checked.stdout, checked.stdout
    assert '+bnxt_re0 (eth2) dcqcn: {"np": {"3": 1}, "rp": {"3": 1}}' in checked.stdout, checked.stdout
    assert _read(roots["gpu2"], "sys/kernel/debug/bnxt_re/0000:3b:00.0/cc_config/enable_cc") == "0"
    assert _read(roots["gpu3"], "sys/class/net/eth2/mtu") == "1500"

    snaps = {r["host"]: r["counters"] for r in results(first)}
    assert {h: s["platform"] for h, s in snaps.items()} == {"gpu1": "upstream", "gpu2": "bnxt", "gpu3": "ionic"}
    # the launch's priority-3 bytes and pauses on the two hosts with DCB counters; read under the same names from both drivers
    for host, nic in (("gpu1", "mlx5_0"), ("gpu2", "bnxt_re0")):
        port = snaps[host]["ports"][nic]
        assert port["rx_prio_bytes"]["3"] > 0 and port["pfc_rx_frames"]["3"] > 0, (host, port)
        assert "np_cnp_sent" in port and "np_cnp_sent" not in snaps[host]["not_available"]
    assert "rx_discards_phy" in snaps["gpu2"]["not_available"]
    ionic = snaps["gpu3"]
    assert set(ionic["ports"]["ionic_0"]) == {"pfc_rx_duration", "pfc_tx_duration", "rx_crc_errors_phy"}
    assert {"np_cnp_sent", "rp_cnp_handled", "rx_prio_bytes", "pfc_rx_frames", "out_of_sequence"} <= set(ionic["not_available"])
