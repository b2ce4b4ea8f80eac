# SPDX-License-Identifier: GPL-3.0-or-later
"""playbooks/change_window.yml on the InfiniBand lab (inventories/lab-ib: ibsim + a real OpenSM), as an engineer
runs it: the subnet manager is a device of the window - its OpenSM files backed up, changed under a rollback_timer
armed first with the window's deadline, confirmed when the window keeps the change, put back (and OpenSM made to
re-read them - restarted, when a key it reads only at start changed) when it does not, by the window or, when the
window is killed, by the timer itself; the fabric's port counters (perfquery from the SM host) are judged like the
switches'.

Each test has its own copy of the inventory and its own lab (launcher up/down with a run folder under tmp_path).
The benchmark runs through the mpirun launcher and the lab's replay shims (a recorded real 2-node HDR log;
-e lab_nccl_replay_post=failing replays a slow run after the change), or is off where the scenario does not need it."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import sys

import pytest
import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# The lab is the InfiniBand tests'; the window's process handling is shared with the RoCE window tests.
from labrun import BIN, ROOT, assert_lab_down, run  # noqa: E402  # pylint: disable=import-error,wrong-import-position
from test_infiniband import GPU1_0, GPU2_1, IbLab  # noqa: E402  # pylint: disable=import-error,wrong-import-position
from windowlab import start_window, stop_window, wait_until_pending, wait_until_window_gone, window_log  # noqa: E402  # pylint: disable=import-error,wrong-import-position

sys.path.insert(0, os.path.join(ROOT, "tests", "lab"))
from labproc import wait_for  # noqa: E402  # pylint: disable=import-error,wrong-import-position

FILES = ("lab_opensm_conf_file", "lab_opensm_partitions_file", "lab_opensm_qos_policy_file")
# Short windows: the benchmark-free scenarios need seconds, not the default 30 minutes.
FAST = ("-e", "change_window_benchmark=false", "-e", "change_window_confirm_margin_seconds=0")

pytestmark = pytest.mark.skipif(shutil.which("ibsim") is None or shutil.which("opensm") is None,
                                reason="needs ibsim-utils and opensm (apt-get install ibsim-utils opensm infiniband-diags)")


class IbWindow(IbLab):
    """The IB lab, with what the change window tests need: the window's argv, its reports, its rollback timers."""

    def __init__(self, tmp_path):
        super().__init__(tmp_path)
        self.tmp = tmp_path
        self.timers = []

    def argv(self, playbook, *args):
        return [os.path.join(BIN, "ansible-playbook"), "-i", self.inventory, "playbooks/%s" % playbook, *args]

    def window(self, *args):
        return run(self.argv("change_window.yml", *args), timeout=900)

    def change(self, vlarb_weight=64, drop_from_storage=None, routing_engine=None):
        """-e @file: the intent with VL 1's low-priority arbitration weight changed (opensm.conf, a SIGHUP key) and,
        optionally, a port taken out of the storage partition (partitions.conf) or other routing engines (opensm.conf,
        a key OpenSM reads only at start)."""
        data = self.intent()
        ib = data["lossless_fabric"]["infiniband"]
        ib["qos"]["vlarb_low"][1]["weight"] = vlarb_weight
        if drop_from_storage:
            storage = next(p for p in ib["partitions"] if p["name"] == "storage")
            storage["members"] = [m for m in storage["members"] if m != drop_from_storage]
        if routing_engine:
            ib["sm"]["routing_engine"] = routing_engine
        path = self.tmp / ("change-%d-%s.yml" % (vlarb_weight, "-".join(routing_engine or ["same"])))
        path.write_text(yaml.safe_dump(data))
        return "@%s" % path

    def files(self):
        return {key: self.read(key) for key in FILES}

    def reports(self):
        if not os.path.isdir(self.report_dir):
            return []
        return sorted(os.path.join(self.report_dir, n) for n in os.listdir(self.report_dir)
                      if n.startswith("change-window-") and n.endswith(".json") and "-benchmark-" not in n)

    def report(self, window_id=None):
        found = self.reports() if window_id is None else [os.path.join(self.report_dir, "change-window-%s.json" % window_id)]
        assert len(found) == 1, found
        with open(found[0], encoding="utf-8") as handle:
            return json.load(handle)

    def timer(self, name):
        """The SM's rollback timer as lossless.fabric.rollback_timer state=gathered reads it on the host."""
        self.timers.append(name)
        args = {"name": name, "state": "gathered", "state_dir": os.path.join(self.vars["lab_opensm_conf_dir"], "rollback-timers")}
        out = run([os.path.join(BIN, "ansible"), "ufm1", "-i", self.inventory, "-m", "lossless.fabric.rollback_timer",
                   "-a", json.dumps(args)], timeout=120)
        assert out.returncode == 0 and " => " in out.stdout, out.stdout + out.stderr
        return json.loads(out.stdout.split(" => ", 1)[1])["timer"]

    def opensm_pid(self):
        """The running OpenSM's pid, as the lab's ibsim.env has it (the lab server rewrites it on each restart)."""
        with open(self.vars["lab_ib_env_file"], encoding="utf-8") as handle:
            return int(re.search(r"^LAB_IBSIM_OPENSM_PID=(\d+)$", handle.read(), re.M).group(1))

    def opensm_runs(self, since=0):
        """The routing engine(s) each OpenSM start after byte offset `since` of its log configured the switches with,
        in order of the starts: [[engine, ...], ...]; and the log's size now (the next call's since)."""
        with open(self.vars["lab_opensm_log_file"], "rb") as handle:
            handle.seek(since)
            raw = handle.read()
        # Each start logs "0x80 -> OpenSM <version>"; each routing pass "<engine> tables configured on all switches".
        starts = re.split(r"0x80 -> OpenSM \d", raw.decode("utf-8", "replace"))[1:]
        return [re.findall(r"osm_ucast_mgr_process: (\S+) tables configured", part) for part in starts], since + len(raw)

    def vlarb_low(self, port_guid=GPU1_0):
        """VL -> weight of the low-priority VL arbitration table of a CA port, as OpenSM programmed it."""
        text = self.tool("smpquery", "-G", "vlarb", port_guid, "1")
        low = text.split("# Low priority", 1)[1].split("# High priority", 1)[0]
        vls = re.search(r"VL\s*:\s*(.*)", low).group(1).split("|")
        weights = re.search(r"WEIGHT\s*:\s*(.*)", low).group(1).split("|")
        return {int(v, 16): int(w, 16) for v, w in zip(vls, weights) if v.strip() and int(w, 16)}


@pytest.fixture
def ib_window(tmp_path):
    lab = IbWindow(tmp_path)
    lab.up()
    try:
        # The fabric as it stands before the window: OpenSM configured from the lab's intent.
        out = lab.playbook()
        assert out.returncode == 0, out.stdout[-6000:] + out.stderr
        yield lab
    finally:
        # A timer process outliving its test would be a leak: each ends by itself when confirmed / rolled back / fired.
        leftovers = []
        for name in set(lab.timers):
            timer = lab.timer(name)
            if timer.get("process_running"):
                leftovers.append(timer)
                os.kill(timer["pid"], signal.SIGKILL)
        lab.launcher("down")
        assert_lab_down(lab.inventory, lab.run_dir)
        assert not leftovers, "rollback timer processes outlived the test: %s" % leftovers


def _backup(lab, report, key):
    path = os.path.join(report["devices"]["ufm1"]["backup"], os.path.basename(lab.vars[key]))
    assert oct(os.stat(path).st_mode & 0o777) == "0o600", path
    with open(path, encoding="utf-8") as handle:
        return handle.read()


def test_a_good_opensm_change_is_kept_and_its_timer_confirmed(ib_window):
    lab = ib_window
    before = lab.files()
    assert lab.vlarb_low() == {0: 64, 1: 64, 2: 64, 3: 64}
    change = lab.change(vlarb_weight=32, drop_from_storage=GPU2_1)

    # The dry run: each OpenSM file's diff, nothing written, no timer, no report.
    check = lab.window("-e", change, "-e", "change_window_id=dry", "--check", "--diff")
    assert check.returncode == 0, check.stdout[-6000:] + check.stderr
    assert "dry run; ufm1: would change" in check.stdout
    assert "+qos_vlarb_low 0:64,1:32,2:64,3:64" in check.stdout
    assert lab.files() == before and lab.reports() == []
    assert lab.timer("change-window-dry-ufm1-opensm")["status"] == "absent"

    out = lab.window("-e", change, "-e", "change_window_id=good")
    assert out.returncode == 0, out.stdout[-6000:] + out.stderr
    report = lab.report("good")
    assert report["verdict"] == "kept", report["reasons"]
    sm = report["devices"]["ufm1"]
    assert (sm["kind"], sm["platform"], sm["outcome"]) == ("subnet_manager", "opensm", "kept"), sm
    assert sm["timer"]["name"] == "change-window-good-ufm1-opensm" and sm["timer"]["pending_until"]
    assert sm["timer"]["commands"] == [[lab.vars["lab_opensm_reload_cmd"]]]   # runtime keys only: SIGHUP, no restart
    diffs = {os.path.basename(f["path"]): f for f in sm["files"]}
    assert "-qos_vlarb_low 0:64,1:64,2:64,3:64\n+qos_vlarb_low 0:64,1:32,2:64,3:64\n" in diffs["opensm.conf"]["diff"]
    assert diffs["partitions.conf"]["changed"] and "%s=limited" % GPU2_1 in diffs["partitions.conf"]["diff"]
    assert not diffs["qos-policy.conf"]["changed"] and diffs["qos-policy.conf"]["diff"] == ""
    # the backups are the files as they were, owner-only
    assert {key: _backup(lab, report, key) for key in FILES} == before
    # the IB counters were read before, between and after (every linked port), and nothing moved
    assert report["ib_counters"]["pre"]["ports_read"] == 34 and report["ib_counters"]["post"]["ports_read"] == 34
    assert report["blocking_findings"] == 0
    assert report["benchmark"]["verdict"] == "pass" and [s["label"] for s in report["benchmark"]["series"]] == ["pre", "post"]
    with open(os.path.join(lab.report_dir, "change-window-good.md"), encoding="utf-8") as handle:
        md = handle.read()
    assert "| ufm1 | opensm | **kept** |" in md and "### ufm1 (opensm): kept" in md and "## InfiniBand counter deltas" in md

    # The files carry the change and OpenSM applied it: the CA port's VL arbitration, the partition's P_Key gone.
    after = lab.files()
    assert "qos_vlarb_low 0:64,1:32,2:64,3:64" in after["lab_opensm_conf_file"]
    assert after["lab_opensm_qos_policy_file"] == before["lab_opensm_qos_policy_file"]
    assert lab.vlarb_low() == {0: 64, 1: 32, 2: 64, 3: 64}
    assert "0x0002" not in lab.tool("smpquery", "-G", "pkeys", GPU2_1, "1")
    timer = lab.timer("change-window-good-ufm1-opensm")
    assert timer["status"] == "confirmed" and not timer["process_running"], timer

    # The same window again: nothing to change, no timer armed, the files untouched.
    again = lab.window("-e", change, "-e", "change_window_id=again", *FAST)
    assert again.returncode == 0, again.stdout[-6000:]
    second = lab.report("again")
    assert second["verdict"] == "no change" and second["devices"]["ufm1"]["outcome"] == "unchanged"
    assert second["devices"]["ufm1"]["timer"] is None and lab.timer("change-window-again-ufm1-opensm")["status"] == "absent"
    assert lab.files() == after


def test_a_change_the_benchmark_rejects_puts_the_opensm_files_back(ib_window):
    lab = ib_window
    before = lab.files()
    out = lab.window("-e", lab.change(vlarb_weight=16), "-e", "change_window_id=slow", "-e", "lab_nccl_replay_post=failing")
    assert out.returncode != 0, out.stdout[-6000:]
    assert "Change window rolled back" in out.stdout
    report = lab.report("slow")
    assert report["verdict"] == "rolled back"
    assert any(r.startswith("post benchmark: compare: ") and "regressed" in r for r in report["reasons"]), report["reasons"]
    sm = report["devices"]["ufm1"]
    assert sm["outcome"] == "rolled back", sm
    assert "opensm.conf (written)" in sm["detail"] and "ran %s (rc 0)" % lab.vars["lab_opensm_reload_cmd"] in sm["detail"]
    assert "+qos_vlarb_low 0:64,1:16,2:64,3:64" in sm["diff"]
    # byte for byte what was there before (and what the backup holds), and OpenSM re-read it
    assert lab.files() == before
    assert {key: _backup(lab, report, key) for key in FILES} == before
    assert lab.vlarb_low() == {0: 64, 1: 64, 2: 64, 3: 64}
    timer = lab.timer("change-window-slow-ufm1-opensm")
    assert timer["status"] == "rolled_back" and not timer["process_running"], timer


def test_a_window_killed_after_the_change_is_rolled_back_by_the_opensm_timer(ib_window):
    # A one-minute window: the timer fires some seconds after the kill; the long settle keeps the window open until then.
    lab = ib_window
    before = lab.files()
    proc = start_window(lab, "-e", lab.change(vlarb_weight=8), "-e", "change_window_id=killed", *FAST,
                        "-e", "change_window_max_minutes=1", "-e", "change_window_settle_seconds=25")
    try:
        interim = wait_until_pending(lab, proc)
    finally:
        stop_window(proc, signal.SIGKILL)
    wait_until_window_gone(lab)
    sm = interim["devices"]["ufm1"]
    assert sm["outcome"] == "pending" and sm["pending_until"] == sm["timer"]["pending_until"], sm
    assert "qos_vlarb_low 0:64,1:8,2:64,3:64" in lab.read("lab_opensm_conf_file")
    assert lab.vlarb_low()[1] == 8

    # Nobody confirms: the timer puts the files back by itself at the deadline and makes OpenSM re-read them.
    def fired():
        timer = lab.timer("change-window-killed-ufm1-opensm")
        return timer if timer["status"] == "expired" else None

    timer = wait_for(fired, "the timer to fire", timeout=120, interval=0.5)
    assert [c["rc"] for c in timer["outcome"]["commands"]] == [0], timer
    assert lab.files() == before
    wait_for(lambda: lab.vlarb_low()[1] == 64, "OpenSM to re-read the files", timeout=30, interval=0.5)
    wait_for(lambda: not lab.timer("change-window-killed-ufm1-opensm")["process_running"], "the timer process to end", timeout=10, interval=0.5)


def test_symbol_errors_after_the_change_are_a_blocking_finding_and_roll_back(ib_window):
    # While the window settles after the change, gpu1's HCA port counts symbol errors (set through the ibsim console).
    lab = ib_window
    before = lab.files()
    proc = start_window(lab, "-e", lab.change(vlarb_weight=4), "-e", "change_window_id=errors", *FAST, "-e", "change_window_settle_seconds=8")
    try:
        wait_until_pending(lab, proc)
        lab.console('PerformanceSet "gpu1-mlx5_0"[1] PortCounters.SymbolErrorCounter=7')
    finally:
        stop_window(proc)
    assert proc.returncode != 0, window_log(lab)[-6000:]
    report = lab.report("errors")
    assert report["verdict"] == "rolled back"
    assert report["devices"]["ufm1"]["outcome"] == "rolled back"
    assert "post counters: gpu1 mlx5_0: ca port 1: SymbolErrorCounter +7" in report["reasons"], report["reasons"]
    blocking = [f for f in report["findings"] if f["severity"] == "blocking"]
    assert [(f["kind"], f["phase"], f["device"], f["port"], f["counter"], f["value"]) for f in blocking] == [
        ("ib_error", "post", "gpu1 mlx5_0", "1", "SymbolErrorCounter", 7)]
    ports = report["ib_counters"]["post"]["ports"]
    assert [(p["node"], p["port"], p["errors"]) for p in ports.values()] == [("gpu1 mlx5_0", "1", {"SymbolErrorCounter": 7})]
    assert lab.files() == before
    assert lab.vlarb_low()[1] == 64


def test_a_routing_engine_change_rolled_back_restarts_opensm(ib_window):
    # OpenSM reads routing_engine only at start: the change restarts OpenSM, and so must its roll-back (a SIGHUP would
    # leave the new engine routing the fabric with the old files back in place).
    lab = ib_window
    before = lab.files()
    restart = lab.vars["lab_opensm_restart_cmd"]
    started = lab.opensm_pid()
    runs, log_offset = lab.opensm_runs()
    assert runs[-1][-1:] == ["ftree"], runs  # what the lab's intent gives: ftree first, minhop as the fallback
    out = lab.window("-e", lab.change(routing_engine=["minhop"]), "-e", "change_window_id=engine", "-e", "lab_nccl_replay_post=failing")
    assert out.returncode != 0, out.stdout[-6000:]
    assert "Change window rolled back" in out.stdout
    report = lab.report("engine")
    assert report["verdict"] == "rolled back", report["reasons"]
    sm = report["devices"]["ufm1"]
    assert sm["outcome"] == "rolled back", sm
    assert "-routing_engine ftree,minhop\n+routing_engine minhop\n" in sm["diff"], sm["diff"]
    # the timer was armed with the restart, and the roll-back ran it (the lab's opensm-restart exits 0 only once the
    # new OpenSM has swept the fabric)
    assert sm["timer"]["commands"] == [[restart]], sm["timer"]
    assert "opensm.conf (written)" in sm["detail"] and "ran %s (rc 0)" % restart in sm["detail"], sm["detail"]
    timer = lab.timer(sm["timer"]["name"])
    assert timer["status"] == "rolled_back" and not timer["process_running"], timer
    # the files are back byte for byte; OpenSM was started twice - by the change, routing with minhop, and by the
    # roll-back, routing with ftree again from the files put back
    assert lab.files() == before
    runs, _offset = lab.opensm_runs(log_offset)
    assert len(runs) == 2 and set(runs[0]) == {"minhop"} and set(runs[1]) == {"ftree"}, runs
    assert lab.opensm_pid() != started
    # the fabric answers: the master SM with the plan's priority, the VL arbitration it programs
    sminfo = lab.tool("sminfo")
    assert "SMINFO_MASTER" in sminfo and "priority 14" in sminfo, sminfo
    assert lab.vlarb_low() == {0: 64, 1: 64, 2: 64, 3: 64}
