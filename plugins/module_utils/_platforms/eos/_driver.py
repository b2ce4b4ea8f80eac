# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""Arista EOS: lossless RoCEv2 QoS through a named configuration session.

Transaction (switch reference section 1.1; arista.com/en/um-eos/eos-configure-session):

    configure session NAME          stage; the running config is untouched
    <lines>                         the rendered configuration
    show session-config diffs       the device's own diff of the session
    abort                           discard (no diff, check mode, rejected line)
    commit timer hh:mm:ss           go live; EOS reverts by itself at expiry
    configure session NAME commit   (from exec) confirm the timed commit
    configure session NAME abort    (from exec) roll a timed commit back now
    write memory                    persist after confirmation

Round trips are the cost that matters when one play pushes to many switches:
every step writes all its commands in one chunk and reads until it has seen
one prompt per command, so load() (session, every line and the diff) is one
round trip, and so are commit, read-back, confirm and save. Output is split
at the prompts, so each error is attributed to the line that caused it.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ansible_collections.lossless.fabric.plugins.module_utils._platforms import _base, _channel, _records
from ansible_collections.lossless.fabric.plugins.module_utils._platforms.eos import _readers as _eos_readers
from ansible_collections.lossless.fabric.plugins.module_utils._platforms.eos import _render as _eos_render

_SESSION_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,99}")
# Lines load() refuses: they would leave the session or act outside it.
_NOT_CONFIG = re.compile(r"^\s*(end|exit|abort|commit|configure|copy|write|reload|bash|delete|rollback|clear)\b")
# 'show configuration sessions detail' as text: a table "Name  State  User  Terminal ..."
# with a dashed ruler; '*' marks the asking terminal's session. Column layout unverified
# (no captured output found); the JSON form is what the driver asks for.
_SESSION_ROW = re.compile(r"^\s*\*?\s*([A-Za-z0-9][\w.:-]*)\s+(pendingCommitTimer|pending|completed|aborted)\b")
SESSIONS_COMMAND = "show configuration sessions detail | json"
VERSION_COMMAND = "show version | json"


def parse_sessions(sessions_out: str, version_out: str | None = None) -> list[dict]:
    """[{'session', 'state', 'remaining_s'}] from 'show configuration sessions detail'.

    JSON forms (napalm-automation/napalm napalm/eos/eos.py, _get_pending_commits):
    EOS up to 4.32 puts 'state' (and 'commitBy', seconds of uptime) under
    sessions[name]; later releases name the timed session at the top level
    ('commitTimerSessionName', 'commitTimerExpireTime', seconds of uptime).
    'uptime' comes from 'show version | json'. Text: the table above.
    ValueError names the form expected for anything else."""
    try:
        doc = json.loads(sessions_out)
    except (TypeError, ValueError):
        doc = None
    if isinstance(doc, dict) and isinstance(doc.get("sessions"), dict):
        uptime = None
        try:
            uptime = float(json.loads(version_out or "")["uptime"])
        except (TypeError, ValueError, KeyError):
            uptime = None

        def left(expires: Any) -> int | None:
            if isinstance(expires, bool) or not isinstance(expires, (int, float)) or expires < 0 or uptime is None:
                return None
            return max(0, round(expires - uptime))

        rows = []
        timed = doc.get("commitTimerSessionName")
        for name, data in doc["sessions"].items():
            data = data if isinstance(data, dict) else {}
            state = str(data.get("state", ""))
            row = {"session": name, "state": state, "remaining_s": None}
            if "pendingCommitTimer" in state:
                row.update(state="pendingCommitTimer", remaining_s=left(data.get("commitBy")))
            if timed == name:
                row.update(state="pendingCommitTimer", remaining_s=left(doc.get("commitTimerExpireTime")))
            rows.append(row)
        if timed and timed not in doc["sessions"]:
            rows.append({"session": timed, "state": "pendingCommitTimer", "remaining_s": left(doc.get("commitTimerExpireTime"))})
        return rows
    text = sessions_out if isinstance(sessions_out, str) else ""
    if re.search(r"^\s*Name\s+State\b", text, re.M):
        rows = []
        for line in text.split("\n"):
            match = _SESSION_ROW.match(line)
            if match and match.group(1) != "Name":
                rows.append({"session": match.group(1), "state": match.group(2), "remaining_s": None})
        return rows
    raise ValueError("eos: 'show configuration sessions detail' gave neither JSON with a 'sessions' map nor the "
                     "'Name State ...' table: %r" % text.strip()[:200])


DEFAULT_TIMEOUT = 60.0  # seconds for one chunk, plus PER_LINE_TIMEOUT a command
PER_LINE_TIMEOUT = 0.5
RECONNECT_TIMEOUT = 10.0  # seconds for a chunk after logging in again to clean up a lost load


# The platform record (_base.Platform) the intent validates an EOS switch with; values as _intent/_tables.py had them.
# The registry record (interface names, maximum MTU, ECN starting values): _records.py.
PLATFORM = _records.EOS


class Driver(_base.Driver):
    """Arista EOS over SSH (netmiko arista_eos), configuration sessions with commit timer."""

    platform = "eos"
    device_type = "arista_eos"

    def __init__(self, conn: Any, device: str):
        super().__init__(conn, device)
        self._in_session = False  # the CLI sits in the session's config mode
        self._diff: str | None = None  # the diff load() read, until the session changes
        self._loaded: list[str] = []  # the lines load() put into this driver's session (for the read-back after a lost timer)
        self._state = _base.UNCHANGED  # what this driver has done to the device so far
        self._prompt = ""  # the last prompt read
        self._lost: str | None = None  # how the last _run lost the connection (None: it did not; a silent device is not lost)
        self.timeout = DEFAULT_TIMEOUT

    # -- netmiko ---------------------------------------------------------
    @staticmethod
    def connection_class():
        from netmiko.arista.arista import AristaSSH  # pylint: disable=import-outside-toplevel

        return AristaSSH

    # -- pure ------------------------------------------------------------
    @staticmethod
    def render(plan: dict) -> list[str]:
        return _eos_render.render(plan)

    @staticmethod
    def parse(running: str) -> dict:
        return _eos_readers.parse(running)

    @staticmethod
    def missing_lines(lines: list[str], running: str) -> list[str]:
        return _eos_readers.missing_lines(lines, running)

    # -- plumbing --------------------------------------------------------
    def _error(self, message: str, state: str, **kwargs: Any) -> _base.DeviceError:
        return _base.DeviceError(self.device, message, state=state, **kwargs)

    def _io_errors(self) -> tuple:
        return _channel.transport_errors()

    def _prompt_re(self) -> re.Pattern:
        return re.compile(r"^%s(?:\([^)\n]*\))?[#>] ?" % re.escape(self.conn.base_prompt), re.M)

    def _run(self, commands: list[str], state: str | None, what: str) -> list[str]:
        """Write all commands in one chunk; read until each has returned its
        prompt; return each command's output (its echo removed). A lost
        connection or a silent device raises DeviceError with ``state``
        (None: the device state this driver last knew)."""
        state = state or self._state
        prompt = self._prompt_re()
        timeout = self.timeout + PER_LINE_TIMEOUT * len(commands)
        try:
            # settle: EOS can print a prompt before the echo when it falls behind; align end: a
            # repeated prompt then falls away at the front.
            reply = _channel.exchange(self.conn, [command.strip() for command in commands], prompt, timeout, settle=True, align="end")
        except _channel.Silent as exc:
            raise self._error(
                "no prompt after %s within %.0f s (read %d of %d prompts)" % (what, self.timeout, exc.answered, exc.expected),
                state,
                device_said=exc.tail,
            ) from None
        except self._io_errors() as exc:
            self._lost = "connection lost while %s: %s" % (what, exc or type(exc).__name__)
            raise self._error(self._lost, state) from None
        self._lost = None
        self._prompt = reply.prompts[-1].strip()
        self._in_session = "(config-s-" in self._prompt
        # Aligned from the end: piece i before the last holds command i's echo and output.
        outputs = []
        for command, piece in zip(commands, reply.segments):
            body = piece.split("\n")
            while body and body[0].strip() in ("", command.strip()):
                body.pop(0)  # the echo (EOS can repeat it when it falls behind)
            outputs.append("\n".join(body).strip("\n"))
        return outputs

    @staticmethod
    def _rejection(output: str) -> str | None:
        return _eos_readers._rejection(output)

    def _name(self, session: str | None) -> str:
        name = session or self.session
        if not name:
            raise self._error("no configuration session given or opened", _base.UNKNOWN)
        return name

    def _enter(self) -> list[str]:
        """The command that puts the CLI into the session, when it is not there."""
        return [] if self._in_session else ["configure session %s" % self._name(None)]

    # -- device ----------------------------------------------------------
    def prepare(self) -> None:
        """Privileged EXEC: one empty line shows the prompt; 'enable' only when it ends in '>'."""
        self._run([""], _base.UNCHANGED, "reading the prompt")
        if self._prompt.endswith("#"):
            return
        try:
            self.conn.enable()
        except ValueError as exc:  # netmiko: "Failed to enter enable mode"
            raise self._error("cannot enter privileged EXEC mode (enable): %s" % exc, _base.UNCHANGED) from None
        except self._io_errors() as exc:
            raise self._error("connection lost while entering enable mode: %s" % exc, _base.UNCHANGED) from None

    def gather(self) -> str:
        """The whole running config: a 'section' filter would not make EOS build
        it faster, and an alternation in a filter regex collides with the pipe
        character of the EOS CLI, so one plain command is the one round trip."""
        out = self._run(["show running-config"], None, "reading the running config")[0]
        said = self._rejection(out)
        if said:
            raise self._error("cannot read the running config", self._state, line="show running-config", device_said=said)
        return out

    def open_session(self, name: str) -> None:
        """Name the session; the CLI enters it with load()'s chunk (one round trip less)."""
        if not isinstance(name, str) or not _SESSION_NAME.fullmatch(name):
            raise self._error("session name %r: letters, digits, '-' and '_' only" % (name,), _base.UNCHANGED)
        self.session = name
        self._in_session = False
        self._diff = None
        self._loaded = []

    def load(self, lines: list[str]) -> None:
        name = self._name(None)
        if not self._in_session:
            self._refuse_others(name)
        sent = []
        for line in lines:
            _base.check_cli_line(self.device, line)
            if not line.strip():
                continue
            if _NOT_CONFIG.match(line):
                raise self._error("refusing a line that would act outside the configuration session", _base.UNCHANGED, line=line)
            sent.append(line.strip())
        commands = self._enter() + sent + ["show session-config diffs"]
        entered = not self._in_session
        try:
            outputs = self._run(commands, _base.UNCHANGED, "loading the configuration into session %s" % name)
        except _base.DeviceError as exc:
            if self._lost is None:
                raise
            raise self._after_lost_load(name, self._lost) from exc
        for index, (command, output) in enumerate(zip(commands, outputs)):
            said = self._rejection(output)
            if not said:
                continue
            if entered and index == 0 and not self._in_session:
                raise self._error("cannot open configuration session %s" % name, _base.UNCHANGED, line=command, device_said=said)
            self._abort_quietly()
            raise self._error("the device rejected a line; the session was aborted", _base.UNCHANGED, line=command, device_said=said)
        self._diff = self._clean_diff(outputs[-1])
        self._loaded = self._loaded + [line for line in lines if line.strip()]  # indented: the read-back reads the blocks

    def _after_lost_load(self, name: str, lost: str) -> _base.DeviceError:
        """Issue 33: EOS keeps an uncommitted session after its terminal goes (Arista EOS user manual, Configure
        Session: until aborted, a reboot or 24 h), and every later run refuses a switch holding one. This run
        opened the session, under this name, and never committed it: it logs in again and aborts it. The error
        says which happened: aborted, nothing staged, or left open (with the command that clears it)."""
        try:
            self._reconnect()
            row = next((r for r in self.sessions() if r["session"] == name), None)
            if row is None:
                note = "logged in again: the switch holds no session %s (nothing was staged)" % name
            elif row["state"] != "pending":
                note = "logged in again: session %s is %s, not open and uncommitted: left alone" % (name, row["state"])
            else:
                out = self._run(["configure session %s abort" % name], _base.UNCHANGED, "aborting session %s" % name)[0]
                refused = self._rejection(out)
                if refused:
                    raise self._error("the switch refused to abort it: %s" % refused, _base.UNCHANGED)
                note = "logged in again and aborted the uncommitted session %s: the switch is as it was" % name
        # Any failure to log in again or to abort is reported, never raised: the lost load is the error, and the
        # note must tell the engineer the session may still be open (netmiko's login raises its own exceptions).
        except Exception as exc:  # pylint: disable=broad-exception-caught
            note = ("could not log in again to abort it (%s): the uncommitted session %s may stay open, and later runs refuse the "
                    "switch until it is aborted ('configure session %s abort')" % (" ".join(str(exc).split())[:200] or type(exc).__name__, name, name))
        return self._error("%s; %s" % (lost, note), _base.UNCHANGED)

    def _reconnect(self) -> None:
        """A new SSH session to the same switch with the same parameters and host keys (netmiko's own set-up:
        BaseConnection._open), then privileged EXEC; its commands get a short limit (a switch that cannot
        answer is reported, not waited on)."""
        try:
            self.conn.disconnect()
        except Exception:  # pylint: disable=broad-exception-caught  # the old session is gone already
            pass
        self.conn._open()  # pylint: disable=protected-access
        self._in_session = False
        self.timeout = min(self.timeout, RECONNECT_TIMEOUT)
        self.prepare()

    @staticmethod
    def _clean_diff(text: str) -> str:
        changes = [line for line in text.split("\n") if line[:1] in ("+", "-") and not line.startswith(("+++", "---"))]
        return text.strip("\n") + "\n" if changes else ""

    def diff(self) -> str:
        if self._diff is not None:
            return self._diff
        name = self._name(None)
        command = "show session-config diffs" if self._in_session else "show session-config named %s diffs" % name
        out = self._run([command], None, "reading the session diff")[0]
        said = self._rejection(out)
        if said:
            raise self._error("cannot read the diff of session %s" % name, _base.UNCHANGED, line=command, device_said=said)
        self._diff = self._clean_diff(out)
        return self._diff

    def _abort_quietly(self) -> None:
        """Best effort after a failure: the caller reports the first error."""
        try:
            self.abort()
        except _base.DeviceError:
            pass  # already failing; an uncommitted session never reaches the running config

    def abort(self) -> None:
        name = self._name(None)
        command = "abort" if self._in_session else "configure session %s abort" % name
        out = self._run([command], _base.UNCHANGED, "aborting session %s" % name)[0]
        self._diff = None
        said = self._rejection(out)
        if said:
            raise self._error("cannot abort session %s (uncommitted: the running config is as it was)" % name, _base.UNCHANGED, line=command, device_said=said)

    def commit(self, confirm_timeout_s: int | None) -> None:
        name = self._name(None)
        if confirm_timeout_s is None:
            command, state = "commit", _base.UNKNOWN
        else:
            if not isinstance(confirm_timeout_s, int) or isinstance(confirm_timeout_s, bool) or not 0 < confirm_timeout_s < 24 * 3600:
                raise self._error("commit timer %r: whole seconds from 1 to 86399" % (confirm_timeout_s,), _base.UNCHANGED)
            hours, rest = divmod(confirm_timeout_s, 3600)
            command, state = "commit timer %02d:%02d:%02d" % (hours, rest // 60, rest % 60), _base.PENDING
        commands = self._enter() + [command]
        outputs = self._run(commands, state, "committing session %s" % name)
        self._diff = None
        said = self._rejection("\n".join(outputs))
        if said:
            self._abort_quietly()
            raise self._error("commit of session %s failed; the session was aborted" % name, _base.UNCHANGED, line=command, device_said=said)
        self._state = _base.COMMITTED if confirm_timeout_s is None else _base.PENDING

    def confirm(self, session: str | None = None) -> None:
        name = self._name(session)
        try:
            self._own_timed_session(name, "confirm")
        except _base.DeviceError as exc:
            if self._timer_rolled_back(name, exc):
                raise self._error(
                    "cannot confirm session %s: its commit timer ran out first and EOS rolled the change back (read back: the "
                    "running config lacks the change again)" % name,
                    _base.ROLLED_BACK,
                ) from None
            raise
        command = "configure session %s commit" % name
        out = self._run([command], _base.UNKNOWN, "confirming session %s" % name)[0]
        said = self._rejection(out)
        if said:
            raise self._error("cannot confirm session %s" % name, self._state_after_failure(name), line=command, device_said=said)
        self._state = _base.COMMITTED

    def rollback(self, session: str | None = None) -> None:
        # EOS: aborting a session whose commit timer runs restores the config it replaced.
        name = self._name(session)
        try:
            self._own_timed_session(name, "roll back")
        except _base.DeviceError as exc:
            if self._timer_rolled_back(name, exc):
                self._state = _base.ROLLED_BACK  # what was asked: the commit timer did it first
                return
            raise
        command = "configure session %s abort" % name
        out = self._run([command], _base.PENDING, "rolling session %s back" % name)[0]
        said = self._rejection(out)
        if said:
            raise self._error("cannot roll session %s back" % name, self._state_after_failure(name), line=command, device_said=said)
        self._state = _base.ROLLED_BACK

    def _timer_rolled_back(self, name: str, refusal: _base.DeviceError) -> bool:
        """Issue 33: after 'commit timer', this driver's session is no longer under its timer (refusal, state
        unknown): read the running config back. When it lacks the lines this driver committed, EOS's timer
        reverted them (or an operator's abort did: either way the change is rolled back); when it holds them, the
        commit was confirmed by someone, and the state stays unknown to the caller's report."""
        if refusal.state != _base.UNKNOWN or name != self.session or self._state != _base.PENDING or not self._loaded:
            return False
        try:
            return bool(self.readback_missing(self._loaded))
        except _base.DeviceError:
            return False

    def _state_after_failure(self, name: str) -> str:
        """Still pending (the timer will revert it) or no longer (confirmed or reverted: unknown which)."""
        try:
            pending = self.pending()
        except _base.DeviceError:
            return _base.UNKNOWN
        return _base.PENDING if pending and pending["session"] == name else _base.UNKNOWN

    def sessions(self) -> list[dict]:
        """Every configuration session on the switch (parse_sessions), one round trip."""
        outputs = self._run([SESSIONS_COMMAND, VERSION_COMMAND], None, "reading the configuration sessions")
        said = self._rejection(outputs[0])
        if said:
            raise self._error("cannot list the configuration sessions", self._state, line=SESSIONS_COMMAND, device_said=said)
        try:
            return parse_sessions(outputs[0], outputs[1])
        except ValueError as exc:
            raise self._error(str(exc), self._state, line=SESSIONS_COMMAND) from None

    def pending(self) -> dict | None:
        for row in self.sessions():
            if row["state"] == "pendingCommitTimer":
                return {"session": row["session"], "remaining_s": row["remaining_s"]}
        return None

    def _refuse_others(self, name: str) -> None:
        """Issue 15: change nothing while another run's session is open or under a commit
        timer (EOS keeps an uncommitted session after a disconnect, for 24 h: Arista EOS
        manual, 'Configure Session'); the operator commits or aborts it, by name."""
        for row in self.sessions():
            if row["session"] == name or row["state"] not in ("pending", "pendingCommitTimer"):
                continue
            if row["state"] == "pendingCommitTimer":
                left = "" if row["remaining_s"] is None else ", %d s left" % row["remaining_s"]
                why = "configuration session %s has a commit timer pending%s (another run's change window?)" % (row["session"], left)
            else:
                why = "configuration session %s is open with uncommitted changes (another run, or one left by a lost connection)" % row["session"]
            raise self._error(
                "refusing to change the switch: %s; confirm or abort it first ('configure session %s commit|abort')" % (why, row["session"]),
                _base.UNCHANGED,
            )

    def _own_timed_session(self, name: str, action: str) -> None:
        """confirm/rollback act only on a session under a commit timer: on an open, uncommitted
        session 'configure session NAME commit' would put its staged lines live (and 'abort'
        discard them): someone else's work, never ours to settle."""
        rows = {row["session"]: row for row in self.sessions()}
        row = rows.get(name)
        if row is None or row["state"] != "pendingCommitTimer":
            state = "absent" if row is None else row["state"]
            timed = [r["session"] for r in rows.values() if r["state"] == "pendingCommitTimer"]
            other = "; the session under a commit timer is %s" % timed[0] if timed else ""
            raise self._error(
                "refusing to %s session %s: it has no commit timer pending (state: %s)%s" % (action, name, state, other),
                _base.UNKNOWN if row is None or state in ("completed", "aborted") else _base.UNCHANGED,
            )

    def readback_missing(self, lines: list[str]) -> list[str]:
        return self.missing_lines(lines, self.gather())

    def save(self) -> None:
        out = self._run(["write memory"], _base.COMMITTED, "saving the configuration")[0]
        said = self._rejection(out)
        if said:
            raise self._error("the change is live but was not saved to the startup config", _base.COMMITTED, line="write memory", device_said=said)

    # -- counters (read-only; module_utils/_switches/_counters.py): the readers are _readers.py's ----
    # Every command lists all interfaces, so one chunk reads the whole switch.
    COUNTER_COMMANDS = _eos_readers.COUNTER_COMMANDS

    @staticmethod
    def counter_commands(ports: list[str] | None = None) -> list[str]:
        """The show commands of one counters snapshot (every port; the caller keeps the asked ones)."""
        return list(Driver.COUNTER_COMMANDS)

    def read_counters(self, commands: list[str]) -> dict[str, str]:
        """All commands in one round trip; {command: output}."""
        return dict(zip(commands, self._run(commands, _base.UNCHANGED, "reading the counters")))

    @staticmethod
    def _counter_output(outputs: dict[str, str], command: str) -> str | None:
        return _eos_readers._counter_output(outputs, command)

    @staticmethod
    def parse_counters(outputs: dict[str, str]) -> tuple[dict[str, dict], dict[str, str]]:
        return _eos_readers.parse_counters(outputs)

    # -- links (read-only; module_utils/_switches/_links.py): the readers are _readers.py's ----
    LINK_COMMANDS = _eos_readers.LINK_COMMANDS

    @staticmethod
    def link_commands(ports: list[str] | None = None) -> list[str]:
        return list(Driver.LINK_COMMANDS)

    @staticmethod
    def parse_links(outputs: dict[str, str]) -> dict:
        return _eos_readers.parse_links(outputs)
