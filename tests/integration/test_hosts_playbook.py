# SPDX-License-Identifier: GPL-3.0-or-later
"""playbooks/hosts.yml against a copy of the lab inventory, through the lab
launcher: gpu1 runs the NVIDIA driver stack, gpu2 the upstream one. The first
run changes both, a second lab run changes nothing, a value changed behind our
back shows in --check --diff without being written, the persistence files land
under each host's root, and nic_counters gives counters_delta its snapshot."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from labrun import BIN, ROOT, ansible_env, copy_lab_inventory, launcher, run  # noqa: E402  # pylint: disable=import-error,wrong-import-position
from switchlab import recap  # noqa: E402  # pylint: disable=import-error,wrong-import-position

sys.path.insert(0, os.path.join(ROOT, "tests", "lab"))
from labproc import wait_for  # noqa: E402  # pylint: disable=import-error,wrong-import-position

COUNTERS_PLAY = """
- name: NIC counters before and after
  hosts: gpu_hosts
  gather_facts: false
  tasks:
    - name: Before
      lossless.fabric.nic_counters:
        device: "{{ inventory_hostname }}"
        root: "{{ lab_host_root }}"
        bin_dir: "{{ lab_host_bin }}"
        priorities: [3]
      register: pre
    - name: After
      lossless.fabric.nic_counters:
        device: "{{ inventory_hostname }}"
        root: "{{ lab_host_root }}"
        bin_dir: "{{ lab_host_bin }}"
        priorities: [3]
      register: post
    - name: Show
      ansible.builtin.debug:
        msg: "RESULT {{ post.counters | lossless.fabric.counters_delta(pre.counters) | to_json }}"
"""


@pytest.fixture
def lab(tmp_path):
    inventory = copy_lab_inventory(tmp_path / "lab")
    run_dir = tmp_path / "run"
    in_lab = launcher(inventory, run_dir, tmp_path / "report")

    def playbook(*args):
        return run([*in_lab, os.path.join(BIN, "ansible-playbook"), "-i", inventory, *args])

    return playbook, run_dir


def test_hosts_playbook_configures_both_stacks_then_changes_nothing(lab):
    playbook, run_dir = lab
    first = playbook("playbooks/hosts.yml")
    assert first.returncode == 0, first.stdout + first.stderr
    counts = recap(first)
    assert counts["gpu1"]["changed"] >= 1 and counts["gpu2"]["changed"] >= 1, first.stdout
    # gpu2 (upstream) says what it cannot take, with the reason
    assert "mlx5_0: dcqcn: not settable on the upstream driver" in first.stdout + first.stderr
    gpu1, gpu2 = run_dir / "hosts" / "gpu1" / "root", run_dir / "hosts" / "gpu2" / "root"
    assert (gpu1 / "sys/class/net/eth2/ecn/roce_np/enable/3").read_text().strip() == "1"
    assert (gpu2 / "sys/kernel/debug/mlx5/0000:3b:00.0/cc_params/np_cnp_dscp").read_text().strip() == "48"
    for root in (gpu1, gpu2):
        assert (root / "sys/class/net/eth3/mtu").read_text().strip() == "9000"
        script = (root / "etc/lossless-fabric/nic-qos/eth3.sh").read_text()
        assert "echo 9000 > /sys/class/net/eth3/mtu || rc=1" in script
        assert "lossless-fabric-nic-qos@%k.service" in (root / "etc/udev/rules.d/70-lossless-fabric-nic-qos.rules").read_text()
        assert "ExecStart=/bin/sh /etc/lossless-fabric/nic-qos/%i.sh" in (root / "etc/systemd/system/lossless-fabric-nic-qos@.service").read_text()
    assert "mlnx_qos -i eth3 --pfc 0,0,0,1,0,0,0,0" in (gpu1 / "etc/lossless-fabric/nic-qos/eth3.sh").read_text()
    assert "dcb pfc set dev eth3 prio-pfc" in (gpu2 / "etc/lossless-fabric/nic-qos/eth3.sh").read_text()

    # A second lab run: the hosts stayed up with their settings.
    again = playbook("playbooks/hosts.yml")
    assert again.returncode == 0, again.stdout + again.stderr
    assert recap(again)["gpu1"]["changed"] == 0 and recap(again)["gpu2"]["changed"] == 0, again.stdout

    # Behind our back: PFC off on gpu2's eth3. --check --diff shows it and writes nothing.
    state_file = gpu2 / ".hostsim" / "state.json"
    state = json.loads(state_file.read_text())
    state["nics"]["eth3"]["pfc"] = [0] * 8
    state_file.write_text(json.dumps(state))
    checked = playbook("playbooks/hosts.yml", "--check", "--diff")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert recap(checked)["gpu2"]["changed"] == 1 and recap(checked)["gpu1"]["changed"] == 0, checked.stdout
    assert "-mlx5_1 (eth3) pfc: [0, 0, 0, 0, 0, 0, 0, 0]\n+mlx5_1 (eth3) pfc: [0, 0, 0, 1, 0, 0, 0, 0]" in checked.stdout, checked.stdout
    assert json.loads(state_file.read_text())["nics"]["eth3"]["pfc"] == [0] * 8


def test_unknown_nic_fails_before_anything_is_written(lab, tmp_path):
    playbook, run_dir = lab
    extra = tmp_path / "bad.yml"
    extra.write_text("nic_qos_nics: [mlx5_9]\n")
    out = playbook("playbooks/hosts.yml", "-e", "@%s" % extra)
    assert out.returncode != 0
    assert "nics[0]: 'mlx5_9' is not an RDMA NIC on this host (found: mlx5_0 (eth2, 15b3:1021), mlx5_1 (eth3, 15b3:1021))" in out.stdout
    for host in ("gpu1", "gpu2"):
        assert (run_dir / "hosts" / host / "root/sys/class/net/eth2/mtu").read_text().strip() == "1500"


def test_nic_counters_delta_in_a_play(lab, tmp_path):
    playbook, _run_dir = lab
    play = tmp_path / "counters.yml"
    play.write_text(COUNTERS_PLAY)
    out = playbook(str(play))
    assert out.returncode == 0, out.stdout + out.stderr
    assert all(c["changed"] == 0 for c in recap(out).values())
    deltas = [json.loads(line.split('"msg": "RESULT ', 1)[1].rstrip('",').replace('\\"', '"')) for line in out.stdout.splitlines() if '"msg": "RESULT ' in line]
    assert len(deltas) == 2
    for delta in deltas:
        assert delta["kind"] == "nic" and sorted(delta["ports"]) == ["mlx5_0", "mlx5_1"]
        # no benchmark ran between the two snapshots: nothing moved (the lab's traffic comes from its NCCL launches,
        # tests/lab/traffic.py; tests/integration/test_lab_traffic.py shows a launch moving them)
        assert delta["ports"]["mlx5_0"]["rx_prio_bytes"] == {"3": 0}
        assert delta["ports"]["mlx5_0"]["rx_discards_phy"] == 0


HOLD_PLAY = """
- name: Plan the fabric (and take its lock), then hold the run until a file appears
  hosts: localhost
  gather_facts: false
  roles:
    - role: lossless.fabric.fabric_plan
  tasks:
    - name: Hold
      ansible.builtin.wait_for:
        path: "{{ release }}"
        timeout: 300
"""


def _plan_only(tmp_path):
    """A copy of the lab inventory (no simulators: fabric_plan only reads variables) and a play that plans it."""
    inventory = copy_lab_inventory(tmp_path / "lab")
    play = tmp_path / "hold.yml"
    play.write_text(HOLD_PLAY)
    argv = [os.path.join(BIN, "ansible-playbook"), "-i", inventory, str(play), "-e", "release=%s" % (tmp_path / "release"),
            "-e", "lossless_fabric_lock_dir=%s" % (tmp_path / "locks"), "-e", "fabric_plan_report_dir="]
    return inventory, argv


def test_two_runs_on_one_fabric_at_once_the_second_refuses_naming_the_first(tmp_path):
    _inventory, argv = _plan_only(tmp_path)
    first = subprocess.Popen(argv, cwd=ROOT, env=ansible_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        wait_for(lambda: first.poll() is not None or os.path.exists(tmp_path / "locks" / "lab.lock"), "the first run's lock", timeout=120)
        assert first.poll() is None, first.communicate()[0]
        second = run(argv + ["-e", "release=/nonexistent"])
        assert second.returncode != 0
        said = second.stdout + second.stderr
        assert "fabric lab is locked by another run from this controller: pid %d (started " % first.pid in said, said
        assert "playbook %s" % (tmp_path / "hold.yml") in said, said
        # --check changes nothing and takes no lock: it only warns
        checked = run(argv + ["--check", "-e", "release=%s" % (tmp_path / "locks" / "lab.lock")])
        assert checked.returncode == 0 and "fabric lab is locked by another run: pid %d" % first.pid in checked.stdout + checked.stderr, checked.stdout
    finally:
        (tmp_path / "release").write_text("")
        out = first.communicate(timeout=300)[0]
    assert first.returncode == 0, out
    # the first run is gone: the fabric is free again without anyone cleaning up
    third = run(argv)
    assert third.returncode == 0, third.stdout + third.stderr


def test_an_intent_overridden_for_one_group_is_refused_before_anything_runs(tmp_path):
    inventory, argv = _plan_only(tmp_path)
    with open(os.path.join(inventory, "group_vars", "all", "lossless_fabric.yml"), encoding="utf-8") as handle:
        intent = yaml.safe_load(handle)["lossless_fabric"]
    intent["roce"]["data"]["dscp"] = 24
    with open(os.path.join(inventory, "group_vars", "gpu_hosts.yml"), "a", encoding="utf-8") as handle:
        handle.write(yaml.safe_dump({"lossless_fabric": intent}))
    (tmp_path / "release").write_text("")
    out = run(argv)
    said = out.stdout + out.stderr
    assert out.returncode != 0 and "lossless_fabric: the hosts in scope see 2 different intents" in said, said
    assert "(2) gpu1, gpu2 (groups gpu_hosts): differs from (1) at roce.data.dscp: 26 != 24" in said, said
    assert not os.path.exists(tmp_path / "locks" / "lab.lock")  # refused before the lock, before any device
