# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""Juniper Junos (QFX) driver: lossless RoCEv2 QoS as ``set`` lines, applied as a transaction.

Sources: docs/vendor-junos.md (every command and parsed form with its Juniper source;
what is unverified). Plan-side Junos data: _vendor_junos.py, derived in _intent/_plan.py _junos_plan.

Transaction (one netmiko JuniperSSH connection, one CLI):

    open_session  show system commit: refuse another run's pending commit confirmed;
                  configure private                 staging and diff never lock the database
    load          set/delete lines + show | compare one write, one read; errors per line
    diff          the cached show | compare         '' when nothing would change
    abort         rollback 0, exit configuration-mode
    commit        rollback 0, exit, configure exclusive, the same lines, show | compare
                  (must equal the private diff, so nobody else's uncommitted change rides
                  along), then commit check + commit confirmed N comment "<session>"
    confirm       commit (in configuration mode)    a plain commit confirms; only this run's pending commit
    rollback      rollback 1 + commit               only while THIS run's confirmed commit is entry 0
    lost link     after this run's commit confirmed: state "pending confirmation"; during it: "unknown"
    save          nothing: a Junos commit is already persistent (juniper.conf.gz)

Why the commit leaves private mode: Junos refuses ``commit confirmed`` on a
private candidate ("error: commit confirmed not supported for private
configuration", Juniper/py-junos-eznc PR #954; the Junos XML protocol guide
says the same for <open-configuration><private/>). ``configure exclusive``
supports it and locks the candidate only for the commit itself.
"""

from __future__ import annotations

import math
import re
from typing import Any

from ansible_collections.lossless.fabric.plugins.module_utils._platforms import _base, _channel, _records
from ansible_collections.lossless.fabric.plugins.module_utils._platforms.junos import _readers as _junos_readers
from ansible_collections.lossless.fabric.plugins.module_utils._platforms.junos import _render as _junos_render

# The prompt, {master:0} and [edit ...] lines a pasted capture carries (_readers.set_lines skips them too).
_NOISE_RE = _junos_readers._NOISE_RE

# What Junos prints when it refuses a configuration line (reference 5 and the
# simulator's verified/guessed list): a caret under the bad token, "syntax
# error", "unknown command.", "error: ...", range and value complaints.
_LINE_ERROR_RE = re.compile(r"(?im)^\s*\^\s*$|syntax error|unknown command|^\s*error:|is not within range|^\s*invalid |^\s*missing argument")
_COMMIT_CHECK_OK = "configuration check succeeds"
_COMMIT_CONFIRMED_OK = "commit confirmed will be automatically rolled back in"
_COMMIT_OK = "commit complete"
# Context lines Junos prints before a prompt: [edit ...], {master:0}, the pending-commit banner.
_CONTEXT_RE = re.compile(r"(?m)^(\[edit[^\]\n]*\]|\{(master|backup|primary|secondary|line)[^}\n]*\}|# commit confirmed will be rolled back in .*)\s*$")
_PENDING_RE = re.compile(r"rollback in (\d+)\s*min", re.I)
# 'commit confirmed <minutes>': "in the range from 1 through 65,535 minutes" (Juniper, "Commit the
# Candidate Configuration Only After Confirmation Using the Junos XML Protocol", <confirm-timeout>:
# https://juniper.net/documentation/us/en/software/junos/junos-xml-protocol/topics/task/junos-xml-protocol-configuration-committing-with-confirmation.html).
# The CLI page states no range; that the CLI takes the same one is unverified (the simulator does).
_CONFIRM_MINUTES_MAX = 65535
_READ_TIMEOUT_S = 120.0  # a QFX commit of CoS config takes seconds, not minutes


_COMMIT_ENTRY_RE = re.compile(r"^\s*(\d+)\s+(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?: \S+)?) by (\S+) via (\S+)(?:\s+(.*?))?\s*$")


def parse_commit_history(text: str) -> list[dict[str, Any]]:
    """'show system commit' entries: index, at, user, via, the text after the method
    ('commit confirmed, rollback in 10mins', ...), the comment (the next, indented line)
    and pending_minutes. Refuses text with no entry (ValueError naming the form)."""
    entries: list[dict[str, Any]] = []
    for raw in text.replace("\r\n", "\n").split("\n"):
        line = raw.rstrip()
        if not line.strip() or _NOISE_RE.match(line.strip()):
            continue
        match = _COMMIT_ENTRY_RE.match(line)
        if match:
            extra = match.group(5) or ""
            minutes = _PENDING_RE.search(extra)
            entries.append(
                {
                    "index": int(match.group(1)),
                    "at": match.group(2),
                    "user": match.group(3),
                    "via": match.group(4),
                    "extra": extra,
                    "comment": None,
                    "pending_minutes": int(minutes.group(1)) if minutes and "commit confirmed" in extra else None,
                }
            )
        elif line.startswith((" ", "\t")) and entries and entries[-1]["comment"] is None:
            entries[-1]["comment"] = line.strip()
        elif re.match(r"^\s*rescue\s", line) or line.strip() == "rollback pending":
            continue
        elif entries and line.startswith((" ", "\t")):
            continue  # a second comment line
        else:
            raise ValueError("junos: 'show system commit' line %r is not a commit entry ('N   YYYY-MM-DD hh:mm:ss TZ by USER via CLIENT ...')" % line[:80])
    if not entries and text.strip():
        raise ValueError("junos: no commit entries in 'show system commit' output")
    return entries


def _describe(pending: dict) -> str:
    parts = ["commit confirmed"]
    if pending.get("user"):
        parts.append("by %s" % pending["user"])
    if pending.get("at"):
        parts.append("at %s" % pending["at"])
    parts.append("comment %r" % pending.get("session") if pending.get("session") else "no comment")
    if pending.get("remaining_s") is not None:
        parts.append("rollback in %d min" % (pending["remaining_s"] // 60))
    return ", ".join(parts)


# The registry record (interface names, IP MTU, ECN in percent of the queue buffer): _records.py.
PLATFORM = _records.JUNOS


class Driver(_base.Driver):
    """Junos (QFX, Junos and Junos EVO) over netmiko's juniper_junos."""

    platform = "junos"
    device_type = "juniper_junos"
    # Junos has no PFC watchdog command to read (docs/vendor-junos.md, docs/counters.md).
    counters_not_available = ("watchdog_storms",)

    def __init__(self, conn: Any, device: str):
        super().__init__(conn, device)
        self._mode = "op"  # op | private | exclusive
        self._lines: list[str] = []
        self._diff: str | None = None
        # True once this run's own 'commit confirmed' went through: from then on a lost
        # connection leaves the device pending confirmation, never "unchanged".
        self._own_pending = False
        self._own_plain = False  # this run committed for good (no timer): nothing to confirm

    @staticmethod
    def connection_class():
        from netmiko.juniper.juniper import JuniperSSH  # pylint: disable=import-outside-toplevel

        return JuniperSSH

    # -- pure ------------------------------------------------------------
    @staticmethod
    def render(plan: dict) -> list[str]:
        return _junos_render.render(plan)

    @staticmethod
    def parse(running: str) -> dict:
        return _junos_readers.parse(running)

    # -- channel ---------------------------------------------------------
    def _prompt_re(self) -> re.Pattern:
        base = re.escape(self.conn.base_prompt)
        return re.compile(r"(?m)^%s[>#] ?" % base)

    def _run(self, commands: list[str], state: str, timeout: float = _READ_TIMEOUT_S) -> list[str]:
        """Send every command in one write and read until each has its prompt back.
        Returns each command's output (echo removed). A lost connection raises
        DeviceError(state=state)."""
        prompt = self._prompt_re()
        if self._own_pending and state == _base.UNCHANGED:
            state = _base.PENDING
        try:
            # lone_cr: Junos redraws a line with a bare carriage return; it ends a line here.
            reply = _channel.exchange(self.conn, commands, prompt, timeout, lone_cr="\n")
        except _channel.Silent as exc:
            raise _base.DeviceError(
                self.device, "no prompt after %d of %d commands within %g s (step: %r)" % (exc.answered, exc.expected, timeout, commands[0]), state=state
            ) from None
        except _channel.transport_errors() as exc:
            self._mode = "op"
            raise _base.DeviceError(self.device, "connection lost during %r: %s" % (commands[0], exc or type(exc).__name__), state=state) from None
        outputs = []
        for part in reply.segments:
            # each part: the echoed command, its output, then the context lines
            # ([edit], {master:0}, the commit-confirmed banner) before the next prompt
            body = part.split("\n", 1)[1] if "\n" in part else ""
            body = _CONTEXT_RE.sub("", body)
            outputs.append(body.strip("\n"))
        return outputs

    def _fail(self, message: str, *, line: str | None = None, said: str | None = None, state: str = _base.UNCHANGED) -> None:
        raise _base.DeviceError(self.device, message, line=line, device_said=said, state=state)

    def _discard(self, state: str) -> None:
        """rollback 0 and leave configuration mode; the device keeps its committed config."""
        if self._mode == "op":
            return
        self._run(["rollback 0", "exit configuration-mode"], state)
        self._mode = "op"
        self._diff = None

    def _enter(self, mode: str, state: str) -> str:
        out = self._run(["configure " + mode], state)[0]
        self._entered(mode, out, state)
        return out

    def _entered(self, mode: str, out: str, state: str) -> None:
        if re.search(r"(?im)^\s*error:|unknown command|syntax error", out):
            self._mode = "op"
            users = re.findall(r"(?m)^\s+(\S+) terminal \S+ \(pid \d+\)", out)
            if re.search(r"(?i)configuration database modified", out):
                why = "the shared candidate holds uncommitted changes of another user%s" % (" (%s)" % ", ".join(users) if users else "")
            elif re.search(r"(?i)configuration database locked by", out):
                why = "the configuration is locked by %s" % (", ".join(users) or "another user")
            else:
                why = "configure %s refused" % mode
            self._fail(why + "; nothing changed", said=out, state=state)
        self._mode = mode

    def _switch_to_exclusive(self, state: str) -> None:
        """From the private candidate to configure exclusive in one round trip."""
        out = self._run(["rollback 0", "exit configuration-mode", "configure exclusive"], state)[-1]
        self._diff = None
        self._entered("exclusive", out, state)

    # -- device ----------------------------------------------------------
    def prepare(self) -> None:
        """netmiko's JuniperSSH session preparation already sets the screen
        width, turns complete-on-space off and paging off (screen-length 0)."""

    def gather(self) -> str:
        pre = "run " if self._mode != "op" else ""
        commands = [
            pre + "show configuration class-of-service | display set",
            pre + "show configuration interfaces | display set",
            pre + "show configuration protocols dcbx | display set",
        ]
        outs = self._run(commands, _base.UNCHANGED)
        for index, (command, out) in enumerate(zip(commands, outs)):
            if _LINE_ERROR_RE.search(out):
                if index == 2:
                    outs[index] = ""  # a release without 'protocols dcbx' (Junos EVO: unverified) has nothing to read there
                    continue
                self._fail("reading the configuration failed", line=command, said=out)
        return "\n".join(out for out in outs if out.strip()) + "\n"

    def open_session(self, name: str) -> None:
        """configure private: a private candidate; nothing is locked and others' edits stay out.
        First refuse (state unchanged) when another run's 'commit confirmed' is pending:
        committing now would confirm it (any commit does, Junos CLI guide)."""
        self.session = name
        other = self.pending()
        if other is not None and other.get("session") != name:
            self._fail("another commit is pending confirmation (%s); refusing to change the switch until it is confirmed or rolled back" % _describe(other))
        self._enter("private", _base.UNCHANGED)

    def load(self, lines: list[str]) -> None:
        for line in lines:
            _base.check_cli_line(self.device, line)
        outs = self._run(list(lines) + ["show | compare"], _base.UNCHANGED)
        self._check_lines(lines, outs)
        self._lines = list(lines)
        self._diff = outs[-1]

    def _check_lines(self, lines: list[str], outs: list[str]) -> None:
        for line, out in zip(lines, outs):
            if _LINE_ERROR_RE.search(out):
                self._discard(_base.UNCHANGED)
                self._fail("the device rejected a configuration line", line=line, said=out)

    def diff(self) -> str:
        if self._diff is None:
            self._diff = self._run(["show | compare"], _base.UNCHANGED)[0]
        return self._diff if self._diff.strip() else ""

    def abort(self) -> None:
        self._discard(_base.UNCHANGED)

    def commit(self, confirm_timeout_s: int | None) -> None:
        if confirm_timeout_s is not None and math.ceil(confirm_timeout_s / 60) > _CONFIRM_MINUTES_MAX:
            # Refused before anything is committed: Junos would reject the number itself.
            self._discard(_base.UNCHANGED)
            self._fail(
                "confirm_timeout %d s is %d minutes; Junos takes 'commit confirmed' 1-%d minutes"
                " (Juniper Junos XML protocol guide, <confirm-timeout>); nothing committed"
                % (confirm_timeout_s, math.ceil(confirm_timeout_s / 60), _CONFIRM_MINUTES_MAX)
            )
        if self._mode == "private":
            # Junos refuses commit confirmed on a private candidate: stage the
            # same lines again under an exclusive lock, and check the diff did
            # not change (someone else's uncommitted change, or a commit since).
            private_diff = self.diff()
            self._switch_to_exclusive(_base.UNCHANGED)
            outs = self._run(self._lines + ["show | compare"], _base.UNCHANGED)
            self._check_lines(self._lines, outs)
            if outs[-1].strip() != private_diff.strip():
                self._discard(_base.UNCHANGED)
                self._fail(
                    "the exclusive candidate differs from the private one (uncommitted changes of another user, or a commit in between); nothing committed",
                    said=outs[-1],
                )
        # The comment is how a later run (and pending()) tells this run's commit from another's.
        # 'commit' takes its options in any order (Junos 'commit' syntax: each option optional);
        # Juniper's own examples and public captures use 'commit confirmed N comment "..."'.
        comment = ' comment "%s"' % self.session if self.session and re.fullmatch(r"[A-Za-z0-9._:-]+", self.session) else ""
        # Lost during the commit itself: it may or may not have gone through.
        if confirm_timeout_s is None:
            final, marker, lost_state = "commit" + comment, _COMMIT_OK, _base.UNKNOWN
        else:
            minutes = max(1, math.ceil(confirm_timeout_s / 60))
            final, marker, lost_state = "commit confirmed %d%s" % (minutes, comment), _COMMIT_CONFIRMED_OK, _base.UNKNOWN
        # A commit now would confirm another run's pending 'commit confirmed': look again
        # under the exclusive lock (open_session looked before staging).
        other = self.pending()
        if other is not None and other.get("session") != self.session:
            self._discard(_base.UNCHANGED)
            self._fail("another commit is pending confirmation (%s); nothing committed" % _describe(other))
        # Both in one write: if the check fails the commit fails the same way.
        check, done = self._run(["commit check", final], lost_state)
        if marker in done and _COMMIT_OK in done and _COMMIT_CHECK_OK not in check:
            # never expected: the commit went through although the check did not
            self._fail(
                "commit check failed but the commit went through",
                line="commit check",
                said=check,
                state=_base.COMMITTED if confirm_timeout_s is None else _base.PENDING,
            )
        if _COMMIT_CHECK_OK not in check:
            self._discard(_base.UNCHANGED)
            self._fail("commit check failed", line="commit check", said=check)
        if marker not in done or _COMMIT_OK not in done:
            self._discard(_base.UNCHANGED)
            self._fail("commit failed", line=final, said=done)
        self._diff = None
        self._own_pending = confirm_timeout_s is not None
        self._own_plain = confirm_timeout_s is None

    def _config_mode(self, state: str) -> None:
        """Be in configure exclusive with a candidate that holds nothing uncommitted."""
        if self._mode == "private":
            self._switch_to_exclusive(state)
        elif self._mode == "op":
            self._enter("exclusive", state)
            others = self._run(["show | compare"], state)[0]
            if others.strip():
                self._discard(state)
                self._fail("the candidate holds uncommitted changes of another user; refusing to commit them", said=others, state=state)

    def _own(self, session: str | None, state: str) -> dict | None:
        """The pending confirmed commit if it is this run's (its comment is ``session``, or this
        connection made it); None when nothing is pending. Another run's pending commit:
        DeviceError naming it; this run never confirms or rolls back a commit it did not make."""
        found = self.pending()
        if found is None:
            return None
        want = session or self.session
        if found.get("session") is None and self._own_pending:
            return found  # ours, committed on this connection (a comment Junos did not keep)
        if want is None or found.get("session") != want:
            self._fail(
                "the pending commit is not this run's (%s; this run is %s); not confirming or rolling back another run's commit"
                % (_describe(found), want or "unnamed"),
                state=_base.PENDING,
            )
        return found

    def confirm(self, session: str | None = None) -> None:
        """A plain ``commit`` confirms a pending ``commit confirmed`` (Junos CLI user guide,
        'commit confirmed': "you have to explicitly accept the commitment, either by typing the
        commit command again or by typing the commit check command"). Only this run's."""
        if self._own(session, _base.PENDING) is None:
            if self._own_plain:
                return  # committed without a timer: nothing to confirm
            self._fail("no pending commit to confirm (confirmed already, or rolled back by its timer)", state=_base.UNKNOWN)
        self._config_mode(_base.PENDING)
        # commit, then leave: one round trip (rollback 0 after a commit changes nothing)
        out = self._run(["commit", "rollback 0", "exit configuration-mode"], _base.PENDING)[0]
        self._mode = "op"
        if _COMMIT_OK not in out:
            self._fail("confirming commit failed", line="commit", said=out, state=_base.PENDING)
        self._own_pending = False

    def rollback(self, session: str | None = None) -> None:
        """Junos has no "cancel" for commit confirmed: load the configuration
        before it (``rollback 1``) and commit that, which also ends the timer
        (the CLI guide: rollback 1 loads the configuration committed before the
        current one; Juniper's XML protocol guide: a plain commit before the
        deadline "cancels the rollback" and commits the candidate, here the
        configuration rollback 1 loaded; napalm's junos driver rolls back the
        same way). No Juniper page names "rollback 1 + commit" as THE cancel in
        one sentence: the two documented steps are combined here. Only while THIS run's confirmed commit
        is pending and is the newest commit (entry 0): otherwise rollback 1 would
        undo someone else's commit."""
        if self._own(session, _base.PENDING) is None:
            self._own_pending = False
            return
        self._config_mode(_base.PENDING)
        # Not in one write: were rollback 1 refused, the commit after it would confirm the pending change.
        load = self._run(["rollback 1"], _base.PENDING)[0]
        if "load complete" not in load:
            self._discard(_base.PENDING)
            self._fail("loading the configuration before the pending commit failed", line="rollback 1", said=load, state=_base.PENDING)
        done = self._run(["commit", "rollback 0", "exit configuration-mode"], _base.PENDING)[0]
        self._mode = "op"
        if _COMMIT_OK not in done:
            self._fail("committing the rollback failed", line="commit", said=done, state=_base.PENDING)
        self._own_pending = False

    def pending(self) -> dict | None:
        """The pending 'commit confirmed', from 'show system commit' as Junos prints it: the
        newest entry (0) ends with 'commit confirmed, rollback in Nmins' and its comment, if
        any, is on the next, indented line (public captures, e.g. a QFX in Juniper Mist's
        docs). Older entries keep that text after they were confirmed, so only entry 0 counts."""
        pre = "run " if self._mode != "op" else ""
        out = self._run([pre + "show system commit"], _base.UNKNOWN)[0]
        try:
            entries = parse_commit_history(out)
        except ValueError as exc:
            self._fail(str(exc), line="show system commit", said=out, state=_base.UNKNOWN)
        newest = next((e for e in entries if e["index"] == 0), None)
        if not newest or newest["pending_minutes"] is None:
            return None
        return {"session": newest["comment"], "user": newest["user"], "remaining_s": newest["pending_minutes"] * 60, "at": newest["at"]}

    @staticmethod
    def running_of(lines: list[str]) -> str:
        return _junos_render.running_of(lines)

    def readback_missing(self, lines: list[str]) -> list[str]:
        return self.missing_lines(lines, self.gather())

    @staticmethod
    def missing_lines(lines: list[str], running: str) -> list[str]:
        return _junos_readers.missing_lines(lines, running)

    def save(self) -> None:
        """Nothing to do: a Junos commit writes juniper.conf.gz, which the device boots from."""

    # -- counters (read-only; module_utils/_switches/_counters.py): the readers are _readers.py's ----
    # Per port, every command in one write (reference 5.6 / 5.6.1).
    _COUNTER_PORT = re.compile(r"[A-Za-z0-9/:._-]+")

    @staticmethod
    def counter_commands(ports: list[str] | None = None) -> list[str]:
        if not ports:
            raise ValueError("ports: Junos shows counters per interface; give the ports (or lossless_fabric_device.ports)")
        for name in ports:
            if not isinstance(name, str) or not Driver._COUNTER_PORT.fullmatch(name):
                raise ValueError("ports: %r is not a Junos interface name" % (name,))
        return [command for name in ports for command in ("show interfaces %s extensive" % name, "show interfaces queue %s" % name)]

    def read_counters(self, commands: list[str]) -> dict[str, str]:
        """All commands in one write; {command: output}."""
        pre = "run " if self._mode != "op" else ""
        return dict(zip(commands, self._run([pre + command for command in commands], _base.UNCHANGED)))

    @staticmethod
    def parse_counters(outputs: dict[str, str]) -> tuple[dict[str, dict], dict[str, str]]:
        return _junos_readers.parse_counters(outputs)

    # -- links (read-only; module_utils/_switches/_links.py): per port, like the counters; the readers are _readers.py's ----
    @staticmethod
    def link_commands(ports: list[str] | None = None) -> list[str]:
        if not ports:
            raise ValueError("ports: Junos shows LLDP and link state per interface here; give the ports (or lossless_fabric_device.ports)")
        for name in ports:
            if not isinstance(name, str) or not Driver._COUNTER_PORT.fullmatch(name):
                raise ValueError("ports: %r is not a Junos interface name" % (name,))
        return [c for name in ports for c in ("show lldp neighbors interface %s | display xml" % name, "show interfaces %s" % name)]

    @staticmethod
    def parse_links(outputs: dict[str, str]) -> dict:
        return _junos_readers.parse_links(outputs)
