# SPDX-License-Identifier: GPL-3.0-or-later
"""playbooks/infiniband.yml against a private copy of inventories/lab-ib: a real
OpenSM on an ibsim fabric in its own network namespace (tests/lab/ibsim), started
and stopped here by the lab launcher with a tmp run dir."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys

import pytest
import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from labrun import BIN, GENERATED, ROOT, run  # noqa: E402  # pylint: disable=import-error,wrong-import-position
from switchlab import recap  # noqa: E402  # pylint: disable=import-error,wrong-import-position

LAB_IB = os.path.join(ROOT, "inventories", "lab-ib")
LAUNCHER = os.path.join(ROOT, "tests", "lab", "launcher.py")
VERIFY_ONLY = ["--tags", "fabric_plan_preflight,infiniband_verify"]

pytestmark = pytest.mark.skipif(shutil.which("ibsim") is None or shutil.which("opensm") is None,
                                reason="needs ibsim-utils and opensm (apt-get install ibsim-utils opensm infiniband-diags)")


class IbLab:
    """A copy of inventories/lab-ib with its fabric up (launcher up/down, tmp run dir)."""

    def __init__(self, tmp_path):
        self.inventory = str(tmp_path / "lab-ib")
        shutil.copytree(LAB_IB, self.inventory, ignore=shutil.ignore_patterns(GENERATED))
        self.run_dir = str(tmp_path / "run")
        self.report_dir = str(tmp_path / "report")
        self.vars = {}

    def launcher(self, action):
        out = run([sys.executable, LAUNCHER, action, "-i", self.inventory, "--run-dir", self.run_dir,
                   "--report-dir", self.report_dir], timeout=120)
        assert out.returncode == 0, out.stdout + out.stderr
        return out

    def up(self):
        self.launcher("up")
        with open(os.path.join(self.inventory, GENERATED), encoding="utf-8") as handle:
            generated = yaml.safe_load(handle)
        self.vars = generated["all"]["vars"] if "vars" in generated.get("all", {}) else generated["all"]
        return self

    def playbook(self, *args):
        return run([os.path.join(BIN, "ansible-playbook"), "-i", self.inventory, "playbooks/infiniband.yml", *args])

    def tool(self, name, *args):
        """A lab wrapper (diag tool, ibsim-console, opensm-reload) of this fabric."""
        out = subprocess.run([os.path.join(self.vars["lab_ib_diag_bin"], name), *args], capture_output=True, text=True,
                             check=False, timeout=60)
        assert out.returncode == 0, "%s %s: %s" % (name, args, out.stdout + out.stderr)
        return out.stdout

    def console(self, command):
        self.tool("ibsim-console", command)

    def intent(self):
        with open(self._intent_path(), encoding="utf-8") as handle:
            return yaml.safe_load(handle)

    def write_intent(self, data):
        with open(self._intent_path(), "w", encoding="utf-8") as handle:
            yaml.safe_dump(data, handle, sort_keys=False)

    def _intent_path(self):
        return os.path.join(self.inventory, "group_vars", "all", "lossless_fabric.yml")

    def read(self, key):
        with open(self.vars[key], encoding="utf-8") as handle:
            return handle.read()


@pytest.fixture
def ib_lab(tmp_path):
    lab = IbLab(tmp_path)
    lab.up()
    yield lab
    lab.launcher("down")


def _lid(lab, port_guid):
    text = lab.tool("ibnetdiscover")
    match = re.search(r"\(%s\)\s+\"[^\"]+\"\[\d+\]\s+# lid (\d+)" % port_guid[2:].lstrip("0"), text)
    assert match, "no CA port %s in:\n%s" % (port_guid, text)
    return match.group(1)


def _task_result(out, name):
    """The first result line ("changed: [ufm1]", "skipping: ...") after the task header containing ``name``."""
    lines = out.stdout.splitlines()
    for index, line in enumerate(lines):
        if line.startswith("TASK [") and name in line:
            return next(x for x in lines[index + 1:] if x.strip() and not x.startswith("TASK ["))
    raise AssertionError("no task %r in:\n%s" % (name, out.stdout[-6000:]))


def _fails_with(out, *needles):
    assert out.returncode != 0, out.stdout
    for needle in needles:
        assert needle in out.stdout, "%r not in:\n%s" % (needle, out.stdout[-6000:])


GPU1_0, GPU1_1, GPU2_0, GPU2_1 = "0x0c42a10300010001", "0x0c42a10300010101", "0x0c42a10300020001", "0x0c42a10300020101"


def test_opensm_configures_verifies_and_catches_drift(ib_lab):
    # 1. From the lab's defaults to the intent; verify passes; the second run changes nothing.
    first = ib_lab.playbook()
    assert first.returncode == 0, first.stdout[-6000:] + first.stderr
    assert recap(first)["ufm1"]["changed"] >= 3
    assert "sm_priority 14" in ib_lab.read("lab_opensm_conf_file")
    # routing_engine (unset in the lab's default opensm.conf) is read at start only: a restart, not a SIGHUP.
    assert _task_result(first, "Configure - restart OpenSM").startswith("changed: [ufm1]")
    assert _task_result(first, "Configure - reload OpenSM").startswith("skipping: [ufm1]")
    second = ib_lab.playbook()
    assert second.returncode == 0, second.stdout[-6000:]
    assert recap(second)["ufm1"]["changed"] == 0, second.stdout
    pkeys = ib_lab.tool("smpquery", "-G", "pkeys", GPU2_1, "1")
    assert "0x8001" in pkeys and "0x0002" in pkeys     # tenant team-a full, storage limited

    # 2. A changed QoS level (team-a's partition) and a changed partition reach the fabric, and verify passes.
    data = ib_lab.intent()
    ib = data["lossless_fabric"]["infiniband"]
    ib["qos"]["levels"][1]["sl"] = 5
    ib["partitions"][0]["members"] = [m for m in ib["partitions"][0]["members"] if m != GPU2_1]
    ib_lab.write_intent(data)
    policy = ib_lab.read("lab_opensm_qos_policy_file")
    check = ib_lab.playbook("--check", "--diff")                   # a real dry run: the diff, nothing written
    assert check.returncode == 0, check.stdout[-6000:]
    assert "+        sl: 5" in check.stdout and recap(check)["ufm1"]["changed"] >= 1
    assert ib_lab.read("lab_opensm_qos_policy_file") == policy
    changed = ib_lab.playbook("--diff")
    assert changed.returncode == 0, changed.stdout[-6000:]
    assert "+        sl: 5" in changed.stdout
    assert _task_result(changed, "Configure - reload OpenSM").startswith("changed: [ufm1]")     # runtime keys: SIGHUP
    assert _task_result(changed, "Configure - restart OpenSM").startswith("skipping: [ufm1]")
    path = ib_lab.tool("saquery", "-p", "--pkey", "0x8001", "--src-to-dst", "%s:%s" % (_lid(ib_lab, GPU1_0), _lid(ib_lab, GPU2_0)))
    assert re.search(r"sl\.+0x5\b", path), path
    assert "0x0002" not in ib_lab.tool("smpquery", "-G", "pkeys", GPU2_1, "1")
    assert recap(ib_lab.playbook())["ufm1"]["changed"] == 0

    # 3. partitions.conf edited behind our back + SIGHUP: verify names the partition and the port.
    text = ib_lab.read("lab_opensm_partitions_file").replace("%s=full, " % GPU2_0, "")
    with open(ib_lab.vars["lab_opensm_partitions_file"], "w", encoding="utf-8") as handle:
        handle.write(text)
    ib_lab.tool("opensm-reload")
    drift = ib_lab.playbook(*VERIFY_ONLY)
    _fails_with(drift, "partition team-a (pkey 0x8001): member \\\"gpu2 mlx5_0\\\" (%s) does not hold it (expected full)" % GPU2_0,
                "tenants: tenant 'team-a' port \\\"gpu2 mlx5_0\\\" (%s) is not in its partition team-a (pkey 0x0001)" % GPU2_0)
    assert recap(ib_lab.playbook())["ufm1"]["changed"] >= 1       # the role puts the file back
    assert ib_lab.playbook(*VERIFY_ONLY).returncode == 0

    # 4. An error counter raised through the ibsim console fails verify.
    ib_lab.console('PerformanceSet "gpu1-mlx5_0"[1] PortCounters.SymbolErrorCounter=7')
    counters = ib_lab.playbook(*VERIFY_ONLY)
    _fails_with(counters, 'counters: ca \\"gpu1 mlx5_0\\" port 1 SymbolErrorCounter = 7, above the threshold 0')
    ib_lab.console('PerformanceSet "gpu1-mlx5_0"[1] PortCounters.SymbolErrorCounter=0')

    # 5. A host missing from the topology fails verify (its HCA unplugged).
    ib_lab.console('Unlink "gpu3-mlx5_1"[1]')
    missing = ib_lab.playbook(*VERIFY_ONLY)
    _fails_with(missing, "topology: gpu3 mlx5_1 (port GUID 0x0c42a10300030101) is not in the fabric", "topology: 8 cas found, 9 expected")
    ib_lab.console('ReLink "gpu3-mlx5_1"[1]')


def test_bad_input_fails_before_any_file_is_written(ib_lab):
    files = ("lab_opensm_conf_file", "lab_opensm_partitions_file", "lab_opensm_qos_policy_file")
    before = {key: ib_lab.read(key) for key in files}
    data = ib_lab.intent()
    ib = data["lossless_fabric"]["infiniband"]
    # A member GUID that is not a port of the fabric: found by the role's preflight, which read the fabric.
    ib["partitions"][0]["members"].append("0x0c42a103000fffff")
    ib_lab.write_intent(data)
    out = ib_lab.playbook()
    _fails_with(out, "partitions.conf line 3: member 0x0c42a103000fffff is not a port in the fabric")
    assert {key: ib_lab.read(key) for key in files} == before

    # Intent errors: all reported at once by fabric_plan, before the role runs.
    ib["partitions"][0]["members"].pop()
    ib["partitions"].append(dict(ib["partitions"][0], name="storage2"))
    ib["partitions"].insert(0, dict(ib["partitions"][0], name="bad", pkey="0x8000"))
    ib["sm"]["routing_engine"] = ["ar_updn"]
    ib["qos"]["sl2vl"]["ca"] = [0, 1, 2]
    # The tenants: a P_Key taken twice, and a shared partition through which team-a (full) reaches team-b.
    tenants = data["lossless_fabric"]["tenants"]
    tenants[1]["partition"]["pkey"] = "0x0001"
    ib["partitions"][1]["members"][1] = {"guid": GPU1_1, "membership": "full"}
    ib_lab.write_intent(data)
    out = ib_lab.playbook()
    _fails_with(out, "partitions[0].pkey: '0x8000' is not a P_Key", "partitions[2].pkey: 2 duplicates partitions[1] pkey 2",
                "'ar_updn' is not an OpenSM 3.3.23 routing engine", "an SL2VL map of the wrong length (3 entries",
                "lossless_fabric.tenants[1].partition.pkey: '0x0001' duplicates lossless_fabric.tenants[0].partition pkey 32769",
                "lossless_fabric.infiniband.partitions[1].members[1]: %s=full makes tenant 'team-a' a full member of partition 'storage'" % GPU1_1)
    assert "Configure - install" not in out.stdout
    assert {key: ib_lab.read(key) for key in files} == before


def test_a_role_variable_with_a_newline_never_reaches_opensm_conf(ib_lab, tmp_path):
    files = ("lab_opensm_conf_file", "lab_opensm_partitions_file", "lab_opensm_qos_policy_file")
    before = {key: ib_lab.read(key) for key in files}
    extra = tmp_path / "extra.yml"
    extra.write_text(yaml.safe_dump({"opensm_log_flags": "0x03\nlog_file /tmp/evil.log", "opensm_reload_command": ["kill", "-HUP\nreboot"]}))
    out = ib_lab.playbook("-e", "@%s" % extra)
    _fails_with(out, "opensm_log_flags: '0x03\\\\nlog_file /tmp/evil.log' is not a byte in hex (0x00-0xff, like 0x03)",
                "opensm_reload_command[1]: '-HUP\\\\nreboot' is not a command argument (one line, no control characters)")
    assert "Preflight - render the three files" not in out.stdout
    assert {key: ib_lab.read(key) for key in files} == before
    assert "evil" not in ib_lab.read("lab_opensm_conf_file")


GPU3_0 = "0x0c42a10300030001"
VF1_0 = "0x0c42a1030f010000"   # gpu1 mlx5_0's VF 0 (inventories/lab-ib/host_vars/gpu1.yml)


def test_two_tenants_are_apart_in_the_fabric(ib_lab):
    """inventories/lab-ib's two tenants: each port holds its own tenant's P_Key (full) and the default partition only as
    a limited member, the SA answers no PathRecord from team-a to team-b (for any P_Key), and a partitions.conf that
    lets them meet fails the tenants check. team-b is named by an inventory group here (fabric_plan resolves it)."""
    with open(os.path.join(ib_lab.inventory, "hosts.yml"), "a", encoding="utf-8") as handle:
        handle.write("    tenant_b:\n      hosts:\n        gpu3:\n        gpu4:\n")
    data = ib_lab.intent()
    del data["lossless_fabric"]["tenants"][1]["hosts"]
    data["lossless_fabric"]["tenants"][1]["host_group"] = "tenant_b"
    ib_lab.write_intent(data)
    first = ib_lab.playbook()        # configure, then verify: its tenants check ran and passed
    assert first.returncode == 0, first.stdout[-6000:] + first.stderr
    # The tenants' VF GUIDs (host_vars, 2 per HCA) are in their partitions; OpenSM took the file (a member that is no
    # port is skipped) and ibsim has no VFs: the check lists them as not verified, and each host got the SR-IOV
    # operator's GUID file (issue 37 C2; in the run dir, group_vars/gpu_hosts.yml).
    assert "%s=full" % VF1_0 in next(x for x in ib_lab.read("lab_opensm_partitions_file").splitlines() if x.startswith("team-a="))
    assert "tenants: tenant 'team-a' VF GUID %s (partition team-a, pkey 0x0001, full): not a port of the fabric" % VF1_0 in first.stderr  # a warning
    with open(os.path.join(ib_lab.run_dir, "hosts", "gpu1", "etc", "sriov-operator", "infiniband", "guids"), encoding="utf-8") as handle:
        assert json.load(handle) == [{"pciAddress": "0000:0c:00.0", "guids": ["0c:42:a1:03:0f:01:00:00", "0c:42:a1:03:0f:01:00:01"]},
                                     {"pciAddress": "0000:16:00.0", "guids": ["0c:42:a1:03:0f:01:01:00", "0c:42:a1:03:0f:01:01:01"]}]
    assert _task_result(first, "The VF GUID file").startswith("changed: [gpu")
    a, b = ib_lab.tool("smpquery", "-G", "pkeys", GPU1_0, "1"), ib_lab.tool("smpquery", "-G", "pkeys", GPU3_0, "1")
    assert a.split()[1:3] == ["0x7fff", "0x8001"] and "0xffff" not in a and "0x8003" not in a, a   # team-a; default limited
    assert b.split()[1:3] == ["0x7fff", "0x8003"] and "0xffff" not in b and "0x8001" not in b, b   # team-b; default limited
    lids = {guid: _lid(ib_lab, guid) for guid in (GPU1_0, GPU2_0, GPU3_0)}
    cross = "%s:%s" % (lids[GPU1_0], lids[GPU3_0])
    for pkey in ([], ["--pkey", "0x8001"], ["--pkey", "0x8003"], ["--pkey", "0x7fff"]):
        assert ib_lab.tool("saquery", "-p", *pkey, "--src-to-dst", cross).strip() == "", pkey     # no PathRecord
    inside = "%s:%s" % (lids[GPU1_0], lids[GPU2_0])
    found = ib_lab.tool("saquery", "-p", "--src-to-dst", inside)
    assert re.search(r"pkey\.+0x8001\b", found), found      # asked for any partition: the SA picks team-a's own
    found = ib_lab.tool("saquery", "-p", "--pkey", "0x8001", "--src-to-dst", inside)
    assert re.search(r"sl\.+0x3\b", found), found           # with its P_Key: the SL of its QoS level rdma

    # partitions.conf edited behind our back: gpu3's port joins team-a's partition as a full member, on a continuation
    # line of the rule (the form the plan writes past OpenSM's 4094-byte line buffer): OpenSM reads it as one rule.
    text = ib_lab.read("lab_opensm_partitions_file")
    line = next(x for x in text.splitlines() if x.startswith("team-a="))
    with open(ib_lab.vars["lab_opensm_partitions_file"], "w", encoding="utf-8") as handle:
        handle.write(text.replace(line, line.replace(" ;", ",\n  %s=full ;" % GPU3_0)))
    ib_lab.tool("opensm-reload")
    breach = ib_lab.playbook(*VERIFY_ONLY)
    _fails_with(breach, "tenants: tenant 'team-b' port \\\"gpu3 mlx5_0\\\" (%s) holds P_Key 0x0001 (full) of tenant 'team-a''s partition team-a"
                % GPU3_0, "(tenant 'team-a') -> \\\"gpu3 mlx5_0\\\" (%s) (tenant 'team-b') for any partition: the SA returned a PathRecord "
                "(pkey 0x8001): the tenants reach each other" % GPU3_0)
    again = ib_lab.playbook()
    assert recap(again)["ufm1"]["changed"] >= 1       # the role puts the file back; verify passes again
    assert recap(again)["gpu1"]["changed"] == 0       # the VF GUID file is idempotent
    assert ib_lab.tool("saquery", "-p", "--src-to-dst", cross).strip() == ""
