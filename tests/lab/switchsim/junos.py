# SPDX-License-Identifier: GPL-3.0-or-later
"""Juniper Junos (QFX) model: operational/configuration modes, configure private,
schema-checked ``set``/``delete`` for the class-of-service statements of
shared/reference/switch-lossless-cli.md section 5, ``show | compare``,
``commit check``, ``commit confirmed N`` with automatic rollback, counters (5.6); the operational views
peers read (show version, show interfaces [terse], show chassis hardware, show system uptime, show lldp
neighbors [interface X]) in text, ``| display xml`` and ``| display json``, and the terminal setup of
junipernetworks.junos and netmiko (docs/vendor-junos.md "Peers").
"""
from __future__ import annotations

import hashlib
import ipaddress
import json
import re
import time
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from .commit import ConfirmedCommit
from .core import Device, Shell, SimError, deepcopy

# --------------------------------------------------------------------------
# schema
# --------------------------------------------------------------------------


class C:  # container
    def __init__(self, children: dict, presence: bool = False, oneline: bool = False) -> None:
        self.children = children
        self.presence = presence
        self.oneline = oneline


class N:  # named list element: keyword <name> { ... }
    """wrap=True: displayed as ``keyword { name { ... } }`` (schedulers, interfaces ...);
    otherwise as ``keyword name { ... }`` (class, dscp, forwarding-class ...)."""

    def __init__(self, vtype: tuple, children: dict, oneline: bool = False,
                 label: str = "name", wrap: bool = False) -> None:
        self.vtype = vtype
        self.children = children
        self.oneline = oneline
        self.label = label
        self.wrap = wrap


class G:  # display-only group of wrapped named elements
    def __init__(self, n: N) -> None:
        self.n = n
        self.children: dict = {}


class L:  # leaf with a value
    def __init__(self, vtype: tuple, label: str = "value") -> None:
        self.vtype = vtype
        self.label = label


class LL(L):  # leaf-list: value or [ v1 v2 ]
    pass


class F:  # flag
    pass


class KV:  # drop-profile-map loss-priority X protocol Y drop-profile Z (one statement)
    def __init__(self, keys: list, children: dict) -> None:
        self.keys = keys
        self.children = children
        self.oneline = True


WORD = ("word",)
IFNAME = ("ifname",)
LOSS = ("enum", ("low", "medium-low", "medium-high", "high"))
DSCP_ALIASES = {"be": "000000", "ef": "101110", "af11": "001010", "af12": "001100", "af13": "001110",
                "af21": "010010", "af22": "010100", "af23": "010110", "af31": "011010",
                "af32": "011100", "af33": "011110", "af41": "100010", "af42": "100100",
                "af43": "100110", "cs1": "001000", "cs2": "010000", "cs3": "011000",
                "cs4": "100000", "cs5": "101000", "nc1": "110000", "cs6": "110000",
                "nc2": "111000", "cs7": "111000"}
DOT1P_ALIASES = {"be": "000", "be1": "001", "ef": "010", "ef1": "011", "af11": "100",
                 "af12": "101", "nc1": "110", "nc2": "111"}

PFC_INPUT = {"pfc": C({"mru": L(("int", 0, 9216), "mru")}, presence=True)}

UINT32_MAX = 2 ** 32 - 1

SCHEMA = C({
    "system": C({"host-name": L(WORD, "host-name")}),
    # [edit protocols dcbx] (QFX: "set protocols dcbx interface interface-name
    # priority-flow-control no-auto-negotiation", Traffic Management on the QFX Series)
    "protocols": C({"dcbx": C({
        "disable": F(),
        "interface": N(("dcbx_ifname",), {
            "disable": F(),
            "priority-flow-control": C({"no-auto-negotiation": F()}),
            "enhanced-transmission-selection": C({"no-auto-negotiation": F()}),
        }, label="interface-name"),
    })}),
    "interfaces": N(IFNAME, {
        "description": L(("string",), "description"),
        # media MTU 256..9216: Juniper's 'mtu' statement ("256 through 9216 (EX Series switch
        # interfaces)"); the QFX5240 JVD sets 9216; a QFX-specific range page: unverified
        "mtu": L(("int", 256, 9216), "mtu"),
        "disable": F(),
        "unit": N(("int", 0, 16385), {
            "family": C({"inet": C({"address": N(("cidr",), {})}, presence=True),
                         "ethernet-switching": C({}, presence=True)}),
        }, label="interface_unit_number"),
    }, label="interface-name", wrap=True),
    "class-of-service": C({
        "forwarding-classes": C({
            "class": N(WORD, {
                "queue-num": L(("int", 0, 15), "queue-num"),  # range per QFX model: unverified (0-15 taken)
                "priority": L(("enum", ("low", "high")), "priority"),
                "no-loss": F(),
                "pfc-priority": L(("int", 0, 7), "pfc-priority"),  # Juniper 'pfc-priority': "(0-7)"
            }, oneline=True, label="class-name"),
        }),
        "classifiers": C({
            "dscp": N(WORD, {
                "import": L(WORD, "classifier-name"),
                "forwarding-class": N(WORD, {
                    "loss-priority": N(LOSS, {
                        "code-points": LL(("dscp",), "code-points"),
                    }, label="loss-priority"),
                }, label="class-name"),
            }, label="classifier-name"),
            "ieee-802.1": N(WORD, {
                "import": L(WORD, "classifier-name"),
                "forwarding-class": N(WORD, {
                    "loss-priority": N(LOSS, {
                        "code-points": LL(("dot1p",), "code-points"),
                    }, label="loss-priority"),
                }, label="class-name"),
            }, label="classifier-name"),
        }),
        "congestion-notification-profile": N(WORD, {
            "input": C({
                "dscp": C({"code-point": N(("dscp_bits",), PFC_INPUT, label="code-point")}),
                "ieee-802.1": C({"code-point": N(("dot1p_bits",), PFC_INPUT, label="code-point")}),
                "cable-length": L(("int", 1, 40000), "cable-length"),  # range: unverified
            }),
            "output": C({
                "ieee-802.1": C({"code-point": N(("dot1p_bits",), {
                    "flow-control-queue": LL(("int", 0, 7), "flow-control-queue"),
                }, label="code-point")}),
            }),
            # pfc-watchdog ranges: UNVERIFIED, not in the Juniper pages we read (the PFC Watchdog page
            # gives only the defaults 100 ms / 2 polls / 200 ms; docs/vendor-junos.md), so no range is
            # enforced: any unsigned 32-bit number (the width of a Junos configuration integer) is taken.
            "pfc-watchdog": C({
                "poll-interval": L(("int", 0, UINT32_MAX), "poll-interval"),
                "detection": L(("int", 0, UINT32_MAX), "detection"),
                "recovery-time": L(("int", 0, UINT32_MAX), "recovery-time"),
            }, presence=True),
        }, label="profile-name", wrap=True),
        "drop-profiles": N(WORD, {
            "interpolate": C({
                "fill-level": LL(("int", 0, 100), "fill-level"),
                "drop-probability": LL(("int", 0, 100), "drop-probability"),
            }),
        }, label="profile-name", wrap=True),
        "schedulers": N(WORD, {
            "transmit-rate": C({"percent": L(("int", 0, 100), "percent"),
                                "remainder": F()}, oneline=True),
            "shaping-rate": C({"percent": L(("int", 0, 100), "percent")}, oneline=True),
            "buffer-size": C({"percent": L(("int", 0, 100), "percent"), "remainder": F()}, oneline=True),
            "priority": L(("enum", ("low", "medium-low", "medium-high", "high", "strict-high")), "priority"),
            "explicit-congestion-notification": F(),
            "drop-profile-map": KV([("loss-priority", ("enum", ("any", "low", "medium-low", "medium-high", "high"))),
                                    ("protocol", ("enum", ("any", "tcp", "non-tcp")))],
                                   {"drop-profile": L(WORD, "profile-name")}),
        }, label="scheduler-name", wrap=True),
        "scheduler-maps": N(WORD, {
            "forwarding-class": N(WORD, {"scheduler": L(WORD, "scheduler-name")},
                                  oneline=True, label="class-name"),
        }, label="map-name", wrap=True),
        # ETS (hierarchical port scheduling): priority groups and their traffic control profiles
        # (Juniper: Defining CoS Forwarding Class Sets / Traffic Control Profiles, QFX).
        "forwarding-class-sets": N(WORD, {
            "class": N(WORD, {}, oneline=True, label="class-name"),
        }, label="forwarding-class-set-name", wrap=True),
        "traffic-control-profiles": N(WORD, {
            "scheduler-map": L(WORD, "map-name"),
            "guaranteed-rate": C({"percent": L(("int", 0, 100), "percent")}, oneline=True),
            "shaping-rate": C({"percent": L(("int", 0, 100), "percent")}, oneline=True),
        }, label="profile-name", wrap=True),
        "interfaces": N(("cos_ifname",), {
            "scheduler-map": L(WORD, "map-name"),
            "forwarding-class-set": N(WORD, {"output-traffic-control-profile": L(WORD, "profile-name")},
                                      oneline=True, label="forwarding-class-set-name"),
            "congestion-notification-profile": L(WORD, "profile-name"),
            "classifiers": C({"dscp": L(WORD, "classifier-name"),
                              "ieee-802.1": L(WORD, "classifier-name")}),
            "unit": N(("unit_or_star",), {
                "classifiers": C({"dscp": L(WORD, "classifier-name"),
                                  "ieee-802.1": L(WORD, "classifier-name")}),
            }, label="unit"),
        }, label="interface-name", wrap=True),
        "shared-buffer": C({
            "ingress": C({
                "percent": L(("int", 0, 100), "percent"),
                # dynamic-threshold: Juniper/jvd QFX5240 AI/ML config ("lossless { percent 66;
                # dynamic-threshold 10; }"); its range is not in a page we read: unverified, 0-10 taken.
                "buffer-partition": N(("enum", ("lossless", "lossless-headroom", "lossy")),
                                      {"percent": L(("int", 0, 100), "percent"),
                                       "dynamic-threshold": L(("int", 0, 10), "dynamic-threshold")}, label="partition"),
            }),
            "egress": C({
                "percent": L(("int", 0, 100), "percent"),
                "buffer-partition": N(("enum", ("lossless", "lossy", "multicast")),
                                      {"percent": L(("int", 0, 100), "percent")}, label="partition"),
            }),
        }),
    }),
})

DEFAULT_FCS = {"best-effort": 0, "fcoe": 3, "no-loss": 4, "network-control": 7, "mcast": 8}


class SyntaxErr(Exception):
    def __init__(self, pos: int, msg: str) -> None:
        super().__init__(msg)
        self.pos = pos       # token index
        self.msg = msg


def _check_value(vtype: tuple, tok: str, idx: int) -> str:
    kind = vtype[0]
    if kind == "word":
        if not re.match(r"^[A-Za-z0-9_.\-:/]+$", tok):
            raise SyntaxErr(idx, "syntax error.")
        return tok
    if kind == "string":
        return tok
    if kind == "int":
        lo, hi = vtype[1], vtype[2]
        if not re.match(r"^\d+$", tok):
            raise SyntaxErr(idx, "syntax error, expecting <number>.")
        v = int(tok)
        if not lo <= v <= hi:
            raise SyntaxErr(idx, f"Value {tok} is not within range ({lo}..{hi}) at '{tok}'")
        return str(v)
    if kind == "enum":
        hits = [c for c in vtype[1] if c == tok] or [c for c in vtype[1] if c.startswith(tok)]
        if len(hits) != 1:
            raise SyntaxErr(idx, "syntax error.")
        return hits[0]
    if kind == "ifname":
        if not re.match(r"^(et|xe|ge|mge|ae|irb|lo|em|re|vme)(-\d+/\d+/\d+(:\d+)?|\d+)?$", tok):
            raise SyntaxErr(idx, f"invalid interface type in '{tok}'")
        return tok
    if kind == "cos_ifname":
        if not re.match(r"^((et|xe|ge|mge)-\d+/\d+/\d+(:\d+)?|ae\d+|(et|xe|ge)-\*)$", tok):
            raise SyntaxErr(idx, f"invalid interface type in '{tok}'")
        return tok
    if kind == "dcbx_ifname":
        if tok == "all" or re.match(r"^(et|xe|ge|mge)-\d+/\d+/\d+(:\d+)?$", tok):
            return tok
        raise SyntaxErr(idx, f"invalid interface type in '{tok}'")
    if kind == "unit_or_star":
        if tok == "*" or re.match(r"^\d+$", tok):
            return tok
        raise SyntaxErr(idx, "syntax error.")
    if kind == "cidr":
        if not re.match(r"^\d{1,3}(\.\d{1,3}){3}/\d{1,2}$", tok):
            raise SyntaxErr(idx, f"invalid prefix: {tok}")
        return tok
    if kind in ("dscp", "dscp_bits"):
        if re.match(r"^[01]{6}$", tok):
            return tok
        if kind == "dscp" and tok in DSCP_ALIASES:
            return tok
        raise SyntaxErr(idx, f"error: invalid DSCP code point value: {tok}")
    if kind in ("dot1p", "dot1p_bits"):
        if re.match(r"^[01]{3}$", tok):
            return tok
        if kind == "dot1p" and tok in DOT1P_ALIASES:
            return tok
        raise SyntaxErr(idx, f"error: invalid IEEE 802.1 code point value: {tok}")
    raise ValueError(kind)


def _kw(children: dict, tok: str, idx: int) -> str:
    if tok in children:
        return tok
    hits = [k for k in children if k.startswith(tok)]
    if len(hits) == 1:
        return hits[0]
    if len(hits) > 1:
        raise SyntaxErr(idx, "syntax error.")   # ambiguous keyword
    raise SyntaxErr(idx, "syntax error.")


def _tokenize(text: str) -> list[tuple[str, int]]:
    """Tokens with their column; quoted strings are one token."""
    out = []
    for m in re.finditer(r'"([^"]*)"|(\S+)', text):
        out.append((m.group(1) if m.group(1) is not None else m.group(2), m.start()))
    return out


def parse_statement(tokens: list[str], for_delete: bool = False) -> list[tuple]:
    """Parse the tokens after set/delete. Returns a list of operations
    (path, kind, value) where path is a list of keys into the config tree."""
    ops: list[tuple] = []
    node: Any = SCHEMA
    path: list[str] = []
    i = 0
    if not tokens:
        raise SyntaxErr(0, "syntax error, expecting <statement>.")
    while i < len(tokens):
        if isinstance(node, C):
            key = _kw(node.children, tokens[i], i)
            child = node.children[key]
            i += 1
            if isinstance(child, F):
                ops.append((path + [key], "flag", None))
                continue                                   # more leaves may follow
            if isinstance(child, LL):
                if i >= len(tokens):
                    if for_delete:
                        ops.append((path + [key], "leaf", None))
                        return ops
                    raise SyntaxErr(i, f"syntax error, expecting <{child.label}>.")
                vals = []
                if tokens[i] == "[":
                    j = i + 1
                    while j < len(tokens) and tokens[j] != "]":
                        vals.append(_check_value(child.vtype, tokens[j], j))
                        j += 1
                    if j >= len(tokens):
                        raise SyntaxErr(j - 1, "syntax error, expecting ']'.")
                    if not vals:
                        raise SyntaxErr(j, f"syntax error, expecting <{child.label}>.")
                    i = j + 1
                else:
                    vals.append(_check_value(child.vtype, tokens[i], i))
                    i += 1
                ops.append((path + [key], "list", vals))
                continue
            if isinstance(child, L):
                if i >= len(tokens):
                    if for_delete:
                        ops.append((path + [key], "leaf", None))
                        return ops
                    expect = "number" if child.vtype[0] == "int" else child.label
                    raise SyntaxErr(i, f"syntax error, expecting <{expect}>.")
                ops.append((path + [key], "leaf", _check_value(child.vtype, tokens[i], i)))
                i += 1
                continue
            if isinstance(child, C):
                node = child
                path = path + [key]
                if i >= len(tokens):
                    ops.append((path, "container", None))
                    if not child.presence and not for_delete:
                        raise SyntaxErr(i, "syntax error, expecting <statement> or <identifier>.")
                continue
            if isinstance(child, N):
                if i >= len(tokens):
                    if for_delete:
                        ops.append((path + [key], "container", None))
                        return ops
                    raise SyntaxErr(i, f"syntax error, expecting <{child.label}>.")
                name = _check_value(child.vtype, tokens[i], i)
                i += 1
                node = child
                path = path + [f"{key} {name}"]
                if i >= len(tokens):
                    ops.append((path, "container", None))
                continue
            if isinstance(child, KV):
                parts = [key]
                for kname, ktype in child.keys:
                    if i >= len(tokens):
                        raise SyntaxErr(i, f"syntax error, expecting {kname}.")
                    if tokens[i] != kname and not kname.startswith(tokens[i]):
                        raise SyntaxErr(i, "syntax error.")
                    i += 1
                    if i >= len(tokens):
                        raise SyntaxErr(i, f"syntax error, expecting <{kname}>.")
                    parts.append(f"{kname} {_check_value(ktype, tokens[i], i)}")
                    i += 1
                node = C(child.children)
                node.oneline = True  # type: ignore[attr-defined]
                path = path + [" ".join(parts)]
                if i >= len(tokens):
                    if not for_delete:
                        raise SyntaxErr(i, "syntax error, expecting drop-profile.")
                    ops.append((path, "container", None))
                continue
            raise TypeError(child)
        if isinstance(node, N):
            node = C(node.children)
            continue
        raise TypeError(node)
    return ops


def apply_ops(tree: dict, ops: list[tuple]) -> None:
    for path, kind, value in ops:
        cur = tree
        for p in path[:-1]:
            cur = cur.setdefault(p, {})
        last = path[-1]
        if kind == "flag":
            cur[last] = True
        elif kind == "leaf":
            cur[last] = ("v", value)
        elif kind == "list":
            old = cur.get(last)
            vals = list(old[1]) if isinstance(old, tuple) and old[0] == "l" else []
            for v in value:
                if v not in vals:
                    vals.append(v)
            cur[last] = ("l", vals)
        elif kind == "container":
            cur.setdefault(last, {})


def delete_ops(tree: dict, ops: list[tuple]) -> bool:
    """Delete the last op's target. Returns False if the statement was not found."""
    path, kind, value = ops[-1]
    cur = tree
    stack = []
    for p in path[:-1]:
        if p not in cur or not isinstance(cur[p], dict):
            return False
        stack.append((cur, p))
        cur = cur[p]
    last = path[-1]
    if last not in cur:
        return False
    if kind == "list" and isinstance(cur[last], tuple):
        vals = [v for v in cur[last][1] if v not in value]
        if len(vals) == len(cur[last][1]):
            return False
        if vals:
            cur[last] = ("l", vals)
        else:
            del cur[last]
    else:
        del cur[last]
    # prune empty non-presence parents
    while stack:
        parent, key = stack.pop()
        if parent[key] == {} and not _presence(key):
            del parent[key]
        else:
            break
    return True


def _presence(key: str) -> bool:
    return key in ("pfc-watchdog", "pfc", "inet", "ethernet-switching") or " " in key


def _child_schema(node: Any, key: str) -> Any:
    if node is None:
        return None
    if isinstance(node, G):
        c = C(node.n.children)
        c.oneline = node.n.oneline  # type: ignore[attr-defined]
        return c
    children = getattr(node, "children", {})
    kw = key.split(" ", 1)[0]
    sch = children.get(kw)
    if isinstance(sch, N):
        if sch.wrap and " " not in key:
            return G(sch)
        c = C(sch.children)
        c.oneline = sch.oneline  # type: ignore[attr-defined]
        return c
    if isinstance(sch, KV):
        c = C(sch.children)
        c.oneline = True  # type: ignore[attr-defined]
        return c
    return sch


def _order(node: Any, keys: list[str]) -> list[str]:
    if isinstance(node, G):
        return list(keys)
    children = list(getattr(node, "children", {}).keys())

    def k(x: str) -> tuple:
        kw = x.split(" ", 1)[0]
        return (children.index(kw) if kw in children else 99,)
    return sorted(keys, key=k)  # stable: named entries keep insertion order


def to_display(tree: dict, node: Any = SCHEMA) -> dict:
    """Group wrapped named elements (``schedulers S1``) under their keyword."""
    out: dict = {}
    children = getattr(node, "children", {}) if not isinstance(node, G) else {}
    for key, val in tree.items():
        kw = key.split(" ", 1)[0]
        sch = children.get(kw)
        if isinstance(sch, N) and sch.wrap and " " in key:
            name = key.split(" ", 1)[1]
            grp = out.setdefault(kw, {})
            grp[name] = to_display(val, C(sch.children)) if isinstance(val, dict) else val
        elif isinstance(val, dict):
            out[key] = to_display(val, _child_schema(node, key))
        else:
            out[key] = val
    return out


def render_curly(tree: dict, node: Any = SCHEMA, indent: int = 0) -> list[str]:
    return _curly(to_display(tree, node), node)


def _curly(tree: dict, node: Any) -> list[str]:
    out = []
    for key in _order(node, list(tree.keys())):
        out.extend(_render_item(key, tree[key], _child_schema(node, key), 0))
    return out


def _render_item(key: str, val: Any, sch: Any, indent: int) -> list[str]:
    if val is True:
        return [f"{key};"]
    if isinstance(val, tuple):
        v = val[1]
        if val[0] == "l":
            return [f"{key} {v[0]};"] if len(v) == 1 else [f"{key} [ {' '.join(v)} ];"]
        if " " in str(v) or v == "":
            return [f'{key} "{v}";']
        return [f"{key} {v};"]
    oneline = getattr(sch, "oneline", False)
    if oneline:
        parts = [key]
        for k2 in _order(sch, list(val.keys())):
            v2 = val[k2]
            parts.append(k2 if v2 is True else f"{k2} {v2[1]}")
        return [" ".join(parts) + ";"]
    if not val:
        return [f"{key};"]
    inner = _curly(val, sch)
    return [f"{key} {{"] + ["    " + x for x in inner] + ["}"]


def render_set(tree: dict, prefix: str = "set", node: Any = SCHEMA) -> list[str]:
    out = []
    for key in _order(node, list(tree.keys())):
        val = tree[key]
        sch = _child_schema(node, key)
        if val is True:
            out.append(f"{prefix} {key}")
        elif isinstance(val, tuple):
            v = val[1]
            if val[0] == "l":
                out.append(f"{prefix} {key} {v[0]}" if len(v) == 1 else f"{prefix} {key} [ {' '.join(v)} ]")
            else:
                out.append(f'{prefix} {key} "{v}"' if " " in str(v) else f"{prefix} {key} {v}")
        elif not val:
            out.append(f"{prefix} {key}")
        else:
            out.extend(render_set(val, f"{prefix} {key}", sch))
    return out


def render_compare(old: dict, new: dict) -> str:
    out: list[str] = []
    _cmp(to_display(old), to_display(new), [], SCHEMA, out)
    return "\n".join(out) + ("\n" if out else "")


def _cmp(old: dict, new: dict, path: list[str], node: Any, out: list[str]) -> None:
    header_done = False

    def header() -> None:
        nonlocal header_done
        if not header_done:
            out.append("[edit" + ("" if not path else " " + " ".join(path)) + "]")
            header_done = True

    keys = list(new.keys()) + [k for k in old.keys() if k not in new]
    keys = _order(node, keys)
    deferred = []
    for key in keys:
        sch = _child_schema(node, key)
        o, n = old.get(key), new.get(key)
        if o == n:
            continue
        if o is None or n is None:
            header()
            sign = "+" if o is None else "-"
            for line in _render_item(key, n if o is None else o, sch, 0):
                out.append(f"{sign}   {line}")
            continue
        if isinstance(o, dict) and isinstance(n, dict) and not getattr(sch, "oneline", False):
            deferred.append((key, sch))
            continue
        header()
        for line in _render_item(key, o, sch, 0):
            out.append(f"-   {line}")
        for line in _render_item(key, n, sch, 0):
            out.append(f"+   {line}")
    for key, sch in deferred:
        _cmp(old[key], new[key], path + [key], sch, out)


# --------------------------------------------------------------------------
# commit checks
# --------------------------------------------------------------------------
# Models without ETS (Juniper: Understanding Default CoS Scheduling and Classification).
PORT_SCHEDULING_ONLY = ("qfx5200", "qfx5210")


def check_config(tree: dict, model: str = "qfx5120-32c") -> list[tuple[str, str, str]]:
    """Return (edit-path, statement, message) errors, as commit check-out would."""
    model_ets = not model.startswith(PORT_SCHEDULING_ONLY)
    errs = []
    cos = tree.get("class-of-service", {})

    def items(sect: str) -> list[tuple[str, Any]]:
        return [(k.split(" ", 1)[1], v) for k, v in cos.items() if k.startswith(sect + " ")]

    fcs = {k.split(" ", 1)[1] for k in cos.get("forwarding-classes", {}) if k.startswith("class ")}
    all_fcs = fcs | set(DEFAULT_FCS)
    schedulers = {n for n, _node in items("schedulers")}
    smaps = {n for n, _node in items("scheduler-maps")}
    dprofiles = {n for n, _node in items("drop-profiles")}
    cnps = {n for n, _node in items("congestion-notification-profile")}
    dscp_cls = {k.split(" ", 1)[1] for k in cos.get("classifiers", {}) if k.startswith("dscp ")}
    for k, v in cos.get("forwarding-classes", {}).items():
        q = v.get("queue-num") if isinstance(v, dict) else None
        if q is None:
            errs.append(("class-of-service forwarding-classes", k, "queue-num must be configured"))
        if isinstance(v, dict) and "pfc-priority" in v and "no-loss" not in v:
            errs.append(("class-of-service forwarding-classes", k,
                         "pfc-priority is allowed only for no-loss forwarding classes"))
    for ck, cv in cos.get("classifiers", {}).items():
        for fk in cv:
            if fk.startswith("forwarding-class "):
                fc = fk.split(" ", 1)[1]
                if fc not in all_fcs:
                    errs.append((f"class-of-service classifiers {ck}", fk,
                                 f"forwarding-class {fc} is not defined"))
    for mk, mv in items("scheduler-maps"):
        for fk, fv in mv.items():
            fc = fk.split(" ", 1)[1]
            if fc not in all_fcs:
                errs.append((f"class-of-service scheduler-maps {mk}", fk, f"forwarding-class {fc} is not defined"))
            s = fv.get("scheduler") if isinstance(fv, dict) else None
            if s is None:
                errs.append((f"class-of-service scheduler-maps {mk}", fk, "scheduler must be configured"))
            elif s[1] not in schedulers:
                errs.append((f"class-of-service scheduler-maps {mk}", fk, f"scheduler {s[1]} is not defined"))
    for sk, sv in items("schedulers"):
        for dk, dv in sv.items():
            if dk.startswith("drop-profile-map"):
                d = dv.get("drop-profile") if isinstance(dv, dict) else None
                if d is None:
                    errs.append((f"class-of-service schedulers {sk}", dk, "drop-profile must be configured"))
                elif d[1] not in dprofiles:
                    errs.append((f"class-of-service schedulers {sk}", dk, f"drop-profile {d[1]} is not defined"))
    for dk, dv in items("drop-profiles"):
        ip = dv.get("interpolate", {})
        fl, dp = ip.get("fill-level"), ip.get("drop-probability")
        if (fl is None) != (dp is None) or (fl and len(fl[1]) != len(dp[1])):
            errs.append((f"class-of-service drop-profiles {dk}", "interpolate",
                         "fill-level and drop-probability must have the same number of points"))
    for pk, pv in items("congestion-notification-profile"):
        inp = pv.get("input", {})
        if "dscp" in inp and "ieee-802.1" in inp:
            errs.append((f"class-of-service congestion-notification-profile {pk}", "input",
                         "DSCP and IEEE 802.1p based PFC cannot be configured in the same profile"))
    for ik, iv in items("interfaces"):
        path = f"class-of-service interfaces {ik}"
        sm = iv.get("scheduler-map")
        if sm and sm[1] not in smaps:
            errs.append((path, f"scheduler-map {sm[1]}", f"Scheduler map {sm[1]} is not defined"))
        cn = iv.get("congestion-notification-profile")
        if cn and cn[1] not in cnps:
            errs.append((path, f"congestion-notification-profile {cn[1]}",
                         f"congestion-notification-profile {cn[1]} is not defined"))
        cl = iv.get("classifiers", {}).get("dscp")
        if cl and cl[1] not in dscp_cls and cl[1] != "default":
            errs.append((path, f"classifiers dscp {cl[1]}", f"classifier {cl[1]} is not defined"))
    # No rule that the shared-buffer partitions sum to 100: Juniper's own committed QFX5240
    # configuration (Juniper/jvd AI/ML backend) has egress lossless 66 + lossy 10.
    fc_sets = {n for n, _node in items("forwarding-class-sets")}
    tcps = {n for n, _node in items("traffic-control-profiles")}
    for tk, tv in items("traffic-control-profiles"):
        sm = tv.get("scheduler-map")
        if sm and sm[1] not in smaps:
            errs.append((f"class-of-service traffic-control-profiles {tk}", f"scheduler-map {sm[1]}",
                         f"Scheduler map {sm[1]} is not defined"))
    for fk, fv in items("forwarding-class-sets"):
        for ck in fv:
            fc = ck.split(" ", 1)[1]
            if fc not in all_fcs:
                errs.append((f"class-of-service forwarding-class-sets {fk}", ck, f"forwarding-class {fc} is not defined"))
    for ik, iv in items("interfaces"):
        path = f"class-of-service interfaces {ik}"
        sets = [k.split(" ", 1)[1] for k in iv if k.startswith("forwarding-class-set ")]
        for name in sets:
            if name not in fc_sets:
                errs.append((path, f"forwarding-class-set {name}", f"forwarding-class-set {name} is not defined"))
            t = iv[f"forwarding-class-set {name}"].get("output-traffic-control-profile")
            if t and t[1] not in tcps:
                errs.append((path, f"forwarding-class-set {name}", f"traffic-control-profile {t[1]} is not defined"))
        if sets and iv.get("scheduler-map") and model_ets:
            # An ETS port takes its schedulers through the traffic control profiles of its
            # priority groups; a scheduler-map straight on it is the port-scheduling form
            # (Juniper: Understanding CoS Hierarchical Port Scheduling (ETS)). Error text unverified.
            errs.append((path, f"scheduler-map {iv['scheduler-map'][1]}",
                         "scheduler-map and forwarding-class-set cannot be configured on the same interface"))
        if sets and not model_ets:
            # QFX5200/QFX5210: "The switch supports direct port scheduling and enhanced
            # transmission selection (ETS) ... except on QFX5200 and QFX5210 switches" (Juniper:
            # Understanding Default CoS Scheduling and Classification). Error text unverified.
            errs.append((path, f"forwarding-class-set {sets[0]}",
                         "Hierarchical port scheduling (ETS) is not supported on this platform"))
    return errs


# --------------------------------------------------------------------------
# device
# --------------------------------------------------------------------------
def _stamp() -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())


class JunosDevice(Device):
    platform = "junos"
    default_ports = [f"et-0/0/{i}" for i in range(32)]

    def __init__(self, spec: dict, sim: Any) -> None:
        super().__init__(spec, sim)
        self.model = spec.get("model", "qfx5120-32c")
        self.version = spec.get("version", "23.4R2-S2.1")
        self.committed: dict = {"system": {"host-name": ("v", self.hostname)}}
        self.shared_candidate: dict | None = None
        self.history: list[dict] = []      # rollback 1.. (previous committed configs)
        # 'show system commit' entries, newest first: {at, user, via, comment, confirmed}
        self.commits: list[dict] = [{"at": _stamp(), "user": "root", "via": "other", "comment": None, "confirmed": None}]
        # commit confirmed N: N minutes (shared machine: commit.py)
        self.pending = ConfirmedCommit(self, self._expired, unit_seconds=60)
        self.exclusive: Any = None         # the shell holding 'configure exclusive'
        self.booted = time.time()         # 'show system uptime'
        self.last_configured = (self.booted, "root")  # (when, by whom): the last commit
        self.shared_dirty_by: Any = None   # the shell whose edit left the shared candidate modified
        if spec.get("initial_config"):
            self.load_lines(spec["initial_config"])

    def load_lines(self, text: str | list) -> None:
        lines = text.splitlines() if isinstance(text, str) else list(text)
        tree = deepcopy(self.committed)
        for line in lines:
            toks = line.split()
            if not toks:
                continue
            if toks[0] != "set":
                raise SimError(f"initial config: only set lines are accepted: {line!r}")
            try:
                apply_ops(tree, parse_statement([t for t, _kind in _tokenize(line)][1:]))
            except SyntaxErr as e:
                raise SimError(f"initial config line {line!r}: {e.msg}") from None
        self.committed = tree

    def new_shell(self, conn: Any) -> JunosShell:
        return JunosShell(self, conn)

    def system_name(self) -> str:
        return self.hostname_now()

    def hostname_now(self) -> str:
        return self.committed.get("system", {}).get("host-name", ("v", self.hostname))[1]

    def running_config(self) -> str:
        with self.lock:
            return "\n".join(render_curly(self.committed)) + "\n"

    def startup_lines(self) -> list[str]:
        """A Junos commit is persistent: the committed config as set lines."""
        with self.lock:
            return render_set(self.committed)

    def lldp_advertised(self, port: str) -> dict:
        """What a Junos switch sends by default: the port ID is the interface's SNMP ifIndex, subtype 'locally
        assigned' ('Port ID TLV subtype : locally-assigned' in a default 'show lldp', genie's ShowLldp fixture;
        Juniper's Apstra sets 'port-id-subtype interface-name' explicitly); the port description is the
        interface's configured description ('Port Description TLV type : interface-alias (ifAlias)', same
        fixture; Juniper's LLDP page: 'the user-configured port description'), else the interface name
        (napalm's ex9208 fixture: port ID 549 with description ge-3/3/1; that the name stands in for a missing
        description is inferred from it, unverified). The index is the one 'show interfaces' prints."""
        index = 515 + self.ports.index(port) if port in self.ports else 0
        # No lock: a neighbour asks while holding its own (two switches asking each other would deadlock);
        # a commit replaces self.committed whole, so this read sees one configuration or the other.
        descr = self.committed.get(f"interfaces {port}", {}).get("description", (None, None))[1]
        return {"port_id": str(index), "subtype": "local", "descr": descr or port}

    def describe(self) -> dict:
        """The lab state a test compares a peer's facts with: also the model, release and chassis serial number."""
        return {**super().describe(), "model": self.model, "version": self.version, "serial": _serial(self.name)}

    def pending_state(self) -> dict:
        with self.lock:
            p = self.pending
            return {"platform": "junos", "pending_commit": bool(p),
                    "remaining_seconds": round(p.remaining(), 3) if p else None,
                    "minutes": p["amount"] if p else None,
                    "shared_candidate_modified": self.shared_candidate is not None
                    and self.shared_candidate != self.committed}

    def do_commit(self, candidate: dict, confirm_minutes: int | None, user: str = "root", comment: str | None = None) -> list[str]:
        """Commit; returns output lines. Raises SimError(text) on failure."""
        with self.lock:
            errs = check_config(candidate, self.model)
            if self.faults.get("commit_error"):
                errs.append(("", "", str(self.faults["commit_error"])))
            if errs:
                lines = []
                for path, stmt, msg in errs:
                    if path:
                        lines.append(f"[edit {path}]")
                        lines.append(f"  '{stmt}'")
                        lines.append(f"    {msg}")
                    else:
                        lines.append(f"error: {msg}")
                lines.append("error: configuration check-out failed")
                raise SimError("\n".join(lines))
            out = []
            was_pending = self.pending.active
            if was_pending:  # any commit confirms a pending 'commit confirmed'
                self.pending.confirm()
            before = self.committed
            # Every commit rotates the rollback files, a commit without changes too (Juniper,
            # "The Commit Model for Configurations": the formerly active configuration is saved
            # as the first rollback configuration file).
            self.history.insert(0, before)
            del self.history[49:]
            self.commits.insert(0, {"at": _stamp(), "user": user, "via": "cli", "comment": comment, "confirmed": confirm_minutes})
            del self.commits[50:]
            self.committed = deepcopy(candidate)
            self.last_configured = (time.time(), user)
            if confirm_minutes is not None:
                self.pending.start(confirm_minutes, before)
                out.append("configuration check succeeds")
                out.append(f"commit confirmed will be automatically rolled back in {confirm_minutes} "
                           f"minutes unless confirmed")
                self.record("commit_confirmed_started", minutes=confirm_minutes)
            else:
                self.record("commit" if not was_pending else "commit_confirmed_confirmed")
            out.append("commit complete")
            return out

    def _expired(self, before: dict, info: dict) -> None:
        """The commit confirmed timer ran out (called by self.pending under the lock)."""
        self.history.insert(0, self.committed)
        self.committed = before
        self.commits.insert(0, {"at": _stamp(), "user": "root", "via": "other", "comment": None, "confirmed": None})
        self.last_configured = (time.time(), "root")
        # The automatic rollback is a commit: the shared candidate is the active config again.
        self.shared_candidate = deepcopy(self.committed)
        self.shared_dirty_by = None
        self.record("commit_confirmed_expired_rollback")


# --------------------------------------------------------------------------
# shell
# --------------------------------------------------------------------------
class JunosShell(Shell):
    def __init__(self, device: JunosDevice, conn: Any) -> None:
        super().__init__(device, conn)
        self.dev: JunosDevice = device
        self.user = getattr(conn, "user", None) or device.username
        self.mode = "op"           # op | config
        self.private = False
        self.candidate: dict | None = None
        self.width = 80
        self.length = 24
        self.timestamp = False

    def banner(self) -> str:
        return (f"Last login: Thu Jan  1 00:00:00 2026 from 127.0.0.1\n"
                f"--- JUNOS {self.dev.version} Kernel 64-bit  JNPR-12.1-20230101.0_0000\n")

    def _host(self) -> str:
        return self.dev.hostname_now()

    def prompt_text(self) -> str:
        return f"{self.user}@{self._host()}{'#' if self.mode == 'config' else '>'} "

    def prompt(self) -> str:
        if self.mode == "config":
            extra = ""
            if self.dev.pending:
                mins = max(1, int(round(self.dev.pending.remaining() / 60)))
                extra = f"# commit confirmed will be rolled back in {mins} minutes\n"
            return f"\n{extra}[edit]\n{self.prompt_text()}"
        return f"\n{{master:0}}\n{self.prompt_text()}"

    def _caret(self, line: str, tokens: list[tuple[str, int]], pos: int, msg: str) -> str:
        """Junos prints a caret under the offending token (column counted from the prompt)."""
        col = tokens[pos][1] if pos < len(tokens) else len(line.rstrip()) + 1
        return " " * (len(self.prompt_text()) + col) + "^\n" + msg + "\n"

    def reject(self, line: str) -> str:
        toks = _tokenize(line)
        return self._caret(line, toks, max(0, len(toks) - 1), "syntax error.")

    def handle(self, line: str) -> str:
        text = line.rstrip()
        if not text.strip():
            return ""
        with self.dev.lock:
            if self.mode == "op":
                return self._op(text)
            return self._config(text)

    # --- pipes -------------------------------------------------------------------------
    def _split_pipe(self, text: str) -> tuple[str, list[str]]:
        parts = text.split("|")
        return parts[0].rstrip(), [p.strip() for p in parts[1:]]

    def _apply_pipes(self, out: str, pipes: list[str]) -> str:
        for p in pipes:
            w = p.split(None, 1)
            if not w:
                continue
            if w[0] in ("no-more", "display") and (len(w) == 1 or w[1] in ("set", "xml", "json")):
                continue
            if w[0] == "match" and len(w) > 1:
                rx = re.compile(w[1].strip('"'))
                out = "\n".join(x for x in out.splitlines() if rx.search(x)) + "\n"
            elif w[0] == "except" and len(w) > 1:
                rx = re.compile(w[1].strip('"'))
                out = "\n".join(x for x in out.splitlines() if not rx.search(x)) + "\n"
            elif w[0] == "count":
                out = f"Count: {len(out.splitlines())} lines\n"
        return out

    # --- operational mode -----------------------------------------------------------------
    OP_CMDS = ["show", "configure", "set", "exit", "quit", "run", "request", "file", "clear", "ping"]

    def _unknown(self, line: str, pos: int = 0) -> str:
        toks = _tokenize(line)
        return self._caret(line, toks, pos, "unknown command.")

    def _op(self, line: str) -> str:
        body, pipes = self._split_pipe(line)
        toks = [t for t, _kind in _tokenize(body)]
        w = toks[0]
        if w in ("exit", "quit", "logout"):
            self.closed = True
            return ""
        if w in ("configure", "edit"):
            arg = toks[1] if len(toks) > 1 else ""
            if arg not in ("", "private", "exclusive"):
                return self._caret(line, _tokenize(body), 1, "syntax error.")
            return self._enter_config(arg)
        if w == "set" and len(toks) >= 2 and toks[1] == "cli":
            return self._set_cli(line, toks)
        if w == "show":
            out = self._apply_pipes(self._show(line, toks, pipes), pipes)
            return f"{_cli_time()}\n{out}" if self.timestamp else out
        return self._unknown(line)

    def _set_cli(self, line: str, toks: list[str]) -> str:
        if len(toks) >= 4 and toks[2] == "screen-width" and toks[3].isdigit():
            n = int(toks[3])
            if not (n == 0 or 40 <= n <= 1024):
                return self._caret(line, _tokenize(line), 3, f"Value {n} is not within range (40..1024) at '{n}'")
            self.width = n
            return f"Screen width set to {n}\n"
        if len(toks) >= 4 and toks[2] == "screen-length" and toks[3].isdigit():
            self.length = int(toks[3])
            return f"Screen length set to {toks[3]}\n"
        if len(toks) >= 4 and toks[2] == "complete-on-space" and toks[3] in ("on", "off"):
            return "Disabling complete-on-space\n" if toks[3] == "off" else "Enabling complete-on-space\n"
        if toks[2:3] == ["timestamp"] and len(toks) == 3:
            # 'set cli timestamp': the time, then 'CLI timestamp set to: %b %d %T'; every later command's
            # output starts with the time (public captures of MX/EX sessions, docs/vendor-junos.md "Peers").
            self.timestamp = True
            return f"{_cli_time()}\nCLI timestamp set to: %b %d %T\n"
        if toks[2:4] == ["timestamp", "disable"] and len(toks) == 4:
            # junipernetworks.junos' terminal plugin sends this first; the reply 'CLI timestamp disabled' is the
            # line a captured EX login (Junos 21.4R3) prints and 'show cli' reports (docs/vendor-junos.md "Peers").
            self.timestamp = False
            return "CLI timestamp disabled\n"
        return self._caret(line, _tokenize(line), min(len(toks) - 1, 2), "syntax error.")

    def _who(self, shell: Any) -> str:
        return f"  {shell.user} terminal p{id(shell) % 10} (pid {1000 + id(shell) % 9000}) on since {_stamp()}"

    def _enter_config(self, arg: str) -> str:
        out = []
        holder = self.dev.exclusive
        if holder is not None and holder is not self and not getattr(holder, "closed", False):
            # "error: configuration database locked by:" + the holder (public captures of
            # Junos; the exact holder line is unverified)
            return f"error: configuration database locked by:\n{self._who(holder)}\n      exclusive [edit]\n"
        dirty = self.dev.shared_candidate is not None and self.dev.shared_candidate != self.dev.committed
        other_dirty = dirty and self.dev.shared_dirty_by is not self
        if arg == "private" and other_dirty:
            # captured on a real device: 'configure private' fails outright, back at the > prompt
            return "error: shared configuration database modified\n"
        if arg == "exclusive" and other_dirty:
            # "error: configuration database modified" (public captures); the users list before it: unverified layout
            who = self._who(self.dev.shared_dirty_by) if self.dev.shared_dirty_by is not None else "  root terminal p0 (pid 1000)"
            return f"Users currently editing the configuration:\n{who}\n      [edit]\nerror: configuration database modified\n"
        if arg == "exclusive":
            self.dev.exclusive = self
            out.append("warning: uncommitted changes will be discarded on exit")
        if arg == "private":
            self.private = True
            self.candidate = deepcopy(self.dev.committed)
            out.append("warning: uncommitted changes will be discarded on exit")
        else:
            self.private = False
            if self.dev.shared_candidate is None:
                self.dev.shared_candidate = deepcopy(self.dev.committed)
        out.append("Entering configuration mode")
        self.mode = "config"
        return "\n".join(out) + "\n"

    def _cand(self) -> dict:
        if self.private:
            assert self.candidate is not None
            return self.candidate
        if self.dev.shared_candidate is None:
            self.dev.shared_candidate = deepcopy(self.dev.committed)
        return self.dev.shared_candidate

    def _set_cand(self, tree: dict) -> None:
        if self.private:
            self.candidate = tree
        else:
            self.dev.shared_candidate = tree

    def _show(self, line: str, toks: list[str], pipes: list[str]) -> str:
        display_set = any(p.startswith("display set") for p in pipes)
        fmt = "xml" if "display xml" in pipes else "json" if "display json" in pipes else "text"
        if len(toks) >= 2 and "configuration".startswith(toks[1]) and len(toks[1]) >= 4:
            if fmt != "text":
                return _not_modelled(line, fmt)
            return self._show_tree(self.dev.committed, toks[2:], display_set, line, 2)
        found = self._op_show(toks)
        if found is None:
            return self._unknown(line, min(len(toks) - 1, 1))
        if isinstance(found, str):      # an error: the same text in every display format (unverified for xml/json)
            return found
        text, reply = found
        if fmt == "text":
            return text
        if reply is None:
            return _not_modelled(line, fmt)
        return _render_xml(reply, self.dev.version) if fmt == "xml" else _render_json(reply)

    def _op_show(self, toks: list[str]) -> Any:
        """The operational show commands: (text, reply elements or None where the XML/JSON form is not
        modelled), an error text, or None for a command the simulator does not know."""
        args = toks[1:]
        if args == ["version"]:
            return self._show_version()
        if args[:2] == ["lldp", "neighbors"] and (len(args) == 2 or (len(args) == 4 and args[2] == "interface")):
            return self._show_lldp(args[3] if len(args) == 4 else None)
        if args[:2] == ["chassis", "hardware"] and len(args) == 2:
            return self._show_chassis_hardware()
        if args[:2] == ["system", "uptime"] and len(args) == 2:
            return self._show_uptime()
        if args[:1] == ["interfaces"]:
            rest = args[1:]
            if not rest:
                return self._show_interfaces(self.dev.ports)
            if rest[0] == "terse" and len(rest) <= 2:
                return self._show_terse(rest[1:])
            if len(rest) == 2 and rest[1] == "terse":
                return self._show_terse(rest[:1])
            if len(rest) == 1 and rest[0] != "queue":
                return self._show_interfaces([rest[0]])
            if rest[0] == "queue" and len(rest) >= 2:
                return _text_only(self._show_queue(rest[1]))
            if len(rest) >= 2 and rest[1] == "extensive":
                return _text_only(self._show_extensive(rest[0]))
        if args[:2] == ["class-of-service", "congestion-notification"]:
            return (self._show_cnp(args[2] if len(args) > 2 else None), None)
        if args[:2] == ["class-of-service", "interface"] and len(args) >= 3:
            return _text_only(self._show_cos_intf(args[2]))
        if args[:2] == ["system", "commit"]:
            return (self._show_commits(), None)
        return None

    def _show_tree(self, tree: dict, path: list[str], display_set: bool, line: str, off: int) -> str:
        node: Any = SCHEMA
        sub = tree
        prefix = []
        i = 0
        try:
            while i < len(path):
                key = _kw(node.children, path[i], off + i)
                sch = node.children[key]
                if isinstance(sch, N):
                    if i + 1 < len(path):
                        name = f"{key} {path[i + 1]}"
                        i += 2
                        sub = sub.get(name, {}) if isinstance(sub, dict) else {}
                        prefix.append(name)
                        node = C(sch.children)
                        continue
                    sub = {k: v for k, v in sub.items() if k.split(" ", 1)[0] == key}
                    i += 1
                    if display_set:
                        return "\n".join(render_set(sub, "set " + " ".join(prefix), node)) + "\n" if sub else ""
                    return "\n".join(render_curly(sub, node)) + "\n" if sub else ""
                if isinstance(sch, C):
                    sub = sub.get(key, {}) if isinstance(sub, dict) else {}
                    prefix.append(key)
                    node = sch
                    i += 1
                    continue
                val = sub.get(key) if isinstance(sub, dict) else None
                if val is None:
                    return ""
                return "\n".join(_render_item(key, val, sch, 0)) + "\n"
        except SyntaxErr as e:
            return self._caret(line, _tokenize(line), e.pos, e.msg)
        if not isinstance(sub, dict) or not sub:
            return ""
        if display_set:
            pre = "set" + ("" if not prefix else " " + " ".join(prefix))
            return "\n".join(render_set(sub, pre, node)) + "\n"
        return "\n".join(render_curly(sub, node)) + "\n"

    # --- configuration mode ------------------------------------------------------------------
    def _config(self, line: str) -> str:
        body, pipes = self._split_pipe(line)
        tk = _tokenize(body)
        toks = [t for t, _kind in tk]
        w = toks[0]
        if w == "set":
            try:
                ops = parse_statement(toks[1:])
            except SyntaxErr as e:
                return self._caret(line, tk, e.pos + 1, e.msg)
            tree = self._cand()
            apply_ops(tree, ops)
            if not self.private:
                self.dev.shared_dirty_by = self
            return ""
        if w == "delete":
            try:
                ops = parse_statement(toks[1:], for_delete=True)
            except SyntaxErr as e:
                return self._caret(line, tk, e.pos + 1, e.msg)
            if not delete_ops(self._cand(), ops):
                return "warning: statement not found\n"
            if not self.private:
                self.dev.shared_dirty_by = self
            return ""
        if w == "show":
            if pipes and pipes[0] == "compare":
                return render_compare(self.dev.committed, self._cand())
            display_set = any(p.startswith("display set") for p in pipes)
            out = self._show_tree(self._cand(), toks[1:], display_set, line, 1)
            return self._apply_pipes(out, pipes)
        if w == "commit":
            return self._commit(line, tk, toks)
        if w == "rollback":
            n = int(toks[1]) if len(toks) > 1 and toks[1].isdigit() else 0
            if len(toks) > 1 and not toks[1].isdigit():
                return self._caret(line, tk, 1, "syntax error.")
            if not self.private:
                self.dev.shared_dirty_by = self
            if n == 0:
                self._set_cand(deepcopy(self.dev.committed))
            elif n <= len(self.dev.history):
                self._set_cand(deepcopy(self.dev.history[n - 1]))
            else:
                return f"error: Cannot load rollback {n}: no such file\n"
            return "load complete\n"
        if w in ("exit", "quit"):
            if len(toks) > 1 and toks[1] != "configuration-mode":
                return self._caret(line, tk, 1, "syntax error.")
            return self._exit_config()
        if w == "top" or w == "up":
            return ""
        if w == "run":
            sub = line.split(None, 1)[1] if len(toks) > 1 else ""
            if not sub:
                return self._caret(line, tk, 1, "syntax error, expecting <command>.")
            saved = self.mode
            self.mode = "op"
            try:
                return self._op(sub) if sub.split()[0] not in ("configure", "exit", "quit") else \
                    self._unknown(sub)
            finally:
                self.mode = saved
        if w == "status":
            return f"Users currently editing the configuration:\n  {self.user} terminal p0 (pid 1) on since now\n"
        return self._caret(line, tk, 0, "unknown command.")

    def _commit(self, line: str, tk: list, toks: list[str]) -> str:
        args = toks[1:]
        comment = None
        confirm = None
        check = False
        and_quit = False
        i = 0
        while i < len(args):
            a = args[i]
            if a == "check" and not check and confirm is None:
                check = True
            elif a == "confirmed" and confirm is None:
                confirm = 10
                if i + 1 < len(args) and args[i + 1].isdigit():
                    confirm = int(args[i + 1])
                    # 1-65,535 minutes: Juniper's XML protocol guide (<confirm-timeout>); the CLI
                    # page states none, so the same range for the CLI is unverified. Error wording ours.
                    if not 1 <= confirm <= 65535:
                        return self._caret(line, tk, i + 2,
                                           f"Value {confirm} is not within range (1..65535) at '{confirm}'")
                    i += 1
            elif a == "comment" and i + 1 < len(args):
                comment = args[i + 1]
                i += 1
            elif a == "and-quit":
                and_quit = True
            elif a == "synchronize":
                pass
            else:
                return self._caret(line, tk, i + 1, "syntax error.")
            i += 1
        if confirm is not None and self.private:
            # Real Junos refuses a timed commit from a private candidate (Juniper XML API guide; py-junos-eznc).
            return "error: commit confirmed not supported for private configuration\n"
        cand = self._cand()
        if check:
            errs = check_config(cand, self.dev.model)
            if errs:
                lines = []
                for path, stmt, msg in errs:
                    lines += [f"[edit {path}]", f"  '{stmt}'", f"    {msg}"]
                lines.append("error: configuration check-out failed")
                return "\n".join(lines) + "\n"
            return "configuration check succeeds\n"
        try:
            out = self.dev.do_commit(cand, confirm, self.user, comment)
        except SimError as e:
            return str(e) + "\n"
        if self.private:
            self.candidate = deepcopy(self.dev.committed)
        else:
            self.dev.shared_candidate = deepcopy(self.dev.committed)
            self.dev.shared_dirty_by = None
        text = "\n".join(out) + "\n"
        if and_quit:
            self.mode = "op"
            text += "Exiting configuration mode\n"
        return text

    def _dirty(self) -> bool:
        return self._cand() != self.dev.committed

    def _exit_config(self) -> str:
        if self._dirty():
            def answer(a: str) -> str:
                if a.strip().lower() in ("", "yes", "y"):
                    return self._leave()
                return ""
            self.ask = ("The configuration has been changed but not committed\n"
                        "Exit with uncommitted changes? [yes,no] (yes) ", answer, True)
            return ""
        return self._leave()

    def _leave(self) -> str:
        if self.dev.exclusive is self:
            # configure exclusive: "uncommitted changes will be discarded on exit"
            self.dev.exclusive = None
            self.dev.shared_candidate = deepcopy(self.dev.committed)
            self.dev.shared_dirty_by = None
        if self.private:
            self.candidate = None
        self.private = False
        self.mode = "op"
        return "Exiting configuration mode\n"

    def on_close(self) -> None:
        self.candidate = None
        with self.dev.lock:
            if self.dev.exclusive is self:
                self.dev.exclusive = None
                self.dev.shared_candidate = deepcopy(self.dev.committed)
                self.dev.shared_dirty_by = None

    # --- operational show commands (counters) --------------------------------------------------
    def _port(self, name: str) -> str | None:
        return name if name in self.dev.counters else None

    # --- LLDP and link state from the lab wiring (docs/vendor-junos.md "LLDP and link state") ------------
    _SUBTYPE_WORDS = {"ifname": "Interface name", "mac": "Mac address", "local": "Locally assigned"}

    def _ifindex(self, port: str) -> tuple[int, int]:
        """(Interface index, SNMP ifIndex) of a port: the numbers every view of it prints (and its LLDP port ID)."""
        i = self.dev.ports.index(port)
        return 650 + i, 515 + i

    def _port_config(self, port: str) -> dict:
        return self.dev.committed.get(f"interfaces {port}", {})

    def _state(self, port: str) -> tuple[bool, bool, str]:
        """(admin up, link up, speed as Junos prints it) from the configuration and the lab wiring."""
        admin = self._port_config(port).get("disable") is not True
        state = self.dev.lldp_ports().get(port) or {"oper": "down", "speed": None, "configured": None}
        up = admin and state["oper"] == "up"
        speed = state["speed"] if up else state.get("configured")
        rate = (str(speed)[:-1] + "Gbps") if speed and str(speed).endswith("G") else "Auto"
        return admin, up, rate

    def _units(self, port: str) -> list[tuple[str, str | None, str | None]]:
        """(unit, family, address) of each configured logical unit (one row per address, family alone if none)."""
        rows = []
        for key, unit in self._port_config(port).items():
            if not key.startswith("unit ") or not isinstance(unit, dict):
                continue
            families = unit.get("family", {})
            if not families:
                rows.append((key.split()[1], None, None))
            for fam, body in families.items():
                addresses = [k.split()[1] for k in body if k.startswith("address ")] if isinstance(body, dict) else []
                word = "eth-switch" if fam == "ethernet-switching" else fam
                rows += [(key.split()[1], word, a) for a in addresses] or [(key.split()[1], word, None)]
        return rows

    def _show_interfaces(self, names: list[str]) -> Any:
        """'show interfaces [X]' (the default, 'normal' level): Juniper's show interfaces page; the layout of
        ntc-templates' juniper_junos_show_interfaces{,2}.raw captures (Description line when configured; the
        'Link-level type' line of a 10G QFX port). Logical units as in juniper_junos_show_interfaces.raw.
        A bare 'show interfaces' lists the simulator's front-panel ports only (a real QFX also lists its
        internal interfaces: bme0, dsc, em0, lo0 ...)."""
        for name in names:
            if self._port(name) is None:
                return f"error: device {name} not found\n"
        lines: list[str] = []
        items = []
        for port in names:
            admin, up, rate = self._state(port)
            local, snmp = self._ifindex(port)
            cfg = self._port_config(port)
            descr = cfg.get("description", (None, None))[1]
            mtu = cfg.get("mtu", ("v", "1514"))[1]
            mac = _mac(self.dev.name, port)
            enabled = "Enabled" if admin else "Administratively down"
            block = [f"Physical interface: {port}, {enabled}, Physical link is {'Up' if up else 'Down'}",
                     f"  Interface index: {local}, SNMP ifIndex: {snmp}"]
            if descr:
                block.append(f"  Description: {descr}")
            block += [f"  Link-level type: Ethernet, MTU: {mtu}, MRU: {int(mtu) + 8}, LAN-PHY mode, Speed: {rate}, BPDU Error: None, "
                      "Loop Detect PDU Error: None, MAC-REWRITE Error: None, Loopback: Disabled, Source filtering: Disabled, "
                      "Flow control: Enabled",
                      "  Pad to minimum frame size: Disabled",
                      "  Device flags   : Present Running" + ("" if up else " Down"),
                      "  Interface flags: " + ("" if up else "Hardware-Down ") + "SNMP-Traps Internal: 0x4000",
                      "  Link flags     : None",
                      "  CoS queues     : 12 supported, 12 maximum usable queues",
                      f"  Current address: {mac}, Hardware address: {mac}",
                      "  Input rate     : 0 bps (0 pps)",
                      "  Output rate    : 0 bps (0 pps)",
                      f"  Active alarms  : {'None' if up else 'LINK'}",
                      f"  Active defects : {'None' if up else 'LINK'}",
                      "  Interface transmit statistics: Disabled"]
            logical = []
            for n, (unit, fam, addr) in enumerate(self._units(port)):
                lname = f"{port}.{unit}"
                block += ["", f"  Logical interface {lname} (Index {local * 10 + n}) (SNMP ifIndex {snmp + 100 + n})",
                          "    Flags: " + ("Up" if up else "Device-Down") + " SNMP-Traps 0x4004000 Encapsulation: ENET2"]
                if fam == "inet":
                    block.append(f"    Protocol inet, MTU: {int(mtu) - 14}")
                    if addr:
                        net = ipaddress.ip_interface(addr).network
                        # a /31 or /32 has no broadcast address: the line's end for them is unverified, left off
                        bcast = f", Broadcast: {net.broadcast_address}" if net.prefixlen < 31 else ""
                        block += ["      Addresses, Flags: Is-Preferred Is-Primary",
                                  f"        Destination: {net}, Local: {addr.split('/')[0]}{bcast}"]
                elif fam:
                    block.append(f"    Protocol {fam}, MTU: {int(mtu) - 14}")
                unit = [_el("name", lname), _el("local-index", str(local * 10 + n)), _el("snmp-index", str(snmp + 100 + n))]
                logical.append(_el("logical-interface", unit))
            lines += block + [""]
            # get-interface-information, normal style (element names: a Junos 14.1 capture, docs/vendor-junos.md)
            items.append(_el("physical-interface", [
                _el("name", port), _el("admin-status", "up" if admin else "down", {"junos:format": enabled}),
                _el("oper-status", "up" if up else "down"), _el("local-index", str(local)), _el("snmp-index", str(snmp))]
                + ([_el("description", descr)] if descr else [])
                + [_el("link-level-type", "Ethernet"), _el("mtu", str(mtu)), _el("speed", rate),
                   _el("current-physical-address", mac), _el("hardware-physical-address", mac)] + logical))
        reply = [_el("interface-information", items, {"xmlns": _ns(self.dev.version, "junos-interface"), "junos:style": "normal"})]
        return "\n".join(lines).rstrip("\n") + "\n", reply

    def _show_terse(self, names: list[str]) -> Any:
        """'show interfaces terse [X]': the header and columns of Juniper's op-script example page ('By default,
        the layout of the show interfaces terse command looks like this'); physical row, then one row per
        logical unit and address. XML: interface-information style terse with physical-interface /
        logical-interface / address-family (values wrapped in newlines, as Junos prints this RPC)."""
        for name in names:
            if self._port(name) is None:
                return f"error: device {name} not found\n"
        rows = ["Interface               Admin Link Proto    Local                 Remote"]
        items = []
        for port in names or self.dev.ports:
            admin, up, _rate = self._state(port)
            a, o = ("up" if admin else "down"), ("up" if up else "down")
            rows.append(f"{port:<24}{a:<6}{o}")
            logical = []
            for unit, fam, addr in self._units(port):
                lname = f"{port}.{unit}"
                rows.append(f"{lname:<24}{a:<6}{o:<5}{fam or '':<9}{addr or ''}".rstrip())
                family = [_el("address-family", [_el("address-family-name", _nl(fam))]
                              + ([_el("interface-address", [_el("ifa-local", _nl(addr), {"junos:emit": "emit"})])] if addr else []))] if fam else []
                unit = [_el("name", _nl(lname)), _el("admin-status", _nl(a)), _el("oper-status", _nl(o))]
                logical.append(_el("logical-interface", unit + family))
            physical = [_el("name", _nl(port)), _el("admin-status", _nl(a)), _el("oper-status", _nl(o))]
            items.append(_el("physical-interface", physical + logical))
        reply = [_el("interface-information", items, {"xmlns": _ns(self.dev.version, "junos-interface"), "junos:style": "terse"})]
        return "\n".join(rows) + "\n", reply

    def _show_version(self) -> Any:
        """QFX form: 'fpc0:' and a rule, Hostname, Model, Junos, then the packages (ntc-templates
        juniper_junos_show_version_qfx5100.raw). XML: multi-routing-engine-results -> re-name fpc0 ->
        software-information (host-name, product-model, product-name, package-information: a captured EX4200
        'show version | display xml', docs/vendor-junos.md; junos-version: the element PyEZ's facts read)."""
        v = self.dev.version
        packages = [("junos", f"JUNOS Base OS boot [{v}]"), ("jbase", f"JUNOS Base OS Software Suite [{v}]"),
                    ("jkernel-qfx", f"JUNOS Kernel Software Suite [{v}]"), ("jroute-qfx", f"JUNOS Routing Software Suite [{v}]")]
        text = ["fpc0:", "-" * 73, f"Hostname: {self._host()}", f"Model: {self.dev.model}", f"Junos: {v}"]
        text += [comment for _name, comment in packages]
        info = _el("software-information", [_el("host-name", self._host()), _el("product-model", self.dev.model),
                                            _el("product-name", self.dev.model), _el("junos-version", v)]
                   + [_el("package-information", [_el("name", name), _el("comment", comment)]) for name, comment in packages])
        reply = [_el("multi-routing-engine-results", [_el("multi-routing-engine-item", [_el("re-name", "fpc0"), info])])]
        return "\n".join(text) + "\n", reply

    def _show_chassis_hardware(self) -> Any:
        """The layout of a QFX5120-48Y 'show chassis hardware' (ntc-templates
        juniper_junos_show_chassis_hardware_add_fpc_info.raw): Chassis, Pseudo CB 0, Routing Engine 0, FPC 0 with
        CPU and PIC 0, power supplies, fan trays. The chassis description is the model in capitals (as the
        QFX5100-48S-6Q capture prints it); part numbers, the PIC's description and the other descriptions of
        this model are unverified. XML: chassis-inventory -> chassis (name, serial-number, description) ->
        chassis-module -> chassis-sub-module (the elements PyEZ's facts read for the serial number)."""
        model = self.dev.model.upper()
        serial = _serial(self.dev.name)
        ports = len(self.dev.default_ports)
        modules = [("Routing Engine 0", "", "BUILTIN", "BUILTIN", f"RE-{model}", []),
                   ("FPC 0", "REV 01", "650-000000", serial, model,
                    [("CPU", "", "BUILTIN", "BUILTIN", "FPC CPU"), ("PIC 0", "", "BUILTIN", "BUILTIN", f"{ports}x100G")]),
                   ("Power Supply 0", "REV 01", "740-000000", serial + "P0", "JPSU-650W-AC-AO", []),
                   ("Power Supply 1", "REV 01", "740-000000", serial + "P1", "JPSU-650W-AC-AO", [])]
        rows = ["Hardware inventory:", "Item             Version  Part number  Serial number     Description",
                f"{'Chassis':<39}{serial:<18}{model}", "Pseudo CB 0"]
        xml_modules = []
        for name, ver, part, sn, descr, subs in modules:
            rows.append(f"{name:<17}{ver:<9}{part:<13}{sn:<18}{descr}")
            sub_xml = []
            for sname, sver, spart, ssn, sdescr in subs:
                rows.append(f"  {sname:<15}{sver:<9}{spart:<13}{ssn:<18}{sdescr}")
                sub_xml.append(_el("chassis-sub-module", [_el("name", sname), _el("part-number", spart),
                                                          _el("serial-number", ssn), _el("description", sdescr)]))
            xml_modules.append(_el("chassis-module", [_el("name", name)] + ([_el("version", ver)] if ver else [])
                                   + [_el("part-number", part), _el("serial-number", sn), _el("description", descr)] + sub_xml))
        for i in range(5):
            rows.append(f"{'Fan Tray %d' % i:<57}fan-ctrl-{i // 2} {i}, Front to Back Airflow - AFO")
            xml_modules.append(_el("chassis-module", [_el("name", f"Fan Tray {i}"),
                                                      _el("description", f"fan-ctrl-{i // 2} {i}, Front to Back Airflow - AFO")]))
        chassis = _el("chassis", [_el("name", "Chassis"), _el("serial-number", serial), _el("description", model)] + xml_modules,
                      {"junos:style": "inventory"})
        return "\n".join(rows) + "\n", [_el("chassis-inventory", [chassis], {"xmlns": _ns(self.dev.version, "junos-chassis")})]

    def _show_uptime(self) -> Any:
        """'show system uptime' as ntc-templates' juniper_junos_show_system_uptime{,_2}.raw print it (Current time,
        Time Source, System booted, Protocols started, Last configured ... by USER, then the w(1) line); the
        lab's clock is UTC and local ('LOCAL CLOCK', genie's ShowSystemUptime fixture). XML: the elements of
        genie's ShowSystemUptime schema (system-uptime-information -> current-time, time-source,
        system-booted-time, protocols-started-time, last-configured-time, uptime-information)."""
        now = time.time()
        booted = self.dev.booted
        started = booted   # the lab's protocols start with it
        last_at, last_user = self.dev.last_configured
        active = 1

        def when(t: float) -> str:
            return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(t))

        text = [f"Current time: {when(now)}", "Time Source:  LOCAL CLOCK",
                f"System booted: {when(booted)} ({_ago(now - booted)} ago)",
                f"Protocols started: {when(started)} ({_ago(now - started)} ago)",
                f"Last configured: {when(last_at)} ({_ago(now - last_at)} ago) by {last_user}",
                f"{_clock12(now)}  up {_uptime(now - booted)}, {active} user{'s' if active != 1 else ''}, "
                "load averages: 0.00, 0.00, 0.00"]

        def stamp(tag: str, t: float) -> dict:
            return _el(tag, [_el("date-time", when(t), {"junos:seconds": str(int(t))}),
                             _el("time-length", _ago(now - t), {"junos:seconds": str(int(now - t))})])
        last = stamp("last-configured-time", last_at)
        last["children"].append(_el("user", last_user))
        info = _el("system-uptime-information", [
            _el("current-time", [_el("date-time", when(now), {"junos:seconds": str(int(now))})]),
            _el("time-source", " LOCAL CLOCK "), stamp("system-booted-time", booted),
            stamp("protocols-started-time", started), last,
            _el("uptime-information", [_el("date-time", _clock12(now).strip(), {"junos:seconds": str(int(now))}),
                                       _el("up-time", _uptime(now - booted), {"junos:seconds": str(int(now - booted))}),
                                       _el("active-user-count", str(active), {"junos:format": f"{active} user"}),
                                       _el("load-average-1", "0.00"), _el("load-average-5", "0.00"),
                                       _el("load-average-15", "0.00")])], {"xmlns": _ns(self.dev.version, "junos")})
        return "\n".join(text) + "\n", [info]

    # --- LLDP and link state from the lab wiring (docs/vendor-junos.md "LLDP and link state") ------------
    _SUBTYPE_WORDS = {"ifname": "Interface name", "mac": "Mac address", "local": "Locally assigned"}

    def _show_lldp(self, name: str | None) -> Any:
        """'show lldp neighbors': the brief table (ntc-templates juniper_junos_show_lldp_neighbors.raw; Port info
        is the port description when the neighbour sends one, else its port ID: Juniper's show lldp neighbors
        page, 'This could be the port identifier or port description'); with 'interface X' the detail view
        (Juniper's show lldp neighbors page, sample 'show lldp neighbors interface ge-0/0/2'; a captured MX
        'show lldp neighbors interface xe-0/0/1'). XML: lldp-neighbors-information; brief entries carry the
        port ID and, when sent, the port description (napalm's junos test_get_lldp_neighbors/normal fixture),
        detail entries the subtype and local port ID as well (napalm's ex9208_qfx10008 fixture)."""
        seen = self.dev.lldp_ports()
        if name is not None and self._port(name) is None:
            return f"error: device {name} not found\n"
        ports = [name] if name else [p for p in self.dev.ports if (seen.get(p) or {}).get("peer")]
        entries = [(p, seen[p]["peer"]) for p in ports if (seen.get(p) or {}).get("peer")]
        items = []
        for p, peer in entries:
            chassis = _junos_mac(peer["chassis"])
            fields = [_el("lldp-local-interface", p), _el("lldp-local-parent-interface-name", "-")]
            if name:
                fields.append(_el("lldp-local-port-id", str(self._ifindex(p)[1])))
            fields += [_el("lldp-remote-chassis-id-subtype", "Mac address"), _el("lldp-remote-chassis-id", chassis)]
            subtype = _el("lldp-remote-port-id-subtype", self._SUBTYPE_WORDS[peer["subtype"]])
            port_id = _el("lldp-remote-port-id", peer["port_id"])
            descr = [_el("lldp-remote-port-description", peer["descr"])] if peer["descr"] else []
            # detail: subtype, ID, description (ex9208 fixture); brief: description and ID, or subtype and ID ('normal' fixture)
            fields += [subtype, port_id] + descr if name else (descr + [port_id] if descr else [subtype, port_id])
            fields.append(_el("lldp-remote-system-name", peer["system"]))
            items.append(_el("lldp-neighbor-information", fields))
        reply = [_el("lldp-neighbors-information", items, {"junos:style": "detail" if name else "brief"})]
        if name is None:
            rows = ["Local Interface    Parent Interface    Chassis Id          Port info          System Name"]
            rows += [f"{p:<18} {'-':<19} {_junos_mac(peer['chassis']):<19} {peer['descr'] or peer['port_id']:<18} {peer['system']}"
                     for p, peer in entries]
            return "\n".join(rows) + "\n", reply
        text = []
        for p, peer in entries:
            text += ["LLDP Neighbor Information:", "Local Information:",
                     f"Index: {self._ifindex(p)[0]} Time to live: 120 Time mark: {time.strftime('%a %b %d %H:%M:%S %Y', time.gmtime())} Age: 10 secs",
                     f"Local Interface    : {p}", "Parent Interface   : -", f"Local Port ID      : {self._ifindex(p)[1]}",
                     "Ageout Count       : 0", "", "Neighbour Information:", "Chassis type       : Mac address",
                     f"Chassis ID         : {_junos_mac(peer['chassis'])}",
                     f"Port type          : {self._SUBTYPE_WORDS[peer['subtype']]}", f"Port ID            : {peer['port_id']}"]
            if peer["descr"]:
                text.append(f"Port description   : {peer['descr']}")
            text += [f"System name        : {peer['system']}", ""]
        return "\n".join(text), reply

    def _show_extensive(self, name: str) -> str:
        p = self._port(name)
        if p is None:
            return f"error: device {name} not found\n"
        c = self.dev.counters[p]
        mtu = self.dev.committed.get(f"interfaces {p}", {}).get("mtu", ("v", "1514"))[1]
        lines = [f"Physical interface: {p}, Enabled, Physical link is Up",
                 f"  Interface index: {650 + self.dev.ports.index(p)}, SNMP ifIndex: {515 + self.dev.ports.index(p)}, Generation: 140",
                 f"  Link-level type: Ethernet, MTU: {mtu}, LAN-PHY mode, Speed: 100Gbps, BPDU Error: None,",
                 "  Traffic statistics:",
                 f"   Input  bytes  :          {c['rx_octets']:>20}                    0 bps",
                 f"   Output bytes  :          {c['tx_octets']:>20}                    0 bps",
                 "  MAC statistics:                      Receive         Transmit",
                 f"    Total octets                   {c['rx_octets']:>12}     {c['tx_octets']:>12}",
                 f"    MAC pause frames               {c['rx_pause']:>12}     {c['tx_pause']:>12}",
                 "  MAC Priority Flow Control Statistics:"]
        for i in range(8):
            lines.append(f"    Priority :  {i}                  {c['pfc_rx'][i]:>12}     {c['pfc_tx'][i]:>12}")
        return "\n".join(lines) + "\n"

    def _fc_by_queue(self) -> dict[int, str]:
        m: dict[int, list[str]] = {}
        fcs = self.dev.committed.get("class-of-service", {}).get("forwarding-classes", {})
        defaults = dict(DEFAULT_FCS)
        for k, v in fcs.items():
            name = k.split(" ", 1)[1]
            if isinstance(v, dict) and "queue-num" in v:
                m.setdefault(int(v["queue-num"][1]), []).append(name)
        for name, q in defaults.items():
            if q < 8 and q not in m:
                m.setdefault(q, []).append(name)
        return {q: ", ".join(n) for q, n in m.items()}

    def _show_queue(self, name: str) -> str:
        p = self._port(name)
        if p is None:
            return f"error: device {name} not found\n"
        c = self.dev.counters[p]
        fcq = self._fc_by_queue()
        lines = [f"Physical interface: {p}, Enabled, Physical link is Up",
                 f"  Interface index: {650 + self.dev.ports.index(p)}, SNMP ifIndex: {515 + self.dev.ports.index(p)}",
                 "Forwarding classes: 16 supported, 5 in use",
                 "Egress queues: 12 supported, 5 in use"]

        def row(label: str, val: int, unit: str, sub: bool = False, rate_width: int = 22) -> str:
            # the columns of real output (genieparser's ShowInterfacesQueue golden output, an MX: ':' at 25, the
            # count right-aligned to 48, the rate to 70); the Transmitted 'Packets' rate is one wider (to 71) there
            ind = "     " if sub else "    "
            width = 20 if sub else 21
            return f"{ind}{label:<{width}}:{val:>22}{0:>{rate_width}} {unit}"
        for q in sorted(fcq):
            tp, tb = c["tx_packets"][q], c["tx_bytes"][q]
            lines += [f"Queue: {q}, Forwarding classes: {fcq[q]}", "  Queued:",
                      row("Packets", tp, "pps"), row("Bytes", tb, "bps"), "  Transmitted:",
                      row("Packets", tp, "pps", rate_width=23), row("Bytes", tb, "bps"),
                      row("Tail-dropped packets", c["queue_drops"][q], "pps"),
                      row("RED-dropped packets", c["wred_drops"][q], "pps"),
                      row("Low", c["wred_drops"][q], "pps", True), row("High", 0, "pps", True),
                      row("RED-dropped bytes", 0, "bps"),
                      row("Low", 0, "bps", True), row("High", 0, "bps", True),
                      row("ECN-CE packets", c["ecn_marked"][q], "pps"),
                      row("ECN-CE bytes", 0, "bps")]
        return "\n".join(lines) + "\n"

    def _show_cnp(self, name: str | None) -> str:
        cos = self.dev.committed.get("class-of-service", {})
        profiles = [(k, v) for k, v in cos.items() if k.startswith("congestion-notification-profile ")]
        out = []
        for idx, (k, v) in enumerate(profiles):
            pname = k.split(" ", 1)[1]
            if name and pname != name:
                continue
            inp = v.get("input", {})
            out.append(f"Type: Input, Name: {pname}, Index: {idx + 1}")
            if "cable-length" in inp:
                out.append(f"Cable Length: {inp['cable-length'][1]} m")
            out.append("  Priority    PFC          MRU")
            if "dscp" in inp:
                for cp, cv in inp["dscp"].items():
                    pfc = isinstance(cv, dict) and "pfc" in cv
                    out.append(f"  {cp.split(' ', 1)[1]:<10}  {'Enabled' if pfc else 'Disabled':<11}  2500")
            else:
                enabled = {cp.split(" ", 1)[1] for cp, cv in inp.get("ieee-802.1", {}).items()
                           if isinstance(cv, dict) and "pfc" in cv}
                for i in range(8):
                    b = format(i, "03b")
                    out.append(f"  {b:<10}  {'Enabled' if b in enabled else 'Disabled':<11}  2500")
            outp = v.get("output", {}).get("ieee-802.1", {})
            out.append(f"Type: Output, Name: {pname}, Index: {idx + 1}")
            out.append("  Priority    Flow-Control-Queues")
            for cp, cv in outp.items():
                qs = cv.get("flow-control-queue", ("l", []))[1] if isinstance(cv, dict) else []
                out.append(f"  {cp.split(' ', 1)[1]:<10}  {' '.join(qs)}")
        return "\n".join(out) + ("\n" if out else "")

    def _show_cos_intf(self, name: str) -> str:
        if name not in self.dev.counters:
            return f"error: device {name} not found\n"
        cos = self.dev.committed.get("class-of-service", {})
        iv = cos.get(f"interfaces {name}", {})
        idx = 650 + self.dev.ports.index(name)
        out = [f"Physical interface: {name}, Index: {idx}",
               "Maximum usable queues: 12, Queues in use: 5"]
        if "scheduler-map" in iv:
            out.append(f"  Scheduler map: {iv['scheduler-map'][1]}, Index: {idx * 7 % 65535}")
        if "congestion-notification-profile" in iv:
            out.append(f"  Congestion-notification: Enabled, Name: {iv['congestion-notification-profile'][1]}, "
                       f"Index: {idx % 97}")
        else:
            out.append("  Congestion-notification: Disabled")
        cl = iv.get("classifiers", {}).get("dscp")
        if cl:
            out.append("")
            out.append("  Object                  Name                   Type                    Index")
            out.append(f"  Classifier              {cl[1]:<22} dscp                    {idx % 89}")
        return "\n".join(out) + "\n"

    def _show_commits(self) -> str:
        """As Junos prints it: one entry per commit, newest first; the entry of a confirmed
        commit ends with 'commit confirmed, rollback in Nmins' (kept after it was confirmed);
        its comment on the next, indented line (captures of real QFX output; the minutes of a
        pending entry count down here, which we could not verify on a real device)."""
        out = []
        for i, c in enumerate(self.dev.commits):
            line = f"{i}   {c['at']} by {c['user']} via {c['via']}"
            if c["confirmed"] is not None:
                mins = c["confirmed"]
                if i == 0 and self.dev.pending:
                    mins = max(1, int(round(self.dev.pending.remaining() / 60)))
                line += f" commit confirmed, rollback in {mins}mins"
            out.append(line)
            if c["comment"]:
                out.append(f"    {c['comment']}")
        return "\n".join(out) + "\n"


# --------------------------------------------------------------------------
# '| display xml' and '| display json' (docs/vendor-junos.md "Peers")
# --------------------------------------------------------------------------
def _el(tag: str, content: Any = None, attrs: dict | None = None) -> dict:
    """One element of an RPC reply: text (str) or child elements (list)."""
    if isinstance(content, list):
        return {"tag": tag, "attrs": attrs or {}, "text": None, "children": content}
    return {"tag": tag, "attrs": attrs or {}, "text": content, "children": []}


def _nl(value: Any) -> str:
    """get-interface-information wraps its values in newlines (a Junos 14.1 capture, docs/vendor-junos.md)."""
    return f"\n{value}\n"


def _ns(version: str, name: str) -> str:
    return f"http://xml.juniper.net/junos/{version}/{name}"


def _xml_lines(el: dict, depth: int) -> list[str]:
    pad = "    " * depth
    attrs = "".join(f" {k}={quoteattr(v)}" for k, v in el["attrs"].items())
    if el["children"]:
        out = [f"{pad}<{el['tag']}{attrs}>"]
        for child in el["children"]:
            out += _xml_lines(child, depth + 1)
        return out + [f"{pad}</{el['tag']}>"]
    if el["text"] is None:
        return [f"{pad}<{el['tag']}{attrs}/>"]
    return [f"{pad}<{el['tag']}{attrs}>{escape(el['text'])}</{el['tag']}>"]


def _render_xml(reply: list[dict], version: str) -> str:
    """The CLI's '| display xml': the RPC reply in <rpc-reply xmlns:junos=...>, closed by the <cli> banner
    (a captured EX4200 'show version | display xml', docs/vendor-junos.md)."""
    out = [f'<rpc-reply xmlns:junos="{_ns(version, "junos")}">']
    for el in reply:
        out += _xml_lines(el, 1)
    out += ["    <cli>", "        <banner>{master:0}</banner>", "    </cli>", "</rpc-reply>"]
    return "\n".join(out) + "\n"


def _json_value(el: dict) -> dict:
    obj: dict = {}
    if el["attrs"]:
        obj["attributes"] = dict(el["attrs"])
    if el["children"]:
        for child in el["children"]:
            obj.setdefault(child["tag"], []).append(_json_value(child))
    elif el["text"] is not None:
        obj["data"] = el["text"].strip("\n")
    return obj


def _render_json(reply: list[dict]) -> str:
    """The CLI's '| display json': Juniper's JSON rendering of the same reply (every element a list of
    objects, a value under "data", attributes under "attributes"). Whether Junos keeps the newlines around
    get-interface-information values in JSON is unverified (stripped here)."""
    doc: dict = {}
    for el in reply:
        doc.setdefault(el["tag"], []).append(_json_value(el))
    return json.dumps(doc, indent=4) + "\n"


def _not_modelled(line: str, fmt: str) -> str:
    """A real Junos answers '| display xml|json' for every operational command; this lab models the XML and
    JSON forms of the facts commands only (docs/vendor-junos.md). Anything else is refused loudly, never
    answered in text: the wording is the simulator's own, not Junos'."""
    return f"error: the lab simulator does not model '| display {fmt}' for '{line.split('|')[0].strip()}'\n"


def _text_only(text: str) -> Any:
    return text if text.startswith("error:") else (text, None)


def _mac(host: str, what: str) -> str:
    """The lab's MAC of a device or port (the formula of tests/lab/wiring.py mac(): the chassis MAC a neighbour
    sees is _mac(name, 'chassis'))."""
    digest = hashlib.sha256(f"{host}/{what}".encode()).digest()
    return "02:" + ":".join("%02x" % b for b in digest[:5])


def _junos_mac(value: str | None) -> str:
    """Junos prints a MAC chassis ID as six lowercase colon-separated octets (2c:6b:f5:a1:c2:c0: ntc-templates'
    juniper_junos_show_lldp_neighbors.raw, napalm's ex9208 fixture), whatever form the neighbour's own CLI uses."""
    digits = re.sub(r"[^0-9a-fA-F]", "", value or "")
    if len(digits) != 12:
        return value or ""
    return ":".join(digits[i:i + 2] for i in range(0, 12, 2)).lower()


def _serial(name: str) -> str:
    return "XH" + hashlib.sha256(f"{name}/serial".encode()).hexdigest()[:10].upper()


def _ago(seconds: float) -> str:
    """Junos' elapsed time: '22w0d 19:16' (weeks, days, hh:mm) past a day, 'hh:mm:ss' within one (ntc-templates'
    and genie's uptime fixtures; the form for days without weeks, '3d 04:05', is unverified)."""
    s = int(max(0, seconds))
    weeks, rest = divmod(s, 7 * 86400)
    days, rest = divmod(rest, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if weeks:
        return f"{weeks}w{days}d {hours:02d}:{minutes:02d}"
    if days:
        return f"{days}d {hours:02d}:{minutes:02d}"
    return f"{hours:02d}:{minutes:02d}:{secs:02d}"


def _uptime(seconds: float) -> str:
    """The 'up ...' of FreeBSD w(1), which Junos prints ('154 days, 19:16', '15 days, 5 mins')."""
    s = int(max(0, seconds))
    days, rest = divmod(s, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    parts = [f"{days} day{'s' if days > 1 else ''}"] if days else []
    if hours and minutes:
        parts.append(f"{hours}:{minutes:02d}")
    elif hours:
        parts.append(f"{hours} hr{'s' if hours > 1 else ''}")
    elif minutes:
        parts.append(f"{minutes} min{'s' if minutes > 1 else ''}")
    elif not days:
        parts.append(f"{secs} sec{'s' if secs != 1 else ''}")
    return ", ".join(parts)


def _clock12(t: float) -> str:
    """w(1)'s '%l:%M%p' (' 8:48AM')."""
    tm = time.gmtime(t)
    return f"{(tm.tm_hour % 12) or 12:>2}:{tm.tm_min:02d}{'AM' if tm.tm_hour < 12 else 'PM'}"


def _cli_time() -> str:
    """'set cli timestamp': '%b %d %T' (Dec 01 19:25:30)."""
    return time.strftime("%b %d %H:%M:%S", time.gmtime())


# -- what the lab and the tests take from this grammar (switchsim/__init__.py; docs/adding-a-platform.md) --

DEVICE = JunosDevice

# Two ports of a lab switch of this platform, as a lab inventory gives them.
LAB_PORTS = {"et-0/0/1": {"speed": "400G", "cable_length_m": 3, "description": "gpu2 mlx5_0"},
             "et-0/0/2": {"speed": "400G", "cable_length_m": 3}}

# Where the transaction stops answering, per switch_config step: the command (regular expression) the
# simulator's 'hang' fault matches; the commands are the ones the driver sends in that step.
HANG_AT = {
    "connect": "login",
    # Junos reads its diff inside load's round trip.
    "load": "^set class-of-service",
    "commit": "^commit confirmed",
    "read-back": "^run show configuration",
    "confirm": "^commit$",
}
