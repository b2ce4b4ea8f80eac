# SPDX-License-Identifier: GPL-3.0-or-later
"""Fabric-wide push + read-back and counter snapshots at many simulated EOS
switches: one `switch_config` task (`fabric:`) and one `switch_counters` task
(`fabric:`), each run twice (first run / rerun), as users run them
(ansible-playbook, the collection's roles, an inventory of N switches).

    .venv/bin/python bench/bench_scale.py [--counts 64 256 1024] [--workers 32] [--sims 1]

Per run: wall time, the task alone (timestamps in the play around it),
controller CPU (ansible-playbook and every worker it forked, user+sys), the
peak memory of the largest controller process, the simulator's CPU over the
same run, and the 1-minute load average before it (the machine is shared).
Results: one JSON line on stdout and bench/results/scale.json.
Not a test: nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.dirname(sys.executable)
sys.path.insert(0, os.path.join(ROOT, "tests", "lab"))

from switchsim.client import SimProcess, write_known_hosts  # noqa: E402  # pylint: disable=wrong-import-position

PASSWORD = "bench-pw"
INTENT = {"name": "bench", "transport": "roce"}
PORTS = {"Ethernet1": {"speed": "400G", "cable_length_m": 3}, "Ethernet2": {"speed": "400G", "cable_length_m": 3}}
TICKS = os.sysconf("SC_CLK_TCK")

# Runs a command and reports its whole process tree's CPU and the largest process's peak RSS
# (RUSAGE_CHILDREN: every descendant that was waited for, which ansible does for its workers).
_MEASURE = """
import json, resource, subprocess, sys
rc = subprocess.call(sys.argv[2:])
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
with open(sys.argv[1], "w") as f:
    json.dump({"rc": rc, "cpu_s": ru.ru_utime + ru.ru_stime, "maxrss_kb": ru.ru_maxrss}, f)
sys.exit(rc)
"""


def _proc_cpu(pid: int) -> float:
    with open("/proc/%d/stat" % pid, encoding="ascii") as handle:
        fields = handle.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime


def _load() -> float:
    return os.getloadavg()[0]


_STAMP = {"ansible.builtin.debug": {"msg": "STAMP={{ now().timestamp() }}"}}


class Lab:
    """N simulated EOS switches over `sims` simulator processes, and an inventory of them."""

    def __init__(self, workdir: str, count: int, sims: int):
        self.workdir = workdir
        os.makedirs(os.path.join(workdir, "keys"), exist_ok=True)
        names = ["sw%04d" % i for i in range(count)]
        per = -(-count // sims)
        self.sims = []
        for index in range(sims):
            chunk = names[index * per:(index + 1) * per]
            if not chunk:
                continue
            cfg = {"time_scale": 1.0, "switches": [
                {"name": name, "platform": "eos", "port": 0, "username": "admin", "password": PASSWORD,
                 "host_key_file": os.path.join(workdir, "keys", name + ".key"), "ports": sorted(PORTS)} for name in chunk]}
            self.sims.append(SimProcess(cfg, os.path.join(workdir, "sim%d" % index), start_timeout=600))

    def start(self):
        started = time.monotonic()
        for sim in self.sims:
            sim.start()
        self.start_s = time.monotonic() - started
        hosts = {}
        for index, sim in enumerate(self.sims):
            known = write_known_hosts(os.path.join(self.workdir, "known_hosts%d" % index), sim.state_data)
            for name, info in sim.state_data["switches"].items():
                hosts[name] = {"ansible_host": "127.0.0.1", "ansible_port": info["port"], "ansible_user": "admin", "ansible_password": PASSWORD,
                               "lossless_fabric_known_hosts": known, "lossless_fabric_device": {"kind": "switch", "platform": "eos", "ports": PORTS}}
        self.inventory = os.path.join(self.workdir, "inventory.yml")
        with open(self.inventory, "w", encoding="utf-8") as handle:
            yaml.safe_dump({"all": {"vars": {"lossless_fabric": INTENT}, "children": {"switches": {"hosts": hosts}}}}, handle)
        return self

    def stop(self):
        for sim in self.sims:
            sim.stop()

    def sim_cpu(self) -> float:
        return sum(_proc_cpu(sim.proc.pid) for sim in self.sims)

    def play(self, name: str, tasks: list, roles: list | None = None, checks: list | None = None, wrap: list | None = None) -> dict:
        """One ansible-playbook run of a play on localhost (tasks between two time stamps, then checks); its measurements."""
        play = {"name": name, "hosts": "localhost", "gather_facts": False, "roles": roles or [],
                "tasks": [dict(_STAMP, name="stamp before")] + tasks + [dict(_STAMP, name="stamp after")] + (checks or [])}
        path = os.path.join(self.workdir, name + ".yml")
        with open(path, "w", encoding="utf-8") as handle:
            yaml.safe_dump([play], handle, sort_keys=False)
        env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1")
        env.pop("ANSIBLE_COLLECTIONS_PATH", None)
        measured = os.path.join(self.workdir, name + ".rusage.json")
        load, sim_before, start = _load(), self.sim_cpu(), time.monotonic()
        out = subprocess.run([sys.executable, "-c", _MEASURE, measured, *(wrap or []), os.path.join(BIN, "ansible-playbook"), "-i", self.inventory, path],
                             cwd=ROOT, env=env, capture_output=True, text=True, check=False)
        wall = time.monotonic() - start
        sim_cpu = self.sim_cpu() - sim_before
        if out.returncode != 0:
            raise RuntimeError("%s failed:\n%s\n%s" % (name, out.stdout[-4000:], out.stderr[-2000:]))
        with open(measured, encoding="utf-8") as handle:
            usage = json.load(handle)
        stamps = [float(value) for value in re.findall(r'"STAMP=([0-9.]+)"', out.stdout)]
        counts = [int(value) for value in re.findall(r'"COUNT=([0-9]+)"', out.stdout)]
        return {"wall_s": round(wall, 2), "task_s": round(stamps[-1] - stamps[0], 2), "controller_cpu_s": round(usage["cpu_s"], 2),
                "controller_peak_rss_mb": round(usage["maxrss_kb"] / 1024, 1), "simulator_cpu_s": round(sim_cpu, 2),
                "load_1m_before": round(load, 2), "counted": counts}


def push_tasks(workers: int) -> list:
    return [{"name": "push + read-back, fabric-wide",
             "lossless.fabric.switch_config": {"fabric": "{{ groups['switches'] }}", "plans": "{{ fabric_plan_result.devices }}", "workers": workers},
             "register": "pushed", "ignore_errors": True}]


def _no_failure(register: str) -> dict:
    """After the second stamp: fail the run with the task's own message (and exception) when it failed."""
    return {"name": "the task did not fail", "ansible.builtin.assert": {
        "that": ["not (%s.failed | default(false))" % register],
        "fail_msg": "{{ %s.msg | default('') }} {{ %s.exception | default('') }}" % (register, register)}}


def push_checks() -> list:
    changed = "COUNT={{ pushed.switches | dict2items | selectattr('value.changed') | list | length }}"
    return [_no_failure("pushed"), {"name": "switches changed", "ansible.builtin.debug": {"msg": changed}},
            {"name": "switches pushed", "ansible.builtin.debug": {"msg": "COUNT={{ pushed.switches | length }}"}}]


def counter_tasks(workers: int) -> list:
    return [{"name": "counters, fabric-wide",
             "lossless.fabric.switch_counters": {"fabric": "{{ groups['switches'] }}", "workers": workers}, "register": "snap", "ignore_errors": True}]


def counter_checks() -> list:
    return [_no_failure("snap"), {"name": "switches read", "ansible.builtin.debug": {
        "msg": "COUNT={{ snap.switches | dict2items | selectattr('value.counters.ports.Ethernet1', 'defined') | list | length }}"}}]


def measure(count: int, workers: int, sims: int) -> dict:
    plan_role = [{"role": "lossless.fabric.fabric_plan", "vars": {"fabric_plan_show_summary": False}}]
    with tempfile.TemporaryDirectory() as tmp:
        lab = Lab(tmp, count, sims).start()
        try:
            row = {"switches": count, "workers": workers, "simulators": len(lab.sims), "simulator_start_s": round(lab.start_s, 1)}
            row["plan_only"] = lab.play("plan", [], plan_role)
            row["push_first"] = lab.play("push1", push_tasks(workers), plan_role, push_checks())
            row["push_rerun"] = lab.play("push2", push_tasks(workers), plan_role, push_checks())
            row["counters_first"] = lab.play("counters1", counter_tasks(workers), checks=counter_checks())
            row["counters_rerun"] = lab.play("counters2", counter_tasks(workers), checks=counter_checks())
        finally:
            lab.stop()
    return row


RUNS = (("push_first", "push + read-back, first run (every switch changes)"), ("push_rerun", "push + read-back, rerun (no change)"),
        ("counters_first", "counter snapshot"), ("counters_rerun", "counter snapshot, again"))


def render(result: dict) -> list[str]:
    """The docs/performance.md section of a bench_scale result."""
    rows = result["rows"]
    lines = [
        "| switches | run | wall (s) | task (s) | task per switch (ms) | controller CPU (s) | peak RSS (MB) | simulator CPU (s) | load before |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        n = row["switches"]
        for key, label in RUNS:
            run = row[key]
            lines.append("| %d | %s | %.2f | %.2f | %.1f | %.2f | %.0f | %.2f | %.2f |" % (
                n, label, run["wall_s"], run["task_s"], 1000 * run["task_s"] / n, run["controller_cpu_s"],
                run["controller_peak_rss_mb"], run["simulator_cpu_s"], run["load_1m_before"]))
    lines += ["", "Growth per switch between sizes (the slope: extra task time and controller CPU per added switch):", "",
              "| from -> to | run | task (ms per added switch) | controller CPU (ms per added switch) | peak RSS (KB per added switch) |",
              "|---|---|---|---|---|"]
    for low, high in zip(rows, rows[1:]):
        added = high["switches"] - low["switches"]
        for key, label in RUNS:
            a, b = low[key], high[key]
            lines.append("| %d -> %d | %s | %.1f | %.1f | %.0f |" % (
                low["switches"], high["switches"], label, 1000 * (b["task_s"] - a["task_s"]) / added,
                1000 * (b["controller_cpu_s"] - a["controller_cpu_s"]) / added, 1024 * (b["controller_peak_rss_mb"] - a["controller_peak_rss_mb"]) / added))
    return lines


def _raise_open_files() -> tuple[int, int]:
    """One simulator process holds a listening socket per switch and one per open session: at 1,024
    switches the usual soft limit of 1,024 open files refuses the last switches' connections. Raise the
    soft limit to the hard one for this process and the simulators and ansible-playbook it starts."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--counts", type=int, nargs="+", default=[64, 256, 1024])
    parser.add_argument("--workers", type=int, default=32)
    parser.add_argument("--sims", type=int, default=2, help="simulator processes the switches are spread over (one serves at most ~1,000: it select()s)")
    parser.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "scale.json"))
    args = parser.parse_args()
    open_files = _raise_open_files()
    rows = []
    for count in args.counts:
        rows.append(measure(count, args.workers, args.sims))
        print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    result = {"bench": "scale", "taken_at": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "cores": os.cpu_count(),
              "open_files_limit": open_files[0], "rows": rows}
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as handle:
        json.dump(result, handle, indent=1)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
