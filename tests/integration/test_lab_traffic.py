# SPDX-License-Identifier: GPL-3.0-or-later
"""The lab's traffic (tests/lab/traffic.py) seen through the collection's own counter modules: in a lab of its own,
playbooks/hosts.yml configures both hosts (gpu1 the vendor stack, gpu2 upstream), then one play runs a 2-host
all_reduce through the lab's strict mpirun shim five times - without faults and with each lab_traffic_faults kind
(changed between launches with ``tests/lab/traffic.py RUN_DIR FAULTS``) - bracketed by lossless.fabric.nic_counters on
both hosts and lossless.fabric.switch_counters on leaf1 (NVUE; rail 0 of both hosts) and leaf2 (Junos; rail 1).
Each launch moves the counters on the right priority/queue, or, with a fault, on the wrong class at the right
host, NIC or port."""

from __future__ import annotations

import json
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from labrun import BIN, ROOT, copy_lab_inventory, launcher, run  # noqa: E402  # pylint: disable=import-error,wrong-import-position

ROUNDS = [
    ("healthy", []),
    ("no_traffic_class", [{"kind": "no_traffic_class", "host": "gpu1"}]),
    ("pcp_trust", [{"kind": "pcp_trust", "nic": "gpu1:mlx5_0"}]),
    ("switch_map", [{"kind": "switch_map", "switch": "leaf1"}]),
    ("no_dcqcn", [{"kind": "no_dcqcn", "nic": "gpu2:mlx5_1"}]),
]

ROUND_TASKS = """
- name: The knob for this launch
  ansible.builtin.command:
    argv: ["{{ ansible_playbook_python }}", "%(root)s/tests/lab/traffic.py", "{{ lab_run_dir }}", "{{ item.1 | to_json }}"]
  run_once: true
  delegate_to: localhost
  changed_when: false
- name: NIC counters before
  lossless.fabric.nic_counters:
    device: "{{ inventory_hostname }}"
    root: "{{ lab_host_root }}"
    bin_dir: "{{ lab_host_bin }}"
  register: nic_pre
- name: Switch counters before
  lossless.fabric.switch_counters:
    fabric: [leaf1, leaf2]
  run_once: true
  delegate_to: localhost
  register: sw_pre
- name: The benchmark (the lab's strict mpirun shim; the replayed log passes whatever the counters say)
  ansible.builtin.command:
    argv: ["{{ lab_nccl_bin }}/mpirun", "--allow-run-as-root", "-np", "2", "-H", "gpu1,gpu2", "-x", "NCCL_IB_TC",
           "all_reduce_perf_mpi", "-g", "2", "-b", "1G", "-e", "1G", "-n", "1", "-w", "0"]
  environment:
    NCCL_IB_TC: "106"
  run_once: true
  delegate_to: localhost
  changed_when: false
- name: NIC counters after
  lossless.fabric.nic_counters:
    device: "{{ inventory_hostname }}"
    root: "{{ lab_host_root }}"
    bin_dir: "{{ lab_host_bin }}"
  register: nic_post
- name: Switch counters after
  lossless.fabric.switch_counters:
    fabric: [leaf1, leaf2]
  run_once: true
  delegate_to: localhost
  register: sw_post
- name: Report
  ansible.builtin.debug:
    msg: >-
      RESULT {{ {'round': item.0, 'host': inventory_hostname,
                 'nic': nic_post.counters | lossless.fabric.counters_delta(nic_pre.counters),
                 'switches': {'leaf1': sw_post.switches.leaf1.counters | lossless.fabric.counters_delta(sw_pre.switches.leaf1.counters),
                              'leaf2': sw_post.switches.leaf2.counters | lossless.fabric.counters_delta(sw_pre.switches.leaf2.counters)}}
              | to_json }}
"""

PLAY = """
- name: One launch per knob, bracketed by counter snapshots
  hosts: gpu_hosts
  gather_facts: false
  tasks:
    - name: Rounds
      ansible.builtin.include_tasks: %(tasks)s
      loop: %(rounds)s
"""


def _results(stdout: str) -> dict:
    out = {}
    for line in stdout.splitlines():
        if '"msg": "RESULT ' in line:
            value = json.loads(json.loads("{%s}" % line.strip().rstrip(","))["msg"][len("RESULT "):])
            out[(value["round"], value["host"])] = value
    return out


def _share(counters: dict, name: str, priority: str) -> float:
    per = counters.get(name) or {}
    total = sum(per.values())
    return per.get(priority, 0) / total if total else 0.0


@pytest.fixture(scope="module")
def rounds(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("traffic")
    inventory = copy_lab_inventory(tmp / "lab")
    tasks = tmp / "round.yml"
    tasks.write_text(ROUND_TASKS % {"root": ROOT})
    play = tmp / "traffic.yml"
    play.write_text(PLAY % {"tasks": tasks, "rounds": json.dumps([[name, faults] for name, faults in ROUNDS])})
    out = run([*launcher(inventory, tmp / "run", tmp / "report"), os.path.join(BIN, "ansible-playbook"), "-i", inventory,
               "playbooks/hosts.yml", str(play)])
    assert out.returncode == 0, out.stdout[-6000:] + out.stderr[-3000:]
    found = _results(out.stdout)
    assert len(found) == 2 * len(ROUNDS), out.stdout[-4000:]
    return found


def test_a_healthy_launch_moves_nic_and_switch_counters_on_the_roce_class(rounds):
    for host in ("gpu1", "gpu2"):
        nic = rounds[("healthy", host)]["nic"]["ports"]
        for name in ("mlx5_0", "mlx5_1"):
            assert _share(nic[name], "tx_prio_bytes", "3") > 0.99, nic[name]
            assert _share(nic[name], "rx_prio_bytes", "3") > 0.99, nic[name]
            assert nic[name]["tx_prio_packets"]["6"] > 0  # CNPs on the CNP priority
            assert nic[name]["np_cnp_sent"] > 0 and nic[name]["rp_cnp_handled"] > 0 and nic[name]["np_ecn_marked_roce_packets"] > 0
            assert nic[name]["pfc_rx_frames"]["3"] > 0 and nic[name]["out_of_sequence"] == nic[name]["packet_seq_err"] == 0
    leaf1 = rounds[("healthy", "gpu1")]["switches"]["leaf1"]["ports"]
    for port in ("swp1", "swp2"):  # where leaf1 sends to gpu1 and to gpu2 (NVUE: ECN marks as a port total)
        assert leaf1[port]["ecn_marked_total"] > 0 and leaf1[port]["pfc_tx_frames"]["3"] > 0, leaf1[port]
        assert leaf1[port]["queue_drops"]["3"] == 0
        if "queue_tx_packets" in leaf1[port]:  # the per-queue counters (h/queuecounters) where NVUE shows them
            assert leaf1[port]["queue_tx_packets"]["3"] > 0 and leaf1[port]["queue_tx_packets"]["0"] == 0
    leaf2 = rounds[("healthy", "gpu1")]["switches"]["leaf2"]["ports"]
    for port in ("et-0/0/1", "et-0/0/2"):  # Junos: per-queue ECN marks
        assert leaf2[port]["pfc_tx_frames"]["3"] > 0 and leaf2[port]["ecn_marked"]["3"] > 0, leaf2[port]
        assert leaf2[port]["ecn_marked"]["0"] == 0


def test_no_traffic_class_on_gpu1_shows_at_gpu1_and_at_leaf1_queue_0(rounds):
    gpu1 = rounds[("no_traffic_class", "gpu1")]["nic"]["ports"]
    gpu2 = rounds[("no_traffic_class", "gpu2")]["nic"]["ports"]
    for name in ("mlx5_0", "mlx5_1"):
        assert _share(gpu1[name], "tx_prio_bytes", "0") > 0.99 and _share(gpu2[name], "tx_prio_bytes", "3") > 0.99
        assert gpu2[name]["out_of_sequence"] > 0  # gpu1's class-0 data was dropped on the way to gpu2
    swp2 = rounds[("no_traffic_class", "gpu1")]["switches"]["leaf1"]["ports"]["swp2"]  # leaf1 -> gpu2
    assert swp2["queue_drops"]["0"] > 0, swp2


def test_pcp_trust_on_gpu1_mlx5_0_shows_at_that_nic_and_its_leaf_port(rounds):
    gpu1 = rounds[("pcp_trust", "gpu1")]["nic"]["ports"]
    assert _share(gpu1["mlx5_0"], "tx_prio_bytes", "0") > 0.99 and _share(gpu1["mlx5_1"], "tx_prio_bytes", "3") > 0.99
    assert _share(gpu1["mlx5_0"], "rx_prio_bytes", "0") > 0.99  # it classifies what it receives by PCP (untagged: 0)
    assert gpu1["mlx5_0"]["pfc_rx_frames"]["3"] > 0 and gpu1["mlx5_0"]["packet_seq_err"] > 0  # pauses on 3 it ignored
    swp1 = rounds[("pcp_trust", "gpu1")]["switches"]["leaf1"]["ports"]["swp1"]  # leaf1 <- gpu1:mlx5_0
    assert swp1["pfc_tx_frames"]["3"] > 0 and swp1["pg_discards"]["3"] > 0, swp1  # its lossless ingress overflowed


def test_switch_map_on_leaf1_shows_at_leaf1_only(rounds):
    leaf1 = rounds[("switch_map", "gpu1")]["switches"]["leaf1"]["ports"]
    leaf2 = rounds[("switch_map", "gpu1")]["switches"]["leaf2"]["ports"]
    for port in ("swp1", "swp2"):
        assert leaf1[port]["queue_drops"]["0"] > 0 and leaf1[port]["ecn_marked_total"] == 0, leaf1[port]
        if "queue_tx_packets" in leaf1[port]:
            assert leaf1[port]["queue_tx_packets"]["0"] > 0 and leaf1[port]["queue_tx_packets"]["3"] == 0
    assert leaf2["et-0/0/1"]["queue_drops"]["0"] == 0 and leaf2["et-0/0/1"]["pfc_tx_frames"]["3"] > 0
    for host in ("gpu1", "gpu2"):  # the hosts still send on 3: the bytes rule passes, the switch rules name leaf1
        nic = rounds[("switch_map", host)]["nic"]["ports"]
        assert _share(nic["mlx5_0"], "tx_prio_bytes", "3") > 0.99 and nic["mlx5_0"]["out_of_sequence"] > 0


def test_no_dcqcn_on_gpu2_mlx5_1_marks_without_cnps(rounds):
    gpu1 = rounds[("no_dcqcn", "gpu1")]["nic"]["ports"]
    gpu2 = rounds[("no_dcqcn", "gpu2")]["nic"]["ports"]
    assert gpu2["mlx5_1"]["np_ecn_marked_roce_packets"] > 0 and gpu2["mlx5_1"]["np_cnp_sent"] == 0
    assert gpu2["mlx5_1"]["rp_cnp_handled"] == 0 and gpu1["mlx5_1"]["rp_cnp_handled"] == 0
    assert gpu2["mlx5_0"]["np_cnp_sent"] > 0 and gpu1["mlx5_0"]["rp_cnp_handled"] > 0  # rail 0 unaffected
    et2 = rounds[("no_dcqcn", "gpu1")]["switches"]["leaf2"]["ports"]["et-0/0/2"]  # leaf2 -> gpu2:mlx5_1
    assert et2["ecn_marked"]["3"] > 0, et2
    assert _share(gpu2["mlx5_1"], "tx_prio_bytes", "3") > 0.99  # the bytes ride the right class


# ------------------------------------------------------------------ end to end: the gate on the evidence
# The gate's evidence rules: plugins/module_utils/_common/_evidence.py (issue 34, "Counters around every benchmark").


# knob -> names of which at least one must be in the failed gate's message (the host, NIC or switch port it names)
GATE_ROUNDS = [
    ("no_traffic_class", [{"kind": "no_traffic_class", "host": "gpu1"}], ("gpu1",)),
    ("pcp_trust", [{"kind": "pcp_trust", "nic": "gpu1:mlx5_0"}], ("mlx5_0", "swp1")),
    ("switch_map", [{"kind": "switch_map", "switch": "leaf1"}], ("leaf1",)),
    ("no_dcqcn", [{"kind": "no_dcqcn", "nic": "gpu2:mlx5_1"}], ("mlx5_1", "et-0/0/2", "leaf2")),
]


def test_benchmark_gate_fails_on_each_traffic_fault_naming_where(tmp_path):
    """One lab: hosts.yml configures the hosts, then benchmark.yml (mpirun launcher: no MPIJob lifecycle) passes
    without faults and fails with each fault (changed in the running lab), naming the host, NIC or port."""
    inventory = copy_lab_inventory(tmp_path / "lab")
    run_dir = tmp_path / "run"
    playbook = "%s -i %s playbooks/benchmark.yml -e nccl_gate_launcher=mpirun" % (os.path.join(BIN, "ansible-playbook"), inventory)
    knob = "%s %s %s" % (sys.executable, os.path.join(ROOT, "tests", "lab", "traffic.py"), run_dir)
    script = ["%s -i %s playbooks/hosts.yml > %s/hosts.out 2>&1 || exit 9" % (os.path.join(BIN, "ansible-playbook"), inventory, tmp_path),
              "%s > %s/healthy.out 2>&1; echo $? > %s/healthy.rc" % (playbook, tmp_path, tmp_path)]
    for name, faults, _names in GATE_ROUNDS:
        script += ["%s '%s'" % (knob, json.dumps(faults)),
                   "%s > %s/%s.out 2>&1; echo $? > %s/%s.rc" % (playbook, tmp_path, name, tmp_path, name)]
    out = run([*launcher(inventory, run_dir, tmp_path / "report"), "/bin/sh", "-c", " && ".join(script)], timeout=1200)
    assert out.returncode == 0, out.stdout[-3000:] + (tmp_path / "hosts.out").read_text()[-3000:]
    healthy = (tmp_path / "healthy.out").read_text()
    assert (tmp_path / "healthy.rc").read_text().strip() == "0", healthy[-4000:]
    for name, _faults, names in GATE_ROUNDS:
        text = (tmp_path / ("%s.out" % name)).read_text()
        assert (tmp_path / ("%s.rc" % name)).read_text().strip() != "0", (name, text[-4000:])
        fatal = "\n".join(line for line in text.splitlines() if "fatal:" in line or "FAILED!" in line or '"msg"' in line)
        assert any(n in fatal for n in names), (name, names, fatal[-4000:])
