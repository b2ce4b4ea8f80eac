# SPDX-License-Identifier: GPL-3.0-or-later
"""paramiko SSH server: one listening port per device, one thread per connection."""
from __future__ import annotations

import logging
import os
import re
import select
import socket
import threading
import time
from typing import Any

import paramiko

from .core import Device

log = logging.getLogger("switchsim.ssh")
# paramiko logs "Socket exception: Connection reset by peer" when netmiko
# disconnects; that is not an error of ours.
logging.getLogger("paramiko").setLevel(logging.CRITICAL)


def load_or_create_host_key(path: str | None) -> paramiko.PKey:
    """Load an ECDSA host key from path, or generate and persist one."""
    if path and os.path.exists(path):
        return paramiko.ECDSAKey(filename=path)
    key = paramiko.ECDSAKey.generate(bits=256)
    if path:
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        tmp = path + ".tmp"
        key.write_private_key_file(tmp)
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    return key


def fingerprint(key: paramiko.PKey) -> str:
    return key.get_name() + " " + key.get_fingerprint().hex()


class _ServerIface(paramiko.ServerInterface):
    def __init__(self, device: Device) -> None:
        self.device = device
        self.ready = threading.Event()
        self.exec_command: str | None = None
        self.user = ""

    def check_channel_request(self, kind: str, chanid: int) -> int:
        if kind == "session":
            return paramiko.OPEN_SUCCEEDED
        return paramiko.OPEN_FAILED_ADMINISTRATIVELY_PROHIBITED

    def get_allowed_auths(self, username: str) -> str:
        return "password"

    def check_auth_password(self, username: str, password: str) -> int:
        if self.device.check_password(username, password):
            self.user = username
            self.device.record("auth_ok", user=username)
            return paramiko.AUTH_SUCCESSFUL
        self.device.record("auth_failed", user=username)
        return paramiko.AUTH_FAILED

    def check_channel_pty_request(self, *args: Any) -> bool:
        return True

    def check_channel_window_change_request(self, *args: Any) -> bool:
        return True

    def check_channel_shell_request(self, channel: Any) -> bool:
        self.ready.set()
        return True

    def check_channel_exec_request(self, channel: Any, command: bytes) -> bool:
        self.exec_command = command.decode("utf-8", "replace")
        self.ready.set()
        return True


class Connection:
    """State of one SSH connection (passed to the platform shell)."""

    def __init__(self, listener: Listener, sock: socket.socket, addr: Any) -> None:
        self.listener = listener
        self.device = listener.device
        self.sock = sock
        self.addr = addr
        self.transport: paramiko.Transport | None = None
        self.user = ""
        self.id = f"{addr[0]}:{addr[1]}"
        self.commands = 0

    def close(self) -> None:
        try:
            if self.transport is not None:
                self.transport.close()
        except Exception:  # noqa: BLE001 - closing best effort
            pass
        try:
            self.sock.close()
        except OSError:
            pass


_EDIT = re.compile(r".\x08|.\x7f")


def _apply_backspaces(line: str) -> str:
    prev = None
    while prev != line:
        prev = line
        line = _EDIT.sub("", line, count=1)
    return line.replace("\x08", "").replace("\x7f", "")


class Listener:
    """Listening socket of one device and the threads of its connections."""

    def __init__(self, device: Device, stop: threading.Event) -> None:
        self.device = device
        self.stop = stop
        self.host_key = load_or_create_host_key(device.host_key_file)
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", device.port))
        self.sock.listen(64)
        device.port = self.sock.getsockname()[1]
        self.thread = threading.Thread(target=self._accept_loop, name=f"accept-{device.name}")
        self.conns: set[Connection] = set()
        self.threads: set[threading.Thread] = set()
        self._lock = threading.Lock()

    def start(self) -> None:
        self.thread.start()

    def rotate_host_key(self) -> str:
        """Replace the host key (and its file): clients with the old key pinned must fail."""
        if self.device.host_key_file and os.path.exists(self.device.host_key_file):
            os.remove(self.device.host_key_file)
        self.host_key = load_or_create_host_key(self.device.host_key_file)
        self.device.record("host_key_rotated")
        return fingerprint(self.host_key)

    def _accept_loop(self) -> None:
        while not self.stop.is_set():
            try:
                r, _w, _x = select.select([self.sock], [], [], 0.2)
            except (OSError, ValueError):
                break
            if not r:
                continue
            try:
                sock, addr = self.sock.accept()
            except OSError:
                break
            # OpenSSH sets TCP_NODELAY on interactive sessions; without it every
            # small reply waits on Nagle + delayed ACK (~40 ms), which real switches do not.
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            conn = Connection(self, sock, addr)
            t = threading.Thread(target=self._serve, args=(conn,),
                                 name=f"conn-{self.device.name}-{addr[1]}")
            with self._lock:
                self.conns.add(conn)
                self.threads.add(t)
            t.start()
        try:
            self.sock.close()
        except OSError:
            pass

    def close(self, timeout: float = 5.0) -> None:
        try:
            self.sock.close()
        except OSError:
            pass
        with self._lock:
            conns = list(self.conns)
            threads = list(self.threads)
        for c in conns:
            c.close()
        if self.thread.is_alive() and threading.current_thread() is not self.thread:
            self.thread.join(timeout)
        deadline = time.monotonic() + timeout
        for t in threads:
            t.join(max(0.0, deadline - time.monotonic()))

    # --- one connection -------------------------------------------------
    def _serve(self, conn: Connection) -> None:
        try:
            self._serve_inner(conn)
        except (EOFError, OSError, paramiko.SSHException):
            pass
        except Exception:  # noqa: BLE001 - a bug in a model must not kill the server
            log.exception("connection to %s failed", self.device.name)
        finally:
            conn.close()
            with self._lock:
                self.conns.discard(conn)
                self.threads.discard(threading.current_thread())

    def _serve_inner(self, conn: Connection) -> None:
        t = paramiko.Transport(conn.sock)
        conn.transport = t
        t.local_version = "SSH-2.0-OpenSSH_8.9"
        t.add_server_key(self.host_key)
        iface = _ServerIface(self.device)
        try:
            t.start_server(server=iface)
        except (paramiko.SSHException, EOFError, OSError):
            return
        chan = None
        deadline = time.monotonic() + 20
        while chan is None and t.is_active() and not self.stop.is_set() and time.monotonic() < deadline:
            chan = t.accept(0.2)
        if chan is None:
            return
        while not iface.ready.wait(0.2):
            if not t.is_active() or self.stop.is_set() or time.monotonic() > deadline:
                return
        conn.user = iface.user
        dev = self.device
        with dev.lock:
            dev.connections += 1
        shell = dev.new_shell(conn)
        try:
            if iface.exec_command is not None and _SCP_SINK.match(iface.exec_command):
                self._scp_sink(conn, chan, _SCP_SINK.match(iface.exec_command).group(1))
                return
            if iface.exec_command is not None:
                out = self._process(conn, shell, iface.exec_command, chan, exec_mode=True)
                if out is not None:
                    chan.sendall(out.encode())
                chan.send_exit_status(0)
                return
            self._interactive(conn, shell, chan)
        finally:
            shell.on_close()
            try:
                chan.close()
            except Exception:  # noqa: BLE001
                pass

    def _hang(self, conn: Connection, chan: paramiko.Channel, command: str | None) -> None:
        """A hung device: the session stays open, input is read and ignored,
        nothing is ever sent back, until the client closes or the simulator stops."""
        self.device.record("fault_hang", command=command if command is not None else "(login)")
        chan.settimeout(0.2)
        while not self.stop.is_set():
            try:
                if not chan.recv(65536):
                    return
            except TimeoutError:
                continue

    def _interactive(self, conn: Connection, shell: Any, chan: paramiko.Channel) -> None:
        if self.device.hangs_on(None):
            self._hang(conn, chan, None)
            return
        chan.sendall(_crlf(shell.banner() + shell.prompt()).encode())
        chan.settimeout(0.2)
        buf = ""
        echoed = 0
        last_cr = False
        while not self.stop.is_set() and not shell.closed:
            try:
                data = chan.recv(65536)
            except TimeoutError:
                continue
            if not data:
                break
            text = data.decode("utf-8", "replace")
            if last_cr and text.startswith("\n"):
                text = text[1:]
            last_cr = False
            buf += text
            while True:
                m = re.search(r"[\r\n]", buf)
                if not m:
                    break
                idx = m.start()
                line = buf[:idx]
                rest = buf[idx + 1:]
                if buf[idx] == "\r":
                    if rest.startswith("\n"):
                        rest = rest[1:]
                    elif not rest:
                        last_cr = True
                hidden = shell.ask is not None and not shell.ask[2]
                echo = "" if hidden else line[echoed:]
                buf, echoed = rest, 0
                line = _apply_backspaces(line)
                if line.strip() and shell.ask is None and self.device.hangs_on(line.strip()):
                    self.device.log.append({"time": time.time(), "conn": conn.id, "user": conn.user, "command": line.strip()})
                    self._hang(conn, chan, line.strip())
                    return
                out = self._process(conn, shell, line, chan)
                if out is None:
                    return
                # echo + output + next prompt in ONE send
                chan.sendall((echo + "\r\n" + out).encode())
                if shell.closed:
                    return
            if len(buf) > echoed:
                hidden = shell.ask is not None and not shell.ask[2]
                if not hidden:
                    chan.sendall(buf[echoed:].encode())
                echoed = len(buf)

    def _process(self, conn: Connection, shell: Any, line: str, chan: Any,
                 exec_mode: bool = False) -> str | None:
        """Return the text to send after the echo (output + prompt), or None to drop."""
        dev = self.device
        faults = dev.faults
        if shell.ask is not None:
            question, cb, _echo = shell.ask
            shell.ask = None
            out = cb(line)
            return _crlf(out + ("" if shell.closed else self._prompt(shell)))
        stripped = line.strip()
        if stripped:
            conn.commands += 1
            n = faults.get("drop_after_commands")
            if n is not None and conn.commands > int(n):
                dev.record("fault_drop", command=stripped, after=int(n))
                conn.close()
                return None
            if faults.get("drop_on") and re.search(faults["drop_on"], stripped):
                dev.record("fault_drop_on", command=stripped)
                conn.close()
                return None
            dev.log.append({"time": time.time(), "conn": conn.id, "user": conn.user,
                            "command": stripped})
        delay = faults.get("delay")
        if delay and stripped:
            time.sleep(float(delay))
        if stripped and dev.rejected(stripped):
            dev.record("fault_reject", command=stripped)
            out = shell.reject(stripped)
        else:
            out = shell.handle(line)
        if stripped and faults.get("drop_after") and re.search(faults["drop_after"], stripped):
            dev.record("fault_drop_after", command=stripped)
            conn.close()
            return None
        if exec_mode:
            return _crlf(out)
        if shell.closed:
            return _crlf(out)
        return _crlf(out + self._prompt(shell))

    def _scp_sink(self, conn: Connection, chan: paramiko.Channel, dest: str) -> None:
        """The receiving side of SCP (`scp -t DEST`, what scp.SCPClient.put execs): the device's optional
        `scp_sink(dest)` hook gives a function(name, data) that stores a file, or the refusal text. Protocol:
        the sink acks with a NUL byte; 'C<mode> <size> <name>' then <size> bytes and a NUL per file; 'T...'
        (times) is acked and ignored; a directory ('D'/'E') is refused. A refusal goes to stderr, exit 1."""
        dev = self.device
        hook = getattr(dev, "scp_sink", None)
        sink = hook(dest) if hook is not None else "scp: command not found"
        dev.log.append({"time": time.time(), "conn": conn.id, "user": conn.user, "command": "scp -t " + dest})
        if not callable(sink):
            dev.record("scp_refused", dest=dest, reason=str(sink))
            chan.sendall_stderr((str(sink) + "\n").encode())
            chan.send_exit_status(1)
            return
        chan.settimeout(30)
        reader = _ChannelReader(chan)
        chan.sendall(b"\0")
        while True:
            header = reader.line()
            if header is None:
                break
            if header[:1] == b"T":
                chan.sendall(b"\0")
                continue
            match = re.fullmatch(rb"C([0-7]{4}) (\d+) (.+)", header)
            if not match:
                chan.sendall(b"\x01scp: protocol error: unexpected " + header[:40] + b"\n")
                chan.send_exit_status(1)
                return
            chan.sendall(b"\0")
            data = reader.exact(int(match.group(2)))
            if data is None or reader.exact(1) != b"\0":
                dev.record("scp_truncated", dest=dest)
                chan.send_exit_status(1)
                return
            sink(match.group(3).decode("utf-8", "replace"), data)
            chan.sendall(b"\0")
        chan.send_exit_status(0)

    @staticmethod
    def _prompt(shell: Any) -> str:
        if shell.ask is not None:
            return shell.ask[0]
        return shell.prompt()


_SCP_SINK = re.compile(r"^scp(?:\s+-[a-zA-Z]+)*\s+-t\s+(?:--\s+)?(\S+)\s*$")


class _ChannelReader:
    """Buffered reads of an SSH channel for the SCP protocol: a line, or exactly n bytes (None at EOF)."""

    def __init__(self, chan: paramiko.Channel) -> None:
        self.chan = chan
        self.buf = b""

    def _fill(self) -> bool:
        try:
            data = self.chan.recv(65536)
        except (TimeoutError, OSError, EOFError):
            return False
        if not data:
            return False
        self.buf += data
        return True

    def line(self) -> bytes | None:
        while b"\n" not in self.buf:
            if not self._fill():
                return None
        line, self.buf = self.buf.split(b"\n", 1)
        return line

    def exact(self, n: int) -> bytes | None:
        while len(self.buf) < n:
            if not self._fill():
                return None
        data, self.buf = self.buf[:n], self.buf[n:]
        return data


def _crlf(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\n", "\r\n")
