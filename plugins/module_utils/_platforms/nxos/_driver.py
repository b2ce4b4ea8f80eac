# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""Cisco NX-OS (Nexus 9000 cloud-scale): lossless RoCEv2 QoS through configure replace.

NX-OS has no candidate configuration a CLI session can stage; it replaces the whole running
configuration with a file, atomically, with an optional commit timer (Cisco Nexus 9000 Series
NX-OS System Management Configuration Guide, "Performing Configuration Replace", 9.3(1)+).
The driver builds that file from the switch's own running configuration:

    terminal dont-ask                                        (prepare) no confirmation prompts
    show config-replace status                               (open_session) refuse a running commit timer
    dir bootflash:                                           (load) stale lf-<s>-* files of this session
    delete bootflash:lf-<s>-<x>.cfg                          ... each of them
    copy running-config bootflash:lf-<s>-before.cfg          the state to roll back to
    show file bootflash:lf-<s>-before.cfg                    its text: target_config() merges the plan in
    (SCP bootflash:lf-<s>-target.cfg)                        netmiko CiscoNxosFileTransfer
    show file bootflash:lf-<s>-target.cfg md5sum             == the md5 of what was sent
    configure replace bootflash:lf-<s>-target.cfg verify-only   the device validates the patch
    show diff rollback-patch file bootflash:lf-<s>-before.cfg file bootflash:lf-<s>-target.cfg   (diff)
    configure replace bootflash:lf-<s>-target.cfg [commit-timeout <t>]   (commit)
    configure replace commit                                 (confirm) stop the timer, keep the change
    configure replace bootflash:lf-<s>-before.cfg            (rollback) back now
    show running-config                                      (gather, read-back)
    copy running-config startup-config                       (save)

What the driver renders is Cisco's RoCEv2 design (Cisco Data Center Networking Blueprint for
AI/ML Applications; Nexus 9000 NX-OS Quality of Service Configuration Guide 10.3(x)): every DSCP
classified into a qos-group, a strict CNP queue and DWRR ('bandwidth remaining percent') for the
others, WRED in ECN mode on the RoCE queue, PFC ('pause pfc-cos') and MTU in the network-qos
policy, both applied under 'system qos', the PFC watchdog globals, and per port 'mtu',
'priority-flow-control mode on' and the classification policy. Every name the collection owns
starts 'LF-'. Every command and form with its source: docs/vendor-nxos.md; what no source
confirms is marked "unverified" here and there.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from typing import Any

from ansible_collections.lossless.fabric.plugins.module_utils._platforms import _base, _channel, _records
from ansible_collections.lossless.fabric.plugins.module_utils._platforms.nxos import _readers as _nxos_readers
from ansible_collections.lossless.fabric.plugins.module_utils._platforms.nxos import _render as _nxos_render
from ansible_collections.lossless.fabric.plugins.module_utils._platforms.nxos import _show as _nxos_show
from ansible_collections.lossless.fabric.plugins.module_utils._platforms.nxos import _vendor as _vendor_nxos

PLATFORM = _records.NXOS

# 'configure replace <file> commit-timeout <s>': 30-3600 s is the Nexus 7000 guide's; on the Nexus 9000 unverified.
COMMIT_TIMEOUT_S = _vendor_nxos.COMMIT_TIMEOUT_S_RANGE

# A session name becomes part of a bootflash file name (lf-<s>-before.cfg): 64 characters at most, as
# switch_config and the change window name sessions (_change_window.SESSION_RE).
_SESSION_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}", re.ASCII)


# ---------------------------------------------------------------------------
# what the device prints
# ---------------------------------------------------------------------------

# NX-OS errors: "% Invalid command at '^' marker.", "% Incomplete command at '^' marker.", "% Invalid number
# ..." (the CLI's parser, ntc-templates / netmiko's cisco_nxos error checks), "Invalid range at '^' marker."
# (no '%': a 9.3(1) session paste), "ERROR: ..." lines (the interface manager's, e.g. the MTU error of an L2
# port), and configure replace's "Syntax error while parsing '<line>'" and "... failed" lines.
_ERROR = re.compile(r"^\s*(?:%|ERROR:|Error:|Syntax error while parsing\b|No such file or directory)|at '\^' marker|"
                    r"\b[Cc]onfigure replace failed\b|\bPatch validation failed\b|\bRollback failed\b", re.M)
_SYNTAX = re.compile(r"Syntax error while parsing '([^'\n]*)'")
# Success forms: "Configure replace completed successfully." (commit: a 9.3(1) session and pyATS' config_replace
# check), "Patch validation completed successful" (verify-only: the same session), "Rollback Patch is Empty"
# (nothing to change: napalm nxos._get_diff and a public NX-OS driver's check). Others: unverified.
_REPLACED = re.compile(r"Configure replace completed successfully")
_VERIFIED = re.compile(r"Patch validation completed successful|Rollback Patch is Empty|Configure replace completed successfully")
_COPIED = re.compile(r"Copy complete")
_MD5 = re.compile(r"\b([0-9a-f]{32})\b")
# 'show config-replace status' (form unverified: no published output was found): a commit timer running
# is read from a line naming the commit timeout / timer with a remaining time, or a status of 'in progress'.
_TIMER_LEFT = re.compile(r"(?im)^\s*(?:remaining time|time remaining|commit[- ]timer(?: expiry)?(?: remaining)?|time left)\s*:\s*(\d+)")
_TIMER_ACTIVE = re.compile(r"(?im)^\s*(?:commit[- ]timeout|commit[- ]timer|timer status)\s*:\s*(?:active|running|pending|started)\b")
_IN_PROGRESS = re.compile(r"(?im)^\s*(?:operation status|last operation status|status)\s*:\s*(?:in progress|in-progress|pending commit|waiting for commit)")
_FILE_IN_STATUS = re.compile(r"\blf-([A-Za-z0-9][A-Za-z0-9._-]*)-target\.cfg\b")


def rejection(output: str) -> str | None:
    said = [line.strip() for line in (output or "").split("\n") if _ERROR.search(line)]
    return "\n".join(said) if said else None


def replace_status(output: str) -> dict | None:
    """The commit timer 'show config-replace status' shows: {'session', 'remaining_s'}, or None."""
    text = output or ""
    left = _TIMER_LEFT.search(text)
    active = _TIMER_ACTIVE.search(text) or _IN_PROGRESS.search(text)
    if left and int(left.group(1)) == 0 and not active:
        return None
    if not left and not active:
        return None
    match = _FILE_IN_STATUS.search(text)
    return {"session": match.group(1) if match else None, "remaining_s": int(left.group(1)) if left else None}


def diff_of(output: str) -> str:
    """The patch 'show diff rollback-patch file A file B' prints, as napalm's nxos driver reads it: the lines
    after 'Generating Rollback Patch', 'Rollback Patch is Empty' meaning none, '!' and '.' lines dropped."""
    text = (output or "").replace("\r", "")
    if "Generating Rollback Patch" in text:
        text = text.split("Generating Rollback Patch", 1)[1]
    text = text.replace("Rollback Patch is Empty", "")
    kept = [line.rstrip(" ") for line in text.split("\n") if line.strip() and line.strip()[0] not in "!.#"]
    return "\n".join(kept) + "\n" if kept else ""


# The SSH channel closed or the device stopped answering (the shared channel's error).
_Lost = _channel.Lost

DEFAULT_TIMEOUT = 60.0  # seconds for one batch, plus PER_LINE_TIMEOUT a command
PER_LINE_TIMEOUT = 0.5
REPLACE_TIMEOUT = 600.0  # a configure replace validates and applies the whole configuration


class Driver(_base.Driver):
    """Cisco NX-OS over SSH (netmiko cisco_nxos), configure replace with commit-timeout."""

    platform = "nxos"
    device_type = "cisco_nxos"
    # No ECN-marked count in any published 'show queuing interface', no watchdog statistics read (_show, docs/vendor-nxos.md).
    counters_not_available = ("ecn_marked", "ecn_marked_total", "watchdog_storms")

    def __init__(self, conn: Any, device: str):
        super().__init__(conn, device)
        self._state = _base.UNCHANGED
        self._verified: str | None = None  # the verify-only output, until the session changes
        self._diff: str | None = None
        self._timed = False  # committed with a commit timer this run
        self.timeout = DEFAULT_TIMEOUT

    # -- netmiko ---------------------------------------------------------
    @staticmethod
    def connection_class():
        # netmiko 4.8: the class lives in netmiko/cisco/cisco_nxos.py (there is no cisco_nxos_ssh module).
        from netmiko.cisco.cisco_nxos import CiscoNxosSSH  # pylint: disable=import-outside-toplevel

        return CiscoNxosSSH

    @staticmethod
    def file_transfer_class():
        """netmiko's SCP transfer for NX-OS (put to 'bootflash:'; the switch needs 'feature scp-server')."""
        from netmiko.cisco.cisco_nxos import CiscoNxosFileTransfer  # pylint: disable=import-outside-toplevel

        return CiscoNxosFileTransfer

    # -- pure ------------------------------------------------------------
    @staticmethod
    def render(plan: dict) -> list[str]:
        return _nxos_render.render_plan(plan)

    @staticmethod
    def parse(running: str) -> dict:
        """The lossless-QoS part of an NX-OS running config: the qos-group each DSCP is classified into
        by each port's input policy, the queues of its output queuing policy (its own, or the system's),
        the no-drop CoS of the system network-qos policy, the watchdog globals. ValueError naming nxos."""
        return _nxos_readers.parse_config(running)

    @staticmethod
    def missing_lines(lines: list[str], running: str) -> list[str]:
        """The rendered lines ``running`` does not carry, each as 'context > ... > line' (by meaning:
        a 'match dscp' list as its code points, thresholds in bytes)."""
        return _nxos_readers.missing(lines, running)

    @staticmethod
    def target_config(before_text: str, lines: list[str]) -> str:
        """Pure: the whole configuration configure replace is given (see ``target``)."""
        return _nxos_readers.target(before_text, lines)

    # -- plumbing --------------------------------------------------------
    def _error(self, message: str, state: str, **kwargs: Any) -> _base.DeviceError:
        return _base.DeviceError(self.device, message, state=state, **kwargs)

    def _prompt_re(self) -> re.Pattern:
        base = getattr(self.conn, "base_prompt", None) or ""
        if not base:
            raise _Lost("no prompt known for this connection")
        return re.compile(r"^%s(?:\([^)\n]*\))?# ?" % re.escape(base), re.M)

    def _run(self, commands: list[str], state: str | None, what: str, timeout: float | None = None) -> list[str]:
        """Write all commands in one chunk; read until each has returned its prompt; each command's
        output (echo removed). A lost connection or a silent device: DeviceError with ``state``."""
        state = state or self._state
        for command in commands:
            _base.check_cli_line(self.device, command)
        limit = (timeout or self.timeout) + PER_LINE_TIMEOUT * len(commands)
        try:
            # settle, align end: NX-OS can print the prompt before the echo (netmiko CiscoNxosBase.session_preparation).
            reply = _channel.exchange(self.conn, list(commands), self._prompt_re(), limit, settle=True, align="end")
        except _channel.Silent as exc:
            raise self._error("no prompt after %s within %.0f s (read %d of %d prompts)" % (what, limit, exc.answered, exc.expected),
                              state, line=commands[min(exc.answered, len(commands) - 1)], device_said=exc.tail) from None
        except _channel.transport_errors() as exc:
            raise self._error("connection lost while %s: %s" % (what, exc or type(exc).__name__), state, line=commands[-1]) from None
        return [_channel.strip_echo(command, segment).strip("\n") for command, segment in zip(commands, reply.segments)]

    def _checked(self, command: str, what: str, state: str, timeout: float | None = None, success: re.Pattern | None = None) -> str:
        out = self._run([command], state, what, timeout)[0]
        said = rejection(out)
        if said or (success is not None and not success.search(out)):
            raise self._error("%s failed" % what, state, line=command, device_said=said or out or "(no output)")
        return out

    def _files(self, session: str | None = None) -> tuple[str, str]:
        name = session or self.session or ""
        return "bootflash:lf-%s-before.cfg" % name, "bootflash:lf-%s-target.cfg" % name

    def _name(self, session: str | None) -> str:
        name = session or self.session
        if not isinstance(name, str) or not _SESSION_RE.fullmatch(name):
            raise self._error("no session %r to act on (letters, digits, '.', '_', '-')" % (name,), self._state)
        return name

    def _delete(self, files: list[str], state: str, quiet: bool = False) -> None:
        """Delete files on bootflash ('terminal dont-ask': no prompt); a file already gone is not an error."""
        if not files:
            return
        commands = ["delete %s" % name for name in files]
        try:
            outputs = self._run(commands, state, "deleting the session's files")
        except _base.DeviceError:
            if quiet:
                return
            raise
        for command, out in zip(commands, outputs):
            said = rejection(out)
            if said and not re.search(r"No such file", out, re.I) and not quiet:
                raise self._error("deleting a session file failed", state, line=command, device_said=said)

    def _cleanup(self, state: str) -> None:
        """Best effort after a failure: the caller reports the first error."""
        self._delete(list(self._files()), state, quiet=True)

    # -- device ----------------------------------------------------------
    def prepare(self) -> None:
        """'terminal dont-ask': copy and delete ask no confirmation (netmiko did 'terminal length 0' and
        'terminal width 511'; Cisco NX-OS Fundamentals, 'terminal dont-ask')."""
        self._checked("terminal dont-ask", "setting terminal dont-ask", _base.UNCHANGED)

    def gather(self) -> str:
        return self._checked("show running-config", "reading the running config", self._state)

    def _status(self, state: str) -> dict | None:
        out = self._checked("show config-replace status", "reading the configure replace status", state)
        return replace_status(out)

    def open_session(self, name: str) -> None:
        if not isinstance(name, str) or not _SESSION_RE.fullmatch(name):
            raise self._error("session name %r: letters, digits, '.', '_' and '-' only (at most 64)" % (name,), _base.UNCHANGED)
        self.session = name
        self._verified = self._diff = None
        self._timed = False
        pending = self._status(_base.UNCHANGED)
        if pending:
            who = "lf-%s-target.cfg" % pending["session"] if pending["session"] else "a file"
            left = "" if pending["remaining_s"] is None else ", %d s left" % pending["remaining_s"]
            raise self._error("a configure replace is in progress: a commit timer runs for %s%s; refusing to change the switch "
                              "until it is confirmed ('configure replace commit') or has rolled back" % (who, left), _base.UNCHANGED)

    def load(self, lines: list[str]) -> None:
        name = self._name(None)
        for line in lines:
            _base.check_cli_line(self.device, line)
        before_file, target_file = self._files()
        listing = self._checked("dir bootflash:", "listing bootflash:", _base.UNCHANGED)
        stale = sorted({m.group(1) for m in re.finditer(r"(?:^|\s)(lf-%s-[A-Za-z0-9._-]+)\s*$" % re.escape(name), listing, re.M)})
        commands = ["delete bootflash:%s" % f for f in stale] + ["copy running-config %s" % before_file, "show file %s" % before_file]
        outputs = self._run(commands, _base.UNCHANGED, "saving the running config to %s" % before_file)
        for command, out in zip(commands[:-1], outputs[:-1]):
            said = rejection(out)
            if said or (command.startswith("copy ") and not _COPIED.search(out)):
                self._cleanup(_base.UNCHANGED)
                raise self._error("saving the state to roll back to failed", _base.UNCHANGED, line=command, device_said=said or out or "(no output)")
        before = outputs[-1]
        try:
            text = _nxos_readers.target(before + "\n", lines)
        except ValueError as exc:
            self._cleanup(_base.UNCHANGED)
            raise self._error(str(exc), _base.UNCHANGED, line=commands[-1], device_said=before[:2000]) from None
        local_md5 = self._put(text, target_file)
        commands = ["show file %s md5sum" % target_file, "configure replace %s verify-only" % target_file]
        outputs = self._run(commands, _base.UNCHANGED, "verifying %s" % target_file, timeout=REPLACE_TIMEOUT)
        md5 = _MD5.search(outputs[0])
        if not md5 or md5.group(1) != local_md5:
            self._cleanup(_base.UNCHANGED)
            raise self._error("the file on bootflash is not what was sent (md5 %s)" % local_md5, _base.UNCHANGED, line=commands[0],
                              device_said=outputs[0] or "(no output)")
        out = outputs[1]
        said = rejection(out)
        if said or not _VERIFIED.search(out):
            self._cleanup(_base.UNCHANGED)
            raise self._error("the device rejected the configuration (configure replace verify-only); the running config is as it was",
                              _base.UNCHANGED, line=self._rejected_line(out, lines) or commands[1], device_said=said or out or "(no output)")
        self._verified = out

    @staticmethod
    def _rejected_line(out: str, lines: list[str]) -> str | None:
        """The rendered line configure replace names in 'Syntax error while parsing '<line>'' (or the line itself)."""
        for match in _SYNTAX.finditer(out or ""):
            said = " ".join(match.group(1).split())
            for line in lines:
                if " ".join(line.split()) == said:
                    return line
            return match.group(1)
        return None

    def _put(self, text: str, remote: str) -> str:
        """SCP ``text`` to ``remote`` (bootflash:<name>) from a private temporary file, deleted after; its md5."""
        data = text.encode("utf-8")
        local_md5 = hashlib.md5(data, usedforsecurity=False).hexdigest()
        handle, path = tempfile.mkstemp(prefix="lf-nxos-", suffix=".cfg")  # mode 0600
        try:
            with os.fdopen(handle, "wb") as stream:
                stream.write(data)
            transfer = self.file_transfer_class()(self.conn, source_file=path, dest_file=remote.split(":", 1)[1],
                                                  file_system="bootflash:", direction="put")
            with transfer:
                transfer.transfer_file()
        except (_channel.transport_errors() + (ValueError,)) as exc:
            self._cleanup(_base.UNCHANGED)
            raise self._error("copying the target configuration to %s failed (SCP; the switch needs 'feature scp-server'): %s"
                              % (remote, exc or type(exc).__name__), _base.UNCHANGED, line="scp %s" % remote) from None
        finally:
            try:
                os.unlink(path)
            except OSError:
                pass
        return local_md5

    def diff(self) -> str:
        if self._verified is None:
            raise self._error("diff before load", _base.UNCHANGED)
        if self._diff is None:
            before_file, target_file = self._files()
            command = "show diff rollback-patch file %s file %s" % (before_file, target_file)
            out = self._checked(command, "reading the rollback patch", _base.UNCHANGED, timeout=REPLACE_TIMEOUT)
            self._diff = diff_of(out)
        return self._diff

    def abort(self) -> None:
        self._name(None)
        self._delete(list(self._files()), _base.UNCHANGED)
        self._verified = self._diff = None

    def commit(self, confirm_timeout_s: int | None) -> None:
        self._name(None)
        if self._verified is None:
            raise self._error("commit before load", _base.UNCHANGED)
        _before_file, target_file = self._files()
        if confirm_timeout_s is None:
            command, state = "configure replace %s" % target_file, _base.UNKNOWN
        else:
            low, high = COMMIT_TIMEOUT_S
            if not isinstance(confirm_timeout_s, int) or isinstance(confirm_timeout_s, bool) or not low <= confirm_timeout_s <= high:
                raise self._error("commit timeout %r: whole seconds from %d to %d (configure replace commit-timeout)"
                                  % ((confirm_timeout_s,) + COMMIT_TIMEOUT_S), _base.UNCHANGED)
            command, state = "configure replace %s commit-timeout %d" % (target_file, confirm_timeout_s), _base.PENDING
        out = self._run([command], state, "replacing the running config", timeout=REPLACE_TIMEOUT)[0]
        said = rejection(out)
        if said or not _REPLACED.search(out):
            # Cisco: "If there is a failure in the configuration replace, the original configuration is restored".
            restored = re.search(r"Rolling back to previous configuration is successful|original configuration (?:is|was) restored", out, re.I)
            if restored:
                self._cleanup(_base.ROLLED_BACK)
            raise self._error("configure replace failed" + ("; the device restored the configuration it had" if restored else
                              "; the files lf-%s-*.cfg are kept on bootflash" % self.session),
                              _base.ROLLED_BACK if restored else _base.UNKNOWN, line=command, device_said=said or out or "(no output)")
        self._verified = self._diff = None
        if confirm_timeout_s is None:
            self._state = _base.COMMITTED
            self._delete(list(self._files()), _base.COMMITTED)
        else:
            self._state = _base.PENDING
            self._timed = True

    def pending(self) -> dict | None:
        return self._status(self._state if self._state != _base.UNCHANGED else _base.UNKNOWN)

    def _own_timer(self, session: str | None, action: str) -> dict | None:
        """The running commit timer, when it is this session's; None when none runs (DeviceError when another's does)."""
        status = self._status(_base.PENDING if self._timed else _base.UNKNOWN)
        if status and session and status["session"] not in (None, session):
            raise self._error("refusing to %s: the commit timer that runs is for lf-%s-target.cfg, not session %s"
                              % (action, status["session"], session), _base.UNKNOWN)
        return status

    def confirm(self, session: str | None = None) -> None:
        """Confirm the running commit timer (this run's session, ``session``, or - neither known - the one
        the switch shows: NX-OS has one), then delete the session's files."""
        name = self._name(session) if (session or self.session) else None
        status = self._own_timer(name, "confirm")
        if status is None:
            state = _base.ROLLED_BACK if self._timed else _base.UNKNOWN
            self._timed = False
            raise self._error("no configure replace%s is pending confirmation (its commit timer has run out)"
                              % (" of session %s" % name if name else ""), state)
        name = name or status["session"]
        command = "configure replace commit"
        out = self._run([command], _base.PENDING, "confirming the configure replace")[0]
        said = rejection(out)
        if said:
            raise self._error("cannot confirm the configure replace", self._after_failure(), line=command, device_said=said)
        self._timed = False
        self._state = _base.COMMITTED
        if name:
            self._delete(list(self._files(name)), _base.COMMITTED)

    def rollback(self, session: str | None = None) -> None:
        """Replace the running config with this session's before-file now (the session: this run's, ``session``,
        or - neither known - the one the switch's status names)."""
        name = self._name(session) if (session or self.session) else None
        status = self._own_timer(name, "roll back")
        if name is None:
            if not status or not status["session"]:
                raise self._error("no session named and the switch names no lf-<session>-target.cfg pending: nothing to roll back to",
                                  _base.PENDING if status else _base.UNKNOWN)
            name = status["session"]
        if status is None:
            if self._timed:
                self._timed = False
                self._state = _base.ROLLED_BACK
                self._delete(list(self._files(name)), _base.ROLLED_BACK, quiet=True)
                return  # the timer already restored the configuration
            raise self._error("no configure replace of session %s is pending to roll back" % name, _base.UNKNOWN)
        before_file, _target_file = self._files(name)
        # Whether NX-OS takes a second configure replace while the commit timer runs is unverified (Cisco's
        # guide names only 'configure replace commit' for that state); the device's refusal is reported as is.
        command = "configure replace %s" % before_file
        out = self._run([command], _base.PENDING, "rolling back to %s" % before_file, timeout=REPLACE_TIMEOUT)[0]
        said = rejection(out)
        if said or not _REPLACED.search(out):
            raise self._error("cannot roll back to %s" % before_file, self._after_failure(), line=command, device_said=said or out or "(no output)")
        self._timed = False
        self._state = _base.ROLLED_BACK
        self._delete(list(self._files(name)), _base.ROLLED_BACK)

    def _after_failure(self) -> str:
        """Still pending (the timer will restore the configuration) or not any more (unknown which way)."""
        try:
            return _base.PENDING if self._status(_base.UNKNOWN) else _base.UNKNOWN
        except _base.DeviceError:
            return _base.UNKNOWN

    def readback_missing(self, lines: list[str]) -> list[str]:
        running = self.gather()
        try:
            return self.missing_lines(lines, running)
        except ValueError as exc:
            raise self._error(str(exc), self._state, line="show running-config", device_said=running[:2000]) from None

    def save(self) -> None:
        command = "copy running-config startup-config"
        out = self._run([command], _base.COMMITTED, "saving the configuration", timeout=REPLACE_TIMEOUT)[0]
        said = rejection(out)
        if said or not _COPIED.search(out):
            raise self._error("the change is live but was not saved to the startup config", _base.COMMITTED, line=command,
                              device_said=said or out or "(no output)")

    # -- counters and links (read-only): the readers are _nxos_show's -----------------------------
    @staticmethod
    def link_commands(ports: list[str] | None = None) -> list[str]:
        return _nxos_show.link_commands(ports)

    @staticmethod
    def parse_links(outputs: dict[str, str]) -> dict:
        return _nxos_show.parse_links(outputs)

    @staticmethod
    def counter_commands(ports: list[str] | None = None) -> list[str]:
        return _nxos_show.counter_commands(ports)

    @staticmethod
    def parse_counters(outputs: dict[str, str]) -> tuple[dict[str, dict], dict[str, str]]:
        return _nxos_show.parse_counters(outputs)

    def read_counters(self, commands: list[str]) -> dict[str, str]:
        """All commands in one round trip; {command: output} (the readers judge each output)."""
        return dict(zip(commands, self._run(list(commands), _base.UNCHANGED, "reading the counters")))
