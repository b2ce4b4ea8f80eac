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
import shlex
import sys
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
        for nics in self.host_nics.values():  # rail order: mlx5_2 before mlx5_10
            nics.sort(key=lambda n: [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", n)])
        # A leaf: a switch with a host on one of its cables; every other switch is a spine (two tiers).
        self.leaves = {end[0] for a, b, _s, _u in self.cables if "nic" in (a[1], b[1]) for end in (a, b) if end[1] == "port"}
        self._uplinks: dict[str, list[int]] | None = None
        self._choices: dict[tuple[str, str], list] = {}
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
        if self._uplinks is None:  # built once: large fabrics route many ring edges
            by_switch: dict[str, list[int]] = {}
            for index, (a, b, _speed, up) in enumerate(self.cables):
                if up and a[1] == b[1] == "port" and a[0] != b[0]:
                    by_switch.setdefault(a[0], []).append(index)
                    by_switch.setdefault(b[0], []).append(index)
            self._uplinks = {sw: sorted(found, key=lambda i, sw=sw: self._end_on(i, sw)[2]) for sw, found in by_switch.items()}
        return list(self._uplinks.get(leaf, []))

    def _ecmp_choices(self, leaf_a: str, leaf_b: str) -> list[tuple[int, str, list[int]]]:
        """[(uplink of leaf_a, spine, [that spine's cables to leaf_b])] for every spine that joins the two leaves."""
        key = (leaf_a, leaf_b)
        if key not in self._choices:
            choices = []
            for up_a in self.uplinks(leaf_a):
                spine = self._far(up_a, self._end_on(up_a, leaf_a))[0]
                downs = [i for i in self.uplinks(leaf_b) if self._far(i, self._end_on(i, leaf_b))[0] == spine]
                if downs:
                    choices.append((up_a, spine, downs))
            self._choices[key] = choices
        return self._choices[key]

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
        choices = self._ecmp_choices(leaf_a, leaf_b)
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


def next_launch(run_dir: str, counter: str = "perf-launches") -> int:
    """A fresh launch number for this lab run: O_EXCL-created files <run_dir>/<counter>/<n>, so parallel
    launches never share one (the first free n wins the race). Each counter numbers its own launches."""
    folder = os.path.join(run_dir, counter)
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


# ---- the job a launch runs ---------------------------------------------------------------------------------
# nccl-tests getopt values (src/common.cu of v2.16.3, the era of the lab's real RoCE log: defaults lines 72-88,
# parsesize lines 101-135 - K/M/G are powers of 1024 -, the option loop from line 790).
DEFAULT_ARGS = {"nthreads": 1, "ngpus": 1, "minbytes": 32 * 1024 * 1024, "maxbytes": 32 * 1024 * 1024,
                "stepbytes": 1024 * 1024, "stepfactor": 1, "iters": 20, "warmup": 5, "agg": 1, "check": 1,
                "op": "sum", "type": "float", "root": 0, "graph": 0}
_SHORT = {"t": "nthreads", "g": "ngpus", "b": "minbytes", "e": "maxbytes", "i": "stepbytes", "f": "stepfactor",
          "n": "iters", "w": "warmup", "m": "agg", "c": "check", "o": "op", "d": "type", "r": "root", "G": "graph"}
_LONG = {"nthreads": "t", "ngpus": "g", "minbytes": "b", "maxbytes": "e", "stepbytes": "i", "stepfactor": "f",
         "iters": "n", "agg_iters": "m", "warmup_iters": "w", "check": "c", "op": "o", "datatype": "d", "root": "r",
         "cudagraph": "G"}
# wordSize() of src/common.h and the type names of test_typenames (src/common.cu, NCCL >= 2.10 with bfloat16).
TYPE_BYTES = {"int8": 1, "uint8": 1, "int32": 4, "uint32": 4, "int64": 8, "uint64": 8, "half": 2, "float": 4,
              "double": 8, "bfloat16": 2}
OPS = ("sum", "prod", "max", "min", "avg", "mulsum")
# The collectives the writer prints (src/<coll>.cu): GetBw's busbw factor and GetCollByteCount's counts.
COLLECTIVES = ("all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce", "sendrecv")


def parse_size(text: str) -> int:
    """nccl-tests parsesize: a number, optionally followed by K, M or G (powers of 1024)."""
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([KMGkmg]?)", str(text))
    if not m:
        raise PerfModelError("invalid size %r" % (text,))
    return int(float(m.group(1)) * {"": 1, "k": 1024, "m": 1024 ** 2, "g": 1024 ** 3}[m.group(2).lower()])


def parse_test_args(args: list[str]) -> dict:
    """The nccl-tests values of a command line (after the shim's strict check): sizes, step, iterations, type, op."""
    out = dict(DEFAULT_ARGS)
    i = 0
    while i < len(args):
        arg = args[i]
        if arg.startswith("--"):
            name, sep, value = arg[2:].partition("=")
            flag = _LONG.get(name)
        else:
            flag, value, sep = arg[1:2], arg[2:], arg[2:] != ""
        if not sep:
            value = args[i + 1] if i + 1 < len(args) else ""
            i += 1
        i += 1
        key = _SHORT.get(flag or "")
        if key is None:
            continue  # an option the output does not depend on (-p, -z, -a, ...)
        if key in ("minbytes", "maxbytes", "stepbytes"):
            out[key] = parse_size(value)
        elif key in ("op", "type"):
            out[key] = value
        else:
            out[key] = int(value) if value.lstrip("-").isdigit() else out[key]
    if out["type"] not in TYPE_BYTES:
        raise PerfModelError("the performance model prints -d %s only as one of %s" % (out["type"], ", ".join(TYPE_BYTES)))
    if out["op"] not in OPS:
        raise PerfModelError("the performance model prints -o %s only as one of %s" % (out["op"], ", ".join(OPS)))
    return out


def select_nics(host_nics: list[str], hca: str | None) -> list[str]:
    """The NICs NCCL_IB_HCA leaves NCCL on one host (NCCL docs, Environment Variables, NCCL_IB_HCA:
    https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html#nccl-ib-hca): a comma list of name
    prefixes (``mlx5`` = every mlx5 card), ``=`` before the list for exact names, ``^`` before it to exclude;
    ``:<port>`` after a name selects a port (the lab's NICs have port 1). Unset or empty: every NIC."""
    if not hca:
        return list(host_nics)
    value = hca.strip()
    exclude = value.startswith("^")
    value = value[1:] if exclude else value
    exact = value.startswith("=")
    value = value[1:] if exact else value
    names = [item.split(":", 1)[0] for item in value.split(",") if item.split(":", 1)[0]]

    def match(nic: str) -> bool:
        return any(nic == n if exact else nic.startswith(n) for n in names)
    return [nic for nic in host_nics if match(nic) != exclude]


def job_nics(fabric: Fabric, hosts: list[str], gpus: dict[str, list[int]], hca: str | None) -> dict[str, list[str]]:
    """{host: [NICs its GPUs use]}: the host's NICs that NCCL_IB_HCA leaves, in rail order; GPU g uses the NIC
    of rail g (modulo the NICs left), so a job with fewer GPUs than NICs uses only as many NICs as it has GPUs,
    and a job pinned to one NIC uses that one."""
    out = {}
    for host in hosts:
        if host not in fabric.host_nics:
            raise PerfModelError("host %r is no host of the lab wiring (hosts: %s)" % (host, ", ".join(sorted(fabric.host_nics))))
        left = select_nics(fabric.host_nics[host], hca)
        if not left:
            raise PerfModelError("NCCL_IB_HCA=%s leaves no NIC on %s (NICs: %s)" % (hca, host, ", ".join(fabric.host_nics[host])))
        used: list[str] = []
        for gpu in gpus[host]:
            nic = left[gpu % len(left)]
            if nic not in used:
                used.append(nic)
        out[host] = used
    return out


# ---- nccl-tests output -------------------------------------------------------------------------------------
# The form is nccl-tests v2.16.3's (NVIDIA/nccl-tests src/common.cu at tag v2.16.3), the era of the lab's real RoCE
# log tests/lab/nccl/replays/cci_moc_h100_2node_roce_allreduce_nogdr.txt (CCI-MOC/roce-testing, its .json): no
# version line, no "# Collective test starting" line, PCI BDF device ids. The NCCL_DEBUG=INFO lines are those
# of that log (rank 0 only, same words and order), with this job's hosts, ranks and NICs.
GPU_NAME = "NVIDIA H100 80GB HBM3"  # the real log's device name
# PCI bus of GPU 0..7: lab choice (unverified; the layout an 8-GPU HGX H100 board commonly shows in nvidia-smi).
GPU_BUS = (0x18, 0x2A, 0x3A, 0x5D, 0x9A, 0xAB, 0xBA, 0xDB)
NCCL_VERSION = "2.26.2+cuda."  # as the real log prints it
# busbw = algbw x factor(nranks): src/all_reduce.cu AllReduceGetBw, src/all_gather.cu, src/reduce_scatter.cu
# (n-1)/n, src/broadcast.cu, src/reduce.cu, src/sendrecv.cu 1 (v2.16.3).
BUS_FACTOR = {
    "all_reduce": lambda n: 2.0 * (n - 1) / n,
    "all_gather": lambda n: (n - 1) / n,
    "reduce_scatter": lambda n: (n - 1) / n,
    "broadcast": lambda n: 1.0,
    "reduce": lambda n: 1.0,
    "sendrecv": lambda n: 1.0,
}


def _counts(collective: str, size: int, word: int, nranks: int) -> tuple[int, int, int]:
    """(printed size, printed count, bytes GetBw divides by the time) of one row: setupArgs (src/common.cu
    v2.16.3 line 588) and each collective's GetCollByteCount/GetBw."""
    count = size // word
    if collective in ("all_gather", "reduce_scatter"):
        align = max(1, 16 // word)
        base = (count // nranks) // align * align  # (count/nranks) & -(16/eltSize)
        return base * nranks * word, base, base * word * nranks
    return count * word, count, count * word


def _sizes(args: dict) -> list[int]:
    """TimeTest's loop (src/common.cu v2.16.3 line 624): minBytes to maxBytes, x stepFactor or + stepBytes."""
    if args["stepfactor"] <= 1 and args["stepbytes"] <= 0:
        raise PerfModelError("-i 0 with -f <= 1 never ends (nccl-tests would loop on one size)")
    out, size = [], args["minbytes"]
    while size <= args["maxbytes"] and len(out) < 10000:
        out.append(size)
        size = size * args["stepfactor"] if args["stepfactor"] > 1 else size + args["stepbytes"]
        if size == 0:
            break
    return out


def _time_text(usec: float) -> str:
    # src/common.cu v2.16.3 lines 568-576
    if usec >= 10000.0:
        return "%7.0f" % usec
    if usec >= 100.0:
        return "%7.1f" % usec
    return "%7.2f" % usec


def nccl_tests_text(fabric: Fabric, collective: str, hosts: list[str], procs: dict[str, int], args: dict,
                    env: dict[str, str], launch: Any) -> str:
    """What rank 0 of this nccl-tests job prints under NCCL_DEBUG=INFO, bandwidth from the model.

    hosts: in rank order; procs: MPI processes per host; args: parse_test_args(); env: the ranks' environment
    (NCCL_IB_HCA, CUDA_VISIBLE_DEVICES, NCCL_SOCKET_IFNAME, NCCL_TESTS_SPLIT)."""
    if collective not in BUS_FACTOR:
        raise PerfModelError("the performance model writes %s only, not %s" % (", ".join(COLLECTIVES), collective))
    if env.get("NCCL_TESTS_SPLIT") or env.get("NCCL_TESTS_SPLIT_MASK"):
        raise PerfModelError("NCCL_TESTS_SPLIT (groups) is not modelled: launch one job per group")
    hosts = [h for h in hosts if procs.get(h)]
    ngpus = max(1, args["ngpus"]) * max(1, args["nthreads"])
    visible = [int(x) for x in env.get("CUDA_VISIBLE_DEVICES", "").split(",") if x.strip().isdigit()]
    gpus = {h: [visible[i] if i < len(visible) else i for i in range(procs[h] * ngpus)] for h in hosts}
    nics = job_nics(fabric, hosts, gpus, env.get("NCCL_IB_HCA"))
    peak = fabric.job_busbw([(h, n) for h in hosts for n in nics[h]], launch)
    nranks = sum(len(g) for g in gpus.values())
    rng = _rng("text", fabric.seed, launch)
    pids = {h: [rng.randrange(2000, 999999) for _p in range(procs[h])] for h in hosts}
    lines = ["# nThread %d nGpus %d minBytes %d maxBytes %d step: %d(%s) warmup iters: %d iters: %d agg iters: %d "
             "validation: %d graph: %d" % (args["nthreads"], args["ngpus"], args["minbytes"], args["maxbytes"],
                                           args["stepfactor"] if args["stepfactor"] > 1 else args["stepbytes"],
                                           "factor" if args["stepfactor"] > 1 else "bytes", args["warmup"], args["iters"],
                                           args["agg"], args["check"], args["graph"]),
             "#", "# Using devices"]
    rank = 0
    for h in hosts:
        for p in range(procs[h]):
            for i in range(ngpus):
                phys = gpus[h][p * ngpus + i]
                # src/common.cu v2.16.3 line 1031
                lines.append("#  Rank %2d Group %2d Pid %6d on %10s device %2d [%04x:%02x:%02x] %s"
                             % (rank, 0, pids[h][p], h, p * ngpus + i, 0, GPU_BUS[phys % len(GPU_BUS)], 0, GPU_NAME))
                rank += 1
    h0, pid = hosts[0], pids[hosts[0]][0]
    tid = pid + 23
    bus0 = "%x000" % GPU_BUS[gpus[h0][0] % len(GPU_BUS)]
    comm = "0x%x" % rng.randrange(0x1000000, 0xFFFFFFF)
    ifname = (env.get("NCCL_SOCKET_IFNAME") or "eth0").lstrip("^=").split(",")[0] or "eth0"
    addr = "10.0.%d.%d" % (hosts.index(h0) // 250, hosts.index(h0) % 250 + 1)

    def info(text: str, thread: int = tid) -> None:
        lines.append("%s:%d:%d [0] NCCL INFO %s" % (h0, pid, thread, text))

    # The real log's NCCL_DEBUG=INFO lines, in its order (NCCL 2.26.2; the NET/IB line: src/transport/net_ib.cc
    # ncclIbInit "NET/IB : Using%s %s; OOB %s:%s", one " [%d]%s:%d/%s" per device)
    if env.get("NCCL_SOCKET_IFNAME"):
        info("NCCL_SOCKET_IFNAME set by environment to %s" % env["NCCL_SOCKET_IFNAME"], pid)
    info("Bootstrap: Using %s:%s<0>" % (ifname, addr), pid)
    info("cudaDriverVersion 12040", pid)
    info("NCCL version %s" % NCCL_VERSION, pid)
    info("NET/Plugin: Could not find: libnccl-net.so. Using internal net plugin.")
    if env.get("NCCL_IB_HCA"):
        info("NCCL_IB_HCA set to %s" % env["NCCL_IB_HCA"])
    listed = select_nics(fabric.host_nics[h0], env.get("NCCL_IB_HCA"))
    info("NET/IB : Using%s [RO]; OOB %s:%s<0>" % ("".join(" [%d]%s:1/RoCE" % (i, n) for i, n in enumerate(listed)), ifname, addr))
    info("Using network IB")
    info("ncclCommInitRank comm %s rank 0 nranks %d cudaDev 0 nvmlDev %d busId %s commId 0x%016x - Init START"
         % (comm, nranks, gpus[h0][0], bus0, rng.getrandbits(64)))
    info("comm %s rank 0 nRanks %d nNodes %d localRanks %d localRank 0 MNNVL 0" % (comm, nranks, len(hosts), len(gpus[h0])))
    channels = 2 * len(nics[h0])
    for c in range(channels):
        info("Channel %02d/%02d : %s" % (c, channels, " ".join(str(r) for r in range(nranks))))
    info("ncclCommInitRank comm %s rank 0 nranks %d cudaDev 0 nvmlDev %d busId %s commId 0x%016x - Init COMPLETE"
         % (comm, nranks, gpus[h0][0], bus0, rng.getrandbits(64)))
    # column header: src/common.cu v2.16.3 lines 1161-1166
    lines += ["#",
              "# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place          " % ("", "", "", "", ""),
              "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s %6s  %7s  %6s  %6s %6s" % (
                  "size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw", "#wrong"),
              "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %5s  %7s  %6s  %6s  %5s" % (
                  "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "")]
    # rank 0's network channels as the real log prints them once the rings connect: "via NET/IB/<dev>", no /GDRDMA
    # (GPUDirect RDMA off, as the lab's intent requires), then "Connected all rings, use ring PXN 0 GDR 0".
    if len(hosts) > 1:
        prev, nxt = nranks - 1, len(gpus[h0]) % nranks  # the ring of the "Channel NN/MM :" lines
        for c in range(channels):
            dev = listed.index(nics[h0][c // 2 % len(nics[h0])])
            info("Channel %02d/0 : %d[%d] -> 0[0] [receive] via NET/IB/%d" % (c, prev, 0, dev), tid + 5)
        for c in range(channels):
            dev = listed.index(nics[h0][c // 2 % len(nics[h0])])
            target = nxt if len(gpus[h0]) == 1 else 1
            # several GPUs per host: the next rank is local (the P2P form of the corpus log
            # cci_moc_h100_2node_4gpu_roce_sendrecv_gdrdma.txt; unverified for one process per GPU)
            via = "NET/IB/%d" % dev if len(gpus[h0]) == 1 else "P2P/direct pointer"
            info("Channel %02d/0 : 0[0] -> %d[0] [send] via %s" % (c, target, via), tid + 5)
        info("Connected all rings, use ring PXN 0 GDR 0", tid + 5)
    word = TYPE_BYTES[args["type"]]
    factor = BUS_FACTOR[collective](nranks) if nranks > 1 else 0.0
    rootless = collective not in ("broadcast", "reduce")
    opname = "none" if collective in ("all_gather", "broadcast") else args["op"]
    bws = []
    for size in _sizes(args):
        printed, count, nbytes = _counts(collective, size, word, nranks)
        row = "%12d  %12d  %8s  %6s  %6s" % (printed, count, args["type"], opname, "%6i" % (-1 if rootless else args["root"]))
        for placement in ("out", "in"):
            jitter = math.exp(_rng("row", fabric.seed, launch, size, placement).gauss(0.0, fabric.noise / 4))
            bus = fabric.busbw_curve(peak, nbytes) * jitter
            alg = bus / factor if factor else bus
            sec = nbytes / 1e9 / alg if nbytes and alg > 0 else LATENCY_S * jitter
            # BenchTime: algbw = bytes / 1e9 / sec and busbw = algbw * factor from the same sec (src/<coll>.cu GetBw)
            alg_bw = nbytes / 1.0e9 / sec
            bus_bw = alg_bw * factor
            wrong = "%5g" % 0.0 if args["check"] else "%5s" % "N/A"
            row += "  %7s  %6.2f  %6.2f  %s" % (_time_text(sec * 1.0e6), alg_bw, bus_bw, wrong)
            bws.append(bus_bw)
        lines.append(row)
    info("comm %s rank 0 nranks %d cudaDev 0 busId %s - Destroy COMPLETE" % (comm, nranks, bus0), tid + 9)
    # footer: src/common.cu v2.16.3 lines 1261-1263, then ncclGetLastError's (empty) line, line 1269
    lines += ["# Out of bounds values : 0 OK",
              "# Avg bus bandwidth    : %g " % (sum(bws) / len(bws) if bws else 0.0), "#", ""]
    return "\n".join(lines) + "\n"


_PERF_BINARY = re.compile(r"([a-z_]+)_perf(?:_mpi)?")
_MPIRUN_ARGS = {"-np": 1, "--np": 1, "-n": 1, "-c": 1, "-H": 1, "-host": 1, "--host": 1, "-hostfile": 1,
                "--hostfile": 1, "-x": 1, "-mca": 2, "--mca": 2, "-bind-to": 1, "--bind-to": 1, "-map-by": 1,
                "--map-by": 1, "-N": 1, "-npernode": 1, "--npernode": 1, "-wdir": 1, "--wdir": 1}


def mpirun_words(command: list[str]) -> dict:
    """{collective, np, tag_output, args} of an MPIJob launcher's command (``/bin/sh -c '... exec mpirun ...'`` or an argv)."""
    words = list(command)
    if len(words) >= 3 and words[0].endswith("sh") and words[1] == "-c":
        words = shlex.split(words[2])
    start = next((i for i, w in enumerate(words) if os.path.basename(w) == "mpirun"), None)
    if start is None:
        raise PerfModelError("the launcher command runs no mpirun: %r" % (command,))
    out: dict = {"np": None, "tag_output": False}
    i = start + 1
    while i < len(words) and words[i].startswith("-"):
        count = _MPIRUN_ARGS.get(words[i], 0)
        out["tag_output"] = out["tag_output"] or words[i] in ("-tag-output", "--tag-output")
        if words[i] in ("-np", "--np", "-n", "-c") and i + 1 < len(words) and words[i + 1].isdigit():
            out["np"] = int(words[i + 1])
        i += 1 + count
    program = words[i] if i < len(words) else ""
    m = _PERF_BINARY.fullmatch(os.path.basename(program))
    if not m:
        raise PerfModelError("the launcher's mpirun runs %r, not an nccl-tests binary" % (program,))
    out.update(collective=m.group(1), args=words[i + 1:])
    return out


def main(argv: list[str]) -> int:
    """perfmodel.py RUN_DIR [FAULTS_JSON [NOISE [SEED]]]: rewrite perf.json of a running lab (no faults: replay)."""
    if not argv or len(argv) > 4:
        print("usage: perfmodel.py RUN_DIR [FAULTS_JSON [NOISE [SEED]]]", file=sys.stderr)
        return 2
    run_dir = argv[0]
    try:
        with open(os.path.join(run_dir, "wiring.json"), encoding="utf-8") as handle:
            cables = json.load(handle)["links"]
        faults = json.loads(argv[1]) if len(argv) > 1 else []
        noise = float(argv[2]) if len(argv) > 2 else DEFAULT_NOISE
        seed = int(argv[3]) if len(argv) > 3 else DEFAULT_SEED
        write_perf(run_dir, faults, noise, seed, cables)
    except (OSError, ValueError, KeyError) as exc:  # PerfModelError is a ValueError
        print(exc, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
