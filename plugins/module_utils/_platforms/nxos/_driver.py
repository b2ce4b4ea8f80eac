# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""Cisco NX-OS (Nexus 9000 cloud-scale): lossless RoCEv2 QoS through configure replace.

NX-OS has no candidate configuration a CLI session can stage; it replaces the whole running
configuration with a file, atomically, with an optional commit timer (Cisco Nexus 9000 Series
NX-OS System Management Configuration Guide, "Performing Configuration Replace", 9.3(1)+).
The driver builds that file from the switch's own running configuration:

    terminal dont-ask                                        (prepare) no confirmation prompts
    dir bootflash:                                           (open_session) another session's files kept on bootflash:
    show file ..., show running-config                       ... refused while its change is live (it may be pending)
    dir bootflash:                                           (load) stale lf-<s>-* files of this session
    delete bootflash:lf-<s>-<x>.cfg                          ... each of them
    copy running-config bootflash:lf-<s>-before.cfg          the state to roll back to
    show file bootflash:lf-<s>-before.cfg                    its text: target_config() merges the plan in
    (SCP bootflash:lf-<s>-target.cfg)                        netmiko CiscoNxosFileTransfer
    show file bootflash:lf-<s>-target.cfg md5sum             == the md5 of what was sent
    configure replace bootflash:lf-<s>-target.cfg verify-only   the device validates the patch
    show diff rollback-patch file bootflash:lf-<s>-before.cfg file bootflash:lf-<s>-target.cfg   (diff)
    configure replace bootflash:lf-<s>-target.cfg [commit-timeout <t>]   (commit)
    show file lf-<s>-before.cfg / lf-<s>-target.cfg, show running-config   (pending, confirm, rollback) where the change stands
    configure replace commit                                 (confirm) stop the timer, keep the change
    configure replace commit                                 (rollback) stop the timer, then
    configure replace bootflash:lf-<s>-before.cfg            ... replace the running config with the saved one
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
# Whether a timed commit is pending is decided from documented behaviour only (issue 31): no Cisco page or public
# capture shows what 'show config-replace status' prints, nor what 'configure replace commit' replies. Cisco's
# guide (CR, "Performing Configuration Replace") says "If the commit timer expires, the rollback operation is
# automatically initiated" and that the configuration "rolls back to or restores the previous running configuration"
# then: so a session's change is live while the running configuration holds its target file's configuration, and
# restored once it holds the before-file's again. The driver keeps both files on bootflash ('dir bootflash:', the form
# netmiko, napalm and the ntc-templates captures read) while a timed commit of the session may run, and deletes them
# once the change is settled. What this cannot see (unverified, docs/vendor-nxos.md): a timer started outside this
# collection, and whether a live change whose files are kept was confirmed by hand.
_SESSION_FILE = re.compile(r"(?:^|\s)lf-([A-Za-z0-9][A-Za-z0-9._-]*)-(before|target)\.cfg\s*$", re.M)
LIVE = "live"
RESTORED = "restored"


def sessions_on_flash(listing: str) -> list[str]:
    """The sessions 'dir bootflash:' lists both files of (lf-<s>-before.cfg and lf-<s>-target.cfg), sorted."""
    found: dict[str, set] = {}
    for match in _SESSION_FILE.finditer(listing or ""):
        found.setdefault(match.group(1), set()).add(match.group(2))
    return sorted(name for name, kinds in found.items() if kinds == {"before", "target"})


def change_state(before: str, target: str, running: str) -> str | None:
    """Where a session's change stands: LIVE when the running configuration holds the target file's (QoS)
    configuration, RESTORED when it holds the before-file's (the commit timer ran out and the switch rolled
    back, or a rollback replaced it), None when neither (someone else changed the switch). ValueError
    (naming nxos) for a text the configuration reader refuses."""
    was, wanted, now = (_nxos_readers.parse_config(text) for text in (before, target, running))
    if now == wanted:
        return LIVE
    if now == was:
        return RESTORED
    return None


def rejection(output: str) -> str | None:
    said = [line.strip() for line in (output or "").split("\n") if _ERROR.search(line)]
    return "\n".join(said) if said else None


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

    def _sessions(self, state: str) -> list[str]:
        """The sessions whose two files are on bootflash (sessions_on_flash)."""
        return sessions_on_flash(self._checked("dir bootflash:", "listing bootflash:", state))

    def _where(self, name: str, state: str) -> str | None:
        """Where session ``name``'s change stands on the switch (change_state: LIVE, RESTORED or None), from its two
        files and the running configuration."""
        before_file, target_file = self._files(name)
        texts = []
        for command in ("show file %s" % before_file, "show file %s" % target_file, "show running-config"):
            texts.append(self._checked(command, "reading %s" % command.split(" ", 2)[-1], state))
        try:
            return change_state(*texts)
        except ValueError as exc:
            raise self._error("session %s: %s" % (name, exc), state, line="show running-config") from None

    def open_session(self, name: str) -> None:
        if not isinstance(name, str) or not _SESSION_RE.fullmatch(name):
            raise self._error("session name %r: letters, digits, '.', '_' and '-' only (at most 64)" % (name,), _base.UNCHANGED)
        self.session = name
        self._verified = self._diff = None
        self._timed = False
        for other in self._sessions(_base.UNCHANGED):
            if self._where(other, _base.UNCHANGED) == LIVE:
                raise self._error("the change of session %s is live and its files lf-%s-*.cfg are kept on bootflash: its commit timer may "
                                  "still run (NX-OS publishes no form of its timer's state); refusing to change the switch until session %s "
                                  "is confirmed or rolled back" % (other, other, other), _base.UNCHANGED)

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
        """The timed commit that may still run: a session whose files are on bootflash and whose change is live
        ({'session', 'remaining_s': None}: the time left is not readable; 'certain': False: NX-OS publishes no form
        of its timer's state, so a change confirmed while its files were kept looks the same), or None."""
        state = self._state if self._state != _base.UNCHANGED else _base.UNKNOWN
        for name in self._sessions(state):
            if self._where(name, state) == LIVE:
                return {"session": name, "remaining_s": None, "certain": False}
        return None

    def _session_to_settle(self, session: str | None, action: str) -> str:
        """This run's session, ``session``, or - neither known - the one pending() finds; its files must be on bootflash."""
        state = _base.PENDING if self._timed else _base.UNKNOWN
        name = self._name(session) if (session or self.session) else None
        if name is None:
            found = self.pending()
            if not found:
                raise self._error("no session named and no change of this collection is pending on the switch "
                                  "(no lf-<session>-before.cfg / -target.cfg pair whose change is live): nothing to %s" % action, _base.UNKNOWN)
            return found["session"]
        if name not in self._sessions(state):
            raise self._error("session %s has no files on bootflash (lf-%s-before.cfg, lf-%s-target.cfg): no change of it is pending "
                              "to %s (settled already, or never committed with a timer)" % (name, name, name, action),
                              _base.ROLLED_BACK if self._timed else _base.UNKNOWN)
        return name

    def _restored(self, name: str) -> None:
        """The switch holds session ``name``'s before-configuration again: settled as rolled back, its files deleted."""
        self._timed = False
        self._state = _base.ROLLED_BACK
        self._delete(list(self._files(name)), _base.ROLLED_BACK, quiet=True)

    def confirm(self, session: str | None = None) -> None:
        """Confirm a timed commit ('configure replace commit'), decided by where the change stands before and after."""
        name = self._session_to_settle(session, "confirm")
        state = _base.PENDING if self._timed else _base.UNKNOWN
        where = self._where(name, state)
        if where == RESTORED:
            self._restored(name)
            raise self._error("session %s: no configure replace is pending confirmation: the switch holds the configuration from before "
                              "the change again (its commit timer has run out and the switch rolled back)" % name, _base.ROLLED_BACK)
        if where is None:
            raise self._error("session %s: the running configuration is neither the change nor what it replaced; refusing to confirm "
                              "(the files lf-%s-*.cfg are kept)" % (name, name), _base.UNKNOWN)
        command = "configure replace commit"
        out = self._run([command], _base.PENDING, "confirming the configure replace")[0]
        said = rejection(out)
        if said:
            # What 'configure replace commit' replies is unpublished, with a timer or without: a refusal leaves unknown
            # whether a timer still runs (it would roll the change back) or none did (confirmed before, by hand).
            raise self._error("the switch refused 'configure replace commit'; the change of session %s is live and whether a commit "
                              "timer still runs cannot be read (the files lf-%s-*.cfg are kept)" % (name, name), _base.UNKNOWN,
                              line=command, device_said=said)
        where = self._where(name, _base.UNKNOWN)
        if where == RESTORED:
            self._restored(name)
            raise self._error("session %s: the commit timer ran out before the confirm: the switch rolled the change back" % name, _base.ROLLED_BACK)
        if where is None:
            raise self._error("session %s: after 'configure replace commit' the running configuration is neither the change nor what it "
                              "replaced" % name, _base.UNKNOWN, line=command)
        self._timed = False
        self._state = _base.COMMITTED
        self._delete(list(self._files(name)), _base.COMMITTED)

    def rollback(self, session: str | None = None) -> None:
        """Put the configuration from before session's change back now. Cisco documents no cancel of a commit timer and
        no public source shows a second 'configure replace' while one runs; the documented path is used instead: stop
        the timer ('configure replace commit', the change stays), then replace the running configuration with the saved
        one ('configure replace <before-file>'). Should that replace fail, the switch restores the configuration it had
        (CR): the change, confirmed - reported as committed, with the device's words."""
        name = self._session_to_settle(session, "roll back")
        state = _base.PENDING if self._timed else _base.UNKNOWN
        where = self._where(name, state)
        if where == RESTORED:
            self._restored(name)
            return  # the commit timer already restored the configuration
        if where is None:
            raise self._error("session %s: the running configuration is neither the change nor what it replaced; refusing to roll back "
                              "(the files lf-%s-*.cfg are kept)" % (name, name), _base.UNKNOWN)
        before_file, _target_file = self._files(name)
        command = "configure replace commit"
        out = self._run([command], _base.PENDING, "stopping the commit timer before the rollback")[0]
        said = rejection(out)
        if said:
            if self._where(name, _base.UNKNOWN) == RESTORED:
                self._restored(name)
                return  # the timer ran out meanwhile
            raise self._error("cannot roll back session %s: the switch refused 'configure replace commit' (needed to stop the timer "
                              "before replacing the configuration); whether a commit timer still runs cannot be read" % name,
                              _base.UNKNOWN, line=command, device_said=said)
        command = "configure replace %s" % before_file
        out = self._run([command], _base.UNKNOWN, "rolling back to %s" % before_file, timeout=REPLACE_TIMEOUT)[0]
        where = self._where(name, _base.UNKNOWN)
        if where == RESTORED:
            self._restored(name)
            return
        if where == LIVE:
            self._state = _base.COMMITTED
            self._timed = False
            raise self._error("cannot roll back to %s: the switch keeps the change of session %s, confirmed (its timer was stopped "
                              "first); the files lf-%s-*.cfg are kept" % (before_file, name, name), _base.COMMITTED,
                              line=command, device_said=rejection(out) or out or "(no output)")
        raise self._error("after 'configure replace %s' the running configuration is neither the change nor what it replaced"
                          % before_file, _base.UNKNOWN, line=command, device_said=rejection(out) or out or "(no output)")

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
