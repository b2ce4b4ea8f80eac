# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""SSH connection options shared by the switch modules (spec + connect).

The documentation of these options is plugins/doc_fragments/_switch_connection.py;
keep the two in step (tests/unit/plugins/test_examples.py compares them).
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import socket
import threading
from typing import Any

# option -> the inventory variable it defaults to, read by the action plugins
INVENTORY_DEFAULTS = {
    "host": ("ansible_host", "inventory_hostname"),
    "port": ("ansible_port",),
    "username": ("ansible_user",),
    "password": ("ansible_password",),
    "secret": ("ansible_become_password",),
    "host_key_checking": ("ansible_host_key_checking",),
    "known_hosts_file": ("lossless_fabric_known_hosts",),
}

CONNECTION_SPEC: dict[str, dict[str, Any]] = {
    "host": {"type": "str"},
    "port": {"type": "int"},
    "username": {"type": "str"},
    "password": {"type": "str", "no_log": True},
    "secret": {"type": "str", "no_log": True},
    "host_key_checking": {"type": "bool"},
    "known_hosts_file": {"type": "path"},
    "timeout": {"type": "int", "default": 30},
}

# switch_config's bound on each step after login (StepGuard); in its own spec,
# since only switch_config runs its steps under a guard so far.
STEP_TIMEOUT_SPEC = {"step_timeout": {"type": "int", "default": 120}}

# The steps a switch session goes through, as error messages name them.
STEPS = ("connect", "gather", "open session", "load", "diff", "abort", "commit", "read-back", "confirm", "save", "rollback", "pending")


class ConnectError(Exception):
    """Could not open the SSH session; the message names the device and why."""


class StepGuard:
    """Bounds every step of one switch session (``step_timeout``): a step that
    has not returned in time gets its SSH connection shut down under it, so
    whatever loop is waiting (netmiko's or a driver's) sees the connection go
    and returns; the caller then reports the step that ran out (``expired``)
    instead of whatever the interrupted loop said.

    Shutting the socket is the one interruption every wait honours: a thread
    cannot be stopped from outside, and a driver's read loop polls the channel.
    """

    def __init__(self, conn: Any, device: str, limit_s: float):
        self.conn = conn
        self.device = device
        self.limit_s = float(limit_s)
        self.step: str | None = None
        self.expired: str | None = None
        self._lock = threading.Lock()

    @contextlib.contextmanager
    def bound(self, step: str):
        """Run the body as ``step``, shut the connection if it outlasts the limit."""
        self.step = step
        timer = threading.Timer(self.limit_s, self._expire, args=(step,))
        timer.daemon = True
        timer.start()
        try:
            yield
        finally:
            timer.cancel()

    def _expire(self, step: str) -> None:
        with self._lock:
            if self.expired is None and self.step == step:
                self.expired = step
                shut(self.conn)


def shut(conn: Any) -> None:
    """Shut a netmiko connection's TCP socket now (from any thread); never raises."""
    chan = getattr(conn, "remote_conn", None)
    transport = None
    with contextlib.suppress(Exception):
        transport = chan.get_transport() if chan is not None else None
    sock = getattr(transport, "sock", None)
    with contextlib.suppress(OSError, AttributeError):
        sock.shutdown(socket.SHUT_RDWR)
    with contextlib.suppress(Exception):
        if transport is not None:
            transport.active = False  # paramiko's read loop ends on its next poll


_NETMIKO_PATTERN = re.compile(r"Pattern not detected: ?(.*?) in output\..*", re.S)


def netmiko_text(text: str) -> str:
    """netmiko's multi-line 'Pattern not detected ... Things you might try'
    advice, reduced to what happened, on one line."""
    text = _NETMIKO_PATTERN.sub(lambda m: "no prompt matching %s came back" % m.group(1).strip(), str(text))
    return " ".join(text.split())


def connect(driver_cls, device: str, params: dict) -> Any:
    """One netmiko connection, one attempt: a wrong password or a changed host
    key fails at once instead of being retried into a lock-out."""
    # Imported here: only the driver's own class is loaded, and the sanity
    # import test runs without netmiko.
    import paramiko  # pylint: disable=import-outside-toplevel

    # paramiko logs a peer's reset at disconnect as an error; with no handler
    # configured that lands on the worker's stderr. Our failures are reported
    # through the task result instead.
    logging.getLogger("paramiko").addHandler(logging.NullHandler())

    from netmiko.exceptions import (  # pylint: disable=import-outside-toplevel
        NetmikoAuthenticationException,
        NetmikoTimeoutException,
        ReadException,
    )

    checking = params.get("host_key_checking")
    checking = True if checking is None else checking
    known_hosts = params.get("known_hosts_file") or os.path.expanduser("~/.ssh/known_hosts")
    kwargs = {
        "host": params["host"],
        "port": params.get("port") or 22,
        "username": params.get("username"),
        "password": params.get("password"),
        "secret": params.get("secret") or "",
        "ssh_strict": bool(checking),
        "system_host_keys": False,
        "alt_host_keys": bool(checking),
        "alt_key_file": known_hosts if checking else "",
        "allow_agent": False,
        "use_keys": False,
        "conn_timeout": params.get("timeout", 30),
        "auth_timeout": params.get("timeout", 30),
        "banner_timeout": params.get("timeout", 30),
        # Every read netmiko itself makes (the first prompt after login, enable)
        # waits at most this long, not its built-in 10-20 s per read.
        "read_timeout_override": params.get("timeout", 30),
        "fast_cli": True,
    }
    where = "%s (%s:%s)" % (device, kwargs["host"], kwargs["port"])
    if checking and not os.path.isfile(known_hosts):
        raise ConnectError("%s: host key checking is on and the known hosts file %s does not exist" % (where, known_hosts))
    try:
        return driver_cls.connection_class()(**kwargs)
    except NetmikoAuthenticationException as exc:
        raise ConnectError("%s: authentication failed for user %r (not retried): %s" % (where, kwargs["username"], _first_line(exc))) from None
    except (paramiko.SSHException, NetmikoTimeoutException) as exc:
        # netmiko wraps paramiko's host-key errors in a timeout exception; the text says which.
        text = str(exc)
        if isinstance(exc, paramiko.BadHostKeyException) or "does not match" in text:
            raise ConnectError("%s: HOST KEY CHANGED: the key offered is not the one in %s; not connecting" % (where, known_hosts)) from None
        if "not found in known_hosts" in text:
            raise ConnectError("%s: unknown host key (not in %s); add it, or turn host_key_checking off in the inventory" % (where, known_hosts)) from None
        if isinstance(exc, NetmikoTimeoutException) and "SSHException" not in text:
            raise ConnectError("%s: connection timed out: %s" % (where, _first_line(exc))) from None
        raise ConnectError("%s: SSH failed: %s" % (where, _last_line(exc))) from None
    except ReadException as exc:
        # ReadTimeout is one: the SSH session opened but the device never showed a prompt (a hung CLI).
        raise ConnectError(
            "%s: no answer after login within %s s (timeout): %s; device state: unchanged" % (where, kwargs["read_timeout_override"], netmiko_text(exc))
        ) from None
    except OSError as exc:
        raise ConnectError("%s: cannot connect: %s" % (where, exc)) from None


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def _last_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[-1]
