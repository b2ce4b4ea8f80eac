# SPDX-License-Identifier: GPL-3.0-or-later
"""Juniper Junos (QFX) model: operational/configuration modes, configure private,
schema-checked ``set``/``delete`` for the class-of-service statements of
shared/reference/switch-lossless-cli.md section 5, ``show | compare``,
``commit check``, ``commit confirmed N`` with automatic rollback, counters (5.6).
"""
from __future__ import annotations

import re
import time
from typing import Any

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
        # Junos sends a locally assigned port ID (its SNMP ifIndex) and the interface name as port description
        # (napalm junos fixtures; an EOS view of a Junos MX in ntc-templates). Index as the sim's 'show interfaces'.
        index = 515 + self.ports.index(port) if port in self.ports else 0
        return {"port_id": str(index), "subtype": "local", "descr": port}

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
            if w[0] in ("no-more", "display") and (len(w) == 1 or w[1] in ("set",)):
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
            return self._apply_pipes(self._show(line, toks, pipes), pipes)
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
        if len(toks) >= 2 and "configuration".startswith(toks[1]) and len(toks[1]) >= 4:
            return self._show_tree(self.dev.committed, toks[2:], display_set, line, 2)
        if toks[1:2] == ["version"]:
            return (f"fpc0:\n--------------------------------------------------------------------------\n"
                    f"Hostname: {self._host()}\nModel: {self.dev.model}\nJunos: {self.dev.version}\n")
        if toks[1:3] == ["lldp", "neighbors"] and (len(toks) == 3 or (len(toks) == 5 and toks[3] == "interface")):
            return self._show_lldp(toks[4] if len(toks) == 5 else None, any(p == "display xml" for p in pipes))
        if toks[1:2] == ["interfaces"] and len(toks) == 3 and toks[2] != "queue":
            return self._show_interface(toks[2])
        if toks[1:2] == ["interfaces"] and len(toks) >= 3:
            if toks[2] == "queue" and len(toks) >= 4:
                return self._show_queue(toks[3])
            if len(toks) >= 4 and toks[3] == "extensive":
                return self._show_extensive(toks[2])
        if toks[1:3] == ["class-of-service", "congestion-notification"]:
            return self._show_cnp(toks[3] if len(toks) > 3 else None)
        if toks[1:3] == ["class-of-service", "interface"] and len(toks) >= 4:
            return self._show_cos_intf(toks[3])
        if toks[1:3] == ["system", "commit"]:
            return self._show_commits()
        return self._unknown(line, min(len(toks) - 1, 1))

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

    def _show_interface(self, name: str) -> str:
        p = self._port(name)
        if p is None:
            return f"error: device {name} not found\n"
        state = self.dev.lldp_ports().get(p) or {"oper": "down", "speed": None, "configured": None}
        up = state["oper"] == "up"
        speed = state["speed"] if up else state.get("configured")
        rate = (str(speed)[:-1] + "Gbps") if speed and str(speed).endswith("G") else "Auto"
        mtu = self.dev.committed.get(f"interfaces {p}", {}).get("mtu", ("v", "1514"))[1]
        index = self.dev.ports.index(p)
        return "\n".join([
            f"Physical interface: {p}, Enabled, Physical link is {'Up' if up else 'Down'}",
            f"  Interface index: {650 + index}, SNMP ifIndex: {515 + index}",
            f"  Link-level type: Ethernet, MTU: {mtu}, LAN-PHY mode, Speed: {rate}, BPDU Error: None, Loop Detect PDU Error: None,",
            "  Device flags   : Present Running" + ("" if up else " Down"),
        ]) + "\n"

    def _show_lldp(self, name: str | None, xml: bool) -> str:
        seen = self.dev.lldp_ports()
        if name is not None and self._port(name) is None:
            return f"error: device {name} not found\n"
        ports = [name] if name else [p for p in self.dev.ports if (seen.get(p) or {}).get("peer")]
        entries = [(p, seen[p]["peer"]) for p in ports if (seen.get(p) or {}).get("peer")]
        if not xml:
            rows = ["Local Interface    Parent Interface    Chassis Id          Port info          System Name"]
            rows += [f"{p:<18} {'-':<19} {peer['chassis']:<19} {peer['descr'] or peer['port_id']:<18} {peer['system']}" for p, peer in entries]
            return "\n".join(rows) + "\n"
        style = "detail" if name else "brief"
        out = ['<rpc-reply xmlns:junos="http://xml.juniper.net/junos/%s/junos">' % self.dev.version, f'    <lldp-neighbors-information junos:style="{style}">']
        for p, peer in entries:
            out += ["        <lldp-neighbor-information>",
                    f"            <lldp-local-interface>{p}</lldp-local-interface>",
                    "            <lldp-local-parent-interface-name>-</lldp-local-parent-interface-name>",
                    "            <lldp-remote-chassis-id-subtype>Mac address</lldp-remote-chassis-id-subtype>",
                    f"            <lldp-remote-chassis-id>{peer['chassis']}</lldp-remote-chassis-id>"]
            if name:
                out += [f"            <lldp-remote-port-id-subtype>{self._SUBTYPE_WORDS[peer['subtype']]}</lldp-remote-port-id-subtype>",
                        f"            <lldp-remote-port-id>{peer['port_id']}</lldp-remote-port-id>"]
            if peer["descr"]:
                out.append(f"            <lldp-remote-port-description>{peer['descr']}</lldp-remote-port-description>")
            out += [f"            <lldp-remote-system-name>{peer['system']}</lldp-remote-system-name>", "        </lldp-neighbor-information>"]
        out += ["    </lldp-neighbors-information>", "    <cli>", "        <banner></banner>", "    </cli>", "</rpc-reply>"]
        return "\n".join(out) + "\n"

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

        def row(label: str, val: int, unit: str, sub: bool = False) -> str:
            ind = "     " if sub else "    "
            width = 20 if sub else 21
            return f"{ind}{label:<{width}}:{val:>21}{0:>21} {unit}"
        for q in sorted(fcq):
            tp, tb = c["tx_packets"][q], c["tx_bytes"][q]
            lines += [f"Queue: {q}, Forwarding classes: {fcq[q]}", "  Queued:",
                      row("Packets", tp, "pps"), row("Bytes", tb, "bps"), "  Transmitted:",
                      row("Packets", tp, "pps"), row("Bytes", tb, "bps"),
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
