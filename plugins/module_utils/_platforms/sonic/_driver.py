# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""SONiC (sonic-net community image) switch driver.

The device is the admin login shell (bash, netmiko ``edgecore_sonic``, a plain LinuxSSH:
netmiko 4.8.0 has no ``sonic`` type and ``dell_sonic`` enters Dell's Klish CLI). The
configuration is CONFIG_DB, changed through the Generic Config Updater (GCU):

    systemctl list-timers ... 'lf-rollback-*.timer'     refuse another run's pending commit
    sudo config checkpoint <s>                          the state to roll back to
    sonic-cfggen -d --print-data                        CONFIG_DB, to build the patch against
    cat > /tmp/<s>.json-patch <<'LF_PATCH_EOF'          the JSON Patch (RFC 6902), one op per line
    sudo config apply-patch --dry-run <file>            validation and the device's own diff
    sudo systemd-run --unit=lf-rollback-<s> --on-active=<t> config rollback <s>   the confirm timer
    sudo config apply-patch <file>                      commit
    sudo systemctl stop lf-rollback-<s>.timer           confirm (then config delete-checkpoint)
    sudo config rollback <s>                            cancel
    sudo config save -y                                 startup config
    show runningconfiguration all                       read-back (CONFIG_DB JSON)

SONiC has no commit-confirm of its own: the timer is a transient systemd timer on the
switch (systemd-run(1) --on-active) that runs ``config rollback`` unless it is stopped.

The rendered lines are JSON Patch operations, one per line, each adding one CONFIG_DB leaf
(``{"op": "add", "path": "/PORT/Ethernet0/mtu", "value": "9100"}``); load() groups the leaves
under a table or key the switch does not have yet into one add of that table or key (JSON
Patch needs the parent). Every command and form with its source: docs/vendor-sonic.md.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ansible_collections.lossless.fabric.plugins.module_utils._platforms import _base, _channel, _records
from ansible_collections.lossless.fabric.plugins.module_utils._platforms.sonic import _vendor as _vendor_sonic

PLATFORM = _records.SONIC

MAP = _vendor_sonic.MAP_NAME
_SESSION_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
_PORT_RE = re.compile(PLATFORM.interface_pattern, re.ASCII)
_NAME_RE = re.compile(_vendor_sonic.NAME_PATTERN, re.ASCII)
# A CONFIG_DB path segment we write: table names, keys (Ethernet0|3, Ethernet0|3-4) and field names.
_SEGMENT_RE = re.compile(r"[A-Za-z0-9_|.-]{1,64}", re.ASCII)
_HEREDOC_END = "LF_PATCH_EOF"
_UNIT_PREFIX = "lf-rollback-"
_TIMER_ROW = re.compile(r"\blf-rollback-([A-Za-z0-9._-]+)\.timer\b")
_LEFT = re.compile(r"(?:(\d+)h\s*)?(?:(\d+)min\s*)?(?:(\d+)s)?\s+left\b")
_ERROR = re.compile(r"^\s*(?:Error\b|Failed\b|-bash:|bash:|Usage:|Traceback|sudo:|Failed to)", re.MULTILINE)
_CHANGE = re.compile(r"^Patch Applier:\s+\* (.+)$", re.MULTILINE)
_ZERO_CHANGES = re.compile(r"patch was converted into 0 changes", re.IGNORECASE)
_APPLIED = "Patch applied successfully."

# plan trust -> what SONiC classifies by: a port trusts DSCP when PORT_QOS_MAP binds a dscp_to_tc_map.
TRUST = {"dscp": "dscp_to_tc_map"}


def _natural(name: str) -> list:
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


def _op(path: list[str], value: str) -> str:
    for segment in path:
        if not _SEGMENT_RE.fullmatch(segment):
            raise ValueError("sonic: %r is not a CONFIG_DB table, key or field name we write" % (segment,))
    return json.dumps({"op": "add", "path": "/" + "/".join(path), "value": str(value)}, ensure_ascii=True)


def _runs(numbers: list[int]) -> list[tuple[int, int]]:
    """Consecutive runs of priorities: [3, 4, 6] -> [(3, 4), (6, 6)] (BUFFER_PG pg_num is 'X' or 'X-Y')."""
    runs: list[list[int]] = []
    for number in sorted(set(numbers)):
        if runs and runs[-1][1] == number - 1:
            runs[-1][1] = number
        else:
            runs.append([number, number])
    return [(run[0], run[1]) for run in runs]


def _pg(run: tuple[int, int]) -> str:
    return "%d" % run[0] if run[0] == run[1] else "%d-%d" % run


def _ids(text: Any) -> list[int]:
    if not isinstance(text, str) or not text.strip():
        return []
    out = []
    for piece in text.split(","):
        piece = piece.strip()
        if not piece.isdigit():
            raise ValueError("sonic: %r is not a list of priorities" % text)
        out.append(int(piece))
    return sorted(set(out))


def _int(value: Any) -> int | None:
    try:
        return int(str(value).strip())
    except (TypeError, ValueError):
        return None


def _ref(value: Any) -> str | None:
    """A reference field: 'name', or '[TABLE|name]' (the form of releases before 202012, as the
    db_migrator fixtures in sonic-utilities tests/db_migrator_input show)."""
    if not isinstance(value, str) or not value.strip():
        return None
    return value.strip().strip("[]").rsplit("|", maxsplit=1)[-1]


def _leaves(lines: list[str]) -> list[tuple[list[str], str]]:
    """The rendered lines as (path segments, value); ValueError on a line that is not one of our ops."""
    out = []
    for line in lines:
        try:
            doc = json.loads(line)
        except ValueError:
            raise ValueError("sonic: %r is not a JSON Patch operation" % line[:120]) from None
        if not isinstance(doc, dict) or doc.get("op") != "add" or not isinstance(doc.get("path"), str) or not isinstance(doc.get("value"), str):
            raise ValueError("sonic: %r is not an add of one CONFIG_DB value" % line[:120])
        path = doc["path"].split("/")[1:]
        if len(path) != 3 or not all(_SEGMENT_RE.fullmatch(p) for p in path):
            raise ValueError("sonic: %r is not a /TABLE/key/field path" % doc["path"])
        out.append((path, doc["value"]))
    return out


def _config_db(running: str) -> dict:
    """The CONFIG_DB document of 'show runningconfiguration all' (single ASIC: the tables at the top,
    plus 'bgpraw'; multi-ASIC: {'localhost': {...}, 'asic0': ...}: the host namespace is read)."""
    if not isinstance(running, str) or not running.strip():
        raise ValueError("sonic: the input is empty; expected the CONFIG_DB JSON of 'show runningconfiguration all'")
    text = running.strip()
    start = text.find("{")
    try:
        doc = json.loads(text[start:]) if start >= 0 else None
    except ValueError as exc:
        raise ValueError("sonic: not the CONFIG_DB JSON of 'show runningconfiguration all' (%s)" % exc) from None
    if isinstance(doc, dict) and isinstance(doc.get("localhost"), dict) and "PORT" not in doc:
        doc = doc["localhost"]
    if not isinstance(doc, dict) or not isinstance(doc.get("PORT"), dict):
        raise ValueError("sonic: not the CONFIG_DB JSON of 'show runningconfiguration all' (no PORT table)")
    return doc


# The SSH channel closed or the device stopped answering (the shared channel's error).
_Lost = _channel.Lost


class Driver(_base.Driver):
    """SONiC over SSH (bash), CONFIG_DB through the Generic Config Updater."""

    platform = "sonic"
    device_type = "edgecore_sonic"

    command_timeout = 60.0
    # GCU validates the whole config against YANG on every apply-patch: tens of seconds on a real switch.
    apply_timeout = 300.0

    def __init__(self, conn: Any, device: str):
        super().__init__(conn, device)
        self._committed_with_timer = False
        self._dry_run: str | None = None
        self._patch_file: str | None = None

    # -- netmiko ---------------------------------------------------------
    @staticmethod
    def connection_class():
        from netmiko.edgecore.edgecore_sonic_ssh import EdgecoreSonicSSH  # pylint: disable=import-outside-toplevel

        return EdgecoreSonicSSH

    # -- pure ------------------------------------------------------------
    @staticmethod
    def render(plan: dict) -> list[str]:
        """One JSON Patch add per CONFIG_DB leaf, every value from the plan (docs/vendor-sonic.md)."""
        if plan["trust"] not in TRUST:
            raise ValueError("trust %r has no SONiC mapping (only %s)" % (plan["trust"], ", ".join(sorted(TRUST))))
        ports = plan["ports"]
        if not ports:
            raise ValueError("the plan has no ports")
        v = _vendor_sonic
        classes = {int(tc): cls for tc, cls in plan["traffic_classes"].items()}
        default_tc = int(plan["default_traffic_class"])
        lines: list[str] = []
        full = plan.get("dscp_map_full") or {str(d): plan["dscp_map"].get(str(d), default_tc) for d in range(64)}
        for dscp in sorted(full, key=int):
            lines.append(_op(["DSCP_TO_TC_MAP", MAP, str(int(dscp))], str(int(full[dscp]))))
        for tc in range(8):
            queue = tc if tc in classes else default_tc
            lines.append(_op(["TC_TO_QUEUE_MAP", MAP, str(tc)], str(queue)))
        lossless = sorted({int(p) for port in ports.values() for p in port["pfc_priorities"]})
        for tc in range(8):
            lines.append(_op(["TC_TO_PRIORITY_GROUP_MAP", MAP, str(tc)], str(tc if tc in lossless else 0)))
        for prio in range(8):
            lines.append(_op(["MAP_PFC_PRIORITY_TO_QUEUE", MAP, str(prio)], str(prio)))
        schedulers: dict[int, str] = {}
        for tc in sorted(classes):
            cls = classes[tc]
            if cls["strict"]:
                name = "LF_STRICT"
                fields = [("type", "STRICT")]
            else:
                weight = int(cls["bandwidth_percent"])
                if not v.WEIGHT_RANGE[0] <= weight <= v.WEIGHT_RANGE[1]:
                    raise ValueError("traffic class %d: DWRR weight %d is outside SONiC's %d..%d" % ((tc, weight) + v.WEIGHT_RANGE))
                # type and weight are create-only (sonic-scheduler.yang): the name carries the weight.
                name = "LF_DWRR_%d" % weight
                fields = [("type", "DWRR"), ("weight", str(weight))]
            schedulers[tc] = name
            for field, value in fields:
                line = _op(["SCHEDULER", name, field], value)
                if line not in lines:
                    lines.append(line)
        ecn_queue = int(plan["ecn_queue"])
        wred: dict[str, str] = {}
        for name in sorted(ports, key=_natural):
            ecn = ports[name]["ecn"]
            key = (int(ecn["min_threshold_bytes"]), int(ecn["max_threshold_bytes"]), int(ecn["max_probability_percent"]))
            profile = "LF_ECN_%d_%d_%d" % key
            if not _NAME_RE.fullmatch(profile):
                raise ValueError("port %s: WRED profile name %r is longer than SONiC's 32 characters" % (name, profile))
            wred[name] = profile
            fields = [("ecn", v.ECN_MODE), ("wred_green_enable", "true"), ("green_min_threshold", str(key[0])),
                      ("green_max_threshold", str(key[1])), ("green_drop_probability", str(key[2]))]
            for field, value in fields:
                line = _op(["WRED_PROFILE", profile, field], value)
                if line not in lines:
                    lines.append(line)
        model = (plan.get("sonic") or {}).get("buffer_model", v.DEFAULT_BUFFER_MODEL)
        if model not in v.BUFFER_MODELS:
            raise ValueError("buffer_model %r is not one of %s" % (model, ", ".join(v.BUFFER_MODELS)))
        watchdog = plan["watchdog"]
        for name in sorted(ports, key=_natural):
            port = ports[name]
            if not _PORT_RE.fullmatch(name):
                raise ValueError("port %r is not a SONiC port name (%s)" % (name, PLATFORM.interface_example))
            description = port.get("description") or ""
            _base.check_cli_line("sonic render", description)
            lines.append(_op(["PORT", name, "mtu"], str(int(plan["mtu"]))))
            if description:
                lines.append(_op(["PORT", name, "description"], description))
            prios = sorted(int(p) for p in port["pfc_priorities"])
            for field in ("dscp_to_tc_map", "tc_to_queue_map", "tc_to_pg_map", "pfc_to_queue_map"):
                lines.append(_op(["PORT_QOS_MAP", name, field], MAP))
            lines.append(_op(["PORT_QOS_MAP", name, "pfc_enable"], ",".join(str(p) for p in prios)))
            for tc in sorted(classes):
                lines.append(_op(["QUEUE", "%s|%d" % (name, tc), "scheduler"], schedulers[tc]))
            lines.append(_op(["QUEUE", "%s|%d" % (name, ecn_queue), "wred_profile"], wred[name]))
            if watchdog["enabled"]:
                lines.append(_op(["PFC_WD", name, "action"], str(watchdog["action"])))
                lines.append(_op(["PFC_WD", name, "detection_time"], str(int(watchdog["detection_time_ms"]))))
                lines.append(_op(["PFC_WD", name, "restoration_time"], str(int(watchdog["restoration_time_ms"]))))
            lines.append(_op(["CABLE_LENGTH", v.CABLE_LENGTH_KEY, name], "%dm" % int(port["cable_length_m"])))
            room = port["headroom"]
            if model == "traditional" and prios:
                profile = "LF_PG_%d_%d_%d" % (int(room["size_bytes"]), int(room["xoff_bytes"]), int(room["xon_bytes"]))
                for field, value in (("pool", v.LOSSLESS_POOL), ("size", str(int(room["size_bytes"]))), ("xoff", str(int(room["xoff_bytes"]))),
                                     ("xon", str(int(room["xon_bytes"]))), ("dynamic_th", v.LOSSLESS_DYNAMIC_TH)):
                    line = _op(["BUFFER_PROFILE", profile, field], value)
                    if line not in lines:
                        lines.append(line)
            else:
                profile = "NULL"  # the dynamic model: the switch computes the headroom (dynamic buffer HLD)
            for run in _runs(prios):
                lines.append(_op(["BUFFER_PG", "%s|%s" % (name, _pg(run)), "profile"], profile))
        for line in lines:
            _base.check_cli_line("sonic render", line)
        return lines

    @staticmethod
    def running_of(lines: list[str]) -> str:
        """The CONFIG_DB JSON of a switch holding exactly the rendered leaves (and one PORT entry each)."""
        doc: dict[str, dict] = {}
        for (table, key, field), value in _leaves(lines):
            doc.setdefault(table, {}).setdefault(key, {})[field] = value
        doc.setdefault("PORT", {})
        return json.dumps(doc, indent=4, sort_keys=True)

    @staticmethod
    def missing_lines(lines: list[str], running: str) -> list[str]:
        """The rendered lines whose CONFIG_DB leaf ``running`` does not hold with that value."""
        doc = _config_db(running)
        missing = []
        for line, ((table, key, field), value) in zip(lines, _leaves(lines)):
            have = (doc.get(table) or {}).get(key) or {}
            if not isinstance(have, dict) or str(have.get(field)) != value:
                missing.append(line)
        return missing

    @staticmethod
    def parse(running: str) -> dict:
        """The gathered shape from CONFIG_DB JSON ('show runningconfiguration all', or a config_db.json)."""
        doc = _config_db(running)

        def table(name: str) -> dict:
            value = doc.get(name) or {}
            return value if isinstance(value, dict) else {}

        qos = table("PORT_QOS_MAP")
        queues = table("QUEUE")
        schedulers = table("SCHEDULER")
        wred = table("WRED_PROFILE")
        pfcwd = table("PFC_WD")
        ports = table("PORT")
        interfaces: dict[str, dict] = {}
        used_maps: list[str] = []
        names = set(qos) | {key.split("|")[0] for key in queues} | set(ports)
        for name in sorted((n for n in names if _PORT_RE.fullmatch(n)), key=_natural):
            port = ports.get(name) or {}
            pq = qos.get(name) or {}
            mine = {key.split("|", 1)[1]: value for key, value in queues.items() if key.split("|")[0] == name and isinstance(value, dict)}
            if not pq and not mine and name not in pfcwd and "mtu" not in port and "description" not in port:
                continue
            dscp_map = _ref(pq.get("dscp_to_tc_map") or (qos.get("global") or {}).get("dscp_to_tc_map"))
            if dscp_map and dscp_map not in used_maps:
                used_maps.append(dscp_map)
            prios = _ids(pq.get("pfc_enable"))
            ecn: dict[str, dict] = {}
            strict: list[int] = []
            bandwidth: dict[str, int] = {}
            for qindex, entry in sorted(mine.items(), key=lambda kv: _natural(kv[0])):
                indexes = [int(q) for q in re.findall(r"\d+", qindex)]
                span = range(indexes[0], indexes[-1] + 1) if indexes else range(0)
                sched = schedulers.get(_ref(entry.get("scheduler"))) or {}
                profile = wred.get(_ref(entry.get("wred_profile"))) or {}
                for q in span:
                    if sched.get("type") == "STRICT":
                        strict.append(q)
                    elif sched.get("type") in ("DWRR", "WRR") and _int(sched.get("weight")) is not None:
                        bandwidth[str(q)] = int(sched["weight"])
                    if profile.get("ecn") in _vendor_sonic.ECN_GREEN_MODES:
                        ecn[str(q)] = {
                            "min_threshold_bytes": _int(profile.get("green_min_threshold")),
                            "max_threshold_bytes": _int(profile.get("green_max_threshold")),
                            "max_probability_percent": _int(profile.get("green_drop_probability")),
                        }
            interfaces[name] = {
                "description": port.get("description"),
                "mtu": _int(port.get("mtu")),
                "trust": "dscp" if dscp_map else None,
                "pfc_enabled": bool(prios),
                "pfc_priorities": prios,
                "ecn": dict(sorted(ecn.items(), key=lambda kv: int(kv[0]))),
                "strict_queues": sorted(set(strict)),
                "bandwidth_percent": dict(sorted(bandwidth.items(), key=lambda kv: int(kv[0]))),
                "watchdog": isinstance(pfcwd.get(name), dict) and bool(pfcwd.get(name)),
            }
        dscp_map: dict[str, int] = {}
        maps = table("DSCP_TO_TC_MAP")
        for name in used_maps:
            for dscp, tc in (maps.get(name) or {}).items():
                if _int(dscp) is not None and _int(tc) is not None:
                    dscp_map[str(int(dscp))] = int(tc)
        dscp_map = {d: tc for d, tc in sorted(dscp_map.items(), key=lambda kv: int(kv[0])) if tc != 0}
        watched = [pfcwd[name] for name in sorted(pfcwd, key=_natural) if name != "GLOBAL" and isinstance(pfcwd[name], dict) and name in interfaces]
        first = watched[0] if watched else {}
        return {
            "dscp_map": dscp_map,
            "watchdog": {
                "enabled": bool(watched),
                "detection_time_ms": _int(first.get("detection_time")),
                "restoration_time_ms": _int(first.get("restoration_time")),
                "action": first.get("action"),
            },
            "interfaces": interfaces,
            "switch_wide": None,
            "buffer_model": (table("DEVICE_METADATA").get("localhost") or {}).get("buffer_model"),
            "cable_length": dict(table("CABLE_LENGTH").get(_vendor_sonic.CABLE_LENGTH_KEY) or {}),
        }

    # -- channel ---------------------------------------------------------
    def _transport_errors(self) -> tuple:
        return _channel.transport_errors()

    def _prompt_re(self):
        base = getattr(self.conn, "base_prompt", None) or ""
        if not base:
            raise _Lost("no shell prompt known for this connection")
        return re.compile(re.escape(base) + r"[$#] ?")

    def _exchange(self, commands: list[str], timeout: float) -> list[str]:
        """Type the commands ahead in one write; each one's output (echo removed), split on the prompts."""
        reply = _channel.exchange(self.conn, commands, self._prompt_re(), timeout)
        return [self._strip_echo(cmd, seg) for cmd, seg in zip(commands, reply.segments)]

    @staticmethod
    def _strip_echo(cmd: str, segment: str) -> str:
        sent = cmd.split("\n")
        if len(sent) > 1:
            # A here-document: bash echoes each line, after '> ' for every line but the first.
            echo = {line.strip() for line in sent}
            lines = segment.lstrip("\n").split("\n")
            kept = [line for line in lines if line.strip() and line.strip() not in echo and re.sub(r"^(?:> )+", "", line).strip() not in echo]
            return "\n".join(kept).strip()
        # Blank lines only: a right-aligned tabulate header (queuestat's '     Port', pfcwd's '     QUEUE')
        # keeps its leading spaces, or its cells no longer sit over the ruler's dash groups.
        return _channel.strip_echo(cmd, segment).strip("\r\n").rstrip()

    def _run(self, command: str, timeout: float | None = None) -> str:
        return self._exchange([command], timeout or self.command_timeout)[0]

    def _checked(self, command: str, what: str, state: str, timeout: float | None = None, success: str | None = None) -> str:
        """Run one command; DeviceError on a lost connection, an error, or (with ``success``) a missing success line."""
        try:
            out = self._run(command, timeout)
        except self._transport_errors() as exc:
            raise _base.DeviceError(self.device, "connection lost during %s: %s" % (what, exc), line=command, state=state) from None
        if _ERROR.search(out) or (success is not None and success not in out):
            raise _base.DeviceError(self.device, "%s failed" % what, line=command, device_said=out or "(no output)", state=state)
        return out

    def _state(self) -> str:
        return _base.PENDING if self._committed_with_timer else _base.UNKNOWN

    # -- device ----------------------------------------------------------
    def prepare(self) -> None:
        """Nothing: bash does not page; systemctl is given --no-pager on every call."""

    def gather(self) -> str:
        return self._checked("show runningconfiguration all", "reading the running configuration", _base.UNCHANGED)

    def _timers(self, state: str) -> dict[str, int | None]:
        """{session: remaining seconds or None} of every lf-rollback timer systemd lists."""
        command = "systemctl list-timers --all --no-pager --no-legend '%s*.timer'" % _UNIT_PREFIX
        out = self._checked(command, "listing the rollback timers", state)
        found: dict[str, int | None] = {}
        for line in out.splitlines():
            match = _TIMER_ROW.search(line)
            if not match:
                if line.strip() and not re.match(r"^\s*\d+ timers? listed", line):
                    raise _base.DeviceError(self.device, "systemctl printed a row that is not a timer of ours", line=command, device_said=out, state=state)
                continue
            if not re.search(r"\bleft\b", line):
                # An elapsed timer: systemd keeps it loaded (RemainAfterElapse= defaults to yes, systemd.timer(5))
                # with NEXT/LEFT 'n/a' while or after its service ran config rollback: not pending any more.
                continue
            left = _LEFT.search(line)
            seconds = None
            if left and any(left.groups()):
                hours, minutes, secs = (int(g) if g else 0 for g in left.groups())
                seconds = hours * 3600 + minutes * 60 + secs
            found[match.group(1)] = seconds
        return found

    def open_session(self, name: str) -> None:
        if not isinstance(name, str) or not _SESSION_RE.fullmatch(name):
            raise _base.DeviceError(self.device, "session name %r is not a word of letters, digits, '.', '_' or '-'" % (name,), state=_base.UNCHANGED)
        self.session = name
        self._committed_with_timer = False
        self._dry_run = None
        self._patch_file = "/tmp/%s.json-patch" % name
        others = self._timers(_base.UNCHANGED)
        if others:
            other = sorted(others)[0]
            raise _base.DeviceError(
                self.device,
                "another run's commit is pending confirmation (timer %s%s.timer); refusing to change the switch until it is confirmed or rolled back"
                % (_UNIT_PREFIX, other),
                state=_base.UNCHANGED,
            )
        self._checked("sudo config checkpoint %s" % name, "taking the checkpoint", _base.UNCHANGED, success="Checkpoint created successfully.")

    def patch(self, lines: list[str], running: str) -> list[dict]:
        """The JSON Patch for ``lines`` against the switch's CONFIG_DB ``running``: a leaf under a table
        or key the switch lacks joins one add of that table or key."""
        doc = _config_db(running)
        ops: list[dict] = []
        new_tables: dict[str, dict] = {}
        new_keys: dict[tuple[str, str], dict] = {}
        for (table, key, field), value in _leaves(lines):
            if not isinstance(doc.get(table), dict):
                if table not in new_tables:
                    new_tables[table] = {}
                    ops.append({"op": "add", "path": "/%s" % table, "value": new_tables[table]})
                new_tables[table].setdefault(key, {})[field] = value
            elif not isinstance(doc[table].get(key), dict):
                if (table, key) not in new_keys:
                    new_keys[(table, key)] = {}
                    ops.append({"op": "add", "path": "/%s/%s" % (table, key), "value": new_keys[(table, key)]})
                new_keys[(table, key)][field] = value
            elif str(doc[table][key].get(field)) != value:
                ops.append({"op": "add", "path": "/%s/%s/%s" % (table, key, field), "value": value})
        return ops

    def _heredoc(self, ops: list[dict]) -> str:
        body = [json.dumps(op, ensure_ascii=True, sort_keys=True) + ("," if i < len(ops) - 1 else "") for i, op in enumerate(ops)]
        for line in body:
            _base.check_cli_line(self.device, line)
            if len(line) >= 4000 or line.strip() == _HEREDOC_END:
                raise _base.DeviceError(self.device, "a patch operation is too long for one terminal line (4096 bytes)", line=line[:200], state=_base.UNCHANGED)
        return "\n".join(["cat > %s <<'%s'" % (self._patch_file, _HEREDOC_END), "["] + body + ["]", _HEREDOC_END])

    def load(self, lines: list[str]) -> None:
        """Write the patch to the switch and validate it with ``config apply-patch --dry-run``."""
        if not self.session:
            raise _base.DeviceError(self.device, "load before open_session", state=_base.UNCHANGED)
        for line in lines:
            _base.check_cli_line(self.device, line)
        try:
            _leaves(lines)
        except ValueError as exc:
            raise _base.DeviceError(self.device, str(exc), state=_base.UNCHANGED) from None
        # The CONFIG_DB the patch is built against: what GCU itself reads (gu_common.py ConfigWrapper
        # get_config_db_as_json) and 'show runningconfiguration all' prints; read with its own command so
        # that load and the read-back after the commit are told apart (a hang names the right step).
        command = "sonic-cfggen -d --print-data"
        running = self._checked(command, "reading CONFIG_DB for the patch", _base.UNCHANGED)
        try:
            ops = self.patch(lines, running)
        except ValueError as exc:
            self._discard()
            raise _base.DeviceError(self.device, str(exc), line=command, device_said=running[:2000], state=_base.UNCHANGED) from None
        heredoc = self._heredoc(ops)
        try:
            out = self._run(heredoc)
        except self._transport_errors() as exc:
            raise _base.DeviceError(self.device, "connection lost writing the patch file: %s" % exc, line="cat > %s" % self._patch_file,
                                    state=_base.UNCHANGED) from None
        # cat prints nothing; what comes back is the echo of the here-document (and bash's '> ' prompts),
        # wrapped as the terminal pleases: only an error line from bash means the file was not written.
        if _ERROR.search(out):
            self._discard()
            raise _base.DeviceError(self.device, "writing the patch file failed", line="cat > %s" % self._patch_file, device_said=out, state=_base.UNCHANGED)
        command = "sudo config apply-patch --dry-run %s" % self._patch_file
        try:
            out = self._run(command, self.apply_timeout)
        except self._transport_errors() as exc:
            raise _base.DeviceError(self.device, "connection lost during the dry run: %s" % exc, line=command, state=_base.UNCHANGED) from None
        if _APPLIED not in out:
            self._discard()
            raise _base.DeviceError(self.device, "the Generic Config Updater rejected the patch", line=_rejected(out, lines) or command,
                                    device_said=out or "(no output)", state=_base.UNCHANGED)
        self._dry_run = out

    def _discard(self) -> None:
        try:
            self._exchange(["rm -f %s" % self._patch_file, "sudo config delete-checkpoint %s" % self.session], self.command_timeout)
        except self._transport_errors():
            pass  # a stale file or checkpoint changes nothing on the switch

    def diff(self) -> str:
        """The changes the dry run printed ('' when GCU converted the patch into no change)."""
        out = self._dry_run
        if out is None:
            raise _base.DeviceError(self.device, "diff before load", state=_base.UNCHANGED)
        changes = _CHANGE.findall(out)
        if not changes and not _ZERO_CHANGES.search(out):
            raise _base.DeviceError(self.device, "the dry run printed neither its changes nor '0 changes'",
                                    line="sudo config apply-patch --dry-run %s" % self._patch_file, device_said=out, state=_base.UNCHANGED)
        return "\n".join(change.strip() for change in changes)

    def abort(self) -> None:
        self._checked("rm -f %s" % self._patch_file, "removing the patch file", _base.UNCHANGED)
        self._checked("sudo config delete-checkpoint %s" % self.session, "deleting the checkpoint", _base.UNCHANGED, success="Checkpoint deleted successfully.")
        self._dry_run = None
        self.session = None

    def commit(self, confirm_timeout_s: int | None) -> None:
        if confirm_timeout_s is not None and int(confirm_timeout_s) <= 0:
            raise _base.DeviceError(self.device, "confirm timeout must be a positive number of seconds", state=_base.UNCHANGED)
        timed = confirm_timeout_s is not None
        unit = _UNIT_PREFIX + (self.session or "")
        if timed:
            command = "sudo systemd-run --unit=%s --on-active=%d config rollback %s" % (unit, int(confirm_timeout_s), self.session)
            self._checked(command, "arming the rollback timer", _base.UNCHANGED, success="Running timer as unit: %s.timer" % unit)
            self._committed_with_timer = True
        command = "sudo config apply-patch %s" % self._patch_file
        try:
            out = self._run(command, self.apply_timeout)
        except self._transport_errors() as exc:
            state = _base.PENDING if timed else _base.UNKNOWN
            raise _base.DeviceError(self.device, "connection lost during apply-patch: %s" % exc, line=command, state=state) from None
        if _APPLIED not in out:
            state = _base.UNKNOWN
            if timed:
                # GCU applies its changes one by one: undo whatever part went in, now.
                try:
                    self._stop_and_rollback(self.session)
                    state = _base.ROLLED_BACK
                except _base.DeviceError:
                    state = _base.PENDING
            self._committed_with_timer = False
            raise _base.DeviceError(self.device, "config apply-patch failed", line=command, device_said=out or "(no output)", state=state)
        self._checked("rm -f %s" % self._patch_file, "removing the patch file", _base.PENDING if timed else _base.COMMITTED)
        if not timed:
            # Committed for good: nothing will roll back to the checkpoint.
            self._checked("sudo config delete-checkpoint %s" % self.session, "deleting the checkpoint", _base.COMMITTED,
                          success="Checkpoint deleted successfully.")

    def _stop_and_rollback(self, session: str) -> None:
        unit = _UNIT_PREFIX + session
        self._checked("sudo systemctl stop %s.timer" % unit, "stopping the rollback timer", _base.PENDING)
        self._checked("sudo config rollback %s" % session, "rolling back to the checkpoint", _base.UNKNOWN, timeout=self.apply_timeout,
                      success="Config rolled back successfully.")
        self._checked("sudo config delete-checkpoint %s" % session, "deleting the checkpoint", _base.ROLLED_BACK, success="Checkpoint deleted successfully.")

    def _target(self, session: str | None) -> str:
        session = session or self.session
        if not session or not _SESSION_RE.fullmatch(session):
            raise _base.DeviceError(self.device, "no session %r to act on" % (session,), state=self._state())
        return session

    def confirm(self, session: str | None = None) -> None:
        session = self._target(session)
        unit = "%s%s.timer" % (_UNIT_PREFIX, session)
        if session not in self._timers(self._state()):
            state = _base.ROLLED_BACK if self._committed_with_timer else _base.UNKNOWN
            self._committed_with_timer = False
            raise _base.DeviceError(self.device, "no pending commit of session %s to confirm (its timer %s has run out)" % (session, unit), state=state)
        self._checked("sudo systemctl stop %s" % unit, "stopping the rollback timer", _base.PENDING)
        self._committed_with_timer = False
        self._checked("sudo config delete-checkpoint %s" % session, "deleting the checkpoint", _base.COMMITTED, success="Checkpoint deleted successfully.")

    def rollback(self, session: str | None = None) -> None:
        session = self._target(session)
        if session not in self._timers(self._state()):
            if self._committed_with_timer:
                self._committed_with_timer = False
                return  # the timer already ran config rollback
            raise _base.DeviceError(self.device, "no pending commit of session %s to roll back" % session, state=_base.UNKNOWN)
        self._stop_and_rollback(session)
        self._committed_with_timer = False

    def pending(self) -> dict | None:
        timers = self._timers(_base.UNKNOWN)
        if not timers:
            return None
        session = sorted(timers)[0]
        return {"session": session, "remaining_s": timers[session], "unit": "%s%s.timer" % (_UNIT_PREFIX, session)}

    def readback_missing(self, lines: list[str]) -> list[str]:
        state = self._state()
        running = self._checked("show runningconfiguration all", "reading back the applied configuration", state)
        try:
            return self.missing_lines(lines, running)
        except ValueError as exc:
            raise _base.DeviceError(self.device, str(exc), line="show runningconfiguration all", device_said=running[:2000], state=state) from None

    def save(self) -> None:
        self._checked("sudo config save -y", "saving the startup configuration", _base.COMMITTED)

    # -- counters ----------------------------------------------------------
    COUNTER_COMMANDS = ("show pfc counters", "show queue counters", "show queue wredcounters", "show pfcwd stats")

    @staticmethod
    def counter_commands(ports: list[str] | None = None) -> list[str]:
        """Every port at once (the scripts print all ports); the given names are checked, parse_counters keeps all."""
        for name in ports or []:
            if not isinstance(name, str) or not _PORT_RE.fullmatch(name):
                raise ValueError("ports: %r is not a SONiC port name (%s)" % (name, PLATFORM.interface_example))
        return list(Driver.COUNTER_COMMANDS)

    def read_counters(self, commands: list[str]) -> dict[str, str]:
        for command in commands:
            _base.check_cli_line(self.device, command)
        try:
            answers = self._exchange(list(commands), self.command_timeout * max(1, len(commands)))
        except self._transport_errors() as exc:
            raise _base.DeviceError(self.device, "connection lost while reading the counters: %s" % exc, state=_base.UNCHANGED) from None
        return dict(zip(commands, answers))

    @staticmethod
    def parse_counters(outputs: dict[str, str]) -> tuple[dict[str, dict], dict[str, str]]:
        ports: dict[str, dict] = {}
        errors: dict[str, str] = {}
        for command, text in outputs.items():
            reader = _COUNTER_READERS.get(" ".join(command.split()))
            if reader is None:
                # only what counter_commands asks for is read: output of anything else is refused, not dropped
                errors[command] = "sonic: not a counter command this driver reads (%s)" % ", ".join(Driver.COUNTER_COMMANDS)
                continue
            try:
                found = reader(text or "")
            except ValueError as exc:
                errors[command] = "%s; got: %s" % (exc, (text or "(no output)")[:200])
                continue
            for port, values in found.items():
                slot = ports.setdefault(port, {})
                for key, value in values.items():
                    if isinstance(value, dict):
                        slot.setdefault(key, {}).update(value)
                    else:
                        slot[key] = value
        for slot in ports.values():
            # the normalised total every driver gives (_snapshot.SCALAR_COUNTERS), from queuestat's EcnMarked/pkts per queue
            if isinstance(slot.get("ecn_marked"), dict):
                slot["ecn_marked_total"] = sum(slot["ecn_marked"].values())
        return ports, errors

    # -- links -------------------------------------------------------------
    LINK_COMMANDS = ("show lldp table", "show interfaces status")

    @staticmethod
    def link_commands(ports: list[str] | None = None) -> list[str]:
        return list(Driver.LINK_COMMANDS)

    @staticmethod
    def parse_links(outputs: dict[str, str]) -> dict:
        status, lldp = Driver.LINK_COMMANDS[1], Driver.LINK_COMMANDS[0]
        ends: dict[str, dict] = {}
        if status in outputs:
            rows = _table(outputs[status], ["Interface", "Lanes", "Speed", "MTU"])
            if rows is None:
                expected = "the table under 'Interface  Lanes  Speed  MTU  FEC  Alias  Vlan  Oper  Admin  Type  Asym PFC'"
                raise _base.LinkFormError("sonic", status, expected, outputs[status])
            for row in rows:
                oper = {"up": "up", "down": "down"}.get(row.get("Oper", ""))
                ends[row["Interface"]] = _base.end(oper, _base.speed_g(row.get("Speed")) if oper == "up" else None)
        if lldp not in outputs:
            raise _base.LinkFormError("sonic", lldp, "its output (the command was not run)")
        rows = _table(outputs[lldp], ["LocalPort", "RemoteDevice", "RemotePortID"])
        if rows is None:
            raise _base.LinkFormError("sonic", lldp, "the table under 'LocalPort  RemoteDevice  RemotePortID  Capability  RemotePortDescr'", outputs[lldp])
        for row in rows:
            ends.setdefault(row["LocalPort"], _base.end())["neighbors"].append(
                _base.neighbor(row.get("RemoteDevice"), row.get("RemotePortID"), None, row.get("RemotePortDescr"))
            )
        return ends


def _rejected(out: str, lines: list[str]) -> str | None:
    """The rendered line whose path GCU's error names, when it names one."""
    for line in lines:
        path = json.loads(line)["path"]
        if path in out:
            return line
    return None


def _cells(line: str, groups: list[tuple[int, int]]) -> list[str]:
    """The cells of one line, cut at the ruler's dash groups (tabulate pads every cell to its column)."""
    return [line[start:end].strip() for start, end in groups]


def _tables(text: str, first: list[str]) -> list[list[dict[str, str]]]:
    """Every tabulate 'simple' table (header, dash ruler, rows) whose header starts with ``first``.
    Rows end at a blank line or a line of dashes (lldpshow's footer); columns are cut at the ruler's
    dash groups (tabulate pads every cell to its column)."""
    lines = (text or "").replace("\r", "").split("\n")
    found = []
    for at in range(1, len(lines)):
        ruler = lines[at]
        if not re.fullmatch(r"\s*-+(?:  +-+)+\s*", ruler):
            continue
        groups = [(m.start(), m.end()) for m in re.finditer(r"-+", ruler)]
        header = _cells(lines[at - 1], groups)
        if header[: len(first)] != first:
            continue
        rows = []
        for line in lines[at + 1:]:
            if not line.strip() or re.fullmatch(r"\s*-+\s*", line):
                break
            rows.append(dict(zip(header, _cells(line, groups))))
        found.append(rows)
    return found


def _table(text: str, first: list[str]) -> list[dict[str, str]] | None:
    """The rows of every such table, joined; None when there is none."""
    tables = _tables(text, first)
    return [row for rows in tables for row in rows] if tables else None


def _number(cell: str) -> int | None:
    cell = (cell or "").replace(",", "").strip()
    return int(cell) if cell.isdigit() else None


def _pfc_counters(text: str) -> dict[str, dict]:
    """'show pfc counters' (scripts/pfcstat): the 'Port Rx' and 'Port Tx' tables, PFC0..PFC7."""
    found: dict[str, dict] = {}
    seen = False
    for direction, key in (("Port Rx", "pfc_rx_frames"), ("Port Tx", "pfc_tx_frames")):
        rows = _table(text, [direction])
        if rows is None:
            continue
        seen = True
        for row in rows:
            values = {str(p): _number(row.get("PFC%d" % p, "")) for p in range(8)}
            found.setdefault(row[direction], {})[key] = {p: n for p, n in values.items() if n is not None}
    if not seen:
        raise ValueError("sonic: 'show pfc counters': expected the tables under 'Port Rx  PFC0 ... PFC7' and 'Port Tx  PFC0 ... PFC7'")
    return found


def _queue_table(text: str, command: str, columns: dict[str, str]) -> dict[str, dict]:
    rows = _table(text, ["Port", "TxQ"])
    if rows is None or (rows and not set(columns) <= set(rows[0])):
        raise ValueError("sonic: %r: expected the table under 'Port  TxQ  %s'" % (command, "  ".join(columns)))
    found: dict[str, dict] = {}
    for row in rows:
        match = re.fullmatch(r"UC(\d+)", row.get("TxQ", ""))
        if not match:
            continue  # MC and ALL queues: not the unicast queues the plan configures
        for column, key in columns.items():
            value = _number(row.get(column, ""))
            if value is not None:
                found.setdefault(row["Port"], {}).setdefault(key, {})[match.group(1)] = value
    return found


def _queue_counters(text: str) -> dict[str, dict]:
    return _queue_table(text, "show queue counters", {"Drop/pkts": "queue_drops"})


def _wred_counters(text: str) -> dict[str, dict]:
    return _queue_table(text, "show queue wredcounters", {"WredDrp/pkts": "wred_drops", "EcnMarked/pkts": "ecn_marked"})


def _pfcwd_stats(text: str) -> dict[str, dict]:
    """'show pfcwd stats' (pfcwd/main.py): QUEUE 'Ethernet0:3', STATUS, 'STORM DETECTED/RESTORED' 'n/m'."""
    rows = _table(text, ["QUEUE", "STATUS", "STORM DETECTED/RESTORED"])
    if rows is None:
        raise ValueError("sonic: 'show pfcwd stats': expected the table under 'QUEUE  STATUS  STORM DETECTED/RESTORED  TX OK/DROP ...'")
    found: dict[str, dict] = {}
    for row in rows:
        match = re.fullmatch(r"(\S+):(\d+)", row.get("QUEUE", ""))
        storm = re.fullmatch(r"(\d+)/(\d+)", row.get("STORM DETECTED/RESTORED", ""))
        if not match:
            raise ValueError("sonic: 'show pfcwd stats': %r is not a '<port>:<queue>' row" % row.get("QUEUE"))
        slot = found.setdefault(match.group(1), {})
        queue = match.group(2)
        if storm:
            slot.setdefault("watchdog_storms", {})[queue] = int(storm.group(1))
            slot.setdefault("watchdog_restores", {})[queue] = int(storm.group(2))
        status = _vendor_sonic.WATCHDOG_STATUS.get(row.get("STATUS", ""))
        if status:
            slot.setdefault("watchdog_status", {})[queue] = status
    return found


_COUNTER_READERS = {
    "show pfc counters": _pfc_counters,
    "show queue counters": _queue_counters,
    "show queue wredcounters": _wred_counters,
    "show pfcwd stats": _pfcwd_stats,
}
