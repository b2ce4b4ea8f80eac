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
    port = params.get("port") or 22
    kwargs = {
        "host": params["host"],
        "port": port,
        "username": params.get("username"),
        "password": params.get("password"),
        "secret": params.get("secret") or "",
        "ssh_strict": bool(checking),
        "system_host_keys": False,
        # The host's keys are handed to paramiko by _connection_class (below), not the file: netmiko would
        # have paramiko parse the whole known hosts file on every connection.
        "alt_host_keys": False,
        "alt_key_file": "",
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
        host_keys = _host_keys(known_hosts, kwargs["host"], port) if checking else []
        return _connection_class(driver_cls.connection_class(), host_keys)(**kwargs)
    except NetmikoAuthenticationException as exc:
        raise ConnectError("%s: authentication failed for user %r (not retried): %s" % (where, kwargs["username"], _first_line(exc))) from None
    except (paramiko.SSHException, NetmikoTimeoutException) as exc:
        # netmiko wraps paramiko's host-key errors in a timeout exception; the text says which.
        text = str(exc)
        if isinstance(exc, paramiko.BadHostKeyException) or "does not match" in text:
            raise ConnectError("%s: HOST KEY CHANGED: the key offered is not the one in %s; not connecting" % (where, known_hosts)) from None
        if "not found in known_hosts" in text:
            raise ConnectError("%s: unknown host key (not in %s); add it, or turn host_key_checking off in the inventory" % (where, known_hosts)) from None
        tcp = _tcp_error(exc)
        if isinstance(tcp, ConnectionRefusedError):
            # a port nothing listens on (or a firewall's RST): not a timeout, and retrying will not help
            raise ConnectError("%s: connection refused (nothing listens on port %s, or a firewall rejects it)" % (where, kwargs["port"])) from None
        if tcp is not None and not isinstance(tcp, TimeoutError):
            raise ConnectError("%s: cannot connect: %s" % (where, tcp)) from None
        if isinstance(exc, NetmikoTimeoutException) and "SSHException" not in text:
            raise ConnectError("%s: connection timed out: %s" % (where, _first_line(exc))) from None
        raise ConnectError("%s: SSH failed: %s" % (where, _last_line(exc))) from None
    except ReadException as exc:
        # ReadTimeout is one: the SSH session opened but the device never showed a prompt (a hung CLI).
        raise ConnectError(
            "%s: no answer after login within %s s (timeout): %s; device state: unchanged" % (where, kwargs["read_timeout_override"], netmiko_text(exc))
        ) from None
    except ConnectionRefusedError:
        raise ConnectError("%s: connection refused (nothing listens on port %s, or a firewall rejects it)" % (where, kwargs["port"])) from None
    except OSError as exc:
        raise ConnectError("%s: cannot connect: %s" % (where, exc)) from None


def _tcp_error(exc: BaseException) -> OSError | None:
    """The socket error under netmiko's "TCP connection to device failed": netmiko raises its
    NetmikoTimeoutException for every socket error of the TCP connect (base_connection.py,
    establish_connection: `except socket.error`), refused and unreachable alike, so the cause
    is read from the exception it was raised while handling."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, OSError) and not isinstance(exc, EOFError):
            # paramiko's NoValidConnectionsError (errno None) keeps each address's own error in .errors
            inner = [e for e in (getattr(exc, "errors", None) or {}).values() if isinstance(e, OSError)]
            return inner[0] if inner else exc
        exc = exc.__cause__ or exc.__context__
    return None


# known hosts file -> ((mtime_ns, size), {plain host name: [keys]}, [hashed entries]), parsed once per process.
_KNOWN_HOSTS: dict[str, tuple] = {}
_KNOWN_HOSTS_LOCK = threading.Lock()


def _host_keys(path: str, host: str, port: int) -> list:
    """The keys the known hosts file holds for host:port, the lookup paramiko's SSHClient does
    ('[host]:port' unless port 22; plain and hashed '|1|' names). The file is parsed once per
    process and again only when it changes: paramiko's load_host_keys, which netmiko calls per
    connection, builds a key object for every line of the file, so a fabric of N switches with
    one shared known hosts file cost N x N key parses (docs/performance.md)."""
    import paramiko  # pylint: disable=import-outside-toplevel
    from paramiko.hostkeys import HostKeyEntry, InvalidHostKey  # pylint: disable=import-outside-toplevel
    from paramiko.util import constant_time_bytes_eq  # pylint: disable=import-outside-toplevel

    info = os.stat(path)
    stamp = (info.st_mtime_ns, info.st_size)
    with _KNOWN_HOSTS_LOCK:
        cached = _KNOWN_HOSTS.get(path)
        if cached is None or cached[0] != stamp:
            plain: dict[str, list] = {}
            hashed: list = []
            with open(path, encoding="utf-8", errors="replace") as handle:
                for lineno, line in enumerate(handle, 1):
                    line = line.strip()
                    if not line or line.startswith("#"):
                        continue
                    try:
                        entry = HostKeyEntry.from_line(line, lineno)
                    except (paramiko.SSHException, InvalidHostKey):
                        continue  # a line no key can be read from is skipped, as OpenSSH does
                    if entry is None:
                        continue
                    for name in entry.hostnames:
                        if name.startswith("|1|"):
                            hashed.append((name, entry.key))
                        else:
                            plain.setdefault(name, []).append(entry.key)
            cached = _KNOWN_HOSTS[path] = (stamp, plain, hashed)
    _stamp, plain, hashed = cached
    name = host if port == 22 else "[%s]:%d" % (host, port)
    keys = list(plain.get(name, []))
    keys += [key for salted, key in hashed if constant_time_bytes_eq(paramiko.HostKeys.hash_host(name, salted).encode(), salted.encode())]
    return keys


def _connection_class(base: type, host_keys: list) -> type:
    """The driver's netmiko class, with this host's known keys given to paramiko's client and
    without netmiko's fixed 0.1 s sleep after the first RETURN of a session: each driver's
    session_preparation reads until the prompt pattern right after it (netmiko
    _test_channel_read(pattern=...)), so the sleep only added 0.1 s to every connection."""

    def _get_ssh_client_instance(self):
        client = base._get_ssh_client_instance(self)  # pylint: disable=protected-access
        known = client.get_host_keys()
        name = self.host if self.port == 22 else "[%s]:%d" % (self.host, self.port)
        for key in host_keys:
            known.add(name, key.get_name(), key)
        return client

    def _try_session_preparation(self, force_data: bool = True) -> None:
        if force_data:
            try:
                self.write_channel(self.RETURN)
            except Exception:
                self.disconnect()
                raise
        base._try_session_preparation(self, force_data=False)  # pylint: disable=protected-access

    return type(base.__name__, (base,), {"_get_ssh_client_instance": _get_ssh_client_instance, "_try_session_preparation": _try_session_preparation})


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def _last_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[-1]
