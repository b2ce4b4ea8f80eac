# SPDX-License-Identifier: GPL-3.0-or-later
"""Device state shared by all platform models: counters, faults, timers, log."""
from __future__ import annotations

import collections
import copy
import re
import threading
import time
from collections.abc import Callable
from typing import Any

# Counter vectors are indexed by priority (PFC) or by queue / traffic class (0..7).
VECTOR_COUNTERS = (
    "pfc_rx",            # PFC pause frames received, per priority
    "pfc_tx",            # PFC pause frames sent, per priority
    "pfc_rx_duration",   # pause duration (vendor units; NVUE shows it), per priority
    "pfc_tx_duration",
    "ecn_marked",        # ECN CE-marked packets, per egress queue
    "tx_packets",        # transmitted packets, per egress queue
    "tx_bytes",          # transmitted bytes, per egress queue
    "queue_drops",       # tail / buffer drops, per egress queue
    "wred_drops",        # RED/WRED drops, per egress queue
    "voq_drops",         # ingress VOQ drops (Arista VOQ platforms), per TC
    "pg_rx_frames",      # ingress priority-group frames, per PG
    "pg_discards",       # ingress priority-group (no-buffer) discards, per PG
    "watchdog_storms",   # PFC watchdog storm / deadlock detections, per queue
    "watchdog_restores",  # PFC watchdog restorations, per queue
)
SCALAR_COUNTERS = (
    "in_discards",
    "out_discards",
    "rx_octets",
    "tx_octets",
    "cnp_packets",       # CNP packets sent (NVUE tx-cnp-stats)
    "rx_pause",          # link-level pause
    "tx_pause",
)


def blank_counters() -> dict:
    c: dict[str, Any] = {k: [0] * 8 for k in VECTOR_COUNTERS}
    c.update({k: 0 for k in SCALAR_COUNTERS})
    c["watchdog_status"] = ["OK"] * 8
    return c


class SimError(Exception):
    """Raised by control operations with a message for the caller."""


class Device:
    """One simulated switch. Platform models subclass this."""

    platform = ""
    default_ports: list[str] = []

    def __init__(self, spec: dict, sim: Any) -> None:
        self.sim = sim
        self.name: str = spec["name"]
        self.hostname: str = spec.get("hostname", self.name)
        self.username: str = spec.get("username", "admin")
        self._password: str = spec.get("password", "admin")
        self.enable_secret: str | None = spec.get("enable_secret")
        self.port: int = int(spec.get("port", 0))
        self.host_key_file: str | None = spec.get("host_key_file")
        self.ports: list[str] = list(spec.get("ports") or self.default_ports)
        self.faults: dict = dict(spec.get("faults") or {})
        self.lock = threading.RLock()
        self.log: collections.deque = collections.deque(maxlen=2000)
        self.counters: dict[str, dict] = {p: blank_counters() for p in self.ports}
        self._timers: list[threading.Timer] = []
        self.connections = 0
        self.events: collections.deque = collections.deque(maxlen=200)

    # --- authentication (the password never leaves this object) ----------
    def check_password(self, username: str, password: str) -> bool:
        import hmac

        if self.faults.get("wrong_password"):
            return False
        ok_user = hmac.compare_digest(username.encode(), self.username.encode())
        ok_pw = hmac.compare_digest(password.encode(), self._password.encode())
        return ok_user and ok_pw

    # --- time ------------------------------------------------------------
    def scale(self) -> float:
        return float(self.sim.time_scale)

    def start_timer(self, device_seconds: float, fn: Callable[[], None]) -> TimerHandle:
        """Run fn after device_seconds (scaled by the simulator's time_scale)."""
        return TimerHandle(self, device_seconds, fn)

    def cancel_timers(self) -> None:
        for t in list(self._timers):
            t.cancel()
        self._timers.clear()

    # --- counters --------------------------------------------------------
    def set_counters(self, port: str, values: dict, replace: bool = False) -> None:
        with self.lock:
            targets = self.ports if port in ("*", "all") else [self.canonical_port(port)]
            for p in targets:
                if p not in self.counters:
                    raise SimError(f"unknown port {port!r} on {self.name}")
                cur = blank_counters() if replace else self.counters[p]
                for k, v in values.items():
                    if k in VECTOR_COUNTERS or k == "watchdog_status":
                        if isinstance(v, dict):
                            for idx, n in v.items():
                                i = int(idx)
                                if not 0 <= i <= 7:
                                    raise SimError(f"index {idx} out of range for {k}")
                                cur[k][i] = n if k == "watchdog_status" else int(n)
                        elif isinstance(v, list) and len(v) == 8:
                            cur[k] = list(v) if k == "watchdog_status" else [int(x) for x in v]
                        else:
                            raise SimError(f"{k} takes a dict index->value or a list of 8")
                    elif k in SCALAR_COUNTERS:
                        cur[k] = int(v)
                    else:
                        raise SimError(f"unknown counter {k!r}")
                self.counters[p] = cur

    def add_counters(self, port: str, values: dict) -> None:
        """Add to the counters (traffic moving through the port: tests/lab/traffic.py); every platform's counter
        commands render them. Vectors take a list of 8 or {index: n}; watchdog_status is not a count."""
        with self.lock:
            p = self.canonical_port(port)
            if p not in self.counters:
                raise SimError(f"unknown port {port!r} on {self.name}")
            cur = self.counters[p]
            for k, v in values.items():
                if k in VECTOR_COUNTERS:
                    pairs = enumerate(v) if isinstance(v, list) and len(v) == 8 else (v.items() if isinstance(v, dict) else None)
                    if pairs is None:
                        raise SimError(f"{k} takes a dict index->value or a list of 8")
                    for idx, n in pairs:
                        if not 0 <= int(idx) <= 7:
                            raise SimError(f"index {idx} out of range for {k}")
                        cur[k][int(idx)] += int(n)
                elif k in SCALAR_COUNTERS:
                    cur[k] += int(v)
                else:
                    raise SimError(f"unknown counter {k!r} (addable: {', '.join(VECTOR_COUNTERS + SCALAR_COUNTERS)})")

    def clear_counters(self, port: str | None = None) -> None:
        with self.lock:
            for p in ([self.canonical_port(port)] if port else self.ports):
                self.counters[p] = blank_counters()

    def canonical_port(self, port: str) -> str:
        return port

    # --- faults ----------------------------------------------------------
    def set_faults(self, faults: dict, replace: bool = False) -> None:
        # drop_on: the connection drops when a matching command arrives, before the device runs it;
        # drop_after: the device runs the matching command, then the connection drops before its reply
        # (a confirm that went through with its answer lost).
        known = {"drop_after_commands", "reject_lines", "delay", "wrong_password",
                 "commit_error", "drop_on", "drop_after", "hang"}
        bad = set(faults) - known
        if bad:
            raise SimError(f"unknown fault(s): {sorted(bad)}; known: {sorted(known)}")
        for pat in faults.get("reject_lines") or []:
            re.compile(pat)
        for key in ("drop_on", "drop_after"):
            if faults.get(key):
                re.compile(faults[key])
        hang = faults.get("hang")
        if hang is not None and not isinstance(hang, str):
            raise SimError("hang takes 'login' or a regex of the command at which the device stops answering")
        if hang and hang != "login":
            re.compile(hang)
        with self.lock:
            if replace:
                self.faults = {}
            for k, v in faults.items():
                if v is None:
                    self.faults.pop(k, None)
                else:
                    self.faults[k] = v

    def hangs_on(self, line: str | None) -> bool:
        """The hang fault: a device that stops answering (keeps the TCP session
        open, sends nothing) at login (line None) or at a matching command."""
        hang = self.faults.get("hang")
        if not hang:
            return False
        if line is None:
            return hang == "login"
        return hang != "login" and re.search(hang, line) is not None

    def rejected(self, line: str) -> bool:
        for pat in self.faults.get("reject_lines") or []:
            if re.search(pat, line):
                return True
        return False

    # --- cabling (tests/lab/wiring.py) ------------------------------------
    def system_name(self) -> str:
        """The LLDP system name this switch advertises: its configured host name."""
        return self.hostname

    def lldp_ports(self) -> dict[str, dict]:
        """{local port: {'oper', 'speed', 'configured', 'peer'}} from the lab wiring, read now (a test may
        rewrite wiring.json between commands). 'peer' is None or what the far end advertises by LLDP:
        {'system', 'port_id', 'subtype' (ifname|local|mac), 'descr' (None: not sent), 'chassis'}."""
        wiring = _load_wiring(self.sim.config.get("wiring_file"))
        if wiring is None:
            return {}
        mod = _wiring_module()
        configured = {e["end"][2]: e.get("speed") for e in wiring.get("ends", []) if e["end"][0] == self.name}
        out = {}
        for port, seen in mod.view(wiring, self.name).items():
            peer = seen.get("peer")
            out[port] = {"oper": seen["oper"], "speed": seen.get("speed"), "configured": configured.get(port), "peer": self._advertised(peer, mod)}
        return out

    def _advertised(self, peer: dict | None, mod: Any) -> dict | None:
        if not peer:
            return None
        if "nic" in peer:
            # A GPU host runs lldpd with its defaults: system name = host name, port ID = the NIC's MAC
            # (subtype mac), port description = the netdev name (lldpd(8), docs/vendor-*.md "LLDP and link state").
            return {"system": peer["host"], "port_id": peer.get("mac"), "subtype": "mac", "descr": peer.get("netdev"), "chassis": peer.get("mac")}
        far = self.sim.devices.get(peer["host"]) if hasattr(self.sim, "devices") else None
        chassis = mod.mac(peer["host"], "chassis")
        port = peer["port"]
        if far is None:
            return {"system": peer["host"], "port_id": port, "subtype": "ifname", "descr": None, "chassis": chassis}
        return {"system": far.system_name(), **far.lldp_advertised(port), "chassis": chassis}

    def lldp_advertised(self, port: str) -> dict:
        """How this switch names `port` in the LLDP it sends: {'port_id', 'subtype', 'descr'}. Each grammar
        gives its platform's form; this default is the port ID = interface name without a port description."""
        return {"port_id": port, "subtype": "ifname", "descr": None}

    # --- to be provided by platforms -------------------------------------
    def new_shell(self, conn: Any) -> Shell:  # pragma: no cover - abstract
        raise NotImplementedError

    def startup_lines(self) -> list[str]:  # pragma: no cover - abstract
        """The saved configuration as lines initial_config accepts (a reboot keeps it)."""
        raise NotImplementedError

    def running_config(self) -> str:  # pragma: no cover - abstract
        raise NotImplementedError

    def pending_state(self) -> dict:  # pragma: no cover - abstract
        raise NotImplementedError

    def record(self, event: str, **kw: Any) -> None:
        self.events.append(dict(time=time.time(), event=event, **kw))

    def describe(self) -> dict:
        return {
            "name": self.name,
            "platform": self.platform,
            "host": "127.0.0.1",
            "port": self.port,
            "username": self.username,
            "host_key_file": self.host_key_file,
            "ports": list(self.ports),
        }


class TimerHandle:
    """A scaled one-shot timer that can report the device-time remaining."""

    def __init__(self, device: Device, device_seconds: float, fn: Callable[[], None]) -> None:
        self.device = device
        self.device_seconds = float(device_seconds)
        self.real_seconds = self.device_seconds * device.scale()
        self.deadline = time.monotonic() + self.real_seconds
        self._fn = fn
        self._fired = False
        self._timer = threading.Timer(self.real_seconds, self._run)
        self._timer.daemon = True
        device._timers.append(self._timer)
        self._timer.start()

    def _run(self) -> None:
        try:
            if self._timer in self.device._timers:
                self.device._timers.remove(self._timer)
        except ValueError:
            pass
        self._fired = True
        self._fn()

    def cancel(self) -> None:
        self._timer.cancel()
        if self._timer in self.device._timers:
            self.device._timers.remove(self._timer)

    @property
    def fired(self) -> bool:
        return self._fired

    def remaining(self) -> float:
        """Device seconds left (unscaled)."""
        left = max(0.0, self.deadline - time.monotonic())
        scale = self.device.scale() or 1.0
        return left / scale if self.real_seconds else 0.0


class Shell:
    """One interactive CLI session (one SSH channel)."""

    def __init__(self, device: Device, conn: Any) -> None:
        self.device = device
        self.conn = conn
        self.closed = False
        # When set: (question text, callback(answer) -> output, echo answer?)
        self.ask: tuple[str, Callable[[str], str], bool] | None = None

    def banner(self) -> str:
        return ""

    def prompt(self) -> str:  # pragma: no cover - abstract
        raise NotImplementedError

    def handle(self, line: str) -> str:  # pragma: no cover - abstract
        raise NotImplementedError

    def reject(self, line: str) -> str:
        """Vendor error for a line rejected by fault injection."""
        return "% Invalid input"

    def on_close(self) -> None:
        pass


def deepcopy(x: Any) -> Any:
    return copy.deepcopy(x)


def natural_key(s: str) -> list:
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", s)]


_WIRING = None


def _wiring_module() -> Any:
    """tests/lab/wiring.py, by path (the sim runs as a script or is imported from tests)."""
    global _WIRING  # pylint: disable=global-statement
    if _WIRING is None:
        import importlib.util
        import os

        path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "wiring.py")
        spec = importlib.util.spec_from_file_location("lab_wiring", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        _WIRING = module
    return _WIRING


def _load_wiring(path: str | None) -> dict | None:
    if not path:
        return None
    import json

    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except FileNotFoundError:
        return None
