# SPDX-License-Identifier: GPL-3.0-or-later
"""One simulated InfiniBand fabric: ibsim + a real OpenSM in a private network namespace.

    with Fabric(workdir, topology.build(spec)) as fab:      # starts, waits for SUBNET UP
        fab.run(["sminfo"])                                   # any infiniband-diags tool, inside the namespace
        fab.write_partitions("Default=0x7fff : ALL=full ;\\n...")
        fab.reload()                                          # SIGHUP OpenSM, wait for the re-sweep
        fab.set_counter("gpu1-mlx5_0", 1, "SymbolErrorCounter", 7)
        fab.link_down("gpu1-mlx5_0", 1)
    # stop(): OpenSM first, then ibsim; nothing left running

How (toolchain.md section 6, host-ib-k8s.md b.5):
- ibsim's sockets are abstract unix sockets, so one simulator per network
  namespace.  ibsim itself is started as ``unshare -n ibsim -s NET``: its pid
  owns the namespace (``/proc/PID/ns/net``), and OpenSM and every diag tool
  join it with ``nsenter --net=/proc/PID/ns/net`` (no named netns, no mount,
  nothing to clean up: the namespace dies with its last process).
- Clients (OpenSM, diags) run with ``LD_PRELOAD=libumad2sim.so``; ``SIM_HOST``
  is the node they attach to (OpenSM: the subnet manager's CA).
- ibsim's console reads stdin: stdin is a FIFO (``ibsim.console``) that
  ibsim itself holds open read-write, so it never sees EOF and anyone may
  write console commands to it; replies go to ``ibsim.log``.
- OpenSM runs with ``force_log_flush TRUE`` so ``SUBNET UP`` is visible at
  once; OSM_CACHE_DIR / OSM_TMP_DIR / dump_files_dir point into workdir.
- Each child is in its own session (a killpg of the caller does not hit it
  out of order) and gets SIGKILL if the process that started it dies
  (PR_SET_PDEATHSIG): an orphaned OpenSM/ibsim cannot outlive its owner.

Files in workdir: net, opensm.conf, partitions.conf, qos-policy.conf,
opensm.log, opensm.out, ibsim.log, ibsim.console, ibsim.env, bin/ (wrappers).
"""

from __future__ import annotations

import ctypes
import json
import os
import re
import shutil
import signal
import subprocess
import time
from typing import Any

UMAD2SIM = "/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so"
HERE = os.path.dirname(os.path.abspath(__file__))
WRAPPER_DIR = os.path.join(HERE, "bin")
DIAG_TOOLS = ("smpquery", "saquery", "ibnetdiscover", "perfquery", "sminfo", "ibstat", "iblinkinfo",
              "ibroute", "ibqueryerrors", "ibswitches", "ibhosts", "ibaddr", "ibportstate")
LAB_TOOLS = ("ibsim-console", "opensm-reload", "opensm-restart")
DIAG_PATH = "/usr/sbin:/usr/bin:/sbin:/bin"

# The lab's starting point: what Debian's OpenSM does with no policy, made explicit.
DEFAULT_PARTITIONS = "# lab default (OpenSM's implicit one)\nDefault=0x7fff : ALL=full ;\n"
DEFAULT_QOS_POLICY = """\
# lab default: a valid policy needs a DEFAULT qos-level (ERR AC10 otherwise)
qos-levels
    qos-level
        name: DEFAULT
        sl: 0
    end-qos-level
end-qos-levels
"""

# ibsim prints this on every client attach (umad2sim, to stderr); real hosts do not.
_ATTACH_NOISE = re.compile(r"^ibwarn: \[\d+\] sim_connect: attached as client \d+ at node .*\n?", re.M)


class FabricError(RuntimeError):
    """The fabric could not start or a command failed; the message says which and why."""


def _pdeathsig() -> None:  # runs in the child between fork and exec
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except OSError:
        pass


def default_opensm_conf(path: str) -> str:
    """The full annotated default opensm.conf of the installed OpenSM (``opensm -c``)."""
    out = subprocess.run(["opensm", "-c", path], capture_output=True, text=True, check=False, timeout=30)
    if out.returncode != 0 or not os.path.exists(path):
        raise FabricError("opensm -c %s failed (rc %d): %s" % (path, out.returncode, (out.stderr or out.stdout).strip()))
    with open(path, encoding="utf-8") as handle:
        return handle.read()


def set_conf_options(text: str, options: dict[str, Any]) -> str:
    """opensm.conf text with ``key value`` lines replaced (appended when absent)."""
    lines = text.splitlines()
    for key, value in options.items():
        line = "%s %s" % (key, value)
        pattern = re.compile(r"^\s*%s\s" % re.escape(key))
        for index, old in enumerate(lines):
            if pattern.match(old + " "):
                lines[index] = line
                break
        else:
            lines.append(line)
    return "\n".join(lines) + "\n"


class Fabric:
    """ibsim + OpenSM in a fresh network namespace (see the module docstring)."""

    def __init__(self, workdir: str, topology: Any = None, *, net_text: str | None = None, sm_node: str | None = None,
                 opensm_options: dict[str, Any] | None = None, partitions: str = DEFAULT_PARTITIONS,
                 qos_policy: str = DEFAULT_QOS_POLICY, policy_on_cmdline: bool = True, start_timeout: float = 20.0,
                 control_pid: int | None = None):
        if topology is not None:
            net_text = topology.text
            sm_node = sm_node or topology.sm_nodes[0]
        if not net_text or not sm_node:
            raise FabricError("Fabric needs a topology (or net_text and sm_node)")
        self.workdir = os.path.abspath(workdir)
        self.topology = topology
        self.net_text = net_text
        self.sm_node = sm_node
        self.opensm_options = dict(opensm_options or {})
        self.partitions = partitions
        self.qos_policy = qos_policy
        self.policy_on_cmdline = policy_on_cmdline
        self.start_timeout = start_timeout
        self.control_pid = control_pid  # a server.py to SIGUSR1 for an OpenSM restart
        self.ibsim: subprocess.Popen | None = None
        self.opensm: subprocess.Popen | None = None
        self._console_fd: int | None = None
        p = self.path
        self.files = {
            "net": p("net"), "opensm_conf": p("opensm.conf"), "partitions": p("partitions.conf"),
            "qos_policy": p("qos-policy.conf"), "opensm_log": p("opensm.log"), "opensm_out": p("opensm.out"),
            "ibsim_log": p("ibsim.log"), "console": p("ibsim.console"), "env": p("bin", "ibsim.env"),
            "bin": p("bin"), "opensm_pid": p("opensm.pid"), "cache": p("cache"), "dump": p("dump"),
        }

    def path(self, *parts: str) -> str:
        return os.path.join(self.workdir, *parts)

    # --- lifecycle -------------------------------------------------------------
    def __enter__(self) -> Fabric:
        self.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def start(self) -> Fabric:
        if shutil.which("ibsim") is None or shutil.which("opensm") is None or not os.path.exists(UMAD2SIM):
            raise FabricError("ibsim, opensm or %s is missing: apt-get install ibsim-utils opensm infiniband-diags" % UMAD2SIM)
        for sub in ("cache", "dump", "bin"):
            os.makedirs(self.path(sub), exist_ok=True)
        f = self.files
        _write(f["net"], self.net_text)
        if not os.path.exists(f["opensm_conf"]):
            conf = default_opensm_conf(f["opensm_conf"])
            _write(f["opensm_conf"], set_conf_options(conf, self._lab_options()))
        if not os.path.exists(f["partitions"]):
            _write(f["partitions"], self.partitions)
        if not os.path.exists(f["qos_policy"]):
            _write(f["qos_policy"], self.qos_policy)
        try:
            self._start_ibsim()
            before = self._count("SUBNET UP")   # the log accumulates across runs
            self._start_opensm()
            self.wait_subnet_up(before + 1, timeout=self.start_timeout)
            self._write_env()
        except BaseException:
            self.stop()
            raise
        return self

    def _lab_options(self) -> dict[str, Any]:
        f = self.files
        options = {
            "force_log_flush": "TRUE",
            "log_file": f["opensm_log"],
            "dump_files_dir": f["dump"] + "/",
            "partition_config_file": f["partitions"],
            "qos": "TRUE",
            "qos_policy_file": f["qos_policy"],
            "daemon": "FALSE",
            "console": "off",
        }
        options.update(self.opensm_options)
        return options

    def _spawn(self, argv: list[str], log: str, env: dict[str, str], stdin: Any = subprocess.DEVNULL) -> subprocess.Popen:
        with open(log, "ab") as out:
            return subprocess.Popen(  # pylint: disable=consider-using-with  # lives until stop()
                argv, cwd=self.workdir, stdin=stdin, stdout=out, stderr=subprocess.STDOUT,
                env=env, start_new_session=True, preexec_fn=_pdeathsig,  # noqa: PLW1509  # pylint: disable=subprocess-popen-preexec-fn
            )

    def _start_ibsim(self) -> None:
        f = self.files
        if os.path.exists(f["console"]):
            os.unlink(f["console"])
        os.mkfifo(f["console"], 0o600)
        # O_RDWR: opening does not block, and ibsim (which inherits it as stdin)
        # is then a writer too, so it never reads EOF however often others write.
        self._console_fd = os.open(f["console"], os.O_RDWR)
        env = dict(os.environ)
        env.pop("LD_PRELOAD", None)
        self.ibsim = self._spawn(["unshare", "--net", "ibsim", "-s", f["net"]], f["ibsim_log"], env, stdin=self._console_fd)
        os.close(self._console_fd)
        self._console_fd = None
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            if self.ibsim.poll() is not None:
                raise FabricError("ibsim exited (rc %s) while starting:\n%s" % (self.ibsim.returncode, _tail(f["ibsim_log"])))
            if self._ibsim_listening():
                return
            time.sleep(0.005)
        raise FabricError("ibsim did not listen within %.0f s:\n%s" % (self.start_timeout, _tail(f["ibsim_log"])))

    def _ibsim_listening(self) -> bool:
        # /proc/PID/net/unix lists the sockets of PID's network namespace; ibsim's
        # are abstract ("@sim..."), listed once it is ready. Before unshare ran,
        # the pid still shows the parent namespace: compare namespaces first.
        assert self.ibsim is not None
        try:
            if os.readlink("/proc/%d/ns/net" % self.ibsim.pid) == os.readlink("/proc/self/ns/net"):
                return False
            with open("/proc/%d/net/unix" % self.ibsim.pid, encoding="ascii", errors="replace") as handle:
                return any("@sim:ctl" in line for line in handle)
        except OSError:
            return False

    def client_env(self, sim_host: str | None = None) -> dict[str, str]:
        env = dict(os.environ, LD_PRELOAD=UMAD2SIM, SIM_HOST=sim_host or self.sm_node,
                   OSM_CACHE_DIR=self.files["cache"], OSM_TMP_DIR=self.files["cache"])
        env["PATH"] = DIAG_PATH + ":" + env.get("PATH", "")
        return env

    @property
    def netns(self) -> str:
        """/proc/PID/ns/net of the fabric's namespace."""
        if self.ibsim is None:
            raise FabricError("the fabric is not running")
        return "/proc/%d/ns/net" % self.ibsim.pid

    def _nsenter(self) -> list[str]:
        return ["nsenter", "--net=" + self.netns, "--"]

    def _start_opensm(self) -> None:
        f = self.files
        # Command-line options win over opensm.conf, also after SIGHUP (the file's
        # value only counts when it changes): whatever a role writes into
        # opensm.conf, the log stays in workdir and is flushed per line (-d2).
        argv = self._nsenter() + ["opensm", "-F", f["opensm_conf"], "-f", f["opensm_log"], "-d2",
                                  "--dump_files_dir", f["dump"]]
        if self.policy_on_cmdline:
            argv += ["-P", f["partitions"], "-Q", "-Y", f["qos_policy"]]
        self.opensm = self._spawn(argv, f["opensm_out"], self.client_env())
        _write(f["opensm_pid"], "%d\n" % self.opensm.pid)

    def _count(self, needle: str) -> int:
        try:
            with open(self.files["opensm_log"], encoding="utf-8", errors="replace") as handle:
                return handle.read().count(needle)
        except FileNotFoundError:
            return 0

    def errors(self) -> list[str]:
        """OpenSM's ERR lines in opensm.log (it accumulates across runs)."""
        try:
            with open(self.files["opensm_log"], encoding="utf-8", errors="replace") as handle:
                return [line.rstrip() for line in handle if " ERR " in line]
        except FileNotFoundError:
            return []

    def wait_subnet_up(self, count: int, timeout: float = 10.0) -> None:
        """Wait until opensm.log holds ``count`` SUBNET UP lines."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._count("SUBNET UP") >= count:
                return
            for name, proc in (("opensm", self.opensm), ("ibsim", self.ibsim)):
                if proc is not None and proc.poll() is not None:
                    raise FabricError("%s exited (rc %s):\n%s" % (name, proc.returncode, self._logs()))
            time.sleep(0.01)
        raise FabricError("no SUBNET UP #%d within %.0f s (a bad QoS policy suppresses it):\n%s" % (count, timeout, self._logs()))

    def _logs(self) -> str:
        f = self.files
        return "--- %s\n%s\n--- %s\n%s\n--- %s\n%s" % (
            f["opensm_log"], _tail(f["opensm_log"]), f["opensm_out"], _tail(f["opensm_out"]), f["ibsim_log"], _tail(f["ibsim_log"]))

    def reload(self, wait: bool = True, timeout: float = 10.0) -> dict[str, Any]:
        """SIGHUP OpenSM (re-reads opensm.conf, partitions and QoS policy and
        re-sweeps); with ``wait``, return once the next SUBNET UP is logged or
        raise with OpenSM's new ERR lines."""
        if self.opensm is None or self.opensm.poll() is not None:
            raise FabricError("OpenSM is not running")
        before, errors_before = self._count("SUBNET UP"), len(self.errors())
        self.opensm.send_signal(signal.SIGHUP)
        if not wait:
            return {"subnet_up": None, "errors": []}
        try:
            self.wait_subnet_up(before + 1, timeout)
        except FabricError as exc:
            raise FabricError("reload: %s\nnew OpenSM errors: %s" % (exc, self.errors()[errors_before:])) from None
        return {"subnet_up": True, "errors": self.errors()[errors_before:]}

    def restart_opensm(self, timeout: float = 10.0) -> None:
        """Stop and start OpenSM (same files): what options that SIGHUP does not
        re-read need (routing_engine, *_file paths, guid, ...)."""
        if self.opensm is not None and self.opensm.poll() is None:
            self.opensm.terminate()
            try:
                self.opensm.wait(5)
            except subprocess.TimeoutExpired:
                self.opensm.kill()
                self.opensm.wait(5)
        before = self._count("SUBNET UP")
        self._start_opensm()
        self.wait_subnet_up(before + 1, timeout)
        self._write_env()

    def stop(self, grace: float = 5.0) -> None:
        """OpenSM first (it hangs on SIGTERM once ibsim is gone), then ibsim."""
        for attr in ("opensm", "ibsim"):
            proc = getattr(self, attr)
            if proc is None:
                continue
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(grace)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(grace)
            setattr(self, attr, None)
        if self._console_fd is not None:
            os.close(self._console_fd)
            self._console_fd = None
        for name in ("env", "opensm_pid"):
            if os.path.exists(self.files[name]):
                os.unlink(self.files[name])

    @property
    def running(self) -> bool:
        return all(p is not None and p.poll() is None for p in (self.ibsim, self.opensm))

    # --- diag commands -----------------------------------------------------------
    def run(self, argv: list[str], sim_host: str | None = None, check: bool = True, timeout: float = 20.0) -> subprocess.CompletedProcess:
        """Run an infiniband-diags command inside the fabric (attached at
        ``sim_host``, default the subnet manager's CA).  stdout/stderr are text;
        ibsim's per-client "attached as client" line is removed from stderr."""
        if not self.running:
            raise FabricError("the fabric is not running")
        out = subprocess.run(self._nsenter() + list(argv), env=self.client_env(sim_host), capture_output=True,
                             text=True, check=False, timeout=timeout, cwd=self.workdir)
        out.stderr = _ATTACH_NOISE.sub("", out.stderr)
        if check and out.returncode != 0:
            raise FabricError("%s failed (rc %d): %s" % (" ".join(argv), out.returncode, (out.stderr or out.stdout).strip()))
        return out

    # --- files the SM reads --------------------------------------------------------
    def write_partitions(self, text: str) -> None:
        _write(self.files["partitions"], text)

    def write_qos_policy(self, text: str) -> None:
        _write(self.files["qos_policy"], text)

    def set_opensm_options(self, options: dict[str, Any]) -> None:
        """Change ``key value`` lines of opensm.conf (call reload() after)."""
        with open(self.files["opensm_conf"], encoding="utf-8") as handle:
            text = handle.read()
        _write(self.files["opensm_conf"], set_conf_options(text, options))

    # --- ibsim console ---------------------------------------------------------------
    def console(self, command: str, timeout: float = 5.0) -> str:
        """Send one ibsim console command and return its reply (from ibsim.log)."""
        if "\n" in command:
            raise FabricError("one console command at a time")
        if self.ibsim is None or self.ibsim.poll() is not None:
            raise FabricError("ibsim is not running")
        log = self.files["ibsim_log"]
        start = os.path.getsize(log)
        prompts = _read_from(log, start).count("sim> ")
        fd = os.open(self.files["console"], os.O_WRONLY | os.O_NONBLOCK)
        try:
            os.write(fd, (command + "\n").encode())
        finally:
            os.close(fd)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            text = _read_from(log, start)
            if text.count("sim> ") > prompts:   # the prompt after the reply
                return text.rsplit("sim> ", 1)[0].replace("sim> ", "").strip()
            time.sleep(0.01)
        raise FabricError("ibsim console: no reply to %r within %.0f s" % (command, timeout))

    def checked_console(self, command: str) -> str:
        """console(), raising when ibsim answers with an error ("# ... not found")."""
        reply = self.console(command)
        if reply.startswith("#"):
            raise FabricError("ibsim console %r: %s" % (command, reply))
        return reply

    def set_counter(self, nodeid: str, port: int, field: str, value: int, attribute: str = "PortCounters") -> str:
        """Set a PMA counter, e.g. ("gpu1-mlx5_0", 1, "SymbolErrorCounter", 7); perfquery shows it."""
        return self.checked_console('PerformanceSet "%s"[%d] %s.%s=%d' % (nodeid, port, attribute, field, value))

    def link_down(self, nodeid: str, port: int) -> str:
        """Disconnect one port: both ends go Down/Polling, the switch sends
        trap 128 and OpenSM re-sweeps (the far node drops out of the fabric)."""
        return self.checked_console('Unlink "%s"[%d]' % (nodeid, port))

    def link_up(self, nodeid: str, port: int) -> str:
        """Restore a link taken down with link_down()."""
        return self.checked_console('ReLink "%s"[%d]' % (nodeid, port))

    def mad_errors(self, nodeid: str, port: int, rate: int, attribute: int | None = None) -> str:
        """Drop ``rate`` percent (0-100) of the MADs to a port, optionally of one
        attribute id (e.g. 21 PortInfo); 0 restores it."""
        return self.checked_console('Error "%s"[%d] %d%s' % (nodeid, port, rate, "" if attribute is None else " %d" % attribute))

    # --- state for other processes ----------------------------------------------------
    def state(self) -> dict[str, Any]:
        assert self.ibsim is not None and self.opensm is not None
        return {
            "netns_pid": self.ibsim.pid,
            "netns": os.readlink(self.netns),
            "ibsim_pid": self.ibsim.pid,
            "opensm_pid": self.opensm.pid,
            "sim_host": self.sm_node,
            "ld_preload": UMAD2SIM,
            "workdir": self.workdir,
            "files": dict(self.files),
            "diag_bin": self.files["bin"],
            "reload_cmd": [os.path.join(self.files["bin"], "opensm-reload")],
            "restart_cmd": [os.path.join(self.files["bin"], "opensm-restart")] if self.control_pid else None,
            "nodes": self.topology.guids() if self.topology is not None else {},
        }

    def _write_env(self) -> None:
        """bin/ibsim.env (sourced by the wrappers) and bin/<tool> links to them."""
        st = self.state()
        lines = [
            "# Written by tests/lab/ibsim/fabric.py while the fabric runs; removed on stop.",
            "LAB_IBSIM_NETNS_PID=%d" % st["netns_pid"],
            "LAB_IBSIM_NETNS='%s'" % st["netns"],
            "LAB_IBSIM_SIM_HOST='%s'" % st["sim_host"],
            "LAB_IBSIM_PRELOAD='%s'" % UMAD2SIM,
            "LAB_IBSIM_PATH='%s'" % DIAG_PATH,
            "LAB_IBSIM_CONSOLE='%s'" % self.files["console"],
            "LAB_IBSIM_OPENSM_PID=%d" % st["opensm_pid"],
            "LAB_IBSIM_CONTROL_PID=%s" % (self.control_pid or ""),
        ]
        _write(self.files["env"], "\n".join(lines) + "\n")
        for tool in DIAG_TOOLS + LAB_TOOLS:
            link = os.path.join(self.files["bin"], tool)
            if not os.path.islink(link):
                os.symlink(os.path.join(WRAPPER_DIR, tool), link)
        with open(self.path("state.json"), "w", encoding="utf-8") as handle:
            json.dump(st, handle, indent=2)


def _write(path: str, text: str) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.replace(tmp, path)


def _read_from(path: str, offset: int) -> str:
    with open(path, "rb") as handle:
        handle.seek(offset)
        return handle.read().decode("utf-8", "replace")


def _tail(path: str, size: int = 3000) -> str:
    try:
        with open(path, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            handle.seek(max(0, handle.tell() - size))
            return handle.read().decode("utf-8", "replace")
    except FileNotFoundError:
        return "(no %s)" % path


__all__ = ["Fabric", "FabricError", "DEFAULT_PARTITIONS", "DEFAULT_QOS_POLICY", "UMAD2SIM", "set_conf_options"]
