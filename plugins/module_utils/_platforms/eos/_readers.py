# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""Arista EOS readers: the running configuration (parse: the gathered shape; missing_lines: the rendered
lines it does not carry), and the counter and link show outputs, as '| json' documents or the text
tables EOS prints without it. Pure: no device; the driver (_driver.py) runs the commands. Every form
with its source: docs/vendor-eos.md.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ansible_collections.lossless.fabric.plugins.module_utils._common import _snapshot
from ansible_collections.lossless.fabric.plugins.module_utils._platforms import _base, _indent
from ansible_collections.lossless.fabric.plugins.module_utils._platforms.eos import _vendor as _vendor_eos

# Thresholds are rendered in 'bytes' only: whether EOS's 'kbytes'/'mbytes' mean 1000 or
# 1024 is unverified (no Arista page found that says), so reading them back gives no byte
# count (None, not judged) and keeps the number and unit as the device has them. A
# 'segments' count needs the ASIC's cell size (unverified per platform): the same.
_UNIT_BYTES = {"bytes": 1}
_ECN_UNITS = ("segments", "bytes", "kbytes", "mbytes", "microseconds", "milliseconds")  # _vendor_eos.ECN_UNITS
_WATCHDOG_ACTIONS = _vendor_eos.WATCHDOG_ACTIONS  # intent vocabulary -> EOS keyword
_QOS_MAP = re.compile(r"^qos map dscp ((?:\d+ )+)to traffic-class (\d+)(.*)$")
_WATCHDOG_TIMER = re.compile(r"^(priority-flow-control pause watchdog default (?:timeout|recovery-time|polling-interval)) (\d+(?:\.\d*)?)$")
_ECN = re.compile(r"^random-detect ecn minimum-threshold (\d+) (\S+) maximum-threshold (\d+) (\S+)(?: max-mark-probability (\d+))?(?: weight (\d+))?$")


def _walk(text: str):
    """(context, line) for each configuration line of EOS-indented text; the
    context is the tuple of enclosing mode lines. Comments, '!' separators and 'end' skipped."""
    return _indent.walk(text, skip=("end",))


def _ecn_bytes(match: re.Match) -> tuple[int | None, int | None]:
    low_unit, high_unit = _UNIT_BYTES.get(match.group(2)), _UNIT_BYTES.get(match.group(4))
    low = int(match.group(1)) * low_unit if low_unit else None
    high = int(match.group(3)) * high_unit if high_unit else None
    return low, high


def _facts(line: str) -> list[str]:
    """A line in a form where equal meaning is equal text: one DSCP per map,
    watchdog timers in ms, ECN thresholds in bytes."""
    match = _QOS_MAP.match(line)
    if match:
        return ["qos map dscp %s to traffic-class %s%s" % (dscp, match.group(2), match.group(3)) for dscp in match.group(1).split()]
    match = _WATCHDOG_TIMER.match(line)
    if match:
        return ["%s %dms" % (match.group(1), round(float(match.group(2)) * 1000))]
    match = _ECN.match(line)
    if match:
        low, high = _ecn_bytes(match)
        if low is None or high is None:
            return [line]
        fact = "random-detect ecn minimum-threshold %d maximum-threshold %d" % (low, high)
        if match.group(5):
            fact += " max-mark-probability %s" % match.group(5)
        if match.group(6):
            fact += " weight %s" % match.group(6)
        return [fact]
    return [line]


def _config_facts(running: str) -> dict[tuple, set]:
    facts: dict[tuple, set] = {}
    for context, line in _walk(running):
        facts.setdefault(context, set()).update(_facts(line))
    return facts


def _new_interface() -> dict[str, Any]:
    return {
        "description": None,
        "mtu": None,
        "trust": None,
        "service_profile": None,
        "pfc_enabled": False,
        "pfc_priorities": [],
        "ecn": {},
        "strict_queues": [],
        "bandwidth_percent": {},
        "watchdog": False,
    }


# Top-level words a running config of EOS starts its lines with (AVD's eos templates
# render each of these); text with none of them is not an EOS configuration.
_EOS_TOP = re.compile(
    r"^(interface|hostname|qos|priority-flow-control|platform|hardware|username|aaa|vrf|vlan|spanning-tree|ip|ipv6|"
    r"router|management|service|transceiver|daemon|ntp|logging|snmp-server|banner|no|end|lldp|mac|clock|boot|dns|policy-map|class-map)\b"
)
# Forms of other platforms (Junos set/braces, NVUE, JSON): refused by name.
# Judged on unindented lines only: EOS blocks (RCF code units, banners) may hold braces.
_FOREIGN = re.compile(r"^(set |nv |delete |\{|\[)|^\S[^!]*\{\s*$|^}\s*$")


def _check_eos_text(running: Any) -> None:
    if not isinstance(running, str) or not running.strip():
        raise ValueError("eos: no configuration text (expected the output of 'show running-config')")
    lines = []
    in_banner = False
    for line in running.replace("\r", "").split("\n"):
        # A banner's text (between 'banner login|motd' and 'EOF') may hold anything: not judged.
        if in_banner:
            in_banner = line.strip() != "EOF"
            continue
        if re.match(r"^banner (login|motd)\s*$", line):
            in_banner = True
        if line.strip() and not line.lstrip().startswith("!"):
            lines.append(line)
    foreign = next((line for line in lines if not line.startswith(" ") and _FOREIGN.search(line)), None)
    if foreign is not None:
        raise ValueError("eos: %r is not EOS configuration text (expected the output of 'show running-config', "
                         "indented 3 spaces a level; not Junos, NVUE or JSON)" % foreign.strip()[:80])
    top = [line for line in lines if not line.startswith(" ")]
    if not any(_EOS_TOP.match(line) for line in top):
        raise ValueError("eos: no EOS configuration line found (expected the output of 'show running-config'; first line: %r)" % lines[0][:80])


def _parse_interface_line(intf: dict, line: str) -> None:
    """One interface- or qos-profile-level line (AVD ethernet-interfaces.j2 / qos-profiles.j2 forms);
    intf["_set"] records which fields the block sets itself (they win over its service-profile)."""
    words = line.split()
    field = None
    if words[0] == "description":
        intf["description"], field = line[len("description ") :], "description"
    elif words[0] == "mtu" and len(words) == 2 and words[1].isdigit():
        intf["mtu"], field = int(words[1]), "mtu"
    elif words[:2] == ["qos", "trust"] and len(words) == 3:
        intf["trust"], field = words[2], "trust"
    elif line == "no qos trust":
        intf["trust"], field = "disabled", "trust"
    elif words[0] == "service-profile" and len(words) == 2:
        intf["service_profile"] = words[1]
    elif line in ("priority-flow-control on", "priority-flow-control mode on"):
        intf["pfc_enabled"], field = True, "pfc_enabled"
    elif line == "no priority-flow-control":
        intf["pfc_enabled"], field = False, "pfc_enabled"
    elif len(words) == 4 and words[:2] == ["priority-flow-control", "priority"] and words[3] == "no-drop" and words[2].isdigit():
        intf["pfc_priorities"] = sorted(set(intf["pfc_priorities"]) | {int(words[2])})
    elif line == "priority-flow-control pause watchdog":
        intf["watchdog"] = True
    if field:
        intf["_set"].add(field)


def _parse_queue_line(intf: dict, queue: int, line: str) -> None:
    words = line.split()
    if line == "priority strict":
        intf["strict_queues"] = sorted(set(intf["strict_queues"]) | {queue})
    elif words[:2] == ["bandwidth", "percent"] and len(words) == 3 and words[2].isdigit():
        intf["bandwidth_percent"][str(queue)] = int(words[2])
    else:
        match = _ECN.match(line)
        if match:
            low, high = _ecn_bytes(match)
            intf["ecn"][str(queue)] = {
                "min_threshold_bytes": low,
                "max_threshold_bytes": high,
                "max_probability_percent": int(match.group(5)) if match.group(5) else None,
                # as the device has them: bytes are known only for the 'bytes' unit (see _UNIT_BYTES)
                "min_threshold": int(match.group(1)),
                "max_threshold": int(match.group(3)),
                "unit": match.group(2) if match.group(2) == match.group(4) else "%s/%s" % (match.group(2), match.group(4)),
            }


def _inherit(intf: dict, profile: dict) -> None:
    """An interface takes its service-profile's settings where it sets none itself; queue
    settings merge per queue and per setting, the interface's own lines win. (How EOS merges
    an interface's queue block with its profile's is unverified: this reads both.)"""
    for key in ("mtu", "trust"):
        if key not in intf["_set"] and profile[key] is not None:
            intf[key] = profile[key]
    if "pfc_enabled" not in intf["_set"]:
        intf["pfc_enabled"] = profile["pfc_enabled"]
    intf["pfc_priorities"] = sorted(set(intf["pfc_priorities"]) | set(profile["pfc_priorities"]))
    intf["watchdog"] = intf["watchdog"] or profile["watchdog"]
    for key in ("ecn", "bandwidth_percent"):
        intf[key] = {**profile[key], **intf[key]}
    intf["strict_queues"] = sorted(set(intf["strict_queues"]) | set(profile["strict_queues"]))


# -- counters as text tables (output captured without '| json') ----------------
# Sources (docs/vendor-eos.md, "Counters as text"): the Jericho layout of
# 'show interfaces counters queue detail' is real output (networktocode/ntc-templates
# tests/arista_eos/show_interfaces_counters_queue_detail_grep_egress/*.raw.raw); the other
# layouts are known only from the header lines and row patterns public parsers of real
# switches key on (the 'linkmon' switch exporter's SwitchSurvey.parse_arista; AMD
# node-scraper scale_out_arista_collector.py for the Strata queue table). Column headers are
# matched as words, columns split on runs of spaces. Anything else is refused, naming the form.
_TEXT_PORT = re.compile(r"(?:Et|Ethernet)(\d+(?:/\d+){0,2})")
_TEXT_RULER = re.compile(r"[-=\s]*")
_TEXT_COUNT = re.compile(r"\d[\d,]*")
_TEXT_FORMS = {
    "show priority-flow-control counters detail": "the table under the header 'Port RxPfc TxPfc' (per-port totals)",
    "show interfaces counters discards": "the table under the header 'Port InDiscards OutDiscards'",
    "show interfaces counters queue detail": (
        "the table under 'Port Traffic Class DropPrec DestType OutEnqPkts OutEnqOctets OutDropPkts OutDropOctets' (Jericho) "
        "or 'Port TxQ Counter/pkts Counter/bytes Drop/pkts Drop/bytes' (Trident/Tomahawk)"
    ),
    "show qos interfaces ecn counters queue": "per interface a line 'EthernetN' followed by rows '<queue> <ECN-marked packets>'",
}


def _text_port(name: str) -> str | None:
    """'Et3/1/1' or 'Ethernet3/1/1' -> 'Ethernet3/1/1' (EOS abbreviates names in tables)."""
    match = _TEXT_PORT.fullmatch(name)
    return "Ethernet" + match.group(1) if match else None


def _text_int(value: str) -> int:
    return int(value.replace(",", ""))


def _text_refuse(command: str, line: str | None, output: str) -> ValueError:
    where = ("line %r" % line.strip()[:120]) if line is not None else ("got: %s" % ((output or "").strip()[:120] or "(no output)"))
    return ValueError(
        "eos: %r: not a form this parser reads (%s); expected the JSON document of '%s | json' or %s"
        % (command, where, command, _TEXT_FORMS.get(command, "its '| json' form (no text form of this command is sourced)"))
    )


def _text_lines(output: str) -> list[str]:
    return [line.rstrip() for line in (output or "").replace("\r", "").split("\n")]


def _words(line: str) -> list[str]:
    return line.split()


def _text_two_columns(command: str, output: str, header: list[str], keys: tuple[str, str]) -> dict[str, dict]:
    """A 'Port A B' table: one row per port, two counts."""
    ports: dict[str, dict] = {}
    seen_header = False
    for line in _text_lines(output):
        if _TEXT_RULER.fullmatch(line):
            continue
        words = _words(line)
        if words == header and not seen_header:
            seen_header = True
            continue
        port = _text_port(words[0]) if seen_header and len(words) == 3 else None
        if port and all(_TEXT_COUNT.fullmatch(word) for word in words[1:]):
            ports[port] = {keys[0]: _text_int(words[1]), keys[1]: _text_int(words[2])}
            continue
        # A closing 'Totals' row is skipped (its presence and layout: unverified).
        if seen_header and words[0] == "Totals" and all(_TEXT_COUNT.fullmatch(word) for word in words[1:]):
            continue
        raise _text_refuse(command, line, output)
    if not seen_header:
        raise _text_refuse(command, None, output)
    return ports


def _text_queue_detail(command: str, output: str) -> dict[str, dict]:
    """Both layouts of 'show interfaces counters queue detail'; drops and transmitted (enqueued) packets and bytes
    per traffic class / unicast queue."""
    jericho = ["Port", "Traffic", "DropPrec", "DestType", "OutEnqPkts", "OutEnqOctets", "OutDropPkts", "OutDropOctets"]
    strata = ["Port", "TxQ", "Counter/pkts", "Counter/bytes", "Drop/pkts", "Drop/bytes"]
    drops: dict[str, dict[str, int]] = {}
    sent: dict[str, dict[str, dict[str, int]]] = {}  # port -> queue_tx_packets / queue_tx_bytes -> queue -> n

    def add(port: str, key: str, queue: str, value: int) -> None:
        queues = sent.setdefault(port, {}).setdefault(key, {})
        queues[queue] = queues.get(queue, 0) + value

    layout = None
    for line in _text_lines(output):
        if _TEXT_RULER.fullmatch(line):
            continue
        words = _words(line)
        if line.strip() == "Egress Queue Counters":  # the Jericho table's title (ntc-templates sample)
            continue
        if words == jericho:
            layout = "jericho"
            continue
        if layout == "jericho" and words == ["Class"]:  # the header's second line
            continue
        if words == strata:
            layout = "strata"
            continue
        port = _text_port(words[0]) if words else None
        if port and layout == "jericho" and len(words) == 8:
            index = re.fullmatch(r"TC([0-7])", words[1])
            if index and re.fullmatch(r"DP[\d-]+", words[2]) and words[3] in ("UC", "MC") and all(_TEXT_COUNT.fullmatch(w) for w in words[4:]):
                queues = drops.setdefault(port, {})
                queues[index.group(1)] = queues.get(index.group(1), 0) + _text_int(words[6])  # UC + MC, as the JSON path sums
                add(port, "queue_tx_packets", index.group(1), _text_int(words[4]))  # OutEnqPkts
                add(port, "queue_tx_bytes", index.group(1), _text_int(words[5]))  # OutEnqOctets
                continue
        if port and layout == "strata" and len(words) == 6:
            queue = re.fullmatch(r"(UC|MC)(\d+)", words[1])
            if queue and all(_TEXT_COUNT.fullmatch(w) for w in words[2:]):
                # Only unicast queues are read: which traffic class an MC queue carries is unverified.
                if queue.group(1) == "UC" and int(queue.group(2)) < 8:
                    drops.setdefault(port, {})[str(int(queue.group(2)))] = _text_int(words[4])
                    add(port, "queue_tx_packets", str(int(queue.group(2))), _text_int(words[2]))  # Counter/pkts
                    add(port, "queue_tx_bytes", str(int(queue.group(2))), _text_int(words[3]))  # Counter/bytes
                continue
        raise _text_refuse(command, line, output)
    if layout is None:
        raise _text_refuse(command, None, output)
    found: dict[str, dict] = {port: {"queue_drops": queues} for port, queues in drops.items()}
    for port, counters in sent.items():
        found.setdefault(port, {}).update(counters)
    return found


def _text_ecn(command: str, output: str) -> dict[str, dict]:
    """'show qos interfaces ecn counters queue': an interface line, then '<queue> <count>' rows
    ('-': not counting, left out as in the JSON). The words of any header line: unverified."""
    ports: dict[str, dict] = {}
    current = None
    for line in _text_lines(output):
        if _TEXT_RULER.fullmatch(line):
            continue
        words = _words(line)
        port = _text_port(words[0]) if len(words) == 1 else None
        if port:
            current = ports.setdefault(port, {})
            continue
        if current is not None and len(words) == 2 and re.fullmatch(r"[0-7]", words[0]) and (_TEXT_COUNT.fullmatch(words[1]) or words[1] == "-"):
            if words[1] != "-":
                current[words[0]] = _text_int(words[1])
            continue
        if not re.search(r"\d", line):  # a column header line (its words unverified)
            continue
        raise _text_refuse(command, line, output)
    if not ports:
        raise _text_refuse(command, None, output)
    return {port: {"ecn_marked": queues, "ecn_marked_total": sum(queues.values())} for port, queues in ports.items() if queues}


# The top-level map each counters command's JSON holds (ANTA; TAAC for the watchdog,
# which prints {"interfaces": {}} before any event).
_JSON_TOP_KEY = {
    "show priority-flow-control counters detail | json": "interfaceCounters",
    "show priority-flow-control counters watchdog | json": "interfaces",
    "show qos interfaces ecn counters queue | json": "intfQueueCounters",
    "show interfaces counters queue detail | json": "egressQueueCounters",
    "show interfaces counters queue drops | json": "interfaces",
    "show interfaces counters discards | json": "interfaces",
}


def parse_counter_text(command: str, output: str) -> dict[str, dict]:
    """{port: counters} from the text table one counters command prints without '| json'.
    ValueError naming eos, the command and the forms expected for anything else."""
    plain = command[: -len(" | json")] if command.endswith(" | json") else command
    if plain == "show priority-flow-control counters detail":
        # Only the per-port totals table is sourced; a per-priority text layout is not.
        return _text_two_columns(plain, output, ["Port", "RxPfc", "TxPfc"], ("pfc_rx_frames_total", "pfc_tx_frames_total"))
    if plain == "show interfaces counters discards":
        return _text_two_columns(plain, output, ["Port", "InDiscards", "OutDiscards"], ("in_discards", "out_discards"))
    if plain == "show interfaces counters queue detail":
        return _text_queue_detail(plain, output)
    if plain == "show qos interfaces ecn counters queue":
        return _text_ecn(plain, output)
    raise _text_refuse(plain, None, output)


def parse(running: str) -> dict:
    """The lossless-QoS part of an EOS running config: per-interface lines, 'tx-queue' and
    'uc-tx-queue' blocks, and 'qos profile' blocks applied with 'service-profile'.
    ValueError (naming eos and the form expected) for text that is not an EOS config."""
    _check_eos_text(running)
    result: dict[str, Any] = {
        "dscp_map": {},
        "watchdog": {"enabled": False, "detection_time_ms": None, "restoration_time_ms": None, "action": None},
        "interfaces": {},
    }
    explicit: dict[str, int] = {}
    profiles: dict[str, dict] = {}
    actions = {eos: intent for intent, eos in _WATCHDOG_ACTIONS.items()}

    def fresh() -> dict:
        item = _new_interface()
        item["_set"] = set()
        return item

    for context, line in _walk(running):
        if not context:
            match = _QOS_MAP.match(line)
            if match:
                for dscp in match.group(1).split():
                    explicit[dscp] = int(match.group(2))
                continue
            match = _WATCHDOG_TIMER.match(line)
            if match:
                key = "detection_time_ms" if match.group(1).endswith("timeout") else "restoration_time_ms"
                if not match.group(1).endswith("polling-interval"):
                    result["watchdog"][key] = round(float(match.group(2)) * 1000)
                continue
            if line.startswith("priority-flow-control pause watchdog action "):
                word = line.rsplit(" ", 1)[1]
                result["watchdog"]["action"] = actions.get(word, word)
            elif line.startswith("interface ") and line != "interface defaults":
                result["interfaces"].setdefault(line[len("interface ") :], fresh())
            elif line.startswith("qos profile "):
                profiles.setdefault(line[len("qos profile ") :], fresh())
            continue
        if context[0].startswith("qos profile "):
            target = profiles.setdefault(context[0][len("qos profile ") :], fresh())
        elif context[0].startswith("interface ") and context[0] != "interface defaults":
            target = result["interfaces"].setdefault(context[0][len("interface ") :], fresh())
        else:
            continue
        if len(context) == 1:
            _parse_interface_line(target, line)
        elif len(context) == 2 and re.fullmatch(r"(uc-)?tx-queue \d+", context[1]):
            _parse_queue_line(target, int(context[1].split()[1]), line)
    for intf in result["interfaces"].values():
        if intf["service_profile"] in profiles:
            _inherit(intf, profiles[intf["service_profile"]])
    for item in list(result["interfaces"].values()) + list(profiles.values()):
        item.pop("_set", None)
    # The plan's dscp_map names the non-default classes (everything else -> class 0):
    # the same shape here. Code points with no explicit map keep EOS's default class
    # (its default table is unverified): listed, never assumed.
    result["dscp_map"] = {key: explicit[key] for key in sorted(explicit, key=int) if explicit[key] != 0}
    result["dscp_unmapped"] = [dscp for dscp in range(64) if str(dscp) not in explicit]
    result["qos_profiles"] = profiles
    result["watchdog"]["enabled"] = any(intf["watchdog"] for intf in result["interfaces"].values())
    return result


def missing_lines(lines: list[str], running: str) -> list[str]:
    """The rendered lines (indented as render() gives them) that ``running``
    does not carry, each as 'context > ... > line'. Pure: readback_missing's logic."""
    have = _config_facts(running)
    defaults = have.get(("interface defaults",), set())
    headers = {context[: index + 1] for context, _line in _walk("\n".join(lines)) for index in range(len(context))}
    missing = []
    for context, line in _walk("\n".join(lines)):
        if context + (line,) in headers:
            continue  # a mode line: its children say whether it is there
        facts = have.get(context, set())
        if line == "priority strict":
            found = "no priority" not in facts  # strict is the EOS default for a tx-queue
        elif line.startswith("no ") and line != "no priority":
            found = line[3:] not in facts
        elif line.startswith("mtu ") and not any(fact.startswith("mtu ") for fact in facts):
            found = line in defaults  # interface defaults / mtu N
        else:
            found = all(fact in facts for fact in _facts(line))
        if not found:
            missing.append(" > ".join(context + (line,)))
    return missing


def _rejection(output: str) -> str | None:
    """EOS marks every error with a leading '%' (% Invalid input, % Incomplete
    command, % Ambiguous command, % Error ...); '!' lines are warnings."""
    said = [line.strip() for line in output.split("\n") if line.strip().startswith("%")]
    return "\n".join(said) if said else None


# -- counters (read-only; module_utils/_switches/_counters.py) ------------------
# Every command lists all interfaces, so one chunk reads the whole switch.
# JSON keys: ANTA (anta/tests/interfaces.py and its unit tests); the watchdog's
# 'interfaces' -> 'txQueues' -> {stuckCount, recoveryCount}, and an interface absent
# until its first event: a public Arista health check (Meta's TAAC PfcWdHealthCheck,
# docs/vendor-eos.md). Still guessed (simulator too): the per-priority 'priorities'
# map of '... counters detail' (without it only the totals are known).
# The text tables these commands print without '| json': parse_counter_text.
COUNTER_COMMANDS = (
    "show priority-flow-control counters detail | json",
    "show priority-flow-control counters watchdog | json",
    "show qos interfaces ecn counters queue | json",
    "show interfaces counters queue detail | json",
    "show interfaces counters queue drops | json",
    "show interfaces counters discards | json",
)


def _counter_output(outputs: dict[str, str], command: str) -> str | None:
    """What was printed for one counters command: under the command itself, or, for
    output captured by hand, under the command without '| json' (and, for PFC, the
    plain 'show priority-flow-control counters' whose text table is the sourced one)."""
    plain = command[: -len(" | json")] if command.endswith(" | json") else command
    keys = [command, plain]
    if plain == "show priority-flow-control counters detail":
        keys += ["show priority-flow-control counters | json", "show priority-flow-control counters"]
    for key in keys:
        if key in outputs:
            return outputs[key]
    return None


def parse_counters(outputs: dict[str, str]) -> tuple[dict[str, dict], dict[str, str]]:
    """({port: counters} in the _snapshot shape, {command: what EOS said} for rejected commands).

    Each command's output may be its '| json' document (what the driver asks a switch
    for) or, for output a user captured, the text table EOS prints without '| json'
    (parse_counter_text: the forms docs/vendor-eos.md lists). Anything else is reported
    per command, naming eos and the forms expected; never an empty success."""
    ports: dict[str, dict] = {}
    errors: dict[str, str] = {}
    docs: dict[str, Any] = {}
    texts: list[dict[str, dict]] = []
    for command in COUNTER_COMMANDS:
        output = _counter_output(outputs, command)
        if output is None:
            continue
        said = _rejection(output)
        if said:
            errors[command] = said
            continue
        doc = _snapshot.json_document(output)
        if isinstance(doc, dict):
            key = _JSON_TOP_KEY[command]
            if not isinstance(doc.get(key), dict):
                # A JSON document of another command (or an error object): refused, not an empty success.
                errors[command] = "eos: the JSON document of %r has no %r map (keys: %s)" % (command, key, ", ".join(sorted(doc)[:8]) or "none")
                continue
            docs[command] = doc
            continue
        try:
            texts.append(parse_counter_text(command, output))
        except ValueError as exc:
            errors[command] = str(exc)

    def port(name: str) -> dict:
        return ports.setdefault(name, {})

    def dicts(value: Any):
        return value.items() if isinstance(value, dict) else []

    pfc, watchdog, ecn, queue, drops, discards = COUNTER_COMMANDS
    for name, entry in dicts(docs.get(pfc, {}).get("interfaceCounters")):
        prios = entry.get("priorities") if isinstance(entry, dict) else None
        if isinstance(prios, dict) and prios:
            for direction, key in (("rxFrames", "pfc_rx_frames"), ("txFrames", "pfc_tx_frames")):
                values = {_snapshot.index_key(p): _snapshot.count(v.get(direction)) for p, v in dicts(prios) if isinstance(v, dict)}
                port(name)[key] = {k: v for k, v in values.items() if k is not None and v is not None}
        elif isinstance(entry, dict):
            for direction, key in (("rxFrames", "pfc_rx_frames_total"), ("txFrames", "pfc_tx_frames_total")):
                if _snapshot.count(entry.get(direction)) is not None:
                    port(name)[key] = _snapshot.count(entry.get(direction))
    for name, entry in dicts(docs.get(ecn, {}).get("intfQueueCounters")):
        queues = {_snapshot.index_key(q): _snapshot.count(v) for q, v in dicts((entry or {}).get("queueCounters"))}
        queues = {q: v for q, v in queues.items() if q is not None and v is not None}  # '-': not counting
        if queues:
            port(name)["ecn_marked"] = queues
            port(name)["ecn_marked_total"] = sum(queues.values())
    for name, entry in dicts(docs.get(queue, {}).get("egressQueueCounters", {}).get("interfaces")):
        # per traffic class, UC + MC, every drop precedence summed: droppedPackets -> queue_drops (ANTA);
        # enqueuedPackets / enqueuedBytes -> queue_tx_packets / queue_tx_bytes (the egress leaf names are
        # unverified: Arista prints them in ingressVoqCounters and the text form's OutEnqPkts / OutEnqOctets
        # columns are the same counts; docs/vendor-eos.md "Per-queue transmit counters")
        sums: dict[str, dict[str, int]] = {"queue_drops": {}, "queue_tx_packets": {}, "queue_tx_bytes": {}}
        for kind in ("ucastQueues", "mcastQueues"):
            for tc, data in dicts((entry.get(kind) or {}).get("trafficClasses")):
                index = _snapshot.index_key(tc)
                if index is None or not isinstance(data, dict):
                    continue
                for key, leaf in (("queue_drops", "droppedPackets"), ("queue_tx_packets", "enqueuedPackets"), ("queue_tx_bytes", "enqueuedBytes")):
                    values = [_snapshot.count(dp.get(leaf)) for _dp, dp in dicts(data.get("dropPrecedences")) if isinstance(dp, dict)]
                    values = [n for n in values if n is not None]
                    if values:
                        sums[key][index] = sums[key].get(index, 0) + sum(values)
        for key, totals in sums.items():
            if totals:
                port(name)[key] = totals
    for name, entry in dicts(docs.get(drops, {}).get("interfaces")):
        voq: dict[str, int] = {}
        egress: dict[str, int] = {}
        for tc, data in dicts(entry.get("trafficClasses")):
            index = _snapshot.index_key(tc)
            if index is None or not isinstance(data, dict):
                continue
            for source, target in (("ingressVoqCounters", voq), ("egressQueueCounters", egress)):
                value = _snapshot.count(((data.get(source) or {}).get("countersSum") or {}).get("droppedPackets"))
                if value is not None:
                    target[index] = value
        if voq:
            port(name)["voq_drops"] = voq
        if egress and "queue_drops" not in ports.get(name, {}):
            port(name)["queue_drops"] = egress
    for name, entry in dicts(docs.get(discards, {}).get("interfaces")):
        for source, key in (("inDiscards", "in_discards"), ("outDiscards", "out_discards")):
            if isinstance(entry, dict) and _snapshot.count(entry.get(source)) is not None:
                port(name)[key] = _snapshot.count(entry.get(source))
    if watchdog in docs:
        # An interface is absent until its first watchdog event (reference 1.8): absent = 0.
        events = {name: entry for name, entry in dicts(docs[watchdog].get("interfaces")) if isinstance(entry, dict)}
        for name in set(ports) | set(events):
            storms = {str(q): 0 for q in range(8)}
            restores = {str(q): 0 for q in range(8)}
            entry = events.get(name, {})
            queues = entry.get("txQueues", entry.get("queues", {}))
            for q, data in dicts(queues):
                index = _snapshot.index_key(q)
                if index is None or not isinstance(data, dict):
                    continue
                storms[index] = _snapshot.count(data.get("stuckCount")) or 0
                restores[index] = _snapshot.count(data.get("recoveryCount")) or 0
            port(name)["watchdog_storms"] = storms
            port(name)["watchdog_restores"] = restores
    for parsed in texts:
        for name, counters in parsed.items():
            port(name).update(counters)
    return ports, errors


# -- links (read-only; module_utils/_switches/_links.py) -----------------
# Both commands list every interface, so one chunk reads the whole switch.
# 'show lldp neighbors detail | json': lldpNeighbors -> <port> -> lldpNeighborInfo[] with systemName,
# chassisId, neighborInterfaceInfo {interfaceIdType, interfaceId (quoted for names), interfaceId_v2
# (newer EOS, unquoted), interfaceDescription} (ANTA VerifyLLDPNeighbors unit data; napalm eos
# get_lldp_neighbors_detail fixtures). 'show interfaces status | json': interfaceStatuses -> <port> ->
# {linkStatus, lineProtocolStatus, bandwidth (bit/s)}. docs/vendor-eos.md, "LLDP and link state".
LINK_COMMANDS = ("show lldp neighbors detail | json", "show interfaces status | json")


def parse_links(outputs: dict[str, str]) -> dict:
    """ends from the two commands' '| json' documents, or their text forms (output captured by hand)."""
    lldp_cmd, status_cmd = LINK_COMMANDS
    ends: dict[str, dict] = {}
    for command, parse_json, parse_text in ((status_cmd, _status_json, _status_text), (lldp_cmd, _lldp_json, _lldp_text)):
        plain = command[: -len(" | json")]
        key = command if command in outputs else plain if plain in outputs else None
        if key is None:
            raise _base.LinkFormError("eos", command, "its output (the command was not run)")
        output = outputs[key]
        said = _rejection(output or "")
        if said:
            raise _base.LinkFormError("eos", command, "a show result, not an error", said)
        doc = _snapshot.json_document(output)
        if isinstance(doc, dict):
            parse_json(command, doc, ends)
        else:
            parse_text(key, output, ends)
    return ends


# ---------------------------------------------------------------------------
# links parsers (module level: pure)
# ---------------------------------------------------------------------------
# EOS interfaceIdType words -> contract subtypes. 'interfaceName' and 'macAddress': ANTA and napalm fixtures;
# 'local' (locally assigned) and the others: the LLDP-MIB names, their EOS JSON spelling unverified.
_EOS_ID_TYPES = {
    "interfaceName": "ifname",
    "macAddress": "mac",
    "local": "local",
    "locallyAssigned": "local",
    "interfaceAlias": "ifalias",
    "portComponent": "port_component",
    "networkAddress": "network_address",
    "agentCircuitId": "agent_circuit_id",
}
# linkStatus words (Arista 'show interfaces status' JSON/text, ntc-templates fixture): connected = up.
_EOS_DOWN = ("notconnect", "errdisabled", "disabled", "inactive", "notPresent", "down", "sfp-mismatch", "monitoring")


def _eos_oper(word: Any) -> str | None:
    if word == "connected":
        return "up"
    return "down" if isinstance(word, str) and word in _EOS_DOWN else None


def _status_json(command: str, doc: dict, ends: dict) -> None:
    statuses = doc.get("interfaceStatuses")
    if not isinstance(statuses, dict):
        raise _base.LinkFormError("eos", command, "a JSON document with an 'interfaceStatuses' map", json.dumps(doc)[:160])
    for name, entry in statuses.items():
        if not isinstance(entry, dict):
            raise _base.LinkFormError("eos", command, "interfaceStatuses.<port> objects", json.dumps(statuses)[:160])
        oper = _eos_oper(entry.get("linkStatus"))
        # bandwidth is the configured speed too when the link is down (Arista's notconnect sample): only an up link says its speed.
        ends[name] = _base.end(oper, _base.speed_g(entry.get("bandwidth")) if oper == "up" else None)


# The column layouts EOS prints for 'show interfaces status' (ntc-templates tests/arista_eos/show_interfaces_status/):
# the 7 columns of older releases (arista_eos_show_interfaces_status.raw), 'Flags' added
# (..._status_flags.raw) and 'Flags Encapsulation' added (..._status_encap.raw, a 4.3x capture).
_STATUS_LAYOUTS = (
    ("Port", "Name", "Status", "Vlan", "Duplex", "Speed", "Type"),
    ("Port", "Name", "Status", "Vlan", "Duplex", "Speed", "Type", "Flags"),
    ("Port", "Name", "Status", "Vlan", "Duplex", "Speed", "Type", "Flags", "Encapsulation"),
)
# A row: the port, the Name (free text, may be empty or hold spaces), then Status, Vlan ('in Po49' for a member
# of a port-channel), Duplex and Speed, then Type and the optional Flags / Encapsulation. Status, Duplex and
# Speed are read against the words the captures and Arista's manual show, so a Name holding one of the status
# words cannot shift the columns: the Name is everything before the last status word that is followed by a
# Vlan, a Duplex and a Speed. Rows in the captures are not always aligned under the header (the 'flags' capture
# has single-spaced rows), so the columns are read as words, not cut at the header's positions.
_STATUS_WORDS = "connected|notconnect|disabled|errdisabled|inactive|monitoring|sfp-mismatch|notPresent"
_STATUS_ROW = re.compile(
    r"^(?P<port>\S+)(?:\s+(?P<name>.*\S))?\s+(?P<status>%s)\s+(?P<vlan>in\s+\S+|\S+)\s+"
    r"(?P<duplex>(?:a-)?(?:full|half)|auto|unconf)\s+(?P<speed>(?:a-)?\d+(?:\.\d+)?[MG]|auto|unconf)(?:\s+(?P<rest>.*))?$" % _STATUS_WORDS
)


def _status_text(command: str, output: str, ends: dict) -> None:
    """The 'Port Name Status Vlan Duplex Speed Type [Flags [Encapsulation]]' table, every layout in
    _STATUS_LAYOUTS. Rows of other interfaces than Ethernet (Ma1, Po49) are read and left out: a link end is
    an Ethernet port. A header of another layout, or a row that is not of the table's form, is refused."""
    lines = [line.rstrip() for line in (output or "").replace("\r", "").split("\n")]
    header = next((i for i, line in enumerate(lines) if line.split()[:1] == ["Port"] and "Status" in line.split()), None)
    if header is None or tuple(lines[header].split()) not in _STATUS_LAYOUTS:
        raise _base.LinkFormError(
            "eos", command, "its '| json' document or the table under one of the headers %s" % " / ".join(" ".join(h) for h in _STATUS_LAYOUTS),
            lines[header] if header is not None else output,
        )
    for line in lines[header + 1 :]:
        if not line.strip():
            continue
        row = _STATUS_ROW.match(line)
        if row is None:
            raise _base.LinkFormError("eos", command, "rows '<port> [<name>] <status> <vlan> <duplex> <speed> <type> [<flags> [<encapsulation>]]'", line)
        port = _text_port(row.group("port"))
        if port is None:
            continue
        oper = _eos_oper(row.group("status"))
        ends[port] = _base.end(oper, _base.speed_g(row.group("speed")) if oper == "up" else None)


def _port_id(value: Any) -> str | None:
    """EOS quotes interface-name port IDs ('"Ethernet1"'): the ID as sent is what is inside."""
    if value is None:
        return None
    text = str(value)
    return text[1:-1] if len(text) >= 2 and text[0] == text[-1] == '"' else text


def _lldp_json(command: str, doc: dict, ends: dict) -> None:
    table = doc.get("lldpNeighbors")
    if not isinstance(table, dict):
        # The plain 'show lldp neighbors | json' holds a list here: a different command, refused.
        raise _base.LinkFormError("eos", command, "a JSON document with an 'lldpNeighbors' map of ports (the detail form)", json.dumps(doc)[:160])
    for name, entry in table.items():
        infos = entry.get("lldpNeighborInfo") if isinstance(entry, dict) else None
        if not isinstance(infos, list):
            raise _base.LinkFormError("eos", command, "lldpNeighbors.<port>.lldpNeighborInfo lists", json.dumps(entry)[:160])
        here = ends.setdefault(name, _base.end())
        for info in infos:
            intf = info.get("neighborInterfaceInfo") if isinstance(info, dict) else None
            if not isinstance(intf, dict):
                raise _base.LinkFormError("eos", command, "lldpNeighborInfo[] objects with neighborInterfaceInfo", json.dumps(info)[:160])
            kind = intf.get("interfaceIdType")
            port = intf.get("interfaceId_v2") if intf.get("interfaceId_v2") is not None else _port_id(intf.get("interfaceId"))
            here["neighbors"].append(
                _base.neighbor(info.get("systemName"), port, _EOS_ID_TYPES.get(kind, kind), intf.get("interfaceDescription"), info.get("chassisId"))
            )


_LLDP_INTERFACE = re.compile(r"^Interface (\S+) detected (\d+) LLDP neighbors:$")
_LLDP_FIELD = re.compile(r"^\s*-?\s*(Chassis ID|Port ID type|Port ID|Port Description|System Name)\s*:\s*(.*)$")


def _lldp_text(command: str, output: str, ends: dict) -> None:
    """'Interface X detected N LLDP neighbors:' blocks (ntc-templates arista_eos_show_lldp_neighbors_detail.raw):
    per neighbour '- Port ID type: Interface name (5)', 'Port ID : "Ethernet1"', '- System Name: "..."'."""
    current = None
    last = None
    expected = 0
    seen = False
    for raw in (output or "").replace("\r", "").split("\n"):
        line = raw.rstrip()
        match = _LLDP_INTERFACE.match(line.strip())
        if match:
            if current is not None and len(current["neighbors"]) != expected:
                raise _base.LinkFormError("eos", command, "as many neighbour blocks as 'detected N' says", line)
            seen = True
            current = ends.setdefault(_text_port(match.group(1)) or match.group(1), _base.end())
            current["neighbors"] = []
            expected = int(match.group(2))
            last = None
            continue
        if current is None:
            if line.strip():
                break
            continue
        if re.match(r"^\s*Neighbor \S+, age ", line):
            last = _base.neighbor(None, None)
            current["neighbors"].append(last)
            continue
        field = _LLDP_FIELD.match(line)
        if field and last is not None:
            value = field.group(2).strip()
            unquoted = value[1:-1] if len(value) >= 2 and value[0] == value[-1] == '"' else value
            if field.group(1) == "Port ID type":
                number = re.search(r"\((\d+)\)\s*$", value)
                last["port_id_subtype"] = _base.PORT_ID_SUBTYPES.get(int(number.group(1))) if number else None
            else:
                key = {"Chassis ID": "chassis_id", "Port ID": "port", "Port Description": "port_descr", "System Name": "system"}[field.group(1)]
                if last[key] is None:  # the first only: the Link Aggregation TLV has a 'Port ID' of its own
                    last[key] = unquoted or None
    if not seen:
        raise _base.LinkFormError("eos", command, "its '| json' document or 'Interface <port> detected <n> LLDP neighbors:' blocks", output)
    if current is not None and len(current["neighbors"]) != expected:
        raise _base.LinkFormError("eos", command, "as many neighbour blocks as 'detected N' says", output[-160:])
