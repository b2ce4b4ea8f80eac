# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""SONiC (sonic-net community image) switch driver.

The device is the admin login shell (bash, netmiko ``edgecore_sonic``, a plain LinuxSSH:
netmiko 4.8.0 has no ``sonic`` type and ``dell_sonic`` enters Dell's Klish CLI). The
configuration is CONFIG_DB, changed through the Generic Config Updater (GCU):

    systemctl list-timers ... 'lf-rollback-*.timer'     refuse another run's pending commit
    sudo config checkpoint <s>                          the state to roll back to
    show version                                        release branch and HwSKU, checked against the plan
    sonic-cfggen -d --print-data                        CONFIG_DB, to build the patch against
    cat > /tmp/<s>.json-patch <<'LF_PATCH_EOF'          the JSON Patch (RFC 6902), one op per line
    cat > /tmp/<s>.undo <<'LF_PATCH_EOF'                the rollback script: CLI undo lines, config rollback <s>
    sudo config apply-patch --dry-run <file>            validation and the device's own diff
    sudo systemd-run --unit=lf-rollback-<s> --on-active=<t> bash /tmp/<s>.undo   the confirm timer
    sudo config apply-patch <file>                      commit (what GCU's validators allow)
    sudo ecnconfig -p AZURE_LOSSLESS -gmin .. / sudo pfcwd start ...   commit (what they refuse)
    sudo systemctl stop lf-rollback-<s>.timer           confirm (then config delete-checkpoint)
    sudo bash /tmp/<s>.undo                             cancel
    sudo config save -y                                 startup config
    show runningconfiguration all                       read-back (CONFIG_DB JSON)

SONiC has no commit-confirm of its own: the timer is a transient systemd timer on the
switch (systemd-run(1) --on-active) that runs the rollback script unless it is stopped. GCU's
field-operation validators (per release and HwSKU) refuse a new PFC_WD table and, up to 202505, any
WRED_PROFILE change but the green thresholds of an existing profile on a listed SKU: those leaves go
through the documented CLI tools (pfcwd, ecnconfig), which write CONFIG_DB directly, and the rollback
script undoes them with the same tools before ``config rollback`` (which GCU validates too).

The rendered lines are JSON Patch operations, one per line, each adding one CONFIG_DB leaf
(``{"op": "add", "path": "/PORT/Ethernet0/mtu", "value": "9100"}``); load() groups the leaves
under a table or key the switch does not have yet into one add of that table or key (JSON
Patch needs the parent). Every command and form with its source: docs/vendor-sonic.md.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ansible_collections.lossless.fabric.plugins.module_utils._common._snapshot import natural as _natural
from ansible_collections.lossless.fabric.plugins.module_utils._platforms import _base, _channel, _records
from ansible_collections.lossless.fabric.plugins.module_utils._platforms.sonic import _readers as _sonic_readers
from ansible_collections.lossless.fabric.plugins.module_utils._platforms.sonic import _render as _sonic_render
from ansible_collections.lossless.fabric.plugins.module_utils._platforms.sonic import _vendor as _vendor_sonic

PLATFORM = _records.SONIC

_SESSION_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
_PORT_RE = re.compile(PLATFORM.interface_pattern, re.ASCII)
_HEREDOC_END = "LF_PATCH_EOF"
_UNIT_PREFIX = "lf-rollback-"
_TIMER_ROW = re.compile(r"\blf-rollback-([A-Za-z0-9._-]+)\.timer\b")
_LEFT = re.compile(r"(?:(\d+)h\s*)?(?:(\d+)min\s*)?(?:(\d+)s)?\s+left\b")
_ERROR = re.compile(r"^\s*(?:Error\b|Failed\b|-bash:|bash:|Usage:|Traceback|sudo:|Failed to|Exception caught:|SKIPPED:)", re.MULTILINE)
_CHANGE = re.compile(r"^Patch Applier:\s+\* (.+)$", re.MULTILINE)
# PatchApplier's count line and the line before the changes it applies (generic_updater.py): 202211 'sorted
# into', 202305+ 'converted into'; 202405+ name the scope. Up to 202311 the changes are listed after the count
# line and again after 'Applying N changes in order'; only the second list is read.
_COUNT = re.compile(r"^Patch Applier: The (?:\S+ )?patch was (?:sorted|converted) into (\d+) changes?[:.]\s*$", re.MULTILINE)
_APPLYING = re.compile(r"^Patch Applier: (?:\S+: )?applying (\d+) changes? in order[:.]\s*$", re.MULTILINE | re.IGNORECASE)
_APPLIED = "Patch applied successfully."
_ROLLED_BACK = "Config rolled back successfully."
# show/main.py version(): 'SONiC Software Version: SONiC.<build_version>', 'HwSKU: <sku>', 'ASIC: <asic_type>'.
_VERSION = re.compile(r"^SONiC Software Version: SONiC\.(\S+)\s*$", re.MULTILINE)
_HWSKU = re.compile(r"^HwSKU: (\S+)\s*$", re.MULTILINE)
_ASIC = re.compile(r"^ASIC: (\S+)\s*$", re.MULTILINE)

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
        self._undo_file: str | None = None
        self._ops: list[dict] = []
        self._cli: list[str] = []

    # -- netmiko ---------------------------------------------------------
    @staticmethod
    def connection_class():
        from netmiko.edgecore.edgecore_sonic_ssh import EdgecoreSonicSSH  # pylint: disable=import-outside-toplevel

        return EdgecoreSonicSSH

    # -- pure ------------------------------------------------------------
    @staticmethod
    def render(plan: dict) -> list[str]:
        """One JSON Patch add per CONFIG_DB leaf, every value from the plan (docs/vendor-sonic.md)."""
        return _sonic_render.render(plan)

    @staticmethod
    def running_of(lines: list[str]) -> str:
        """The CONFIG_DB JSON of a switch holding exactly the rendered leaves (and one PORT entry each)."""
        return _sonic_render.running_of(lines)

    @staticmethod
    def missing_lines(lines: list[str], running: str) -> list[str]:
        """The rendered lines whose CONFIG_DB leaf ``running`` does not hold with that value."""
        doc = _sonic_readers._config_db(running)
        missing = []
        for line in lines:
            gone = _sonic_render.removals([line])
            if gone:
                # a fabric mode's remove (issue 36): missing while the switch still holds the key or field
                if _holds(doc, gone[0]):
                    missing.append(line)
                continue
            leaves = _sonic_render._leaves([line])
            if not leaves:
                continue  # the expectation line: checked against 'show version', not a CONFIG_DB leaf
            (table, key, field), value = leaves[0]
            have = (doc.get(table) or {}).get(key) or {}
            if not isinstance(have, dict) or str(have.get(field)) != value:
                missing.append(line)
        return missing

    @staticmethod
    def parse(running: str) -> dict:
        """The gathered shape from CONFIG_DB JSON ('show runningconfiguration all', or a config_db.json)."""
        return _sonic_readers.parse(running)

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
        self._undo_file = "/tmp/%s.undo" % name
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
        doc = _sonic_readers._config_db(running)
        ops: list[dict] = []
        new_tables: dict[str, dict] = {}
        new_keys: dict[tuple[str, str], dict] = {}
        for (table, key, field), value in _sonic_render._leaves(lines):
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
            elif field not in doc[table][key]:
                ops.append({"op": "add", "path": "/%s/%s/%s" % (table, key, field), "value": value})
            elif str(doc[table][key][field]) != value:
                # a field the switch has: GCU's validators allow some fields only as 'replace' (what the diff of
                # running and target shows; an add would read the same, a replace says it)
                ops.append({"op": "replace", "path": "/%s/%s/%s" % (table, key, field), "value": value})
        ops += _removes(doc, _sonic_render.removals(lines))
        return ops

    def split(self, lines: list[str], running: str, release: str, asic_type: str, hwsku: str | None,
              build_version: str) -> tuple[list[dict], list[str], list[str]]:
        """(GCU ops, CLI commands, their undo commands) for ``lines`` on this switch. PFC_WD leaves go through
        'pfcwd start' on every release (GCU refuses creating the table); WRED_PROFILE leaves through ecnconfig
        where GCU's validators refuse them (202305-202505 off a listed SKU or before its build date); the rest
        through GCU. The undo commands restore what the CLI commands change, from the running CONFIG_DB."""
        doc = _sonic_readers._config_db(running)
        rest, wd, wred = [], {}, {}
        gone = [path for path in _sonic_render.removals(lines) if path[0] != "PFC_WD"]
        # mode ecn_only (issue 36): a port's watchdog entry goes with 'pfcwd stop <ports>' (sonic-utilities pfcwd/main.py
        # stop: deletes PFC_WD|<port>), as it came with 'pfcwd start'; its undo starts it again with the values it had
        wd_stop = sorted({path[1] for path in _sonic_render.removals(lines) if path[0] == "PFC_WD" and len(path) == 2
                          and isinstance((doc.get("PFC_WD") or {}).get(path[1]), dict)}, key=_natural)
        for (table, key, field), value in _sonic_render._leaves(lines):
            line = (table, key, field), value
            if table == "PFC_WD":
                wd.setdefault(key, {})[field] = value
            elif table == "WRED_PROFILE" and not _vendor_sonic.wred_by_gcu(release, asic_type, hwsku, build_version):
                wred.setdefault(key, {})[field] = value
            else:
                rest.append(line)
        ops = self.patch([json.dumps({"op": "add", "path": "/%s/%s/%s" % leaf, "value": value}) for leaf, value in rest]
                         + [json.dumps({"op": "remove", "path": "/" + "/".join(path)}) for path in gone], running)
        cli: list[str] = []
        undo: list[str] = []
        for profile, fields in sorted(wred.items()):
            have = (doc.get("WRED_PROFILE") or {}).get(profile) or {}
            if all(str(have.get(f)) == v for f, v in fields.items()):
                continue
            # scripts/ecnconfig: -gmin/-gmax/-gdrop set green_min_threshold / green_max_threshold / green_drop_probability
            cli.append("sudo ecnconfig -p %s %s" % (profile, " ".join("%s %s" % (_ECN_FLAG[f], v) for f, v in sorted(fields.items()))))
            old = {f: have[f] for f in fields if f in have}
            if old:
                undo.append("ecnconfig -p %s %s" % (profile, " ".join("%s %s" % (_ECN_FLAG[f], v) for f, v in sorted(old.items()))))
        groups: dict[tuple, list[str]] = {}
        stop: list[str] = []
        for port in sorted(wd, key=_natural):
            want = wd[port]
            have = (doc.get("PFC_WD") or {}).get(port)
            if isinstance(have, dict) and all(str(have.get(f)) == v for f, v in want.items()):
                continue
            groups.setdefault((want.get("action"), want["restoration_time"], want["detection_time"]), []).append(port)
            if not isinstance(have, dict):
                stop.append(port)
            else:
                undo.append(_pfcwd_start(have.get("action"), have.get("restoration_time"), [port], have.get("detection_time")))
        for (action, restoration, detection), ports in sorted(groups.items(), key=lambda kv: _natural(kv[1][0])):
            cli.append("sudo " + _pfcwd_start(action, restoration, ports, detection))
        if stop:
            undo.append("pfcwd stop %s" % " ".join(stop))
        if wd_stop:
            cli.append("sudo pfcwd stop %s" % " ".join(wd_stop))
            for port in wd_stop:
                have = doc["PFC_WD"][port]
                undo.append(_pfcwd_start(have.get("action"), have.get("restoration_time"), [port], have.get("detection_time")))
        return ops, cli, undo

    def _version(self) -> tuple[str, str, str]:
        """(build_version, HwSKU, ASIC type) of 'show version'; DeviceError when a line is missing."""
        out = self._checked("show version", "reading the release and HwSKU", _base.UNCHANGED)
        found = [_VERSION.search(out), _HWSKU.search(out), _ASIC.search(out)]
        if not all(found):
            raise _base.DeviceError(self.device, "'show version' printed no 'SONiC Software Version: SONiC.<build>', 'HwSKU:' and 'ASIC:' lines",
                                    line="show version", device_said=out[:2000], state=_base.UNCHANGED)
        return found[0].group(1), found[1].group(1), found[2].group(1)

    def _heredoc(self, ops: list[dict]) -> str:
        body = [json.dumps(op, ensure_ascii=True, sort_keys=True) + ("," if i < len(ops) - 1 else "") for i, op in enumerate(ops)]
        return self._file(self._patch_file, ["["] + body + ["]"])

    def _file(self, path: str | None, body: list[str]) -> str:
        for line in body:
            _base.check_cli_line(self.device, line)
            if len(line) >= 4000 or line.strip() == _HEREDOC_END:
                raise _base.DeviceError(self.device, "a patch operation is too long for one terminal line (4096 bytes)", line=line[:200], state=_base.UNCHANGED)
        return "\n".join(["cat > %s <<'%s'" % (path, _HEREDOC_END)] + body + [_HEREDOC_END])

    def _write(self, text: str, path: str | None) -> None:
        try:
            out = self._run(text)
        except self._transport_errors() as exc:
            raise _base.DeviceError(self.device, "connection lost writing %s: %s" % (path, exc), line="cat > %s" % path, state=_base.UNCHANGED) from None
        # cat prints nothing; what comes back is the echo of the here-document (and bash's '> ' prompts),
        # wrapped as the terminal pleases: only an error line from bash means the file was not written.
        if _ERROR.search(out):
            self._discard()
            raise _base.DeviceError(self.device, "writing %s failed" % path, line="cat > %s" % path, device_said=out, state=_base.UNCHANGED)

    def load(self, lines: list[str]) -> None:
        """Write the patch to the switch and validate it with ``config apply-patch --dry-run``."""
        if not self.session:
            raise _base.DeviceError(self.device, "load before open_session", state=_base.UNCHANGED)
        for line in lines:
            _base.check_cli_line(self.device, line)
        try:
            _sonic_render._leaves(lines)
        except ValueError as exc:
            raise _base.DeviceError(self.device, str(exc), state=_base.UNCHANGED) from None
        expected = _sonic_render.expectation(lines) or (_vendor_sonic.DEFAULT_RELEASE, None)
        build, hwsku, asic_type = self._version()
        release = _vendor_sonic.release_of_build(build)
        if release != expected[0] or (expected[1] is not None and hwsku.lower() != expected[1].lower()):
            self._discard()
            said = "release %s (build SONiC.%s), HwSKU %s" % (release or "unknown", build, hwsku)
            raise _base.DeviceError(
                self.device,
                "the inventory says release %s, HwSKU %s, the switch says %s: the plan's path is chosen by both (docs/vendor-sonic.md); "
                "correct lossless_fabric_device.release / hwsku" % (expected[0], expected[1] or "(not given)", said),
                line="show version", device_said=said, state=_base.UNCHANGED)
        # The CONFIG_DB the patch is built against: what GCU itself reads (gu_common.py ConfigWrapper
        # get_config_db_as_json) and 'show runningconfiguration all' prints; read with its own command so
        # that load and the read-back after the commit are told apart (a hang names the right step).
        command = "sonic-cfggen -d --print-data"
        running = self._checked(command, "reading CONFIG_DB for the patch", _base.UNCHANGED)
        try:
            ops, cli, undo = self.split(lines, running, release, asic_type, hwsku, build)
        except ValueError as exc:
            self._discard()
            raise _base.DeviceError(self.device, str(exc), line=command, device_said=running[:2000], state=_base.UNCHANGED) from None
        self._ops, self._cli = ops, cli
        self._write(self._heredoc(ops), self._patch_file)
        # The rollback script the timer (and a cancel) runs: the CLI changes undone with the same tools first, so
        # that config rollback's own diff (validated by GCU like any patch) holds no change its validators refuse.
        self._write(self._file(self._undo_file, list(reversed(undo)) + ["config rollback %s" % self.session]), self._undo_file)
        command = "sudo config apply-patch --dry-run %s" % self._patch_file
        try:
            out = self._run(command, self.apply_timeout)
        except self._transport_errors() as exc:
            raise _base.DeviceError(self.device, "connection lost during the dry run: %s" % exc, line=command, state=_base.UNCHANGED) from None
        if _APPLIED not in out:
            self._discard()
            what, line, said = _refused(out, self._ops, command)
            raise _base.DeviceError(self.device, "the Generic Config Updater refused %s (dry run)" % what, line=line, device_said=said,
                                    state=_base.UNCHANGED)
        self._dry_run = out

    def _discard(self) -> None:
        try:
            self._exchange(["rm -f %s %s" % (self._patch_file, self._undo_file), "sudo config delete-checkpoint %s" % self.session], self.command_timeout)
        except self._transport_errors():
            pass  # a stale file or checkpoint changes nothing on the switch

    def diff(self) -> str:
        """The changes the dry run printed ('' when GCU converted the patch into no change)."""
        out = self._dry_run
        if out is None:
            raise _base.DeviceError(self.device, "diff before load", state=_base.UNCHANGED)
        count, applying = _COUNT.search(out), _APPLYING.search(out)
        if not count or not applying or count.group(1) != applying.group(1):
            raise _base.DeviceError(self.device, "the dry run printed no 'patch was sorted/converted into N changes' and 'applying N changes in order' lines",
                                    line="sudo config apply-patch --dry-run %s" % self._patch_file, device_said=out, state=_base.UNCHANGED)
        changes = _CHANGE.findall(out[applying.end():])
        if len(changes) != int(applying.group(1)):
            raise _base.DeviceError(self.device, "the dry run announced %s changes and listed %d" % (applying.group(1), len(changes)),
                                    line="sudo config apply-patch --dry-run %s" % self._patch_file, device_said=out, state=_base.UNCHANGED)
        # the CLI commands commit runs after the patch (they have no dry run: pfcwd and ecnconfig write CONFIG_DB)
        return "\n".join([change.strip() for change in changes] + self._cli)

    def abort(self) -> None:
        self._checked("rm -f %s %s" % (self._patch_file, self._undo_file), "removing the patch file", _base.UNCHANGED)
        self._checked("sudo config delete-checkpoint %s" % self.session, "deleting the checkpoint", _base.UNCHANGED, success="Checkpoint deleted successfully.")
        self._dry_run = None
        self.session = None

    def commit(self, confirm_timeout_s: int | None) -> None:
        if confirm_timeout_s is not None and int(confirm_timeout_s) <= 0:
            raise _base.DeviceError(self.device, "confirm timeout must be a positive number of seconds", state=_base.UNCHANGED)
        timed = confirm_timeout_s is not None
        unit = _UNIT_PREFIX + (self.session or "")
        if timed:
            # systemd-run runs the script as root (a transient service under PID 1): the undo lines need no sudo.
            command = "sudo systemd-run --unit=%s --on-active=%d bash %s" % (unit, int(confirm_timeout_s), self._undo_file)
            self._checked(command, "arming the rollback timer", _base.UNCHANGED, success="Running timer as unit: %s.timer" % unit)
            self._committed_with_timer = True
        steps = (["sudo config apply-patch %s" % self._patch_file] if self._ops or not self._cli else []) + list(self._cli)
        for command in steps:
            gcu = command.startswith("sudo config apply-patch")
            try:
                out = self._run(command, self.apply_timeout)
            except self._transport_errors() as exc:
                state = _base.PENDING if timed else _base.UNKNOWN
                raise _base.DeviceError(self.device, "connection lost during %s: %s" % (command.split()[1], exc), line=command, state=state) from None
            # apply-patch ends with its success line; pfcwd start (restoration time given) and ecnconfig print nothing
            if (gcu and _APPLIED not in out) or (not gcu and out.strip()):
                state = _base.UNKNOWN
                if timed:
                    # GCU applies its changes one by one, the CLI tools write as they go: undo whatever went in, now.
                    try:
                        self._stop_and_rollback(self.session)
                        state = _base.ROLLED_BACK
                    except _base.DeviceError:
                        state = _base.PENDING
                self._committed_with_timer = False
                if gcu:
                    what, line, said = _refused(out, self._ops, command)
                    raise _base.DeviceError(self.device, "config apply-patch failed: the Generic Config Updater refused %s" % what, line=line,
                                            device_said=said, state=state)
                # ecnconfig and pfcwd name no CONFIG_DB op: the command is what the switch refused
                raise _base.DeviceError(self.device, "%s failed" % command.split()[1], line=command, device_said=out or "(no output)", state=state)
        self._checked("rm -f %s" % self._patch_file, "removing the patch file", _base.PENDING if timed else _base.COMMITTED)
        if not timed:
            # Committed for good: nothing will roll back to the checkpoint.
            self._checked("rm -f %s" % self._undo_file, "removing the rollback script", _base.COMMITTED)
            self._checked("sudo config delete-checkpoint %s" % self.session, "deleting the checkpoint", _base.COMMITTED,
                          success="Checkpoint deleted successfully.")

    def _stop_and_rollback(self, session: str) -> None:
        unit = _UNIT_PREFIX + session
        self._checked("sudo systemctl stop %s.timer" % unit, "stopping the rollback timer", _base.PENDING)
        # the script the timer would have run: the CLI undo lines, then config rollback
        self._checked("sudo bash /tmp/%s.undo" % session, "rolling back to the checkpoint", _base.UNKNOWN, timeout=self.apply_timeout,
                      success=_ROLLED_BACK)
        self._checked("rm -f /tmp/%s.undo" % session, "removing the rollback script", _base.ROLLED_BACK)
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
        self._checked("rm -f /tmp/%s.undo" % session, "removing the rollback script", _base.COMMITTED)
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
    COUNTER_COMMANDS = _sonic_readers.COUNTER_COMMANDS

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
        return _sonic_readers.parse_counters(outputs)

    # -- links -------------------------------------------------------------
    LINK_COMMANDS = _sonic_readers.LINK_COMMANDS

    @staticmethod
    def link_commands(ports: list[str] | None = None) -> list[str]:
        return list(Driver.LINK_COMMANDS)

    @staticmethod
    def parse_links(outputs: dict[str, str]) -> dict:
        return _sonic_readers.parse_links(outputs)


# scripts/ecnconfig options for the green fields.
_ECN_FLAG = {"green_min_threshold": "-gmin", "green_max_threshold": "-gmax", "green_drop_probability": "-gdrop"}


def _removes(doc: dict, paths: list[list[str]]) -> list[dict]:
    """JSON Patch removes of ``paths`` (a fabric mode's, issue 36) that CONFIG_DB ``doc`` holds (RFC 6902: removing a
    missing path fails). A remove that would leave a key without fields removes the key, one that would leave a table
    without keys removes the table: GCU refuses a patch whose target has an empty table (generic_updater.py
    'validating target config does not have empty tables, since they do not show up in ConfigDb')."""
    left = {table: {key: set(entry) for key, entry in rows.items() if isinstance(entry, dict)}
            for table, rows in doc.items() if isinstance(rows, dict)}
    wanted: list[list[str]] = []
    for path in paths:
        if not _holds(doc, path) or path[1] not in left.get(path[0], {}):
            continue
        if len(path) == 3:
            left[path[0]][path[1]].discard(path[2])
            if left[path[0]][path[1]]:
                wanted.append(path)
                continue
        del left[path[0]][path[1]]
        wanted.append(path[:2])
    out: list[dict] = []
    for path in wanted:
        target = path if left.get(path[0]) else path[:1]  # the table's last key goes with the table
        op = {"op": "remove", "path": "/" + "/".join(target)}
        if op not in out:
            out.append(op)
    return out


def _holds(doc: dict, path: list[str]) -> bool:
    """Whether CONFIG_DB ``doc`` holds /TABLE/key (two segments) or /TABLE/key/field (three)."""
    entry = (doc.get(path[0]) or {}).get(path[1])
    if not isinstance(entry, dict):
        return False
    return len(path) == 2 or path[2] in entry


def _pfcwd_start(action: Any, restoration: Any, ports: list[str], detection: Any) -> str:
    """pfcwd/main.py start: [--action A] [--restoration-time R] PORTS... DETECTION_TIME (no sudo: the caller adds it).
    The restoration time is always given: without it pfcwd prints a notice and takes twice the detection time."""
    words = ["pfcwd", "start"]
    if action:
        words += ["--action", str(action)]
    if restoration:
        words += ["--restoration-time", str(restoration)]
    return " ".join(words + list(ports) + [str(detection)])


# What GCU prints when it refuses (sonic-utilities config/main.py apply_patch): up to 202311 'Failed to apply patch' on
# stderr, then click's ctx.fail(ex): 'Usage: ...', 'Try "config apply-patch -h" for help.', '', 'Error: <ex>'; 202405+
# 'Failed to apply patch due to: <ex>' and the same click lines. <ex> holds the failure; GCU's own notices before it
# ('Patch Applier: ... Patch: [...]') and, 202405+, validate_patch's 'Validate json patch: <the patch> failed due to:<e>'
# echo the whole patch, so a path found there names nothing (docs/vendor-sonic.md "When GCU refuses").
_CLICK_ERROR = re.compile(r"^Error: ", re.MULTILINE)
_ECHO = re.compile(r"(?:Validate json patch|Failed validating patch):.*?(?:failed due to:|$)", re.DOTALL)
# gu_common.py validate_field_operation: 'Operation: <op> is illegal on field: <path>' and
# 'Modification of <TABLE> table is illegal- validating function <fn> returned False'.
_ILLEGAL_FIELD = re.compile(r"Operation: (\w+) is illegal on field: (/\S+)")
_ILLEGAL_TABLE = re.compile(r"Modification of (\S+) table is illegal")


def _failure(out: str) -> str:
    """The failure GCU printed, without its notices and without the patch it echoes: click's 'Error: ' message
    (the last one), else the lines from 'Failed to ...' on, else the whole output."""
    errors = list(_CLICK_ERROR.finditer(out))
    if errors:
        text = out[errors[-1].end():]
    else:
        start = re.search(r"^Failed to .*$", out, re.MULTILINE)
        text = out[start.start():] if start else out
    return _ECHO.sub("", text).strip()


def _ops_named(text: str) -> list[dict]:
    """Every JSON Patch op written out in ``text`` (an object with 'op' and 'path')."""
    found, decoder, i = [], json.JSONDecoder(), text.find("{")
    while i >= 0:
        try:
            obj, end = decoder.raw_decode(text, i)
        except ValueError:
            end = i + 1
        else:
            if isinstance(obj, dict) and isinstance(obj.get("op"), str) and isinstance(obj.get("path"), str):
                found.append(obj)
        i = text.find("{", end)
    return found


def _refused(out: str, ops: list[dict], command: str) -> tuple[str, str, str]:
    """(what, line, device_said) of a refused apply-patch: the op the failure names (an op written out, or the field
    of an illegal operation), the one op of the patch in the table a validator refused, else the command itself; the
    device's own words are the failure without the patch it echoes."""
    said = _failure(out) or "(no output)"
    named = _ops_named(said)
    if named:
        op = named[0]
        return "%s %s" % (op["op"], op["path"]), json.dumps(op, sort_keys=True), said
    field = _ILLEGAL_FIELD.search(said)
    if field:
        return "%s %s" % field.groups(), json.dumps({"op": field.group(1), "path": field.group(2)}), said
    table = _ILLEGAL_TABLE.search(said)
    if table:
        mine = [op for op in ops if op.get("path", "").split("/")[1:2] == [table.group(1)]]
        if len(mine) == 1:
            return "%s %s" % (mine[0]["op"], mine[0]["path"]), json.dumps(mine[0], sort_keys=True), said
        return "a change of table %s" % table.group(1), command, said
    return "the patch (it names no operation)", command, said
