# SPDX-License-Identifier: GPL-3.0-or-later
"""The lab launcher: start and stop every simulator an inventory needs.

    launcher.py up | down | status
    launcher.py run -- COMMAND...     up, COMMAND, print the report folder, down (also on failure)

Each simulator is a plug-in (``Simulator`` below) that says whether the
inventory needs it, starts its processes and returns the variables the
inventory must see (ports picked free at start). Those variables go to
``<inventory>/lab_run.generated.yml`` (git-ignored), which Ansible reads as one
more inventory source beside the static ``hosts.yml`` (or inventory script); pids and logs go under
``.run/lab/``. Nothing in plugins/ knows about any of this.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT_INVENTORY = os.path.join(ROOT, "inventories", "lab")
GENERATED = "lab_run.generated.yml"


class LabError(RuntimeError):
    """A simulator could not start; the message says which and why."""


class Context:
    """What a simulator plug-in gets: the inventory and a place for its files."""

    def __init__(self, inventory_dir: str, run_dir: str, inventory: dict):
        self.inventory_dir = inventory_dir
        self.run_dir = run_dir
        self.inventory = inventory
        self.python = sys.executable

    def hostvars(self, host: str) -> dict:
        return self.inventory.get("_meta", {}).get("hostvars", {}).get(host, {})

    def devices(self, kind: str) -> dict:
        """Inventory hosts whose lossless_fabric_device has this kind."""
        found = {}
        for host, hvars in sorted(self.inventory.get("_meta", {}).get("hostvars", {}).items()):
            device = hvars.get("lossless_fabric_device")
            if isinstance(device, dict) and device.get("kind") == kind:
                found[host] = hvars
        return found

    def start_process(self, name: str, argv: list[str], env: dict | None = None) -> int:
        """Start a simulator process in its own session, logging to run_dir/logs."""
        logs = os.path.join(self.run_dir, "logs")
        os.makedirs(logs, exist_ok=True)
        with open(os.path.join(logs, name + ".log"), "ab") as log:
            proc = subprocess.Popen(  # pylint: disable=consider-using-with  # outlives this call by design
                argv, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                env=dict(os.environ, **(env or {})), start_new_session=True,
            )
        _write_pid(self.run_dir, name, proc.pid)
        return proc.pid

    def start_server(self, name: str, argv: list[str], state_path: str, timeout: float = 30.0) -> dict:
        """Start a simulator that writes a JSON state file once it is ready;
        return that state, or raise LabError with the end of its log."""
        if os.path.exists(state_path):
            os.unlink(state_path)
        pid = self.start_process(name, argv)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if os.path.exists(state_path):
                with open(state_path, encoding="utf-8") as handle:
                    return json.load(handle)
            _reap(pid)
            if not _alive(pid):
                break
            time.sleep(0.05)
        log = os.path.join(self.run_dir, "logs", name + ".log")
        tail = ""
        if os.path.exists(log):
            with open(log, encoding="utf-8", errors="replace") as handle:
                tail = handle.read()[-2000:]
        raise LabError("%s did not start (see %s):\n%s" % (name, log, tail))


class Simulator:
    """Plug-in interface; later work adds switches, InfiniBand, Kubernetes, hosts."""

    name = "simulator"

    def wanted(self, ctx: Context) -> bool:
        raise NotImplementedError

    def start(self, ctx: Context) -> dict:
        """Start; return inventory variables: {'all': {...}, 'hosts': {host: {...}}}."""
        raise NotImplementedError

    def before_stop(self, run_dir: str) -> None:
        """Called while the processes still run, before down() stops them."""


sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import traffic  # noqa: E402  # pylint: disable=wrong-import-position
import wiring  # noqa: E402  # pylint: disable=wrong-import-position
from helmsim.plugin import Helm  # noqa: E402  # pylint: disable=wrong-import-position
from hostsim.plugin import Hosts  # noqa: E402  # pylint: disable=wrong-import-position
from ibsim.plugin import InfiniBand  # noqa: E402  # pylint: disable=wrong-import-position
from k8sim.plugin import Kubernetes  # noqa: E402  # pylint: disable=wrong-import-position
from nccl import perfmodel  # noqa: E402  # pylint: disable=wrong-import-position
from nccl.plugin import NcclReplay  # noqa: E402  # pylint: disable=wrong-import-position
from switchsim.plugin import Switches  # noqa: E402  # pylint: disable=wrong-import-position

# Plug-ins outside this file keep the same interface without subclassing Simulator.
SIMULATORS: list = [Switches(), InfiniBand(), Kubernetes(), Helm(), Hosts(), NcclReplay()]


def _pid_dir(run_dir: str) -> str:
    return os.path.join(run_dir, "pids")


def _write_pid(run_dir: str, name: str, pid: int) -> None:
    os.makedirs(_pid_dir(run_dir), exist_ok=True)
    with open(os.path.join(_pid_dir(run_dir), name + ".pid"), "w", encoding="utf-8") as handle:
        handle.write("%d\n" % pid)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _pids(run_dir: str) -> dict[str, int]:
    found = {}
    if os.path.isdir(_pid_dir(run_dir)):
        for entry in sorted(os.listdir(_pid_dir(run_dir))):
            if entry.endswith(".pid"):
                with open(os.path.join(_pid_dir(run_dir), entry), encoding="utf-8") as handle:
                    found[entry[:-4]] = int(handle.read().strip() or 0)
    return found


def extra_vars(command: list[str]) -> list[str]:
    """The -e/--extra-vars arguments of an ansible-playbook command line, so that the simulators see what the play
    sees (e.g. -e lab_nccl_replay=failing picks the replayed benchmark log)."""
    found = []
    for i, arg in enumerate(command):
        if arg in ("-e", "--extra-vars") and i + 1 < len(command):
            found += ["-e", command[i + 1]]
        elif arg.startswith("--extra-vars="):
            found += ["-e", arg.split("=", 1)[1]]
        elif arg.startswith("-e") and len(arg) > 2 and not arg.startswith("--"):
            found += ["-e", arg[2:]]
    return found


def _static_sources(inventory_dir: str) -> list[str]:
    """'-i SOURCE' for the folder's static inventory: its hosts.yml, else its inventory scripts (executable files:
    the molecule scenario's hosts.py writes a host per platform from the simulator grammars)."""
    if os.path.isfile(os.path.join(inventory_dir, "hosts.yml")):
        return ["-i", os.path.join(inventory_dir, "hosts.yml")]
    scripts = sorted(os.path.join(inventory_dir, name) for name in os.listdir(inventory_dir)
                     if name != GENERATED and os.path.isfile(os.path.join(inventory_dir, name)) and os.access(os.path.join(inventory_dir, name), os.X_OK))
    if not scripts:
        raise LabError("no hosts.yml and no inventory script in %s" % inventory_dir)
    return [arg for path in scripts for arg in ("-i", path)]


def load_inventory(inventory_dir: str, extra: list[str] | None = None) -> dict:
    """The inventory as Ansible sees it (static part only: the generated file is ours), with the play's extra vars."""
    ansible_inventory = os.path.join(os.path.dirname(sys.executable), "ansible-inventory")
    cmd = [ansible_inventory, *_static_sources(inventory_dir), "--list"] + list(extra or [])
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"))
    out = subprocess.run(cmd, cwd=ROOT, env=env, check=False, capture_output=True, text=True)
    if out.returncode != 0:
        raise LabError("ansible-inventory failed for %s:\n%s" % (inventory_dir, out.stderr.strip()))
    return json.loads(out.stdout)


def _yaml_scalar(value) -> str:
    # JSON is valid YAML; it quotes every string, so no value can break the file.
    return json.dumps(value)


def write_generated(inventory_dir: str, variables: dict) -> str:
    path = os.path.join(inventory_dir, GENERATED)
    lines = ["---", "# Written by tests/lab/launcher.py for this lab run; do not edit.", "all:", "  vars:"]
    all_vars = variables.get("all", {})
    if not all_vars:
        lines[-1] = "  vars: {}"
    for key in sorted(all_vars):
        lines.append("    %s: %s" % (key, _yaml_scalar(all_vars[key])))
    hosts = variables.get("hosts", {})
    if hosts:
        lines.append("  hosts:")
        for host in sorted(hosts):
            lines.append("    %s:" % host)
            for key in sorted(hosts[host]):
                lines.append("      %s: %s" % (key, _yaml_scalar(hosts[host][key])))
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")
    return path


def up(inventory_dir: str, run_dir: str, report_dir: str | None = None, extra: list[str] | None = None) -> dict:
    if any(_alive(pid) for pid in _pids(run_dir).values()):
        down(inventory_dir, run_dir)
    os.makedirs(run_dir, exist_ok=True)
    ctx = Context(inventory_dir, run_dir, load_inventory(inventory_dir, extra))
    # The cables as they really are (the intent's links, with lab_cabling_faults): every simulator reads it.
    hostvars = ctx.inventory.get("_meta", {}).get("hostvars", {})
    faults = next((hv["lab_cabling_faults"] for _h, hv in sorted(hostvars.items()) if hv.get("lab_cabling_faults")), [])
    try:
        wiring.write(run_dir, wiring.build(hostvars, faults))
    except wiring.WiringError as exc:
        raise LabError(str(exc)) from None
    # lab_perf_faults (tests/lab/nccl/README.md, "Performance model"): <run_dir>/perf.json, checked against the cables
    perf = {k: next((hv[k] for _h, hv in sorted(hostvars.items()) if hv.get(k) is not None), None)
            for k in ("lab_perf_faults", "lab_perf_noise", "lab_perf_seed")}
    try:
        perfmodel.write_perf(run_dir, perf["lab_perf_faults"], perf["lab_perf_noise"], perf["lab_perf_seed"],
                             wiring.load(run_dir)["links"])
    except perfmodel.PerfModelError as exc:
        raise LabError(str(exc)) from None
    # lab_traffic_faults (docs/lab.md, "Traffic"): <run_dir>/traffic.json, the faults checked against the cables, with
    # the intent's classes; the lab's NCCL launches move the NIC and switch counters from it (tests/lab/traffic.py)
    traffic_faults = next((hv["lab_traffic_faults"] for _h, hv in sorted(hostvars.items()) if hv.get("lab_traffic_faults")), [])
    intent = next((hv["lossless_fabric"] for _h, hv in sorted(hostvars.items()) if isinstance(hv.get("lossless_fabric"), dict)), {})
    try:
        traffic.write_config(run_dir, traffic_faults, intent, wiring.load(run_dir)["links"])
    except traffic.TrafficError as exc:
        raise LabError(str(exc)) from None
    report_dir = report_dir or os.path.join(ROOT, "reports", os.path.basename(os.path.normpath(inventory_dir)))
    variables: dict = {"all": {"lossless_fabric_report_dir": report_dir, "lab_run_dir": run_dir}, "hosts": {}}
    started = []
    try:
        for sim in SIMULATORS:
            if not sim.wanted(ctx):
                continue
            got = sim.start(ctx)
            started.append(sim.name)
            variables["all"].update(got.get("all", {}))
            for host, hvars in got.get("hosts", {}).items():
                variables["hosts"].setdefault(host, {}).update(hvars)
    except Exception:
        down(inventory_dir, run_dir)
        raise
    write_generated(inventory_dir, variables)
    state = {"inventory": inventory_dir, "simulators": started, "report_dir": report_dir, "started_at": time.time()}
    with open(os.path.join(run_dir, "state.json"), "w", encoding="utf-8") as handle:
        json.dump(state, handle, indent=2)
    return state


def down(inventory_dir: str, run_dir: str, grace: float = 5.0) -> list[str]:
    """Stop every process we started (its whole session), then forget the ports."""
    stopped = []
    pids = _pids(run_dir)
    for sim in SIMULATORS:
        if sim.name in pids and _alive(pids[sim.name]):
            try:
                sim.before_stop(run_dir)
            except (OSError, ValueError, KeyError) as exc:
                print("lab: %s: could not keep its state: %s" % (sim.name, exc), file=sys.stderr)
    for pid in pids.values():
        if pid and _alive(pid):
            try:
                os.killpg(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
    deadline = time.monotonic() + grace
    for name, pid in pids.items():
        while pid and _alive(pid) and time.monotonic() < deadline:
            _reap(pid)
            time.sleep(0.05)
        if pid and _alive(pid):
            try:
                os.killpg(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        _reap(pid)
        os.unlink(os.path.join(_pid_dir(run_dir), name + ".pid"))
        stopped.append(name)
    generated = os.path.join(inventory_dir, GENERATED)
    if os.path.exists(generated):
        os.unlink(generated)
    return stopped


def _reap(pid: int) -> None:
    # Our own children become zombies until waited for; others are not ours to wait.
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass


def status(run_dir: str) -> dict[str, bool]:
    return {name: _alive(pid) for name, pid in _pids(run_dir).items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=["up", "down", "status", "run"])
    parser.add_argument("-i", "--inventory", default=DEFAULT_INVENTORY)
    parser.add_argument("--run-dir", default=None, help="pids, logs and state (default .run/<inventory name>)")
    parser.add_argument("--report-dir", default=None, help="where playbooks write reports (default reports/<inventory name>)")
    parser.add_argument("-e", "--extra-vars", action="append", default=[],
                        help="variables the simulators see (run also takes them from the command's -e)")
    argv = list(sys.argv[1:] if argv is None else argv)
    command = argv[argv.index("--") + 1:] if "--" in argv else []
    args = parser.parse_args(argv[:argv.index("--")] if "--" in argv else argv)
    inventory_dir = os.path.abspath(args.inventory)
    run_dir = args.run_dir or os.path.join(ROOT, ".run", os.path.basename(os.path.normpath(inventory_dir)))

    if args.action == "down":
        stopped = down(inventory_dir, run_dir)
        print("lab: stopped %s" % (", ".join(stopped) or "nothing (no simulator was running)"))
        return 0
    if args.action == "status":
        for name, alive in status(run_dir).items():
            print("%-24s %s" % (name, "running" if alive else "dead"))
        return 0

    try:
        extra = [a for v in args.extra_vars for a in ("-e", v)] + extra_vars(command)
        state = up(inventory_dir, run_dir, args.report_dir and os.path.abspath(args.report_dir), extra)
    except RuntimeError as exc:  # LabError, and the plug-ins' own errors
        print("lab: %s" % exc, file=sys.stderr)
        return 2
    print("lab: up (%s); logs in %s" % (", ".join(state["simulators"]) or "no simulators needed", os.path.join(run_dir, "logs")))
    if args.action == "up":
        return 0

    if not command:
        parser.error("run needs a command after --")
    # Stop the lab whatever happens to the command, Ctrl-C included.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    rc = 1
    try:
        rc = subprocess.call(command, cwd=ROOT)
    except KeyboardInterrupt:
        rc = 130
    finally:
        print("lab: report folder: %s" % state["report_dir"])
        stopped = down(inventory_dir, run_dir)
        print("lab: down (%s)" % (", ".join(stopped) or "nothing to stop"))
    return rc


if __name__ == "__main__":
    sys.exit(main())
