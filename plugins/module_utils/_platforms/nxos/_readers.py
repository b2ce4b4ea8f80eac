# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""Cisco NX-OS configuration text: walk, recognise and parse a running configuration (the gathered
shape), the rendered lines it does not carry (missing), and the whole configuration with the
collection's parts replaced by the rendered lines (target: the file configure replace is given).
Pure: no device; the driver (_driver.py) reads and writes the switch. The link and counter show
readers are _show.py's. Every form with its source: docs/vendor-nxos.md.
"""

from __future__ import annotations

import re
from typing import Any

from ansible_collections.lossless.fabric.plugins.module_utils._common._snapshot import natural as _natural
from ansible_collections.lossless.fabric.plugins.module_utils._platforms import _indent
from ansible_collections.lossless.fabric.plugins.module_utils._platforms.nxos import _vendor as _vendor_nxos

# Every name the collection owns starts 'LF-' (_render's policy and class names).
OWN = "LF-"


def parse_dscp_list(text: str) -> list[int]:
    """'0-2,5, af31 ef' -> the code points; ValueError naming nxos for anything else."""
    out: set[int] = set()
    for piece in re.split(r"[,\s]+", text.strip()):
        if not piece:
            continue
        match = re.fullmatch(r"(\d+)(?:-(\d+))?", piece)
        if match:
            low, high = int(match.group(1)), int(match.group(2) or match.group(1))
            if not 0 <= low <= high <= 63:
                raise ValueError("nxos: 'match dscp %s': %r is not a DSCP value or range (0-63)" % (text, piece))
            out.update(range(low, high + 1))
        elif piece.lower() in _vendor_nxos.DSCP_NAMES:
            out.add(_vendor_nxos.DSCP_NAMES[piece.lower()])
        else:
            raise ValueError("nxos: 'match dscp %s': %r is not a DSCP value, range or name" % (text, piece))
    return sorted(out)


# ---------------------------------------------------------------------------
# the configuration text: walk, recognise, parse
# ---------------------------------------------------------------------------


def _walk(text: str):
    """(context, line) for each configuration line of NX-OS-indented text (two spaces a level as
    'show running-config' prints it); the context is the tuple of enclosing mode lines. '!' comment
    lines (the '!Command:' / '!Time:' header) and blank lines are skipped."""
    return _indent.walk(text)


# Top-level words an NX-OS running configuration starts its lines with (a Nexus 9000 'show
# running-config': version, feature, hostname, ... interface, line, boot); text with none of them is not one.
_NXOS_TOP = re.compile(
    r"^(version|feature|hostname|interface|class-map|policy-map|system|priority-flow-control|vlan|vrf|username|"
    r"ip|ipv6|no|hardware|logging|ntp|snmp-server|spanning-tree|line|boot|copp|rmon|router|cfs|nv|evpn|vpc|"
    r"port-channel|lldp|control-plane|qos|switchname|banner|clock|password|role|ssh|aaa|license|fabric|mac|key)\b"
)
# Forms of other platforms (Junos set/braces, NVUE, SONiC JSON, EOS three-space indentation is told apart
# by its words): refused by name. Judged on unindented lines only.
_FOREIGN = re.compile(r"^(set |nv |delete |\{|\[)|^\S[^!]*\{\s*$|^}\s*$")


def _check_text(running: Any) -> list[str]:
    if not isinstance(running, str) or not running.strip():
        raise ValueError("nxos: no configuration text (expected the output of 'show running-config')")
    lines = [line for line in running.replace("\r", "").split("\n") if line.strip() and not line.lstrip().startswith("!")]
    if not lines:
        raise ValueError("nxos: only comment lines (expected the output of 'show running-config')")
    foreign = next((line for line in lines if not line.startswith(" ") and _FOREIGN.search(line)), None)
    if foreign is not None:
        raise ValueError("nxos: %r is not NX-OS configuration text (expected the output of 'show running-config', "
                         "indented 2 spaces a level; not Junos, NVUE or JSON)" % foreign.strip()[:80])
    top = [line for line in lines if not line.startswith(" ")]
    if not any(_NXOS_TOP.match(line) for line in top):
        raise ValueError("nxos: no NX-OS configuration line found (expected the output of 'show running-config' "
                         "or 'show running-config ipqos'; first line: %r)" % lines[0][:80])
    return lines


_RED = re.compile(
    r"^random-detect minimum-threshold (\d+) (\S+) maximum-threshold (\d+) (\S+)(?: drop-probability (\d+))?(?: weight (\d+))?(?: (ecn|non-ecn))?$"
)
_WD_INTERVAL = re.compile(r"^priority-flow-control watch-dog interval (\d+)$")
_WD_SHUTDOWN = re.compile(r"^priority-flow-control watch-dog shutdown-multiplier (\d+)$")
_WD_RESTORE = re.compile(r"^priority-flow-control auto-restore multiplier (\d+)$")
_WD_FIXED = re.compile(r"^priority-flow-control fixed-restore multiplier (\d+)$")
_WD_GLOBAL = re.compile(r"^priority-flow-control watch-dog-interval (on|off)$")
# The interface forms read (_Config._interface; sources there and in docs/vendor-nxos.md).
_PFC_MODE = re.compile(r"priority-flow-control mode (auto|on|off)(?: send-tlv)?")
_IF_POLICY = re.compile(r"service-policy type (qos input|queuing input|queuing output) (\S+)( no-stats)?")
_IF_WATCHDOG = re.compile(r"priority-flow-control watch-dog-interval (on|off)")


def _is_watchdog_global(line: str) -> bool:
    return bool(_WD_INTERVAL.match(line) or _WD_SHUTDOWN.match(line) or _WD_RESTORE.match(line)
                or _WD_FIXED.match(line) or _WD_GLOBAL.match(line))


def _ecn_of(match: re.Match) -> dict:
    low_unit, high_unit = _vendor_nxos.ECN_THRESHOLD_BYTES_PER.get(match.group(2)), _vendor_nxos.ECN_THRESHOLD_BYTES_PER.get(match.group(4))
    for unit in (match.group(2), match.group(4)):
        if unit not in _vendor_nxos.ECN_THRESHOLD_UNITS:
            raise ValueError("nxos: 'random-detect' threshold unit %r is not one of %s" % (unit, ", ".join(_vendor_nxos.ECN_THRESHOLD_UNITS)))
    return {
        "min_threshold_bytes": int(match.group(1)) * low_unit if low_unit else None,
        "max_threshold_bytes": int(match.group(3)) * high_unit if high_unit else None,
        "max_probability_percent": int(match.group(5)) if match.group(5) else None,
        # as the device has them: bytes are known only for the 'bytes' unit (_vendor_nxos.ECN_THRESHOLD_BYTES_PER)
        "min_threshold": int(match.group(1)),
        "max_threshold": int(match.group(3)),
        "unit": match.group(2) if match.group(2) == match.group(4) else "%s/%s" % (match.group(2), match.group(4)),
        "weight": int(match.group(6)) if match.group(6) else None,
        "ecn": match.group(7) == "ecn",
    }


class _Config:
    """The QoS objects of an NX-OS running configuration."""

    def __init__(self, running: str):
        _check_text(running)
        self.class_maps: dict[str, dict] = {}  # class-map type qos name -> {"dscp": [..], "other": [..]}
        self.qos: dict[str, list[tuple[str, int | None]]] = {}  # policy-map type qos -> [(class, qos-group)]
        self.queuing: dict[str, dict[int, dict]] = {}  # policy-map type queuing -> {queue: settings}
        self.netqos: dict[str, dict[int, dict]] = {}  # policy-map type network-qos -> {queue: {pause, mtu}}
        self.system: dict[str, str] = {}  # "network-qos" / "queuing output" / "queuing input" / "qos input" -> policy
        self.watchdog: dict[str, Any] = {}
        self.interfaces: dict[str, dict] = {}
        self.unknown: dict[str, list[str]] = {}  # policy -> class lines that are not system classes
        for context, line in _walk(running):
            self._line(context, line)

    def _line(self, context: tuple, line: str) -> None:
        if not context:
            self._top(line)
            return
        head = context[0]
        words = head.split()
        if head.startswith("class-map type qos ") and len(words) in (4, 5) and len(context) == 1:
            target = self.class_maps[words[-1]]
            match = re.fullmatch(r"match dscp (.+)", line)
            if match:
                target["dscp"] += parse_dscp_list(match.group(1))
            else:
                target["other"].append(line)
        elif head.startswith("policy-map type qos ") and len(words) == 4:
            policy = self.qos[words[3]]
            if len(context) == 1:
                match = re.fullmatch(r"class (?:type qos )?(\S+)", line)
                if match:
                    policy.append((match.group(1), None))
            elif len(context) == 2 and policy:
                match = re.fullmatch(r"set qos-group (\d+)", line)
                if match:
                    policy[-1] = (policy[-1][0], int(match.group(1)))
        elif head.startswith("policy-map type queuing ") and len(words) == 4 and len(context) == 2:
            queue = self._queue(_vendor_nxos.queuing_class_group, context[1], "class type queuing ", self.unknown.setdefault(words[3], []))
            if queue is None:
                return
            slot = self.queuing[words[3]].setdefault(queue, {"strict": False, "bandwidth": None, "ecn": None})
            match = re.fullmatch(r"bandwidth remaining percent (\d+)", line)
            red = _RED.match(line)
            if re.fullmatch(r"priority(?: level \d+)?", line):
                slot["strict"] = True
            elif match:
                slot["bandwidth"] = int(match.group(1))
            elif red:
                slot["ecn"] = _ecn_of(red)
        elif head.startswith("policy-map type network-qos ") and len(words) == 4 and len(context) == 2:
            queue = self._queue(_vendor_nxos.network_qos_class_group, context[1], "class type network-qos ", self.unknown.setdefault(words[3], []))
            if queue is None:
                return
            slot = self.netqos[words[3]].setdefault(queue, {"pause": [], "mtu": None})
            pause = re.fullmatch(r"pause pfc-cos ([\d ,]+)", line)
            mtu = re.fullmatch(r"mtu (\d+)", line)
            if pause:
                slot["pause"] = sorted({int(c) for c in re.split(r"[ ,]+", pause.group(1).strip())})
            elif mtu:
                slot["mtu"] = int(mtu.group(1))
        elif head == "system qos" and len(context) == 1:
            match = re.fullmatch(r"service-policy type (network-qos|queuing (?:input|output)|qos input) (\S+)", line)
            if match:
                self.system[match.group(1)] = match.group(2)
        elif head.startswith("interface ") and len(context) == 1:
            self._interface(head[len("interface "):], self.interfaces[head[len("interface "):]], line)

    @staticmethod
    def _queue(group_of, line: str, prefix: str, unknown: list) -> int | None:
        """The queue of a system class line; None (and the line kept in ``unknown``) for another class:
        refused only if that policy is applied (check_applied)."""
        queue = group_of(line[len(prefix):]) if line.startswith(prefix) else None
        if queue is None and line not in unknown:
            unknown.append(line)
        return queue

    def check_applied(self, policy: str | None) -> None:
        if policy and self.unknown.get(policy):
            raise ValueError("nxos: policy-map %s: %r is not a system class this parser reads (class type queuing c-out-8q-q<N> | "
                             "c-out-8q-q-default, class type network-qos c-8q-nq<N> | c-8q-nq-default: cloud-scale, 8 queues)"
                             % (policy, self.unknown[policy][0]))

    def _top(self, line: str) -> None:
        words = line.split()
        if line.startswith("class-map type qos ") and len(words) in (4, 5):
            self.class_maps.setdefault(words[-1], {"dscp": [], "other": [], "match": words[3] if len(words) == 5 else "match-all"})
        elif line.startswith("policy-map type qos ") and len(words) == 4:
            self.qos.setdefault(words[3], [])
        elif line.startswith("policy-map type queuing ") and len(words) == 4:
            self.queuing.setdefault(words[3], {})
        elif line.startswith("policy-map type network-qos ") and len(words) == 4:
            self.netqos.setdefault(words[3], {})
        elif line.startswith("interface "):
            self.interfaces.setdefault(line[len("interface "):], {
                "description": None, "mtu": None, "pfc_mode": None, "qos_input": None, "queuing_output": None, "queuing_input": None,
                "watchdog": None})
        elif _WD_GLOBAL.match(line):
            self.watchdog["enabled"] = line.endswith(" on")
        # '... watch-dog interval <ms>', '... auto-restore multiplier <n>' (forms no source shows): not read (parse_config).

    @staticmethod
    def _interface(name: str, intf: dict, line: str) -> None:
        """The interface lines the collection reads, in every form a source shows; a line of those keys in another
        form is refused (never read as something else); other interface lines (switchport, shutdown, ...) are not ours."""
        words = line.split()
        if words[0] == "description" and len(words) > 1:
            intf["description"] = line[len("description "):]
            return
        if words[0] == "mtu":
            if len(words) != 2 or not words[1].isdigit():
                raise ValueError("nxos: interface %s: %r is not 'mtu <bytes>'" % (name, line))
            intf["mtu"] = int(words[1])
            return
        if words[0] not in ("priority-flow-control", "service-policy") and words[:2] not in (["no", "priority-flow-control"], ["no", "service-policy"]):
            return
        pfc = _PFC_MODE.fullmatch(line)
        policy = _IF_POLICY.fullmatch(line)
        watchdog = _IF_WATCHDOG.fullmatch(line)
        if pfc:
            # 'priority-flow-control mode {auto | on | off}' (SDK, QOS-7X); 'on send-tlv' also advertises the PFC TLV
            # by LLDP (AZL; 10.x): PFC is on either way.
            intf["pfc_mode"] = pfc.group(1)
        elif policy and policy.group(1) == "qos input":
            # 'service-policy type qos input <name>' (QOS-7X, ZB); '... no-stats' (AZL: the same policy without
            # per-class statistics; the word's meaning is unverified, the policy it applies is not).
            intf["qos_input"] = policy.group(2)
        elif policy and policy.group(1) == "queuing output" and not policy.group(3):
            intf["queuing_output"] = policy.group(2)
        elif policy and policy.group(1) == "queuing input" and not policy.group(3):
            intf["queuing_input"] = policy.group(2)
        elif watchdog:
            intf["watchdog"] = watchdog.group(1) == "on"
        else:
            raise ValueError("nxos: interface %s: %r is not a form this reader knows ('priority-flow-control mode auto|on|off "
                             "[send-tlv]', 'priority-flow-control watch-dog-interval on|off', 'service-policy type qos input <name> "
                             "[no-stats]', 'service-policy type queuing input|output <name>')" % (name, line))

    def dscp_of(self, policy: str) -> dict[int, int]:
        """DSCP -> qos-group of a qos policy: its classes in order, the first match wins."""
        found: dict[int, int] = {}
        for name, group in self.qos.get(policy, []):
            if group is None or name not in self.class_maps:
                continue
            for dscp in self.class_maps[name]["dscp"]:
                found.setdefault(dscp, group)
        return found


def parse_config(running: str) -> dict:
    """The gathered shape (docs/switches.md) from 'show running-config' (or 'show running-config ipqos')."""
    config = _Config(running)
    watchdog = config.watchdog
    enabled = watchdog.get("enabled", False)
    system_queuing = config.system.get("queuing output")
    config.check_applied(system_queuing)
    config.check_applied(config.system.get("network-qos"))
    netqos = config.netqos.get(config.system.get("network-qos", ""), {})
    no_drop = sorted({cos for slot in netqos.values() for cos in slot["pause"]})
    result: dict[str, Any] = {
        "dscp_map": {},
        "watchdog": {
            "enabled": bool(enabled),
            # The watchdog's times: no source gives the syntax of its interval and multipliers (_vendor_nxos), so
            # none is read (a line of the forms the driver rendered before issue 31 is recognised only to be replaced).
            "detection_time_ms": None,
            "restoration_time_ms": None,
            "action": "drop" if enabled else None,
        },
        "interfaces": {},
    }
    explicit: dict[int, int] = {}
    for name in sorted(config.interfaces, key=_natural):
        intf = config.interfaces[name]
        policy = intf["qos_input"]
        dscp = config.dscp_of(policy) if policy else {}
        for code, group in dscp.items():
            explicit.setdefault(code, group)
        config.check_applied(intf["queuing_output"])
        queuing = config.queuing.get(intf["queuing_output"] or system_queuing or "", {})
        pfc_on = intf["pfc_mode"] == "on"
        result["interfaces"][name] = {
            "description": intf["description"],
            "mtu": intf["mtu"],
            "trust": "dscp" if dscp else None,
            "pfc_enabled": pfc_on,
            "pfc_mode": intf["pfc_mode"],
            "pfc_priorities": no_drop if pfc_on else [],
            "ecn": {str(q): {k: v for k, v in s["ecn"].items() if k != "ecn"} for q, s in sorted(queuing.items()) if s["ecn"] and s["ecn"]["ecn"]},
            "strict_queues": sorted(q for q, s in queuing.items() if s["strict"]),
            "bandwidth_percent": {str(q): s["bandwidth"] for q, s in sorted(queuing.items()) if s["bandwidth"] is not None},
            "watchdog": bool(enabled) and intf["watchdog"] is not False and pfc_on,
            "qos_policy": policy,
            "queuing_policy": intf["queuing_output"] or system_queuing,
        }
    # The plan's dscp_map names the non-default classes (every other code point -> class 0).
    result["dscp_map"] = {str(d): explicit[d] for d in sorted(explicit) if explicit[d] != 0}
    result["dscp_unmapped"] = [d for d in range(64) if d not in explicit] if explicit else list(range(64))
    result["system_qos"] = dict(config.system)
    result["network_qos"] = {str(q): dict(s) for q, s in sorted(netqos.items())}
    return result


# ---------------------------------------------------------------------------
# missing_lines: by meaning, in context
# ---------------------------------------------------------------------------


def _facts(line: str) -> list[str]:
    """A line in a form where equal meaning is equal text: one DSCP per 'match dscp' fact,
    WRED thresholds in bytes."""
    match = re.fullmatch(r"match dscp (.+)", line)
    if match:
        try:
            return ["match dscp %d" % d for d in parse_dscp_list(match.group(1))]
        except ValueError:
            return [line]
    match = _RED.match(line)
    if match:
        ecn = _ecn_of(match)
        if ecn["min_threshold_bytes"] is None or ecn["max_threshold_bytes"] is None:
            return [line]
        return ["random-detect %d %d %s %s %s" % (ecn["min_threshold_bytes"], ecn["max_threshold_bytes"],
                                                  ecn["max_probability_percent"], ecn["weight"], match.group(7))]
    return [line]


def missing(lines: list[str], running: str) -> list[str]:
    _check_text(running)
    have: dict[tuple, set] = {}
    for context, line in _walk(running):
        have.setdefault(context, set()).update(_facts(line))
    headers = {context[: index + 1] for context, _line in _walk("\n".join(lines)) for index in range(len(context))}
    top = have.get((), set())
    out = []
    for context, line in _walk("\n".join(lines)):
        if context + (line,) in headers:
            continue  # a mode line: its children say whether it is there
        facts = have.get(context, set())
        if not context and _WD_GLOBAL.match(line):
            # Its default is unverified: present unless the switch says the other word.
            found = "priority-flow-control watch-dog-interval %s" % ("off" if line.endswith(" on") else "on") not in top
        else:
            found = all(fact in facts for fact in _facts(line))
        if not found:
            out.append(" > ".join(context + (line,)))
    return out


# ---------------------------------------------------------------------------
# target_config: the device's whole configuration with the collection's parts replaced
# ---------------------------------------------------------------------------


def _blocks(text: str) -> list[list[str]]:
    """The text as top-level blocks: each a header line (unindented) and its indented lines, raw
    (line ends kept); comment, blank and other leading lines are blocks of their own."""
    blocks: list[list[str]] = []
    for raw in text.splitlines(keepends=True):
        body = raw.rstrip("\r\n")
        if blocks and body.startswith(" ") and body.strip() and not body.lstrip().startswith("!") and _header(blocks[-1]) is not None:
            blocks[-1].append(raw)
        else:
            blocks.append([raw])
    return blocks


def _header(block: list[str]) -> str | None:
    """The normalised header of a configuration block (None for a comment or blank line)."""
    head = block[0].rstrip("\r\n")
    if not head.strip() or head.startswith(" ") or head.lstrip().startswith("!"):
        return None
    return " ".join(head.split())


_OWN_BLOCK = re.compile(r"^(class-map type (?:qos|queuing|network-qos)(?: match-any| match-all)? |policy-map type (?:qos|queuing|network-qos) )(\S+)$")


def _own(header: str | None) -> bool:
    match = _OWN_BLOCK.match(header or "")
    return bool(match and match.group(2).startswith(OWN))


# The interface sub-lines the collection sets, by what they set (a rendered line replaces every line of its key).
def _intf_key(line: str) -> str | None:
    words = line.split()
    if not words:
        return None
    if words[0] in ("description", "mtu"):
        return words[0]
    if words[:2] == ["priority-flow-control", "mode"]:
        return "priority-flow-control mode"
    if words[:2] == ["priority-flow-control", "watch-dog-interval"]:
        return "priority-flow-control watch-dog-interval"
    if words[:3] == ["service-policy", "type", "qos"] and len(words) >= 4:
        return "service-policy type qos " + words[3]
    if words[:3] == ["service-policy", "type", "queuing"] and len(words) >= 4:
        return "service-policy type queuing " + words[3]
    return None


def _system_key(line: str) -> str | None:
    words = line.split()
    if words[:3] == ["service-policy", "type", "network-qos"]:
        return "network-qos"
    if words[:3] == ["service-policy", "type", "queuing"] and len(words) >= 4:
        return "queuing " + words[3]
    return None


def _merge(block: list[str], ours: list[str], key, newline: str, drop=None) -> list[str]:
    """A block with each of ``ours`` (its sub-lines, indented as rendered) replacing the existing sub-lines
    of the same key in place (the first; the others dropped), the rest appended; an existing sub-line for
    which ``drop(line)`` is true (set by us before, not now) removed."""
    wanted = {key(line.strip()): line for line in ours}
    out = [block[0]]
    placed: set = set()
    for raw in block[1:]:
        k = key(raw.strip())
        if k is not None and k in wanted:
            if k not in placed:
                out.append(wanted[k] + newline)
                placed.add(k)
            continue
        if drop is not None and drop(" ".join(raw.split())):
            continue
        out.append(raw)
    out += [wanted[k] + newline for k in wanted if k not in placed]
    return out


def _stale_queuing(ours: list[str]):
    """A predicate: an 'LF-' queuing output policy the rendered ``ours`` no longer applies."""
    applies = any(_intf_key(line.strip()) == "service-policy type queuing output" for line in ours)
    return lambda line: not applies and bool(re.fullmatch(r"service-policy type queuing output LF-\S+", line))


def _rendered_blocks(lines: list[str]) -> list[list[str]]:
    """The rendered lines as top-level blocks (lines without a line end)."""
    blocks: list[list[str]] = []
    for line in lines:
        if line.startswith(" ") and blocks:
            blocks[-1].append(line)
        elif line.startswith(" "):
            raise ValueError("nxos: %r: an indented line before any block header" % line)
        else:
            blocks.append([line])
    return blocks


def _end(block: list[str]) -> str:
    """A block's last line ending ('' when the text ends without one)."""
    last = block[-1]
    return last[len(last.rstrip("\r\n")):]


def target(before: str, lines: list[str]) -> str:
    """``before`` (the device's configuration text) with the collection's blocks replaced by ``lines``:
    every 'LF-' class-map and policy-map, the 'system qos' service policies, the PFC watchdog globals and,
    in each of the plan's interface blocks, the sub-lines the plan sets. Everything else is kept byte for byte."""
    if not isinstance(before, str) or not before.strip():
        raise ValueError("nxos: no configuration text to build the target from")
    _check_text(before)
    rendered = _rendered_blocks(lines)
    newline = "\r\n" if "\r\n" in before else "\n"
    own_blocks, system, watchdog, interfaces = [], None, [], {}
    for block in rendered:
        head = " ".join(block[0].split())
        if _own(head):
            own_blocks.append(block)
        elif head == "system qos":
            system = block
        elif len(block) == 1 and _is_watchdog_global(head):
            watchdog.append(head)
        elif head.startswith("interface "):
            interfaces[head] = block
        else:
            raise ValueError("nxos: %r is not a block this driver renders" % block[0])
    blocks = _blocks(before)
    if blocks and not _end(blocks[-1]):
        blocks[-1][-1] += newline  # the last line gets a line end: every block here ends with one
    heads = [_header(block) for block in blocks]
    has_system = "system qos" in heads
    has_watchdog = any(head is not None and _is_watchdog_global(head) and len(block) == 1 for head, block in zip(heads, blocks))
    out: list[str] = []
    done = {"own": False, "system": system is None, "watchdog": False}
    seen: set[str] = set()

    def emit_own() -> None:
        if not done["own"]:
            out.extend(line + newline for block in own_blocks for line in block)
            done["own"] = True

    def emit_new_globals() -> None:
        """Before the first interface (NX-OS prints the QoS objects, then the interfaces): what the
        device does not have a place for yet."""
        emit_own()
        if not has_system and not done["system"]:
            out.extend(line + newline for line in system)
            done["system"] = True
        if not has_watchdog and not done["watchdog"]:
            out.extend(line + newline for line in watchdog)
            done["watchdog"] = True

    for head, block in zip(heads, blocks):
        if _own(head):
            emit_own()  # every 'LF-' class-map and policy-map is replaced by the rendered ones, at the first one's place
        elif head is not None and _is_watchdog_global(head) and len(block) == 1:
            if not done["watchdog"]:
                out.extend(line + newline for line in watchdog)
                done["watchdog"] = True
        elif head == "system qos":
            emit_own()  # the policies before the block that applies them
            if system is not None and not done["system"]:
                out.extend(_merge(block, system[1:], _system_key, newline,
                                  drop=lambda line: bool(re.fullmatch(r"service-policy type (?:network-qos|queuing output) LF-\S+", line))))
                done["system"] = True
            else:
                out.extend(block)
        elif head is not None and head.startswith("interface "):
            emit_new_globals()
            if head in interfaces:
                out.extend(_merge(block, interfaces[head][1:], _intf_key, newline, drop=_stale_queuing(interfaces[head][1:])))
                seen.add(head)
            else:
                out.extend(block)
        else:
            out.extend(block)
    emit_new_globals()
    for head, block in interfaces.items():
        if head not in seen:
            out.extend(line + newline for line in block)
    return "".join(out)
