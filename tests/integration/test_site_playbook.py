# SPDX-License-Identifier: GPL-3.0-or-later
"""The site playbook against the lab, as a user runs it from the repo root."""

from __future__ import annotations

import json
import os
import sys

import pytest
import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from labrun import BIN, LAB, assert_lab_down, copy_lab_inventory, launcher, run  # noqa: E402  # pylint: disable=import-error,wrong-import-position
from switchlab import recap  # noqa: E402  # pylint: disable=import-error,wrong-import-position


def _playbook(*args):
    return run([os.path.join(BIN, "ansible-playbook"), "-i", LAB, *args])


def _lab_intent():
    with open(os.path.join(LAB, "group_vars", "all", "lossless_fabric.yml"), encoding="utf-8") as handle:
        return yaml.safe_load(handle)["lossless_fabric"]


@pytest.fixture
def lab_run_dir(tmp_path):
    return str(tmp_path / "run")


def test_make_lab_runs_site_to_the_end_then_changes_nothing(lab_run_dir, tmp_path):
    # A copy of the lab inventory, so a lab the user has up is not disturbed.
    inventory = copy_lab_inventory(tmp_path / "lab")
    lab = launcher(inventory, lab_run_dir, tmp_path / "report")
    site = [os.path.join(BIN, "ansible-playbook"), "-i", inventory, "playbooks/site.yml"]

    out = run([*lab, *site])
    assert out.returncode == 0, out.stdout + out.stderr
    counts = recap(out)
    hosts = ("spine1", "leaf1", "leaf2", "leaf3", "leaf4", "leaf5", "gpu1", "gpu2")
    assert all(counts[h]["changed"] >= 1 and counts[h]["failed"] == 0 for h in hosts), out.stdout
    # the last play: the benchmark ran against the lab's cluster and its gate passed
    assert "NCCL gate pass" in out.stdout, out.stdout
    assert "lab: report folder:" in out.stdout
    report = out.stdout.split("lab: report folder: ", 1)[1].splitlines()[0].strip()
    with open(os.path.join(report, "plan.json"), encoding="utf-8") as handle:
        plan = json.load(handle)
    assert sorted(plan["devices"]) == ["gpu1", "gpu2", "leaf1", "leaf2", "leaf3", "leaf4", "leaf5", "spine1"]
    assert plan["nccl_env"]["NCCL_IB_TC"] == "106"
    assert os.path.exists(os.path.join(report, "plan.md"))
    with open(os.path.join(report, "benchmark.json"), encoding="utf-8") as handle:
        bench = json.load(handle)
    assert bench["verdict"] == "pass"
    # the gate checked transport and GPUDirect RDMA on the replayed real log's NCCL_DEBUG=INFO lines
    assert bench["targets"]["require_transport"] == ["RoCE"] and bench["targets"]["require_gdr"] is False
    assert bench["launches"][0]["transport"] == "RoCE" and bench["launches"][0]["gdr_active"] is False
    assert os.path.exists(os.path.join(report, "benchmark.png"))
    # down ran: no generated inventory left, no process left
    assert_lab_down(inventory, lab_run_dir, out)

    # The switches, hosts and cluster kept their state across the restart: nothing to change. A benchmark
    # is a new measurement each time: its launch and its report are the only changes. So is the cabling
    # report on this first rerun, and only on it: the first run read LLDP before the switches were configured,
    # this one after, and a configured Junos port advertises its description (not its name) with its ifIndex as
    # port ID, so spine1's end of that link can no longer name the port (docs/cabling.md, "One readable end").
    again = run([*lab, *site])
    assert again.returncode == 0, again.stdout + again.stderr
    reports = ("lossless.fabric.nccl_gate : ", CABLING_REPORT)
    assert all(c["changed"] == 0 for h, c in recap(again).items() if h not in ("localhost", "spine1")), again.stdout
    assert [t for t in changed_tasks(again) if not t.startswith(reports)] == [], again.stdout

    # From then on the cabling report stays as it is: every device and every report but the benchmark's unchanged.
    checked = run([*lab, *site, "--check", "--diff"])
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert all(c["changed"] == 0 for h, c in recap(checked).items() if h != "localhost"), checked.stdout
    assert [t for t in changed_tasks(checked) if not t.startswith("lossless.fabric.nccl_gate : ")] == [], checked.stdout


# The cabling role's report task (run once, on the first switch of the play, writing on the controller).
CABLING_REPORT = "lossless.fabric.cabling : Verify - every intended link against what both its ends see"


def changed_tasks(out):
    """The names of the tasks that reported changed on some host."""
    found, task = [], None
    for line in out.stdout.splitlines():
        if line.startswith("TASK ["):
            task = line[len("TASK ["):].split("]", 1)[0]
        elif line.startswith("changed: ") and task not in found:
            found.append(task)
    return found


@pytest.mark.parametrize(
    "mutate, expected",
    [
        (lambda i: i["roce"]["pfc"].update(priorities=[3, 9]), ["lossless_fabric.roce.pfc.priorities[1]: 9"]),
        (lambda i: i["roce"].update(pcf={}), ["lossless_fabric.roce.pcf", "did you mean 'pfc'"]),
        (lambda i: i["roce"]["cnp"].update(priority=3), ["lossless_fabric.roce.cnp.priority"]),
        (lambda i: i.update(name="lab\nreload"), ["lossless_fabric.name"]),
    ],
    ids=["priority-range", "typo", "cnp-on-roce-priority", "newline-in-name"],
)
def test_invalid_intent_fails_in_fabric_plan_before_anything_else(tmp_path, mutate, expected):
    intent = _lab_intent()
    mutate(intent)
    extra = tmp_path / "bad.yml"
    extra.write_text(yaml.safe_dump({"lossless_fabric": intent}))
    out = _playbook("playbooks/site.yml", "-e", "@%s" % extra)
    assert out.returncode != 0
    text = out.stdout + out.stderr
    assert "Validate the fabric intent and derive the plan" in text
    for fragment in expected:
        assert fragment in text, text
    # nothing after the plan ran
    assert "Keep the plan for the roles that follow" not in text


def test_every_error_is_listed_at_once(tmp_path):
    intent = _lab_intent()
    intent["roce"]["pfc"]["priorities"] = [3, 8]
    intent["roce"]["data"]["dscp"] = 64
    intent["roce"]["mtu"]["host"] = 9216
    intent["targets"]["collectives"]["all_reduce_perfx"] = [{"min_size": "1G", "min_busbw": 10}]
    extra = tmp_path / "bad.yml"
    extra.write_text(yaml.safe_dump({"lossless_fabric": intent}))
    out = _playbook("playbooks/site.yml", "-e", "@%s" % extra)
    assert out.returncode != 0
    text = out.stdout + out.stderr
    for fragment in ("priorities[1]: 8", "data.dscp: 64", "mtu.host", "all_reduce_perfx"):
        assert fragment in text, text


def test_ansible_doc_renders_fabric_plan():
    out = run([os.path.join(BIN, "ansible-doc"), "lossless.fabric.fabric_plan"])
    assert out.returncode == 0, out.stderr
    assert "fail_on_warnings" in out.stdout and "Reads the fabric intent" in out.stdout


PLAN_ONLY = """
- name: plan
  hosts: localhost
  gather_facts: false
  roles:
    - role: lossless.fabric.fabric_plan
      vars:
        fabric_plan_show_summary: false
        fabric_plan_lock: false
        fabric_plan_report_dir: "{{ report }}"
"""


def test_plan_report_lists_the_design_check(tmp_path):
    """fabric_plan alone on a copy of the lab inventory (no simulators): plan.md and plan.json carry the design check
    (issue 34), every rule with its status, and the rule that could not compare ECN with a pause point says so; an
    alltoall target set to auto comes back derived from the lab hosts' NICs (the lab's all_reduce keeps its hand-set 14)."""
    inventory = copy_lab_inventory(tmp_path / "lab")
    play = tmp_path / "plan.yml"
    play.write_text(PLAN_ONLY)
    intent = _lab_intent()
    intent["targets"]["collectives"]["alltoall_perf"] = [{"min_size": "1G", "min_busbw": "auto"}]
    extra = tmp_path / "auto.yml"
    extra.write_text(yaml.safe_dump({"lossless_fabric": intent}))
    out = run([os.path.join(BIN, "ansible-playbook"), "-i", inventory, str(play), "-e", "report=%s" % (tmp_path / "r"), "-e", "@%s" % extra])
    assert out.returncode == 0, out.stdout + out.stderr
    plan = json.loads((tmp_path / "r" / "plan.json").read_text())
    targets = plan["intent"]["targets"]["collectives"]
    assert targets["all_reduce_perf"][0]["min_busbw"] == 14 and "auto" not in targets["all_reduce_perf"][0]
    # one 400G NIC (alltoall cannot aggregate NICs) x 0.92
    auto = targets["alltoall_perf"][0]
    assert auto["min_busbw"] == 46.0 and (auto["auto"]["method"], auto["auto"]["nics_per_host"], auto["auto"]["link_gbps"]) == ("single_nic", 2, 400)
    assert [(r["rule"], r["status"]) for r in plan["design"]] == [
        ("watchdog", "ok"), ("ecn_below_pause", "ok"), ("headroom", "ok"), ("cnp_class", "ok"), ("dscp_map", "ok"), ("scheduler_share", "ok")]
    text = (tmp_path / "r" / "plan.md").read_text()
    assert "## Design check" in text
    assert "| headroom | ok | 18 | headroom covers each port's cable length and speed |" in text
    assert "- ecn_below_pause: leaf4: the PFC pause point on nxos is the switch's own ingress buffer threshold" in text
