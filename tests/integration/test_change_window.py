# SPDX-License-Identifier: GPL-3.0-or-later
"""playbooks/change_window.yml against the lab, as an engineer runs it: a good change
kept everywhere, a change the benchmark rejects rolled back everywhere, a window
killed after the change rolled back by the switches' own timers, and --check.
The GPU hosts' NICs change with the switches (the CNP DSCP reaches both), each host
under a rollback timer of its own: confirmed when kept, rolled back at once when the
window rolls back, and put back by the timer itself when the window is killed.

Each test has its own copy of inventories/lab and its own lab (tests/lab/launcher.py
up/down with a run folder under tmp_path), so nothing collides with a lab the user
has up. The switches' running configuration is read through the simulator's
control API, the way a person would log in and look."""

from __future__ import annotations

import glob
import hashlib
import json
import os
import signal
import sys

import pytest
import yaml

from ansible_collections.lossless.fabric.plugins.module_utils._common._rollback_timer import NAME_RE

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from labrun import BIN, ROOT, assert_lab_down, copy_lab_inventory, run  # noqa: E402  # pylint: disable=import-error,wrong-import-position

# The window in the background and its processes: shared with the InfiniBand window tests.
from windowlab import start_window, stop_window, wait_until_pending, wait_until_report, wait_until_window_gone, window_log  # noqa: E402  # pylint: disable=import-error,wrong-import-position

sys.path.insert(0, os.path.join(ROOT, "tests", "lab"))
from labproc import wait_for  # noqa: E402  # pylint: disable=import-error,wrong-import-position
from switchsim.client import ControlClient  # noqa: E402  # pylint: disable=import-error,wrong-import-position

SWITCHES = ("leaf1", "leaf2", "leaf3", "leaf4", "leaf5", "spine1")
HOSTS = ("gpu1", "gpu2")  # lab NIC stacks: gpu1 mlnx, gpu2 upstream

# The change: new ECN thresholds on the RoCE queue (a typical tuning change).
ECN = {"min_threshold_bytes": 153600, "max_threshold_bytes": 1536000, "max_probability_percent": 10}
# Under each GPU host's root, nic_qos's own lock and timer records (not NIC state).
NIC_QOS_OWN = ("run%slossless-fabric%s" % (os.sep, os.sep), os.path.join("var", "lib", "lossless-fabric") + os.sep)
# A change both the switches and the NICs carry: CNPs move from DSCP 48 to 40.
CNP_DSCP = 40


class Lab:
    """A copy of the lab inventory, its simulators, and the playbooks run against it."""

    def __init__(self, tmp_path, time_scale=None, extra=()):
        self.tmp = tmp_path
        self.inventory = copy_lab_inventory(tmp_path / "lab")
        if time_scale is not None:
            with open(os.path.join(self.inventory, "group_vars", "switches.yml"), "a", encoding="utf-8") as handle:
                handle.write("lab_switch_time_scale: %s\n" % time_scale)
        self.run_dir = str(tmp_path / "run")
        self.report_dir = str(tmp_path / "report")
        self.launcher = [sys.executable, os.path.join(ROOT, "tests", "lab", "launcher.py")]
        self.where = ["-i", self.inventory, "--run-dir", self.run_dir, "--report-dir", self.report_dir]
        self.extra = list(extra)
        self.switches = None

    def up(self):
        out = run([*self.launcher, "up", *self.where, *self.extra], timeout=120)
        assert out.returncode == 0, out.stdout + out.stderr
        with open(os.path.join(self.inventory, "lab_run.generated.yml"), encoding="utf-8") as handle:
            generated = yaml.safe_load(handle)
        self.switches = ControlClient(generated["all"]["vars"]["lab_switchsim_control"])
        return self

    def down(self):
        run([*self.launcher, "down", *self.where], timeout=120)

    def argv(self, playbook, *args):
        return [os.path.join(BIN, "ansible-playbook"), "-i", self.inventory, "playbooks/%s" % playbook, *self.extra, *args]

    def playbook(self, playbook, *args):
        return run(self.argv(playbook, *args), timeout=900)

    def intent_with_new_ecn(self, cnp_dscp=None, mode=None):
        """-e @file: the lab's intent with the new ECN thresholds (and a new CNP DSCP, which the NICs get too; and a
        new fabric mode, roce.mode, issue 36: ecn_only drops the intent's PFC section, which that mode refuses)."""
        with open(os.path.join(self.inventory, "group_vars", "all", "lossless_fabric.yml"), encoding="utf-8") as handle:
            intent = yaml.safe_load(handle)["lossless_fabric"]
        intent["roce"].setdefault("ecn", {}).update(ECN)
        if cnp_dscp is not None:
            intent["roce"].setdefault("cnp", {})["dscp"] = cnp_dscp
        if mode is not None:
            intent["roce"]["mode"] = mode
            if mode == "ecn_only":
                intent["roce"].pop("pfc", None)
        path = self.tmp / "change.yml"
        path.write_text(yaml.safe_dump({"lossless_fabric": intent}))
        return "@%s" % path

    def running(self):
        return {sw: self.switches.running(sw) for sw in SWITCHES}

    def host_root(self, host):
        return os.path.join(self.run_dir, "hosts", host, "root")

    def nic_trees(self):
        """Every file of each GPU host's lab tree (sysfs, configfs, debugfs, the shims' driver state), by content; the
        traffic counters the lab's benchmark launches add (tests/lab/traffic.py: the stats, the hw_counters files) left out."""
        out = {}
        for host in HOSTS:
            root = self.host_root(host)
            files = {}
            for folder, _dirs, names in os.walk(root):
                for name in names:
                    path = os.path.join(folder, name)
                    rel = os.path.relpath(path, root)
                    if rel.startswith(NIC_QOS_OWN):
                        continue  # nic_qos's lock and rollback timer records: bookkeeping, not the NICs
                    if "/hw_counters/" in rel or rel == os.path.join(".hostsim", "traffic.lock"):
                        continue  # counters the launches moved, and the ledger's lock
                    if rel == os.path.join(".hostsim", "state.json"):
                        with open(path, encoding="utf-8") as handle:
                            state = json.load(handle)
                        for nic in state["nics"].values():
                            nic.pop("stats", None)
                        files[rel] = state
                    else:
                        with open(path, "rb") as handle:
                            files[rel] = hashlib.sha256(handle.read()).hexdigest()
            out[host] = files
        return out

    def cnp_dscp(self):
        """The CNP DSCP each host's first NIC sends, read where each driver keeps it."""
        mlnx = os.path.join(self.host_root("gpu1"), "sys", "class", "net", "eth2", "ecn", "roce_np", "cnp_dscp")
        upstream = glob.glob(os.path.join(self.host_root("gpu2"), "sys", "kernel", "debug", "mlx5", "*", "cc_params", "np_cnp_dscp"))
        values = {}
        for host, path in (("gpu1", mlnx), ("gpu2", sorted(upstream)[0])):
            with open(path, encoding="utf-8") as handle:
                values[host] = int(handle.read())
        return values

    def pending(self):
        return {sw: self.switches.pending(sw) for sw in SWITCHES}

    def reports(self):
        return sorted(p for p in glob.glob(os.path.join(self.report_dir, "change-window-*.json")) if "-benchmark-" not in p)

    def report(self):
        found = self.reports()
        assert len(found) == 1, found
        with open(found[0], encoding="utf-8") as handle:
            return json.load(handle)


# The RoCE lab's default log (a real RoCE run, 15 GB/s, transport and GPUDirect proven) has no real slower RoCE
# all_reduce to regress to. These scenarios are about bandwidth: they replay the real pair passing (HDR, 181.62
# GB/s at 1 GiB) / failing (SR-IOV RoCE, 22.77 GB/s) against 180 GB/s, neither with NCCL_DEBUG lines, so
# transport and GPUDirect are not gated here (tests/lab/nccl/README.md).
BANDWIDTH_GATE = ("-e", "nccl_gate_check_transport=false", "-e", '{"nccl_gate_targets": [{"min_size": "1G", "min_busbw": 180}]}')


@pytest.fixture
def lab_factory(tmp_path):
    labs = []

    def make(**kwargs):
        lab = Lab(tmp_path, **kwargs)
        labs.append(lab)
        return lab.up()

    yield make
    for lab in labs:
        lab.down()
    for lab in labs:
        assert_lab_down(lab.inventory, lab.run_dir)


def _nothing_pending(pending):
    """No switch has a commit waiting for confirmation (the simulator's control API)."""
    return all(p["pending_commit"] is False for p in pending.values())


def _prepare(lab, kubernetes=True, hosts=False):
    """The fabric as it stands before the window: switches configured from the lab's intent (and the RDMA device
    plugin the benchmark's MPIJobs need; and the GPU hosts' NICs)."""
    if kubernetes:
        out = lab.playbook("kubernetes.yml")
        assert out.returncode == 0, out.stdout + out.stderr
    if hosts:
        out = lab.playbook("hosts.yml")
        assert out.returncode == 0, out.stdout + out.stderr
    out = lab.playbook("switches.yml")
    assert out.returncode == 0, out.stdout + out.stderr
    return lab.running()


def test_a_good_change_is_kept_on_every_switch_and_the_report_says_so(lab_factory):
    lab = lab_factory()
    before = _prepare(lab, hosts=True)
    assert lab.cnp_dscp() == {"gpu1": 48, "gpu2": 48}
    change = lab.intent_with_new_ecn(cnp_dscp=CNP_DSCP)

    out = lab.playbook("change_window.yml", "-e", change)
    assert out.returncode == 0, out.stdout + out.stderr
    report = lab.report()
    assert report["verdict"] == "kept", report["reasons"]
    assert {d: e["outcome"] for d, e in report["devices"].items()} == {sw: "kept" for sw in SWITCHES}
    # the NICs took the new CNP DSCP under their own rollback timers, which the window confirmed
    assert {h: e["outcome"] for h, e in report["hosts"].items()} == {h: "kept" for h in HOSTS}
    assert lab.cnp_dscp() == {"gpu1": CNP_DSCP, "gpu2": CNP_DSCP}
    for host in HOSTS:
        entry = report["hosts"][host]
        assert '+ mlx5_0 (eth2) cnp: {"dscp": 40' in entry["diff"] and '- mlx5_0 (eth2) cnp: {"dscp": 48' in entry["diff"], entry
        assert "; confirmed (rollback timer change-window-" in entry["detail"] and entry["restore_command"] is None
        backup = os.path.join(lab.report_dir, report["name"] + "-backup", host + ".nic.json")
        assert entry["backup"] == backup and oct(os.stat(backup).st_mode & 0o777) == "0o600"
        with open(backup, encoding="utf-8") as handle:
            saved = json.load(handle)
        assert saved["state"] == "restored" and saved["restore"]["nics"]["mlx5_0"]["before"]["cnp"]["dscp"] == 48
    for sw in SWITCHES:
        assert report["devices"][sw]["diff"].strip(), "%s: no diff in the report" % sw
    assert report["benchmark"]["verdict"] == "pass"
    assert [s["label"] for s in report["benchmark"]["series"]] == ["pre", "post"]
    assert report["blocking_findings"] == 0
    name = report["name"]
    with open(os.path.join(lab.report_dir, name + ".md"), encoding="utf-8") as handle:
        md = handle.read()
    assert "Verdict: **KEPT**" in md
    for sw in SWITCHES:
        assert "| %s |" % sw in md and "### %s (" % sw in md
    for host in HOSTS:
        assert "### %s (NICs): kept" % host in md
    with open(os.path.join(lab.report_dir, name + ".png"), "rb") as handle:
        assert handle.read(8) == b"\x89PNG\r\n\x1a\n"
    # backups of the running configuration before the change, readable by their owner only
    for sw in SWITCHES:
        backup = os.path.join(lab.report_dir, name + "-backup", sw + ".cfg")
        assert oct(os.stat(backup).st_mode & 0o777) == "0o600"
        with open(backup, encoding="utf-8") as handle:
            saved = handle.read()
        if sw == "leaf2":
            # Junos backups are 'show configuration | display set': the old ECN scheduler, not the new one
            assert "scheduler-map LF-ROCE-SM-55-90-100" in saved and "LF-ROCE-SM-1-13-10" not in saved, saved
        elif sw in ("leaf3", "leaf5"):
            # SONiC backups are 'show runningconfiguration all': CONFIG_DB as it was, plus FRR's 'bgpraw' text
            db = json.loads(saved)
            assert "bgpraw" in db, sorted(db)
            db.pop("bgpraw")
            assert db == json.loads(before[sw]), saved
        elif sw == "leaf4":
            # NX-OS backups are 'show running-config': its '!Command:' / '!Time:' header (and the blank line after
            # it) changes with each read; the lab's running text is the configuration alone
            def body(text):
                return [line for line in text.strip().splitlines() if line.strip() and not line.startswith("!")]
            assert body(saved) == body(before[sw]), saved
        else:
            assert saved.strip() == before[sw].strip()
    # the switches hold the change for good
    after = lab.running()
    assert all(after[sw] != before[sw] for sw in SWITCHES)
    assert _nothing_pending(lab.pending())
    assert "lab-only-password" not in out.stdout + out.stderr

    # The same window again: nothing to change, no benchmark, nothing touched.
    again = lab.playbook("change_window.yml", "-e", change, "-e", "change_window_id=again")
    assert again.returncode == 0, again.stdout + again.stderr
    with open(os.path.join(lab.report_dir, "change-window-again.json"), encoding="utf-8") as handle:
        second = json.load(handle)
    assert second["verdict"] == "no change"
    assert {e["outcome"] for e in second["devices"].values()} == {"unchanged"}
    assert {h: e["outcome"] for h, e in second["hosts"].items()} == {h: "unchanged" for h in HOSTS}
    assert second["benchmark"] is None
    assert lab.running() == after


def test_a_change_the_benchmark_rejects_is_rolled_back_on_every_switch(lab_factory):
    lab = lab_factory(extra=["-e", "lab_nccl_replay=passing", "-e", "lab_nccl_replay_post=failing", *BANDWIDTH_GATE])
    before = _prepare(lab, hosts=True)
    trees = lab.nic_trees()

    # The change moves the fabric to another mode (lossless -> ecn_only: PFC off end to end, issue 36) with new ECN
    # thresholds and CNP DSCP; the post benchmark rejects it and every switch and NIC goes back to lossless.
    # The baseline runs the old mode (change_window_baseline_mode): its pauses are lossless PFC at work, not ecn_only faults.
    out = lab.playbook("change_window.yml", "-e", lab.intent_with_new_ecn(cnp_dscp=CNP_DSCP, mode="ecn_only"), "-e", "change_window_baseline_mode=lossless")
    assert out.returncode != 0, out.stdout
    assert "Change window rolled back" in out.stdout
    report = lab.report()
    assert report["verdict"] == "rolled back"
    assert {d: e["outcome"] for d, e in report["devices"].items()} == {sw: "rolled back" for sw in SWITCHES}
    # the NICs had the change (their diff) and got their backup back (the restore's diff); the trees are as before
    assert {h: e["outcome"] for h, e in report["hosts"].items()} == {h: "restored" for h in HOSTS}
    for host in HOSTS:
        assert '+ mlx5_0 (eth2) cnp: {"dscp": 40' in report["hosts"][host]["diff"]
        assert "mlx5_0 (eth2) pfc: " in report["hosts"][host]["diff"] and "mlx5_0 (eth2) pfc: " in report["hosts"][host]["restore_diff"]
        assert '+ mlx5_0 (eth2) cnp: {"dscp": 48' in report["hosts"][host]["restore_diff"]
        assert "restored from " in report["hosts"][host]["detail"] and "not restored" not in report["hosts"][host]["detail"]
    assert lab.nic_trees() == trees
    assert any(r.startswith("post benchmark: compare: ") and "regressed" in r for r in report["reasons"]), report["reasons"]
    assert any(r.startswith("post benchmark: ") and "< target 180.00 GB/s" in r for r in report["reasons"]), report["reasons"]
    assert report["benchmark"]["verdict"] == "fail"
    assert report["benchmark"]["compare"]["verdict"] == "regressed"
    with open(os.path.join(lab.report_dir, report["name"] + ".md"), encoding="utf-8") as handle:
        md = handle.read()
    assert "Verdict: **ROLLED BACK**" in md and "## Why" in md
    # every switch is back to what it ran before the window
    assert lab.running() == before
    assert _nothing_pending(lab.pending())


def test_a_window_killed_after_the_change_is_rolled_back_by_the_switch_and_host_timers(lab_factory):
    # The shortest window there is (2 minutes, real time: the GPU hosts' timers run on the host's clock, as on a real
    # host); the settle wait keeps it running until the kill. The benchmark is off here: what is under test is each
    # device's own roll-back, not the measurement.
    lab = lab_factory()
    before = _prepare(lab, kubernetes=False, hosts=True)
    trees = lab.nic_trees()
    proc = start_window(lab, "-e", lab.intent_with_new_ecn(cnp_dscp=CNP_DSCP), "-e", "change_window_benchmark=false",
                        "-e", "change_window_max_minutes=2", "-e", "change_window_settle_seconds=60", "-e", "change_window_confirm_margin_seconds=5")
    try:
        interim = wait_until_pending(lab, proc)
    finally:
        stop_window(proc, signal.SIGKILL)
    changed, committed = lab.running(), lab.pending()
    wait_until_window_gone(lab)

    # The record the window left: every switch pending, and until when.
    assert {d: e["outcome"] for d, e in interim["devices"].items()} == {sw: "pending" for sw in SWITCHES}
    assert all(e["pending_until"] for e in interim["devices"].values())
    assert all(changed[sw] != before[sw] for sw in SWITCHES), "the change was not committed before the kill"
    assert all(p["pending_commit"] is True for p in committed.values()), committed

    # Nobody confirms: each switch rolls itself back when its timer ends.
    wait_for(lambda: _nothing_pending(lab.pending()), "every switch's timer to roll its commit back", timeout=200, interval=0.5)
    assert lab.running() == before

    # The NICs have the same contract: the record shows each host pending until its own timer, and nobody confirming,
    # each host's timer puts its NICs back to the backup by itself - switches and NICs agree again (the CNP DSCP).
    assert {h: e["outcome"] for h, e in interim["hosts"].items()} == {h: "pending" for h in HOSTS}, interim["hosts"]
    assert all("rollback timer change-window-" in e["detail"] for e in interim["hosts"].values()), interim["hosts"]
    wait_for(lambda: lab.nic_trees() == trees, "every GPU host's timer to put its NICs back", timeout=200, interval=0.5)
    assert lab.cnp_dscp() == {"gpu1": 48, "gpu2": 48}


def test_check_mode_shows_every_diff_and_changes_nothing(lab_factory):
    lab = lab_factory()
    before = _prepare(lab, kubernetes=False)

    out = lab.playbook("change_window.yml", "-e", lab.intent_with_new_ecn(), "--check", "--diff")
    assert out.returncode == 0, out.stdout + out.stderr
    assert (": dry run; leaf1: would change, leaf2: would change, leaf3: would change, leaf4: would change, leaf5: would change, "
            "spine1: would change;") in out.stdout
    # each switch's own diff of the change, read from the switch
    assert "min-threshold: 153600" in out.stdout  # NVUE
    assert "+      random-detect ecn minimum-threshold 153600 bytes maximum-threshold 1536000 bytes" in out.stdout  # EOS
    assert "+   scheduler-map LF-ROCE-SM-1-13-10;" in out.stdout  # Junos, thresholds in percent of the queue buffer
    assert "check mode: not written" in out.stdout
    assert lab.running() == before
    assert _nothing_pending(lab.pending())
    assert lab.reports() == []


def test_one_switch_failing_mid_change_rolls_every_switch_back(lab_factory):
    # spine1 loses its connection as it commits; leaf1 to leaf5 have committed by then and must not stay pending.
    # The benchmark is off: the roll-back after a failure is under test.
    lab = lab_factory()
    before = _prepare(lab, kubernetes=False)
    lab.switches.set_faults("spine1", {"drop_on": "^commit timer "})

    out = lab.playbook("change_window.yml", "-e", lab.intent_with_new_ecn(), "-e", "change_window_benchmark=false")
    assert out.returncode != 0, out.stdout
    report = lab.report()
    assert report["verdict"] == "rolled back"
    expected = {"leaf1": "rolled back", "leaf2": "rolled back", "leaf3": "rolled back", "leaf4": "rolled back",
                "leaf5": "rolled back", "spine1": "unchanged"}
    assert {d: e["outcome"] for d, e in report["devices"].items()} == expected
    assert "spine1" in report["devices"]["spine1"]["detail"] and "push failed" in report["devices"]["spine1"]["detail"]
    assert any('failed at "Change - commit the plan' in r and "spine1" in r for r in report["reasons"]), report["reasons"]
    assert lab.running() == before
    assert _nothing_pending(lab.pending())


def test_drops_on_the_lossless_queue_after_the_change_roll_every_switch_back(lab_factory):
    # The benchmark is off (the counters decide here); while the window settles after the change, leaf1 drops
    # 42 packets on the RoCE queue of swp1 - what a port without working PFC does under load.
    lab = lab_factory()
    before = _prepare(lab, kubernetes=False)
    proc = start_window(lab, "-e", lab.intent_with_new_ecn(), "-e", "change_window_benchmark=false", "-e", "change_window_settle_seconds=10")
    try:
        wait_until_pending(lab, proc)
        lab.switches.set_counters("leaf1", "swp1", {"queue_drops": {"3": 42}})
    finally:
        stop_window(proc)
    assert proc.returncode != 0, window_log(lab)
    report = lab.report()
    assert report["verdict"] == "rolled back"
    assert {d: e["outcome"] for d, e in report["devices"].items()} == {sw: "rolled back" for sw in SWITCHES}
    assert "post counters: leaf1: swp1: queue_drops[3] = 42 on lossless priority 3" in report["reasons"], report["reasons"]
    assert [(f["kind"], f["phase"], f["device"]) for f in report["findings"] if f["severity"] == "blocking"] == [("lossless_drop", "post", "leaf1")]
    assert report["counters"]["leaf1"]["post"]["swp1"]["lossless_drops"] == 42
    assert lab.running() == before
    assert _nothing_pending(lab.pending())


def test_serial_batches_stop_at_the_first_batch_not_kept(lab_factory):
    # One switch per batch (spine1, leaf1 ... leaf5 in inventory order); leaf1's connection drops as it commits. The
    # benchmark is off: the batching is under test.
    lab = lab_factory()
    before = _prepare(lab, kubernetes=False)
    lab.switches.set_faults("leaf1", {"drop_on": "^nv config apply --confirm "})

    out = lab.playbook("change_window.yml", "-e", lab.intent_with_new_ecn(), "-e", "change_window_benchmark=false",
                       "-e", "change_window_serial=1")
    assert out.returncode != 0, out.stdout
    report = lab.report()
    assert report["verdict"] == "partial"
    assert [(b["batch"], b["devices"]) for b in report["batches"]] == [(1, ["spine1"]), (2, ["leaf1"])]
    outcome = {d: e["outcome"] for d, e in report["devices"].items()}
    assert outcome == {"spine1": "kept", "leaf1": "unchanged", "leaf2": "unchanged", "leaf3": "unchanged", "leaf4": "unchanged",
                       "leaf5": "unchanged"}
    assert all(report["devices"][sw]["detail"] == "not reached: its serial batch has not run" for sw in ("leaf2", "leaf3", "leaf4", "leaf5"))
    after = lab.running()
    assert after["spine1"] != before["spine1"] and all(after[sw] == before[sw] for sw in ("leaf1", "leaf2", "leaf3", "leaf4", "leaf5"))
    assert _nothing_pending(lab.pending())


def test_a_fabric_already_below_target_stops_the_window_before_any_change(lab_factory):
    lab = lab_factory(extra=["-e", "lab_nccl_replay=failing", *BANDWIDTH_GATE])
    before = _prepare(lab)

    out = lab.playbook("change_window.yml", "-e", lab.intent_with_new_ecn())
    assert out.returncode != 0, out.stdout
    report = lab.report()
    assert report["verdict"] == "stopped"
    assert {e["outcome"] for e in report["devices"].values()} == {"unchanged"}
    assert any(r.startswith("baseline benchmark: ") and "< target 180.00 GB/s" in r for r in report["reasons"]), report["reasons"]
    assert report["reasons"][-1] == "stopped before any change (set change_window_proceed_below_target to change anyway)"
    assert report["benchmark"]["phase"] == "pre"
    # no switch was touched: no commit, no session, the same configuration
    assert "Change - commit the plan" not in out.stdout
    assert lab.running() == before
    assert _nothing_pending(lab.pending())


REPORT_PLAY = """
- name: change_report twice, then in check mode with another status
  hosts: localhost
  gather_facts: false
  vars:
    args:
      dest: "{{ dest }}"
      window: {id: w1, fabric: lab, batch: 1}
      status: passed
      devices:
        leaf1: {platform: eos, push: {changed: true, session: s1, device_diff: "+ x"}, settle: {changed: true, device_state: committed, pending: {session: s1}}}
      scope: [leaf1, leaf2]
  tasks:
    - name: First
      lossless.fabric.change_report: "{{ args }}"
      register: first
    - name: Again
      lossless.fabric.change_report: "{{ args }}"
      register: again
    - name: Check mode
      lossless.fabric.change_report: "{{ args | combine({'status': 'failed'}) }}"
      check_mode: true
      register: checked
    - name: Show
      ansible.builtin.debug:
        msg: "RESULT {{ {'first': first, 'again': again, 'checked': checked} | to_json }}"
"""


def test_change_report_is_idempotent_and_check_mode_aware(tmp_path):
    play = tmp_path / "play.yml"
    play.write_text(REPORT_PLAY)
    dest = tmp_path / "reports"
    out = run([os.path.join(BIN, "ansible-playbook"), "-i", "localhost,", "-c", "local", str(play), "-e", "dest=%s" % dest], timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    line = next(x for x in out.stdout.splitlines() if '"msg": "RESULT ' in x)
    res = json.loads(json.loads(line.split('"msg": ', 1)[1].rstrip(","))[len("RESULT "):])
    assert res["first"]["changed"] is True and res["first"]["verdict"] == "kept"
    assert res["first"]["devices"] == {"leaf1": {"outcome": "kept", "detail": "confirmed session s1"},
                                       "leaf2": {"outcome": "unchanged", "detail": "not reached: its serial batch has not run"}}
    assert sorted(os.listdir(dest)) == ["change-window-w1.json", "change-window-w1.md"]
    assert res["again"]["changed"] is False
    assert res["checked"]["changed"] is True and res["checked"]["verdict"] == "partial"
    with open(dest / "change-window-w1.json", encoding="utf-8") as handle:
        assert json.load(handle)["verdict"] == "kept"  # check mode wrote nothing


TIMER_PLAY = """
- name: The subnet managers' rollback timer names, as the role's vars and its filter give them
  hosts: localhost
  gather_facts: false
  vars_files: [%s]
  vars:
    __change_window_name: "change-window-{{ window_id }}"
    __change_window_sms: "{{ sms }}"
  tasks:
    - name: Show
      ansible.builtin.debug:
        msg: >-
          RESULT {{ {'timers': dict(sms | zip(sms | map('lossless.fabric.change_window_timer', __change_window_name, 'opensm'))),
                     'mine': _change_window_sm_timer if inventory_hostname in sms else none} | to_json }}
""" % os.path.join(ROOT, "roles", "change_window", "vars", "main.yml")


def _timer_names(tmp_path, window_id, sms):
    play = tmp_path / "timers.yml"
    play.write_text(TIMER_PLAY)
    extra = json.dumps({"window_id": window_id, "sms": sms})
    out = run([os.path.join(BIN, "ansible-playbook"), "-i", "localhost,", "-c", "local", str(play), "-e", extra], timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    line = next(x for x in out.stdout.splitlines() if '"msg": "RESULT ' in x)
    return json.loads(json.loads(line.split('"msg": ', 1)[1].rstrip(","))[len("RESULT "):])


def test_each_subnet_manager_has_its_own_rollback_timer_name(tmp_path):
    # Two SMs on one machine share the timers' state_dir: the name carries the inventory hostname. Names the module
    # would refuse (too long, or characters it does not take) become a cleaned prefix and a hash of the whole name.
    long_host = "sm-" + "x" * 70
    sms = ["localhost", "ufm1", "ufm2", "sm:a", "sm_a", long_host]
    got = _timer_names(tmp_path, "w1", sms)
    timers = got["timers"]
    assert timers["ufm1"] == "change-window-w1-ufm1-opensm" and timers["ufm2"] == "change-window-w1-ufm2-opensm"
    assert got["mine"] == timers["localhost"] == "change-window-w1-localhost-opensm"
    for host in ("sm:a", long_host):
        base = "change-window-w1-%s" % host
        digest = hashlib.sha1((base + "-opensm").encode()).hexdigest()[:10]
        assert timers[host] == "%s-%s-opensm" % (base.replace(":", "_")[:46], digest), timers
    assert timers["sm_a"] == "change-window-w1-sm_a-opensm"
    assert all(NAME_RE.match(name) for name in timers.values()), timers
    assert len(set(timers.values())) == len(sms), timers
    # the same names on every run; a long window id is cut the same way
    assert _timer_names(tmp_path, "w1", sms)["timers"] == timers
    long_id = "2026-11-30-" + "a" * 50
    base = "change-window-%s-ufm1" % long_id
    digest = hashlib.sha1((base + "-opensm").encode()).hexdigest()[:10]
    assert _timer_names(tmp_path, long_id, ["ufm1"]) == {"timers": {"ufm1": "%s-%s-opensm" % (base[:46], digest)}, "mine": None}
    assert len(base[:46] + "-" + digest + "-opensm") == 64


def test_a_window_id_with_a_trailing_newline_is_refused_before_any_device(tmp_path):
    # `match('^...$')` let "w1\n" through; the preflight's full match does not. No lab: nothing may reach a device.
    inventory = copy_lab_inventory(tmp_path / "lab")
    settings = {"change_window_id": "w1\n", "lossless_fabric_report_dir": str(tmp_path / "report"),
                "lossless_fabric_lock_dir": str(tmp_path / "locks")}
    out = run([os.path.join(BIN, "ansible-playbook"), "-i", inventory, "playbooks/change_window.yml", "-e", json.dumps(settings)], timeout=300)
    assert out.returncode != 0
    assert 'change_window_id: \\"w1\\\\n\\" is not an id' in out.stdout, out.stdout
    assert "Pre - read the running configuration" not in out.stdout
    assert not glob.glob(str(tmp_path / "report" / "change-window-*"))


def test_a_window_longer_than_a_switch_can_hold_a_commit_timer_is_refused_before_any_device(tmp_path):
    # Issue 33 point 2: a 90-minute window handed the lab's NX-OS switch (leaf4) a 5400 s commit-timeout its OS does not
    # take (30-3600 s), after four switches had committed. The preflight refuses it, naming the switch and its limit.
    inventory = copy_lab_inventory(tmp_path / "lab")
    settings = {"change_window_max_minutes": 90, "lossless_fabric_report_dir": str(tmp_path / "report"),
                "lossless_fabric_lock_dir": str(tmp_path / "locks")}
    out = run([os.path.join(BIN, "ansible-playbook"), "-i", inventory, "playbooks/change_window.yml", "-e", json.dumps(settings)], timeout=300)
    assert out.returncode != 0
    assert ("change_window_max_minutes: 90 minutes (5400 s) is longer than the commit timer leaf4 (platform nxos) can hold (30-3600 s)"
            in out.stdout), out.stdout
    assert "Pre - read the running configuration" not in out.stdout
    assert not glob.glob(str(tmp_path / "report" / "change-window-*"))


@pytest.mark.parametrize(("point", "sig"), [("pre", signal.SIGINT), ("push", signal.SIGTERM), ("settle", signal.SIGINT)])
def test_an_interrupted_window_ends_and_rolls_every_device_back(lab_factory, point, sig):
    # Three points of a window, as an operator's Ctrl-C (SIGINT to the playbook's process group, as a terminal sends it)
    # or a SIGTERM reaches it: during the pre-checks, during the push, and in the settle wait after the change (600 s
    # that must not be waited out). Each time the window ends, every device it changed is rolled back by the window
    # itself - not left to the timers - and the report names the signal.
    lab = lab_factory()
    before = _prepare(lab, kubernetes=False, hosts=True)
    trees = lab.nic_trees()
    proc = start_window(lab, "-e", lab.intent_with_new_ecn(cnp_dscp=CNP_DSCP), "-e", "change_window_benchmark=false",
                        "-e", "change_window_settle_seconds=600")
    try:
        if point == "pre":
            wait_for(lambda: proc.poll() is None and glob.glob(os.path.join(lab.report_dir, "change-window-*-backup", "*.cfg")),
                     "the pre-checks' backups", timeout=300, interval=0.1)
        elif point == "push":
            # the record written before the first change: what a window killed during the push leaves behind
            changing = wait_until_report(lab, proc, lambda data: data["status"] == "changing", "the record before the change")
            assert changing["verdict"] == "in progress"
            assert {d: e["outcome"] for d, e in changing["devices"].items()} == {sw: "unknown" for sw in SWITCHES}, changing["devices"]
            assert all(e["pending_until"] == changing["window"]["deadline"] for e in changing["devices"].values())
            assert {h: e["outcome"] for h, e in changing["hosts"].items()} == {h: "unknown" for h in HOSTS}, changing["hosts"]
        else:
            wait_until_pending(lab, proc)
            wait_for(lambda: proc.poll() is None and "Post - let the fabric settle" in window_log(lab), "the settle wait", timeout=120, interval=0.1)
        os.killpg(proc.pid, sig)
    finally:
        stop_window(proc)  # waits for the playbook to end by itself (SIGKILL only after 10 minutes)
    log = window_log(lab)
    assert proc.returncode not in (0, None), log[-3000:]
    report = lab.report()
    name = signal.Signals(sig).name
    assert any(r.startswith("interrupted by %s" % name) for r in report["reasons"]), (report["reasons"], log[-3000:])
    assert report["status"] == "failed"
    if point == "pre":
        assert report["verdict"] == "stopped", report
        assert {e["outcome"] for e in report["devices"].values()} == {"unchanged"}
    else:
        assert report["verdict"] == "rolled back", report
        assert {d: e["outcome"] for d, e in report["devices"].items()} == {sw: "rolled back" for sw in SWITCHES}
        assert all("rolled back session" in e["detail"] for e in report["devices"].values()), report["devices"]
        expected = {"unchanged", "restored"} if point == "push" else {"restored"}
        assert {e["outcome"] for e in report["hosts"].values()} <= expected, report["hosts"]
    # whatever the point: every device as it was, nothing pending, no window process left
    assert lab.running() == before
    assert _nothing_pending(lab.pending())
    assert lab.nic_trees() == trees
    wait_until_window_gone(lab)


def test_a_post_gate_that_fails_localizes_and_names_the_suspect_among_the_reasons(lab_factory):
    """change_window_localize: the post benchmark fails (a NIC goes to half speed after the change: the lab's
    performance model is switched on between the change and the post gate), role localize runs, and the window's
    reasons name the suspect before every device is rolled back."""
    lab = lab_factory(extra=["-e", "lab_nccl_replay=passing", "-e", "nccl_gate_check_transport=false",
                             "-e", '{"nccl_gate_targets": [{"min_size": "1G", "min_busbw": 80}]}'])
    _prepare(lab, hosts=True)  # NICs never configured fail the baseline's counter evidence before any change
    proc = start_window(lab, "-e", lab.intent_with_new_ecn(), "-e", "change_window_localize=true", "-e", "change_window_settle_seconds=20")
    try:
        wait_until_pending(lab, proc)
        # the fault arrives after the change: the post gate's launches and the localization measure it
        out = run([sys.executable, os.path.join(ROOT, "tests", "lab", "nccl", "perfmodel.py"), lab.run_dir,
                   json.dumps([{"nic": "gpu1:mlx5_1", "factor": 0.5}])], timeout=60)
        assert out.returncode == 0, out.stdout + out.stderr
        proc.wait(timeout=600)
    finally:
        stop_window(proc, signal.SIGKILL)
    text = window_log(lab)
    assert proc.returncode != 0 and "Change window rolled back" in text, text[-6000:]
    report = lab.report()
    assert report["verdict"] == "rolled back"
    assert any("localization found: nic gpu1:mlx5_1" in r for r in report["reasons"]), report["reasons"]
    assert _nothing_pending(lab.pending())
