# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""The device-agnostic counter snapshot: its counter names, parse helpers, snapshot() and delta() for switches, NICs and InfiniBand.

The snapshot shape (switch_counters returns it with kind "switch", nic_counters with kind "nic"):

    {"device": "leaf1", "kind": "switch", "platform": "eos",
     "taken_at": "2025-01-01T00:00:00.123456+00:00",
     "ports": {"Ethernet1": {"pfc_rx_frames": {"3": 1204}, "in_discards": 0, ...}},
     "not_available": ["cnp_packets", ...],    # counters no port of this device reported
     "raw": {"<command>": "<what the device printed>"}}

Counters keyed by priority / queue / priority group carry string keys "0".."7"
(the plan's contract: queue = traffic class = PFC priority). Values are ints,
except watchdog_status ("OK" / "DEADLOCK"), which delta() takes from post.

Standard library only: host modules (nic_counters, nic_qos) carry this file in
their payload, so it imports nothing from the switch side.
"""

from __future__ import annotations

import datetime
import json
import re
from typing import Any

# name -> what it counts. Indexed counters: {"<index>": value}; scalars: value.
PRIORITY_COUNTERS = {
    "pfc_rx_frames": "PFC pause frames received, per priority",
    "pfc_tx_frames": "PFC pause frames sent, per priority",
    "pfc_rx_duration": "PFC pause duration received (device units), per priority",
    "pfc_tx_duration": "PFC pause duration sent (device units), per priority",
}
QUEUE_COUNTERS = {
    "ecn_marked": "ECN CE-marked packets, per egress queue",
    # which egress queue carried the traffic (a DSCP map without the RoCE DSCP puts RoCE on queue 0):
    # docs/counters.md has each platform's source column and where it is not available
    "queue_tx_packets": "packets the egress queue transmitted, per queue",
    "queue_tx_bytes": "bytes the egress queue transmitted, per queue (NVUE text tables: humanised, approximate)",
    "queue_drops": "packets the egress queue dropped (tail/buffer and WRED), per queue",
    "wred_drops": "WRED/RED drops alone, per queue",
    "voq_drops": "ingress VOQ drops, per traffic class (EOS VOQ platforms)",
    "watchdog_storms": "PFC watchdog storm (stuck / deadlock) detections, per queue",
    "watchdog_restores": "PFC watchdog restorations, per queue",
    "watchdog_status": "PFC watchdog state now (OK / DEADLOCK), per queue; not a counter",
}
PG_COUNTERS = {
    "pg_discards": "ingress priority-group (no-buffer) discards, per priority group",
}
SCALAR_COUNTERS = {
    "ecn_marked_total": "ECN CE-marked packets, all queues",
    "pfc_rx_frames_total": "PFC pause frames received, all priorities (only where no per-priority split is shown)",
    "pfc_tx_frames_total": "PFC pause frames sent, all priorities (only where no per-priority split is shown)",
    "in_discards": "inbound discards",
    "out_discards": "outbound discards",
    "cnp_packets": "CNP packets sent",
}
INDEXED = {**PRIORITY_COUNTERS, **QUEUE_COUNTERS, **PG_COUNTERS}
COUNTERS = {**INDEXED, **SCALAR_COUNTERS}


# ---------------------------------------------------------------------------
# helpers for the drivers' parsers
# ---------------------------------------------------------------------------


def count(value: Any) -> int | None:
    """An integer counter from JSON or text ('1204', 1204); None for '-', 'n/a', 'Not Available', ''."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        text = value.strip().replace(",", "")
        if re.fullmatch(r"\d+", text):
            return int(text)
    return None


_UNITS = {"bytes": 1, "byte": 1, "b": 1, "kb": 1024, "mb": 1024**2, "gb": 1024**3, "tb": 1024**4}


def human_count(value: Any) -> int | None:
    """count(), plus NVUE's humanised byte quantities ('0 Bytes', '146.48 KB'): approximate bytes."""
    plain = count(value)
    if plain is not None or not isinstance(value, str):
        return plain
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([A-Za-z]+)\s*", value)
    if match and match.group(2).lower() in _UNITS:
        return int(round(float(match.group(1)) * _UNITS[match.group(2).lower()]))
    return None


def json_document(text: str | None) -> Any:
    """The JSON document in a command's output (anything before the first '{' is
    ignored, e.g. a stray line); None when there is none."""
    if not text:
        return None
    start = text.find("{")
    if start < 0:
        return None
    try:
        return json.JSONDecoder().raw_decode(text[start:])[0]
    except ValueError:
        return None


def index_key(name: Any) -> str | None:
    """'TC3', 'UC3', '3', 3 -> '3'; None when it names no index 0-15."""
    match = re.fullmatch(r"(?:TC|UC|MC|PG|Q)?\s*(\d{1,2})", str(name).strip(), re.IGNORECASE)
    return str(int(match.group(1))) if match else None


def text_tables(text: str) -> list[list[dict[str, str]]]:
    """Column tables as NVUE prints them: a header line, a line of dash groups under
    it, then rows until a blank line. Columns are cut at the dash groups' starts
    (values such as '0 Bytes' hold a space). Each table: a list of {header: value}."""
    lines = text.replace("\r", "").split("\n")
    tables = []
    for index in range(1, len(lines)):
        dashes = lines[index]
        if not re.fullmatch(r"\s*-+(?:\s+-+)*\s*", dashes):
            continue
        starts = [m.start() for m in re.finditer(r"-+", dashes)]
        header = lines[index - 1]

        def cut(line: str, starts=starts) -> list[str]:
            return [line[start : (starts[n + 1] if n + 1 < len(starts) else len(line))].strip() for n, start in enumerate(starts)]

        names = cut(header)
        rows = []
        for line in lines[index + 1 :]:
            if not line.strip() or re.fullmatch(r"\s*=+\s*", line):
                break
            rows.append(dict(zip(names, cut(line))))
        tables.append(rows)
    return tables


def natural(name: str) -> list:
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


# ---------------------------------------------------------------------------
# snapshot
# ---------------------------------------------------------------------------


def now_iso() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="microseconds")


def select(ports_data: dict[str, dict], ports: list[str] | None, priorities: list[int]) -> dict[str, dict]:
    """The asked ports (all when None), indexed counters cut to the asked priorities."""
    keep = {str(p) for p in priorities}
    names = [p for p in ports_data if ports is None or p in ports]
    out = {}
    for name in sorted(names, key=natural):
        counters = {}
        for key, value in sorted(ports_data[name].items()):
            if key in INDEXED and isinstance(value, dict):
                value = {index: value[index] for index in sorted(value, key=int) if index in keep}
            counters[key] = value
        out[name] = counters
    return out


def snapshot(
    device: str, platform: str, ports: dict[str, dict], raw: dict[str, str], taken_at: str | None = None, kind: str = "switch", names: Any = None
) -> dict:
    """``names``: the counters this kind of device can have (default the switch ones), for not_available."""
    present = {key for counters in ports.values() for key in counters}
    return {
        "device": device,
        "kind": kind,
        "platform": platform,
        "taken_at": taken_at or now_iso(),
        "ports": ports,
        "not_available": sorted(key for key in (COUNTERS if names is None else names) if key not in present),
        "raw": raw,
    }


# ---------------------------------------------------------------------------
# delta
# ---------------------------------------------------------------------------


def _unwrap(value: Any, side: str) -> dict:
    """A snapshot, or a registered switch_counters result holding one under 'counters'."""
    if isinstance(value, dict) and "ports" not in value and isinstance(value.get("counters"), dict):
        value = value["counters"]
    if not isinstance(value, dict) or not isinstance(value.get("ports"), dict):
        raise ValueError("%s: not a counters snapshot (a dict with 'ports'), got %s" % (side, type(value).__name__))
    for port, counters in value["ports"].items():
        if not isinstance(counters, dict):
            raise ValueError("%s: ports[%s] is not a dict of counters" % (side, port))
    return value


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _seconds_between(start: Any, end: Any) -> float | None:
    try:
        first = datetime.datetime.fromisoformat(str(start))
        last = datetime.datetime.fromisoformat(str(end))
        return round((last - first).total_seconds(), 6)
    except (TypeError, ValueError):
        return None


def delta(post: Any, pre: Any) -> dict:
    """post - pre in the snapshot shape. A counter that went down (cleared or
    wrapped) is listed in 'resets' and its delta is its post value (what was
    counted since the reset). Ports, counters and indexes present on one side
    only are listed in 'only_in_pre' / 'only_in_post' and left out of 'ports'.
    Non-numeric values (watchdog_status) are taken from post. ValueError when
    the inputs are not snapshots of the same device."""
    post = _unwrap(post, "post")
    pre = _unwrap(pre, "pre")
    for key in ("device", "kind"):
        if pre.get(key) != post.get(key):
            raise ValueError("pre is of %s %r, post of %s %r: a delta needs two snapshots of one device" % (key, pre.get(key), key, post.get(key)))
    out: dict[str, Any] = {
        "device": post.get("device"),
        "kind": post.get("kind"),
        "platform": post.get("platform"),
        "taken_at": post.get("taken_at"),
        "since": pre.get("taken_at"),
        "interval_s": _seconds_between(pre.get("taken_at"), post.get("taken_at")),
        "ports": {},
        "resets": [],
        "only_in_pre": [],
        "only_in_post": [],
        "not_available": sorted(set(pre.get("not_available") or []) | set(post.get("not_available") or [])),
        "raw": {},
    }

    def one_side(port: str, counter: str | None, index: str | None, side: str) -> None:
        entry: dict[str, Any] = {"port": port}
        if counter is not None:
            entry["counter"] = counter
        if index is not None:
            entry["index"] = index
        out["only_in_" + side].append(entry)

    def diff(port: str, counter: str, index: str | None, before: Any, after: Any) -> Any:
        if not (_number(before) and _number(after)):
            return after
        change = after - before
        if change < 0:
            entry: dict[str, Any] = {"port": port, "counter": counter}
            if index is not None:
                entry["index"] = index
            entry.update(pre=before, post=after)
            out["resets"].append(entry)
            return after
        return change

    pre_ports, post_ports = pre["ports"], post["ports"]
    for port in sorted(set(pre_ports) | set(post_ports), key=natural):
        if port not in post_ports:
            one_side(port, None, None, "pre")
            continue
        if port not in pre_ports:
            one_side(port, None, None, "post")
            continue
        before_port, after_port = pre_ports[port], post_ports[port]
        changes: dict[str, Any] = {}
        for counter in sorted(set(before_port) | set(after_port)):
            if counter not in after_port:
                one_side(port, counter, None, "pre")
                continue
            if counter not in before_port:
                one_side(port, counter, None, "post")
                continue
            before, after = before_port[counter], after_port[counter]
            if isinstance(before, dict) and isinstance(after, dict):
                per_index = {}
                for index in sorted(set(before) | set(after), key=lambda k: (not str(k).isdigit(), int(k) if str(k).isdigit() else 0, str(k))):
                    if index not in after:
                        one_side(port, counter, index, "pre")
                    elif index not in before:
                        one_side(port, counter, index, "post")
                    else:
                        per_index[index] = diff(port, counter, index, before[index], after[index])
                changes[counter] = per_index
            elif isinstance(before, dict) or isinstance(after, dict):
                raise ValueError("ports[%s].%s: a per-index counter on one side, a single value on the other" % (port, counter))
            else:
                changes[counter] = diff(port, counter, None, before, after)
        out["ports"][port] = changes
    return out
