# SPDX-License-Identifier: GPL-3.0-or-later
"""The lab's performance model: what a benchmark over these cables would measure (README.md, "Performance model").

The lab has no GPUs. With ``lab_perf_faults`` set (the launcher writes
``<run_dir>/perf.json``), the lab's nccl-tests launches print output computed
here instead of a recorded log: a job's bus bandwidth follows its bottleneck -
the slowest component on any ring edge of any rail it uses - over the cables
as they are (``<run_dir>/wiring.json``, tests/lab/wiring.py), with injected
faults and log-normal run-to-run noise.

Component names (one name everywhere, docs/localize.md): ``host gpu1``,
``nic gpu1:mlx5_1``, ``link gpu1:mlx5_1~leaf2:et-0/0/1`` (host end first),
``leaf leaf2``, ``uplink leaf1:swp31~spine1:Ethernet1/1`` (lower tier end
first), ``spine spine1``.

The model is a model, not a measurement: line rate from the cable speed,
an all_reduce bus efficiency of 0.93 and the latency term of ``busbw_curve``
are lab choices ("unverified" against any vendor figure).
"""
from __future__ import annotations

import json
import math
import os
import random
import re
from collections.abc import Iterable
from typing import Any

PERF_FILE = "perf.json"
FAULT_KINDS = ("nic", "host", "link", "uplink", "flap", "leaf")
# Fraction of line rate an all_reduce reaches at bandwidth-bound sizes (unverified: a lab choice, near what
# well-tuned 400G RoCE/IB clusters publish: e.g. ~ 370 of 400 Gb/s).
EFFICIENCY = 0.93
DEFAULT_NOISE = 0.02
DEFAULT_SEED = 1
# Latency term of the alpha-beta (Hockney) model t = alpha + bytes / bw used for the size dependence
# (unverified: a lab choice that makes sizes below ~1 MiB latency-bound, as real logs show).
LATENCY_S = 30e-6
_SPEED = re.compile(r"(\d+(?:\.\d+)?)\s*([GT])(?:b/s|bps)?", re.IGNORECASE)


class PerfModelError(ValueError):
    """A bad fault, noise or seed, or a path the cables cannot carry; the message names the key and the value."""


def line_rate(speed: Any) -> float:
    """Cable speed (``"400G"``) -> GB/s of payload at line rate (400 Gb/s -> 50 GB/s)."""
    m = _SPEED.fullmatch(str(speed or "").strip())
    if not m:
        raise PerfModelError("cable speed %r is not '<n>G'" % (speed,))
    gbps = float(m.group(1)) * (1000.0 if m.group(2).upper() == "T" else 1.0)
    return gbps / 8.0


def _rng(*key: Any) -> random.Random:
    # random.Random(str) seeds through SHA-512 (Python's version 2 seeding): the same in every process,
    # whatever PYTHONHASHSEED is, so a (seed, launch) pair always draws the same numbers.
    return random.Random("|".join(repr(k) for k in key))


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def validate_settings(noise: Any, seed: Any) -> None:
    if not _is_number(noise) or noise < 0:
        raise PerfModelError("lab_perf_noise: %r is not a number >= 0 (a log-normal sigma, e.g. 0.02)" % (noise,))
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise PerfModelError("lab_perf_seed: %r is not an integer" % (seed,))


class Fabric:
    """The cables of a lab run, the faults, and what benchmarks over them measure."""

    def __init__(self, cables: Iterable, faults: Iterable = (), noise: float = DEFAULT_NOISE, seed: int = DEFAULT_SEED):
        validate_settings(noise, seed)
        self.noise = float(noise)
        self.seed = seed
        # end (device, kind, name) -> cable index; cable = (a, b, speed, up)
        self.cables: list[tuple[tuple, tuple, Any, bool]] = []
        self.end_cable: dict[tuple, int] = {}
        for cable in cables:
            a, b, speed, up = cable
            a, b = tuple(a), tuple(b)
            self.end_cable[a] = self.end_cable[b] = len(self.cables)
            self.cables.append((a, b, speed, bool(up)))
        self.host_nics: dict[str, list[str]] = {}
        self.switches: set[str] = set()
        for a, b, _speed, _up in self.cables:
            for end in (a, b):
                if end[1] == "nic":
                    self.host_nics.setdefault(end[0], [])
                    if end[2] not in self.host_nics[end[0]]:
                        self.host_nics[end[0]].append(end[2])
                else:
                    self.switches.add(end[0])
        # A leaf: a switch with a host on one of its cables; every other switch is a spine (two tiers).
        self.leaves = {end[0] for a, b, _s, _u in self.cables if "nic" in (a[1], b[1]) for end in (a, b) if end[1] == "port"}
        self.faults = validate_faults(faults, self)

    # ---- construction -------------------------------------------------------------------------
    @classmethod
    def from_run_dir(cls, run_dir: str) -> Fabric | None:
        """The model of a lab run (perf.json + wiring.json), or None when perf.json is absent or has no faults."""
        try:
            with open(os.path.join(run_dir, PERF_FILE), encoding="utf-8") as handle:
                perf = json.load(handle)
        except FileNotFoundError:
            return None
        if not perf.get("faults"):
            return None
        with open(os.path.join(run_dir, "wiring.json"), encoding="utf-8") as handle:
            wiring = json.load(handle)
        return cls(wiring["links"], perf["faults"], perf.get("noise", DEFAULT_NOISE), perf.get("seed", DEFAULT_SEED))

    # ---- names --------------------------------------------------------------------------------
    def cable_component(self, index: int) -> tuple[str, str]:
        """('link', 'gpu1:mlx5_0~leaf1:swp1') for a host cable, ('uplink', 'leaf1:swp31~spine1:Ethernet1/1') else."""
        a, b, _speed, _up = self.cables[index]
        if b[1] == "nic" and a[1] != "nic":
            a, b = b, a
        if a[1] == "nic" or b[1] == "nic":
            return ("link", "%s:%s~%s:%s" % (a[0], a[2], b[0], b[2]))
        if a[0] not in self.leaves and b[0] in self.leaves:
            a, b = b, a  # lower tier (the leaf) first
        return ("uplink", "%s:%s~%s:%s" % (a[0], a[2], b[0], b[2]))

    def switch_component(self, name: str) -> tuple[str, str]:
        return ("leaf" if name in self.leaves else "spine", name)

    def _cable_at(self, end: tuple, what: str) -> int:
        index = self.end_cable.get(end)
        if index is None:
            raise PerfModelError("%s: no cable is plugged into %s:%s" % (what, end[0], end[2]))
        if not self.cables[index][3]:
            raise PerfModelError("%s: the cable at %s:%s is down" % (what, end[0], end[2]))
        return index

    def _far(self, index: int, end: tuple) -> tuple:
        a, b, _speed, _up = self.cables[index]
        return b if a == end else a

    def uplinks(self, leaf: str) -> list[int]:
        """Cable indexes from this leaf's ports to a switch, in port order."""
        found = []
        for index, (a, b, _speed, up) in enumerate(self.cables):
            if up and a[1] == b[1] == "port" and leaf in (a[0], b[0]) and a[0] != b[0]:
                found.append(index)
        return sorted(found, key=lambda i: self._end_on(i, leaf)[2])

    def _end_on(self, index: int, device: str) -> tuple:
        a, b, _speed, _up = self.cables[index]
        return a if a[0] == device else b

    # ---- paths --------------------------------------------------------------------------------
    def _host_side(self, host: str, nic: str) -> tuple[int, str]:
        index = self._cable_at((host, "nic", nic), "path")
        far = self._far(index, (host, "nic", nic))
        if far[1] != "port":
            raise PerfModelError("path: %s:%s is cabled to a host NIC (%s:%s), not a switch" % (host, nic, far[0], far[2]))
        return index, far[0]

    def _route(self, a: tuple, b: tuple, launch: Any) -> tuple[list[tuple[str, str]], list[int]]:
        """Components along a -> b and the cable indexes (for line rate and flaps)."""
        (ha, na), (hb, nb) = a, b
        ca, leaf_a = self._host_side(ha, na)
        cb, leaf_b = self._host_side(hb, nb)
        head = [("host", ha), ("nic", "%s:%s" % (ha, na)), self.cable_component(ca), self.switch_component(leaf_a)]
        tail = [self.switch_component(leaf_b), self.cable_component(cb), ("nic", "%s:%s" % (hb, nb)), ("host", hb)]
        if leaf_a == leaf_b:
            return head + tail[1:], [ca, cb]
        # ECMP: one of leaf_a's uplinks to a spine that reaches leaf_b, then one of that spine's cables to leaf_b,
        # picked per (seed, launch, pair, rail) - the pair unordered so both directions of a ring edge agree.
        choices = []
        for up_a in self.uplinks(leaf_a):
            spine = self._far(up_a, self._end_on(up_a, leaf_a))[0]
            downs = [i for i in self.uplinks(leaf_b) if self._far(i, self._end_on(i, leaf_b))[0] == spine]
            if downs:
                choices.append((up_a, spine, downs))
        if not choices:
            raise PerfModelError("path: no spine joins %s and %s (from %s:%s to %s:%s)" % (leaf_a, leaf_b, ha, na, hb, nb))
        pair = tuple(sorted([list(a), list(b)]))
        rng = _rng("ecmp", self.seed, launch, pair)
        up_a, spine, downs = choices[rng.randrange(len(choices))]
        up_b = downs[rng.randrange(len(downs))]
        middle = [self.cable_component(up_a), self.switch_component(spine), self.cable_component(up_b)]
        return head + middle + tail, [ca, up_a, up_b, cb]

    def path(self, a: tuple, b: tuple, launch: Any = 0) -> list[tuple[str, str]]:
        """Components from a = (host, nic) to b: both hosts, NICs, host links, the leaf (leaves) and, across
        leaves, the ECMP-chosen uplink pair and spine of this launch."""
        return self._route(tuple(a), tuple(b), launch)[0]

    # ---- faults -------------------------------------------------------------------------------
    def factors(self, launch: Any) -> dict[tuple[str, str], float]:
        """Component -> speed factor in this launch (flaps drawn per launch; several faults on one: the lowest)."""
        out: dict[tuple[str, str], float] = {}
        for i, fault in enumerate(self.faults):
            component = fault["component"]
            if fault["kind"] == "flap" and _rng("flap", self.seed, launch, i).random() >= fault["rate"]:
                continue
            out[component] = min(out.get(component, 1.0), fault["factor"])
        return out

    def edge_gbps(self, a: tuple, b: tuple, launch: Any, factors: dict | None = None) -> float:
        """GB/s one rail edge a -> b carries at line rate times the slowest component's factor."""
        components, cables = self._route(tuple(a), tuple(b), launch)
        factors = self.factors(launch) if factors is None else factors
        rate = min(line_rate(self.cables[i][2]) for i in cables)
        return rate * min([factors.get(c, 1.0) for c in components] + [1.0])

    def job_busbw(self, nics: Iterable, launch: Any) -> float:
        """GB/s busbw at bandwidth-bound sizes (>= 1 GiB) of an all_reduce over these (host, nic) - every NIC the
        job uses, in host order (the ring's order); rail r = the r-th NIC named for each host."""
        per_host: dict[str, list[str]] = {}
        for host, nic in nics:
            per_host.setdefault(host, []).append(nic)
        if not per_host:
            raise PerfModelError("job_busbw: no NIC given")
        hosts = list(per_host)
        rails = min(len(v) for v in per_host.values())
        factors = self.factors(launch)
        if len(hosts) == 1:  # one host: no network edge; the NICs' own factors still bound it (host, nic)
            host = hosts[0]
            per_rail = min(self.loopback_gbps(host, per_host[host][r], launch, factors) for r in range(rails))
        else:
            per_rail = min(self.edge_gbps((hosts[i], per_host[hosts[i]][r]),
                                          (hosts[(i + 1) % len(hosts)], per_host[hosts[(i + 1) % len(hosts)]][r]),
                                          launch, factors)
                           for r in range(rails) for i in range(len(hosts)))
        return rails * per_rail * EFFICIENCY * self.noise_factor(launch, "job")

    def noise_factor(self, launch: Any, what: str = "job") -> float:
        """exp(N(0, sigma)): log-normal run-to-run noise of one launch."""
        if not self.noise:
            return 1.0
        return math.exp(_rng("noise", what, self.seed, launch).gauss(0.0, self.noise))

    @staticmethod
    def busbw_curve(peak: float, size_bytes: float) -> float:
        """busbw at a message size: alpha-beta model, t = alpha + size / peak, so busbw = peak * s / (s + alpha*peak)."""
        if size_bytes <= 0:
            return 0.0
        return peak * size_bytes / (size_bytes + LATENCY_S * peak * 1e9)

    def loopback_gbps(self, host: str, nic: str, launch: Any, factors: dict | None = None) -> float:
        """GB/s of an ib_write_bw from this NIC to itself: line rate x the host's and the NIC's factors only
        (cables, switches and flaps are not on a loopback's way), with noise."""
        index = self.end_cable.get((host, "nic", nic))
        if nic not in self.host_nics.get(host, []) or index is None:
            raise PerfModelError("loopback: %s:%s is no host NIC of the lab wiring" % (host, nic))
        factors = self.factors(launch) if factors is None else factors
        factor = min(factors.get(("host", host), 1.0), factors.get(("nic", "%s:%s" % (host, nic)), 1.0))
        return line_rate(self.cables[index][2]) * factor * self.noise_factor(launch, "loopback %s:%s" % (host, nic))

    def loopback(self, host: str, nic: str, launch: Any) -> float:
        """Alias of loopback_gbps (GB/s)."""
        return self.loopback_gbps(host, nic, launch)


def _end_text(value: Any) -> tuple[str, str] | None:
    if not isinstance(value, str) or ":" not in value or "\n" in value:
        return None
    device, name = value.split(":", 1)
    return (device, name) if device and name else None


def validate_faults(faults: Any, fabric: Fabric | None = None) -> list[dict]:
    """Check lab_perf_faults; with a fabric, also that every end exists. Returns normalized faults:
    [{kind, target, factor, rate?, component: (kind, name)}]. PerfModelError: 'lab_perf_faults[i]: ...'."""
    if faults is None:
        return []
    if not isinstance(faults, (list, tuple)):
        raise PerfModelError("lab_perf_faults: %r is not a list of faults" % (faults,))
    out = []
    for i, fault in enumerate(faults):
        where = "lab_perf_faults[%d]" % i
        kinds = [k for k in FAULT_KINDS if isinstance(fault, dict) and k in fault]
        if not isinstance(fault, dict) or len(kinds) != 1:
            raise PerfModelError("%s: %r is not one of %s (one of them per fault)" % (where, fault, ", ".join(FAULT_KINDS)))
        kind = kinds[0]
        allowed = {kind, "factor"} | ({"rate"} if kind == "flap" else set())
        extra = sorted(set(fault) - allowed)
        if extra:
            raise PerfModelError("%s: unknown key %r for a %s fault (keys: %s)" % (where, extra[0], kind, ", ".join(sorted(allowed))))
        for key in ("factor",) + (("rate",) if kind == "flap" else ()):
            value = fault.get(key)
            if not _is_number(value) or not 0 < value <= 1:
                raise PerfModelError("%s.%s: %r is not a number in (0, 1]" % (where, key, value))
        target = fault[kind]
        norm = {"kind": kind, "target": target, "factor": float(fault["factor"])}
        if kind == "flap":
            norm["rate"] = float(fault["rate"])
        norm["component"] = _component(where, kind, target, fabric)
        out.append(norm)
    return out


def _component(where: str, kind: str, target: Any, fabric: Fabric | None) -> tuple[str, str]:
    if kind in ("host", "leaf"):
        if not isinstance(target, str) or not target or "\n" in target or ":" in target:
            raise PerfModelError("%s.%s: %r is not a device name" % (where, kind, target))
        if fabric is None:
            return (kind, target)
        if kind == "host":
            if target not in fabric.host_nics:
                raise PerfModelError("%s.host: %r is no host of the lab wiring (hosts: %s)"
                                     % (where, target, ", ".join(sorted(fabric.host_nics))))
            return ("host", target)
        if target not in fabric.switches:
            raise PerfModelError("%s.leaf: %r is no switch of the lab wiring (switches: %s)"
                                 % (where, target, ", ".join(sorted(fabric.switches))))
        return fabric.switch_component(target)
    end = _end_text(target)
    if end is None:
        raise PerfModelError("%s.%s: %r is not '<device>:<port or NIC>'" % (where, kind, target))
    if fabric is None:
        return (kind, target)
    if kind == "nic":
        if end[1] not in fabric.host_nics.get(end[0], []):
            raise PerfModelError("%s.nic: %r names no host NIC of the lab wiring" % (where, target))
        return ("nic", target)
    index = None
    for probe in ("nic", "port"):
        index = fabric.end_cable.get((end[0], probe, end[1]), index)
    if index is None:
        raise PerfModelError("%s.%s: %r names no cable end of the lab wiring (a switch port or host NIC with a cable)"
                             % (where, kind, target))
    component = fabric.cable_component(index)
    if kind == "link" and component[0] == "uplink":
        raise PerfModelError("%s.link: %r is on a switch-switch cable (%s): name it as an uplink" % (where, target, component[1]))
    if kind == "uplink" and component[0] == "link":
        raise PerfModelError("%s.uplink: %r is on a host cable (%s): name it as a link" % (where, target, component[1]))
    return component


def write_perf(run_dir: str, faults: Any, noise: Any = DEFAULT_NOISE, seed: Any = DEFAULT_SEED,
               cables: Iterable | None = None) -> str | None:
    """Validate and write <run_dir>/perf.json (the launcher at ``up``); None and no file when there are no faults."""
    path = os.path.join(run_dir, PERF_FILE)
    noise = DEFAULT_NOISE if noise is None else noise
    seed = DEFAULT_SEED if seed is None else seed
    validate_settings(noise, seed)
    if cables is not None:
        Fabric(cables, faults or [], noise, seed)
    else:
        validate_faults(faults)
    if os.path.exists(path):
        os.unlink(path)
    if not faults:
        return None
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as handle:
        json.dump({"faults": list(faults), "noise": noise, "seed": seed}, handle, indent=1)
    os.replace(tmp, path)
    return path


def next_launch(run_dir: str) -> int:
    """A fresh launch number for this lab run: O_EXCL-created files <run_dir>/perf-launches/<n>, so parallel
    launches never share one (the first free n wins the race)."""
    folder = os.path.join(run_dir, "perf-launches")
    os.makedirs(folder, exist_ok=True)
    n = len(os.listdir(folder))
    while True:
        try:
            fd = os.open(os.path.join(folder, str(n)), os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            n += 1
            continue
        os.close(fd)
        return n
