# SPDX-License-Identifier: GPL-3.0-or-later
"""playbooks/change_window.yml at many simulated EOS switches, as an engineer
runs it: the fabric is pushed first (one fabric-wide `switch_config` task), then
a window changes the RoCE queue's ECN thresholds on every switch (backup, device
diff, counter snapshots, baseline benchmark, the commit under the switch's own
rollback timer, benchmark again, confirm or roll back), and - with --rejected -
a second window whose post benchmark is below target rolls every switch back.

    .venv/bin/python bench/bench_window.py [--counts 64 256] [--serial 100%] [--rejected]

The lab is bench_scale.py's (N switches over 2 simulator processes) plus two
GPU hosts on this machine and the benchmark through the lab's strict mpirun
replay shim (tests/lab/nccl: a recorded real nccl-tests log, the way
inventories/lab-ib launches it; the post launches replay the `failing` log when
the window must be rejected). The GPU hosts' NICs are left out of the window
(change_window_nic_hosts / change_window_nic_change_hosts empty): the switches
are under test.

Per window: wall time, controller CPU (ansible-playbook and every worker it
forked), peak RSS of the largest controller process, the simulators' CPU, the
1/5/15-minute load before; the report's verdict, batches and outcome per
switch; and what each switch holds afterwards, read through the simulator's
control API: nothing pending, the new configuration (kept) or the one from
before the window (rolled back). One JSON line on stdout and
bench/results/window.json. Not a test: nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile
import time

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import bench_scale  # noqa: E402  # pylint: disable=wrong-import-position
from bench_scale import _MEASURE, BIN, ROOT, Lab  # noqa: E402  # pylint: disable=wrong-import-position

sys.path.insert(0, os.path.join(ROOT, "tests", "lab"))
from nccl.plugin import NcclReplay  # noqa: E402  # pylint: disable=wrong-import-position

# The lab's intent (RoCE, the all_reduce target the replayed logs are judged against), read as the lab has it.
with open(os.path.join(ROOT, "inventories", "lab", "group_vars", "all", "lossless_fabric.yml"), encoding="utf-8") as _handle:
    INTENT = yaml.safe_load(_handle)["lossless_fabric"]
# The changes: new ECN thresholds on the RoCE queue (a typical tuning change; the integration tests' values), and
# another set for the window that is rejected.
GOOD = {"min_threshold_bytes": 153600, "max_threshold_bytes": 1536000, "max_probability_percent": 10}
REJECTED = {"min_threshold_bytes": 204800, "max_threshold_bytes": 2048000, "max_probability_percent": 20}
GPU = {"kind": "host", "gpus": 8, "nics": [{"name": "mlx5_0", "netdev": "eth2", "speed": "400G"}, {"name": "mlx5_1", "netdev": "eth3", "speed": "400G"}]}


class _Ctx:
    """What the NCCL replay plug-in reads of the lab launcher's context."""

    def __init__(self, run_dir: str, replay: str):
        self.run_dir = run_dir
        self.python = sys.executable
        self.inventory = {"_meta": {"hostvars": {"gpu1": {"lab_nccl_replay": replay}}}}


class WindowLab(Lab):
    """bench_scale's switches, two local GPU hosts, the mpirun replay shim; the window's settings."""

    def start(self):
        super().start()
        self.report_dir = os.path.join(self.workdir, "report")
        nccl_bin = NcclReplay().start(_Ctx(self.workdir, "passing"))["all"]["lab_nccl_bin"]
        with open(self.inventory, encoding="utf-8") as handle:
            inventory = yaml.safe_load(handle)
        inventory["all"]["vars"] = {
            "lossless_fabric": INTENT, "lossless_fabric_report_dir": self.report_dir,
            "lossless_fabric_lock_dir": os.path.join(self.workdir, "locks"),
            # The benchmark as inventories/lab-ib launches it: mpirun through the lab's replay shim.
            "lab_nccl_bin": nccl_bin, "lab_nccl_replay_post": "",
            "nccl_gate_launcher": "mpirun", "nccl_gate_mpirun": {"path": "{{ lab_nccl_bin }}/mpirun"},
            "nccl_gate_env": "{{ {'LAB_NCCL_REPLAY': lab_nccl_replay_post} if nccl_gate_phase | default('') == 'post'"
                             " and lab_nccl_replay_post | length > 0 else {} }}",
            "nccl_gate_hosts": ["gpu1", "gpu2"], "nccl_gate_binary": "all_reduce_perf_mpi", "nccl_gate_timeout": 60,
            "nccl_gate_check_transport": False,
            # The switches are under test; the NICs stay out of the window.
            "change_window_nic_hosts": [], "change_window_nic_change_hosts": [],
        }
        gpu = {"ansible_connection": "local", "ansible_python_interpreter": "{{ ansible_playbook_python }}", "lossless_fabric_device": GPU}
        inventory["all"]["children"]["gpu_hosts"] = {"hosts": {"gpu1": gpu, "gpu2": gpu}}
        with open(self.inventory, "w", encoding="utf-8") as handle:
            yaml.safe_dump(inventory, handle)
        return self

    def names(self) -> list[str]:
        return sorted(name for sim in self.sims for name in sim.state_data["switches"])

    def _sim(self, name: str):
        return next(sim for sim in self.sims if name in sim.state_data["switches"])

    def running(self) -> dict:
        return {name: self._sim(name).running(name) for name in self.names()}

    def pending(self) -> dict:
        return {name: self._sim(name).pending(name)["pending_commit"] for name in self.names()}

    def window(self, window_id: str, ecn: dict, *extra: str) -> dict:
        """One change window (ansible-playbook playbooks/change_window.yml); its measurements and its report."""
        intent = json.loads(json.dumps(INTENT))
        intent["roce"].setdefault("ecn", {}).update(ecn)
        change = os.path.join(self.workdir, window_id + ".change.yml")
        with open(change, "w", encoding="utf-8") as handle:
            yaml.safe_dump({"lossless_fabric": intent}, handle)
        env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1")
        env.pop("ANSIBLE_COLLECTIONS_PATH", None)
        measured = os.path.join(self.workdir, window_id + ".rusage.json")
        argv = [os.path.join(BIN, "ansible-playbook"), "-i", self.inventory, "playbooks/change_window.yml",
                "-e", "@" + change, "-e", "change_window_id=" + window_id, *extra]
        load, sim_before, start = os.getloadavg(), self.sim_cpu(), time.monotonic()
        out = subprocess.run([sys.executable, "-c", _MEASURE, measured, *argv], cwd=ROOT, env=env, capture_output=True, text=True, check=False)
        wall = time.monotonic() - start
        sim_cpu = self.sim_cpu() - sim_before
        with open(measured, encoding="utf-8") as handle:
            usage = json.load(handle)
        with open(os.path.join(self.workdir, window_id + ".log"), "w", encoding="utf-8") as handle:
            handle.write(out.stdout + out.stderr)
        path = os.path.join(self.report_dir, "change-window-%s.json" % window_id)
        if not os.path.exists(path):
            raise RuntimeError("window %s wrote no report (rc %d):\n%s\n%s" % (window_id, out.returncode, out.stdout[-4000:], out.stderr[-2000:]))
        with open(path, encoding="utf-8") as handle:
            report = json.load(handle)
        return {"rc": out.returncode, "wall_s": round(wall, 2), "controller_cpu_s": round(usage["cpu_s"], 2),
                "controller_peak_rss_mb": round(usage["maxrss_kb"] / 1024, 1), "simulator_cpu_s": round(sim_cpu, 2),
                "load_before": [round(value, 2) for value in load], "report": report,
                "tasks": out.stdout.count("\nTASK [")}


def _summary(run: dict, names: list[str], before: dict, after: dict, pending: dict, expect: str) -> dict:
    """The window's figures and, per switch, the report's outcome against what the switch holds."""
    report = run.pop("report")
    outcomes = {name: (report["devices"].get(name) or {}).get("outcome") for name in names}
    holds = {}
    for name in names:
        if pending[name]:
            holds[name] = "pending"
        elif after[name] == before[name]:
            holds[name] = "as before"
        else:
            holds[name] = "changed"
    want = "changed" if expect == "kept" else "as before"
    run.update(
        verdict=report["verdict"], reasons=report["reasons"][:5], batches=[{"batch": b.get("batch"), "devices": len(b["devices"]), "status": b["status"]}
                                                                           for b in report.get("batches") or []],
        benchmark=(report.get("benchmark") or {}).get("verdict"), outcomes=dict(collections.Counter(outcomes.values())),
        holds=dict(collections.Counter(holds.values())),
        every_switch=all(outcomes[n] == expect for n in names) and all(holds[n] == want for n in names),
        not_as_expected=sorted(n for n in names if outcomes[n] != expect or holds[n] != want)[:10])
    return run


def measure(count: int, sims: int, serial: str, rejected: bool) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        lab = WindowLab(tmp, count, sims).start()
        try:
            names = lab.names()
            row = {"switches": count, "simulators": len(lab.sims), "serial": serial}
            plan_role = [{"role": "lossless.fabric.fabric_plan", "vars": {"fabric_plan_show_summary": False}}]
            row["prepare"] = lab.play("prepare", bench_scale.push_tasks(32), plan_role, bench_scale.push_checks())
            base = lab.running()
            run = lab.window("good", GOOD, "-e", "change_window_serial=%s" % serial)
            after = lab.running()
            row["good"] = _summary(run, names, base, after, lab.pending(), "kept")
            if rejected:
                run = lab.window("rejected", REJECTED, "-e", "change_window_serial=%s" % serial, "-e", "lab_nccl_replay_post=failing")
                row["rejected"] = _summary(run, names, after, lab.running(), lab.pending(), "rolled back")
        finally:
            lab.stop()
    return row


# The windows of a row, as the table names them ("good_attempt": a good change's window that stopped before the change,
# kept when a result of several runs is put together by hand).
WINDOWS = (("good_attempt", "good change, stopped in the pre-checks"), ("good", "good change"), ("rejected", "rejected (post benchmark below target)"))


def render(result: dict) -> list[str]:
    """The Markdown table of a bench_window.py result."""
    out = ["| switches | window | serial | batches | verdict | outcome per switch (report) | what the switches hold (simulator) | every switch as expected "
           "| wall (s) | wall per switch (ms) | controller CPU (s) | peak RSS (MB) | simulator CPU (s) | load before (1/5/15 min) |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for row in result["rows"]:
        for key, label in WINDOWS:
            if key not in row:
                continue
            run = row[key]
            out.append("| %d | %s | %s | %d | %s | %s | %s | %s | %.1f | %.0f | %.1f | %.0f | %.1f | %s |" % (
                row["switches"], label, row["serial"], len(run["batches"]),
                run["verdict"], ", ".join("%s %d" % kv for kv in sorted(run["outcomes"].items(), key=str)),
                ", ".join("%s %d" % kv for kv in sorted(run["holds"].items(), key=str)), "yes" if run["every_switch"] else "NO",
                run["wall_s"], 1000 * run["wall_s"] / row["switches"], run["controller_cpu_s"], run["controller_peak_rss_mb"], run["simulator_cpu_s"],
                " / ".join("%.1f" % v for v in run["load_before"])))
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--counts", type=int, nargs="+", default=[64, 256])
    parser.add_argument("--sims", type=int, default=2)
    parser.add_argument("--serial", default="100%", help="change_window_serial (the switches per batch)")
    parser.add_argument("--rejected", action="store_true", help="also a window whose post benchmark is below target")
    parser.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "window.json"))
    args = parser.parse_args()
    bench_scale._raise_open_files()  # pylint: disable=protected-access
    result = {"bench": "window", "taken_at": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "cores": os.cpu_count(),
              "rows": []}
    for count in args.counts:
        result["rows"].append(measure(count, args.sims, args.serial, args.rejected))
        print(json.dumps(result["rows"][-1]), file=sys.stderr, flush=True)
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as handle:
        json.dump(result, handle, indent=1)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
