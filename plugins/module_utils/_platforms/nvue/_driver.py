# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""NVIDIA Cumulus Linux 5.x (NVUE) switch driver.

The device is a Linux shell (netmiko ``cumulus_linux``); every command is an
``nv`` command run by bash. A transaction is NVUE's pending revision:

    nv config revision -o json; nv config diff   refuse another run's pending confirm or staged edits
    nv set ... (one chunk per round trip)       build the pending revision
    nv config diff                              the device's own diff ('' = nothing to do)
    nv config detach                            abort
    nv config apply --confirm <t> -y -m '<m>'   commit under NVUE's rollback timer; the message names our session
    nv config apply <rev> --confirm-yes|-no     confirm / cancel OUR revision only
    nv config apply --confirm-status            the timer
    nv config show -o commands                  read-back (what gather/parse/readback read)
    nv show qos pfc|congestion-control <p>, nv show qos roce
                                                gathered: the applied state (the operational views)
    nv config save                              startup config (5.9+ already auto-saves on apply)

Real NVUE keeps one pending revision per *user* (shared by that user's
shells), so staged changes found before loading belong to someone else and
are refused, never applied with ours.

Every command and form, with its source (CumulusNetworks/docs pages, the NVUE
command reference, napalm-cumulus for the confirm forms NVIDIA does not
document: neither confirming nor cancelling a --confirm apply is documented,
only that an unconfirmed one rolls back when its timer runs out) and what is
unverified: docs/vendor-nvue.md. Release-dependent
spellings and paths come from the plan's ``release`` (_vendor_nvue).
"""

from __future__ import annotations

import re
from typing import Any

from ansible_collections.lossless.fabric.plugins.module_utils._common import _snapshot
from ansible_collections.lossless.fabric.plugins.module_utils._platforms import _base, _channel, _records
from ansible_collections.lossless.fabric.plugins.module_utils._platforms.nvue import _readers as _nvue_readers
from ansible_collections.lossless.fabric.plugins.module_utils._platforms.nvue import _render as _nvue_render

_IFNAME = _nvue_render._IFNAME
# Outside single quotes a configuration line carries no shell syntax.
_SHELL_META = re.compile(r"[;&|`$<>()\\\"!*?\[\]{}~#]")
_APPLIED = re.compile(r"^\s*applied(?:_and_saved)?\b", re.IGNORECASE | re.MULTILINE)
_ERROR = _nvue_readers._ERROR
_NO_PENDING = re.compile(r"no pending|nothing to confirm|not pending", re.IGNORECASE)
# A release that does not know an option of 'nv config apply' (the confirm forms NVIDIA does not document).
_UNKNOWN_OPTION = re.compile(r"no such option|unrecognized (?:option|argument)|unexpected argument|invalid argument|unknown option", re.IGNORECASE)
# NVIDIA documents the way out of a --confirm apply that is not confirmed: "If you do not confirm within ten
# minutes, the configuration rolls back automatically" (Config reference, nv config apply --confirm).
_TIMER_ROLLS_BACK = "NVUE rolls it back by itself when its --confirm timer runs out (Config reference: 'the configuration rolls back automatically')"


_MESSAGE_PREFIX = "lossless.fabric"
_SESSION_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


def apply_message(session: str) -> str:
    """The ``nv config apply -m`` message that names this collection's session."""
    return "%s %s" % (_MESSAGE_PREFIX, session)


def _who(info: dict) -> str:
    parts = ["%s %s" % (key, info[key]) for key in ("user", "message") if info.get(key)]
    return (", " + ", ".join(parts)) if parts else ""


def _lost_text(exc: Exception, timeout: float) -> str:
    text = str(exc)
    if text.startswith("no prompt after"):
        return "the switch did not answer within %.0f s (%s)" % (timeout, text)
    return "connection lost: %s" % text


# NVUE's text tables (_readers): columns split on runs of two or more spaces, a dash ruler under the header.
_split_columns = _nvue_readers._split_columns
_is_ruler = _nvue_readers._is_ruler


def parse_revisions(text: str) -> dict[str, dict]:
    """``nv config revision [-o json]`` -> {rev_id: {'state', 'user', 'message'}}.

    JSON: a map of revision id to an object with 'state' ('confirm' while an
    apply waits for its confirmation, as napalm-automation-community's
    napalm-cumulus reads it). Text: the table of the NVUE command reference
    (Rev ID, State, Apply ID, Apply Date, Type, User, Reason, Message).
    """
    stripped = text.strip()
    if not stripped:
        return {}
    doc = _snapshot.json_document(stripped) if stripped[:1] in "{[" else None
    if isinstance(doc, dict):
        out: dict[str, dict] = {}
        for rev, info in doc.items():
            if not isinstance(info, dict):
                raise ValueError("nvue: nv config revision -o json: revision %r is not an object" % (rev,))
            out[str(rev)] = {"state": info.get("state"), "user": info.get("user"), "message": info.get("message")}
        return out
    lines = [line for line in stripped.splitlines() if line.strip()]
    if len(lines) >= 2 and _is_ruler(lines[1]):
        header = [cell.lower() for cell in _split_columns(lines[0])]
        if header[:2] == ["rev id", "state"]:
            out = {}
            for line in lines[2:]:
                cells = _split_columns(line)
                row = dict(zip(header, cells))
                out[cells[0]] = {"state": row.get("state"), "user": row.get("user"), "message": row.get("message")}
            return out
    raise ValueError("nvue: nv config revision printed neither JSON nor the revision table (Rev ID  State  ...)")


# The SSH channel closed or the device stopped answering (the shared channel's error).
_Lost = _channel.Lost


# The platform record (_base.Platform) the intent validates a Cumulus/NVUE switch with; values as
# _intent/_tables.py had them (max_mtu: the record's default 9216, the Linux link MTU Cumulus takes).
# ECN starting values: NVIDIA's RoCE numbers per speed (_vendor_nvue, docs/vendor-nvue.md).
# The registry record (interface names, maximum MTU, ECN starting values): _records.py.
PLATFORM = _records.NVUE


class Driver(_base.Driver):
    """Cumulus Linux 5.x over SSH (bash), NVUE CLI."""

    platform = "nvue"
    device_type = "cumulus_linux"

    # Seconds. nv set costs ~1 s on a real switch (each is a call into nvued);
    # an apply reloads switchd and can take minutes.
    line_timeout = 15.0
    command_timeout = 60.0
    # Bounded: a hung switch fails the step after this long, naming the step and the state left.
    apply_timeout = 180.0
    # Bytes per chunk: below the 4 KiB tty line-discipline buffer, so a whole
    # chunk is typed ahead while bash waits at its prompt (no kernel echo
    # interleaved with output).
    chunk_bytes = 3000

    def __init__(self, conn: Any, device: str):
        super().__init__(conn, device)
        self._committed_with_timer = False
        self._detach_first = False
        self._rev: str | None = None

    # -- netmiko ---------------------------------------------------------
    @staticmethod
    def connection_class():
        from netmiko.cumulus.cumulus_linux_ssh import CumulusLinuxSSH  # pylint: disable=import-outside-toplevel

        return CumulusLinuxSSH

    # -- pure ------------------------------------------------------------
    @staticmethod
    def render(plan: dict) -> list[str]:
        return _nvue_render.render(plan)

    @staticmethod
    def parse(running: str) -> dict:
        return _nvue_readers.parse(running)

    # -- channel ---------------------------------------------------------
    def _transport_errors(self) -> tuple:
        return _channel.transport_errors()

    def _prompt_re(self):
        base = getattr(self.conn, "base_prompt", None) or ""
        if not base:
            raise _Lost("no shell prompt known for this connection")
        return re.compile(re.escape(base) + r"[$#] ?")

    def _exchange(self, commands: list[str], timeout: float) -> list[str]:
        """Type the commands ahead in one write and return each one's output
        (echo removed), by counting the shell prompts that follow them."""
        reply = _channel.exchange(self.conn, commands, self._prompt_re(), timeout)
        return [_channel.strip_echo(cmd, seg).strip() for cmd, seg in zip(commands, reply.segments)]

    def _run(self, command: str, timeout: float | None = None) -> str:
        return self._exchange([command], timeout or self.command_timeout)[0]

    def _checked(self, command: str, what: str, state: str, timeout: float | None = None) -> str:
        """Run one command; DeviceError on a lost connection or an NVUE error."""
        try:
            out = self._run(command, timeout)
        except self._transport_errors() as exc:
            raise _base.DeviceError(self.device, "connection lost during %s: %s" % (what, exc), line=command, state=state) from None
        if _ERROR.search(out):
            raise _base.DeviceError(self.device, "%s failed" % what, line=command, device_said=out, state=state)
        return out

    # -- device ----------------------------------------------------------
    def prepare(self) -> None:
        """Nothing beyond netmiko's Linux session preparation: nv does not page
        when its output is not read by a human pager (no paging command needed)."""

    def gather(self) -> str:
        return self._checked("nv config show -o commands", "reading the applied configuration", _base.UNCHANGED)

    def gather_views(self, running: str) -> str:
        """What the ASIC runs for the configuration ``running`` (state: gathered): the operational views
        _readers.view_commands names ('nv show qos pfc <p>', 'nv show qos congestion-control <p>', 'nv show
        qos roce'), typed ahead, each returned after a prompt line as a pasted session, so parse() reads the
        configuration and its applied state together and reports where they differ. A view the switch
        refuses fails the step, naming the command and what the switch said."""
        try:
            commands = _nvue_readers.view_commands(running)
        except ValueError as exc:
            raise _base.DeviceError(self.device, "choosing the operational views: %s" % exc, state=_base.UNCHANGED) from None
        base = getattr(self.conn, "base_prompt", None) or ""
        prompt = base if re.fullmatch(r"\S+@[^\s:]+(?::\S+)?:[^$#\s]*", base) else "cumulus@switch:~"
        parts = []
        for chunk in self._chunks(commands):
            try:
                outputs = self._exchange(chunk, self.command_timeout + self.line_timeout * len(chunk))
            except self._transport_errors() as exc:
                raise _base.DeviceError(self.device, "connection lost while reading the operational views: %s" % exc, state=_base.UNCHANGED) from None
            for command, out in zip(chunk, outputs):
                if _ERROR.search(out) or not out.strip():
                    raise _base.DeviceError(self.device, "reading the applied state failed", line=command, device_said=out or "(nothing)",
                                            state=_base.UNCHANGED)
                parts.append("%s$ %s\n%s\n" % (prompt, command, out))
        return "".join(parts)

    def open_session(self, name: str) -> None:
        """NVUE has no named sessions: the CLI edits the user's one pending
        revision. Before anything is staged, refuse when another apply waits
        for its confirmation (``nv config revision``: a revision in state
        'confirm') or when the user's pending revision already holds staged
        changes (``nv config diff`` not empty): those belong to another run
        (or to a person), and applying now would apply or confirm them too."""
        if not _SESSION_RE.fullmatch(name or ""):
            raise _base.DeviceError(self.device, "session name %r is not a word of letters, digits, '.', '_' or '-'" % (name,), state=_base.UNCHANGED)
        self.session = name
        self._detach_first = False
        self._committed_with_timer = False
        self._rev = None
        commands = ["nv config revision -o json", "nv config diff"]
        try:
            revisions_out, diff_out = self._exchange(commands, self.command_timeout * 2)
        except self._transport_errors() as exc:
            what = "checking for other pending changes: %s" % _lost_text(exc, self.command_timeout * 2)
            raise _base.DeviceError(self.device, what, line=commands[0], state=_base.UNCHANGED) from None
        revisions = self._revisions_from(revisions_out, commands[0], _base.UNCHANGED)
        for rev, info in revisions.items():
            if info.get("state") == "confirm":
                raise _base.DeviceError(
                    self.device,
                    "another apply is pending confirmation (revision %s%s); refusing to change the switch until it is confirmed or rolled back"
                    % (rev, _who(info)),
                    line=commands[0],
                    state=_base.UNCHANGED,
                )
        if _ERROR.search(diff_out):
            raise _base.DeviceError(self.device, "nv config diff failed", line=commands[1], device_said=diff_out, state=_base.UNCHANGED)
        if diff_out.strip():
            raise _base.DeviceError(
                self.device,
                "the pending revision of this user already holds staged changes (another run or a person is editing); "
                "refusing to apply them with ours (discard them with 'nv config detach' if they are stale)",
                line=commands[1],
                device_said=diff_out[:2000],
                state=_base.UNCHANGED,
            )

    def _revisions_from(self, text: str, command: str, state: str) -> dict[str, dict]:
        if _ERROR.search(text):
            raise _base.DeviceError(self.device, "reading the configuration revisions failed", line=command, device_said=text, state=state)
        try:
            return parse_revisions(text)
        except ValueError as exc:
            raise _base.DeviceError(self.device, str(exc), line=command, device_said=text[:2000], state=state) from None

    def _revisions(self, what: str, state: str) -> dict[str, dict]:
        command = "nv config revision -o json"
        return self._revisions_from(self._checked(command, what, state), command, state)

    def _check_lines(self, lines: list[str]) -> None:
        for line in lines:
            _base.check_cli_line(self.device, line)
            if not line.startswith(("nv set ", "nv unset ")):
                raise _base.DeviceError(self.device, "only nv set / nv unset lines can be loaded into the pending revision", line=line, state=_base.UNCHANGED)
            if _SHELL_META.search(re.sub(r"'[^']*'", "", line)) or line.count("'") % 2:
                raise _base.DeviceError(self.device, "refusing a configuration line with shell syntax", line=line, state=_base.UNCHANGED)

    def _chunks(self, commands: list[str]) -> list[list[str]]:
        chunks: list[list[str]] = [[]]
        size = 0
        for cmd in commands:
            if chunks[-1] and size + len(cmd) + 1 > self.chunk_bytes:
                chunks.append([])
                size = 0
            chunks[-1].append(cmd)
            size += len(cmd) + 1
        return [chunk for chunk in chunks if chunk]

    def load(self, lines: list[str]) -> None:
        """All lines typed ahead in as few round trips as the tty allows; each
        line's output is checked in order and the first one NVUE answered with
        anything (nv set is silent on success) is the rejected line. Lines
        after it may also have run, but only into the pending revision, which
        is then detached: no nv set line can change the running switch, and
        nothing but nv set/unset is accepted here."""
        self._check_lines(lines)
        commands = (["nv config detach"] if self._detach_first else []) + list(lines)
        errors = self._transport_errors()
        for chunk in self._chunks(commands):
            try:
                outputs = self._exchange(chunk, self.command_timeout + self.line_timeout * len(chunk))
            except errors as exc:
                raise _base.DeviceError(self.device, "connection lost while loading the pending revision: %s" % exc, state=_base.UNCHANGED) from None
            self._detach_first = False
            for cmd, out in zip(chunk, outputs):
                if out:
                    self._discard()
                    what = "NVUE rejected a line" if cmd != "nv config detach" else "could not detach the stale pending revision"
                    raise _base.DeviceError(self.device, what, line=cmd, device_said=out, state=_base.UNCHANGED)

    def _discard(self) -> None:
        try:
            self._run("nv config detach")
        except self._transport_errors():
            pass  # the pending revision never reaches the running config without an apply

    def diff(self) -> str:
        prefix = ["nv config detach"] if self._detach_first else []
        try:
            outputs = self._exchange(prefix + ["nv config diff"], self.command_timeout)
        except self._transport_errors() as exc:
            raise _base.DeviceError(self.device, "connection lost reading the pending diff: %s" % exc, line="nv config diff", state=_base.UNCHANGED) from None
        self._detach_first = False
        out = outputs[-1]
        if _ERROR.search(out):
            raise _base.DeviceError(self.device, "nv config diff failed", line="nv config diff", device_said=out, state=_base.UNCHANGED)
        return out

    def abort(self) -> None:
        self._checked("nv config detach", "discarding the pending revision", _base.UNCHANGED)
        self._detach_first = False
        self.session = None

    @staticmethod
    def _duration(seconds: int) -> str:
        # 'm' is the suffix the NVUE user guide shows (--confirm 60m); 's' per reference 3.1.
        seconds = int(seconds)
        return "%dm" % (seconds // 60) if seconds % 60 == 0 else "%ds" % seconds

    def commit(self, confirm_timeout_s: int | None) -> None:
        """``nv config apply [--confirm <t>] -y -m '<message naming the session>'``:
        the message (``nv config apply -m``, NVUE-CLI "Add Configuration Apply
        Messages") is how a later run (the change window's confirm step) finds
        this run's revision and tells it from another run's."""
        if confirm_timeout_s is not None and int(confirm_timeout_s) <= 0:
            raise _base.DeviceError(self.device, "confirm timeout must be a positive number of seconds", state=_base.UNCHANGED)
        timed = confirm_timeout_s is not None
        message = apply_message(self.session or "")
        if timed:
            command = "nv config apply --confirm %s -y -m '%s'" % (self._duration(confirm_timeout_s), message)
        else:
            command = "nv config apply -y -m '%s'" % message
        try:
            out = self._run(command, self.apply_timeout)
        except self._transport_errors() as exc:
            state = _base.PENDING if timed else _base.UNKNOWN
            raise _base.DeviceError(self.device, "apply: %s" % _lost_text(exc, self.apply_timeout), line=command, state=state) from None
        if _ERROR.search(out) or not _APPLIED.search(out):
            self._discard()
            raise _base.DeviceError(self.device, "nv config apply failed; nothing was applied", line=command, device_said=out, state=_base.UNCHANGED)
        self._committed_with_timer = timed
        if timed:
            self._rev = self._own_pending(self.session, "finding the revision just applied", sole_unnamed=True)

    def _own_pending(self, session: str | None, what: str, sole_unnamed: bool = False) -> str | None:
        """The revision in state 'confirm' whose apply message names ``session``.
        Right after our own apply (open_session saw none pending), a single
        pending revision whose listing carries no message at all is ours too."""
        if not session:
            return None
        state = _base.PENDING if self._committed_with_timer else _base.UNKNOWN
        pending = {rev: info for rev, info in self._revisions(what, state).items() if info.get("state") == "confirm"}
        for rev, info in pending.items():
            if info.get("message") == apply_message(session):
                return rev
        if sole_unnamed and len(pending) == 1 and not next(iter(pending.values())).get("message"):
            return next(iter(pending))
        return None

    def _target(self, session: str | None, verb: str) -> str | None:
        """The pending revision this run may confirm or cancel, or None when
        nothing is pending; DeviceError when only another run's is."""
        session = session or self.session
        state = _base.PENDING if self._committed_with_timer else _base.UNKNOWN
        revisions = self._revisions("reading the pending revision before %s" % verb, state)
        pending = {rev: info for rev, info in revisions.items() if info.get("state") == "confirm"}
        if self._rev is not None and self._rev in pending:
            return self._rev
        for rev, info in pending.items():
            if session and info.get("message") == apply_message(session):
                return rev
        if pending:
            rev, info = next(iter(pending.items()))
            raise _base.DeviceError(
                self.device,
                "refusing to %s revision %s: it is another run's pending apply%s, not session %s's" % (verb, rev, _who(info), session),
                state=_base.ROLLED_BACK if self._committed_with_timer else _base.UNKNOWN,
            )
        return None

    def confirm(self, session: str | None = None) -> None:
        """``nv config apply <rev> --confirm-yes`` on this run's revision only.

        UNVERIFIED: no NVIDIA page documents how to confirm or cancel a ``--confirm`` apply
        (Config reference, NVUE CLI pages 5.x: only ``--confirm [<time>]`` and
        ``--confirm-status``). The form is napalm-cumulus's; NVIDIA's own NVOS test wrappers
        (the ngts ``NvueGeneralCli.apply_config`` option list ``--confirm-yes, --confirm-no``)
        use the same option names. docs/vendor-nvue.md lists where we looked."""
        rev = self._target(session, "confirm")
        if rev is None:
            # Nothing of ours is pending: our unconfirmed apply was rolled back by its timer.
            state = _base.ROLLED_BACK if self._committed_with_timer else _base.UNKNOWN
            self._committed_with_timer = False
            raise _base.DeviceError(self.device, "no pending apply of session %s to confirm (its timer has run out)" % (session or self.session), state=state)
        self._settle(rev, "--confirm-yes", "confirm", "NVIDIA documents no command that confirms a --confirm apply (the form "
                     "is napalm-cumulus's, unverified; docs/vendor-nvue.md)")

    def _settle(self, rev: Any, option: str, what: str, unverified: str) -> None:
        """``nv config apply <rev> <option>``: the pending apply confirmed or reverted; a switch that does not know the
        (unverified) option leaves it pending for its own timer, and says so."""
        command = "nv config apply %s %s" % (rev, option)
        try:
            out = self._run(command, self.apply_timeout)
        except self._transport_errors() as exc:
            raise _base.DeviceError(self.device, "%s: %s" % (what, _lost_text(exc, self.apply_timeout)), line=command, state=_base.PENDING) from None
        if _ERROR.search(out):
            if _UNKNOWN_OPTION.search(out):
                raise _base.DeviceError(
                    self.device, "this switch does not know '%s': %s, so revision %s stays pending and %s" % (option, unverified, rev, _TIMER_ROLLS_BACK),
                    line=command, device_said=out, state=_base.PENDING)
            raise _base.DeviceError(self.device, "could not %s revision %s" % (what, rev), line=command, device_said=out, state=_base.PENDING)
        self._committed_with_timer = False
        self._rev = None

    def rollback(self, session: str | None = None) -> None:
        """``nv config apply <rev> --confirm-no`` reverts this run's pending apply at once.

        UNVERIFIED form, as for confirm(). The documented cancel is to leave the apply unconfirmed:
        NVUE rolls it back when the --confirm timer runs out (Config reference). A switch that refuses
        the option fails this step with the revision left pending for that timer."""
        rev = self._target(session, "roll back")
        if rev is None:
            if self._committed_with_timer:
                self._committed_with_timer = False
                return  # our unconfirmed apply was already rolled back by its timer
            raise _base.DeviceError(self.device, "no pending apply of session %s to roll back" % (session or self.session), state=_base.UNKNOWN)
        self._settle(rev, "--confirm-no", "roll back", "an unverified form: NVIDIA documents no command that cancels a --confirm "
                     "apply (docs/vendor-nvue.md)")

    def pending(self) -> dict | None:
        """The apply waiting for confirmation, with the session its message names (None: not ours)."""
        revisions = self._revisions("reading the pending revisions", _base.UNKNOWN)
        pending = [(rev, info) for rev, info in revisions.items() if info.get("state") == "confirm"]
        if not pending:
            return None
        rev, info = pending[0]
        out = self._checked("nv config apply --confirm-status", "reading the confirm timer", _base.PENDING)
        remaining = None
        match = re.search(r"(\d+)\s*(s|sec|secs|seconds?|m|min|minutes?)\b", out, re.IGNORECASE)
        if match and not _NO_PENDING.search(out):
            remaining = int(match.group(1)) * (60 if match.group(2).lower().startswith("m") else 1)
        message = info.get("message") or ""
        session = message[len(_MESSAGE_PREFIX) + 1:] if message.startswith(_MESSAGE_PREFIX + " ") else None
        return {"session": session, "remaining_s": remaining, "revision": rev, "user": info.get("user")}

    def readback_missing(self, lines: list[str]) -> list[str]:
        """Compared atom by atom: NVUE prints id lists compressed ('swp1-2,32')
        and descriptions unquoted, so both sides are expanded first."""
        state = _base.PENDING if self._committed_with_timer else _base.UNKNOWN
        return self.missing_lines(lines, self._checked("nv config show -o commands", "reading back the applied configuration", state))

    @staticmethod
    def missing_lines(lines: list[str], running: str) -> list[str]:
        return _nvue_readers.missing_lines(lines, running)

    def save(self) -> None:
        self._checked("nv config save", "saving the startup configuration", _base.COMMITTED)

    # Per port (NVUE has no all-ports counters view), typed ahead in chunks; the readers are _readers.py's.
    COUNTER_VIEWS = _nvue_readers.COUNTER_VIEWS

    @staticmethod
    def counter_commands(ports: list[str] | None = None) -> list[str]:
        if not ports:
            raise ValueError("ports: NVUE shows counters per interface; give the ports (or lossless_fabric_device.ports)")
        for name in ports:
            if not isinstance(name, str) or not _IFNAME.fullmatch(name):
                raise ValueError("ports: %r is not an NVUE interface name" % (name,))
        return ["nv show interface %s %s -o json" % (name, view) for name in ports for view, _kind in Driver.COUNTER_VIEWS]

    def read_counters(self, commands: list[str]) -> dict[str, str]:
        """The commands typed ahead in as few chunks as the tty allows; {command: output}."""
        outputs: dict[str, str] = {}
        for chunk in self._chunks(commands):
            try:
                answers = self._exchange(chunk, self.command_timeout + self.line_timeout * len(chunk))
            except self._transport_errors() as exc:
                raise _base.DeviceError(self.device, "connection lost while reading the counters: %s" % exc, state=_base.UNCHANGED) from None
            outputs.update(zip(chunk, answers))
        return outputs

    @staticmethod
    def parse_counters(outputs: dict[str, str]) -> tuple[dict[str, dict], dict[str, str]]:
        return _nvue_readers.parse_counters(outputs)

    # -- links (read-only; module_utils/_switches/_links.py): the readers are _readers.py's ----
    LINK_COMMANDS = _nvue_readers.LINK_COMMANDS

    @staticmethod
    def link_commands(ports: list[str] | None = None) -> list[str]:
        return list(Driver.LINK_COMMANDS)

    @staticmethod
    def parse_links(outputs: dict[str, str]) -> dict:
        return _nvue_readers.parse_links(outputs)
