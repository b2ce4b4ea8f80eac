# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""perftest ``ib_write_bw`` on a GPU host: the argv, the parser, and one NIC's loopback run.

Host code (standard library only, no Ansible). Sources, all linux-rdma/perftest at
00b55b6660d0170dabe2c1b49193e8fbe265086e (docs/hosts.md, "NIC bandwidth (ib_write_bw)"):

- options and their checks: ``src/perftest_parameters.c`` ``parser()`` (getopt_long string and
  ``long_options``), ranges from ``src/perftest_parameters.h`` (MIN_ITER 5, MAX_ITER 2^32,
  MIN_GID_IX 0, MAX_GID_IX 64, MIN_QP_NUM 1, MAX_QP_NUM 16384, DEF_PORT 18515), ``-s`` between 1
  and UINT_MAX/2, ``-D`` positive, ``--use_cuda`` non-negative; README "Running Tests" (the same
  options on server and client, the client names the server).
- the loopback: perftest's own ``run_perftest_loopback`` (server in the background, ``sleep 1``,
  the client with the same options to ``localhost``, then ``wait``).
- the output: ``ctx_print_test_info`` (header block), ``RESULT_FMT`` / ``RESULT_FMT_G`` (the table
  header in MiB/sec, older releases MB/sec, or Gb/sec with ``--report_gbits``), ``REPORT_FMT`` /
  ``REPORT_FMT_EXT`` (the rows); the unit factors of ``print_report_bw`` (MiB = 0x100000 bytes,
  Gb = 125000000 bytes); error texts to stderr (``src/write_bw.c``).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import tempfile
import time

TOOL = "ib_write_bw"
DEFAULT_PORT = 18515          # perftest_parameters.h DEF_PORT
DEFAULT_SIZE = 8388608        # the message size AzNHC azure_ib_write_bw_gdr.nhc and SuperBench ib-loopback use
SIZE_MAX = 4294967295 // 2    # perftest: "Message Size should be between 1 and UINT_MAX/2"
ITERS_MIN, ITERS_MAX = 5, 4294967296
GID_MIN, GID_MAX = 0, 64
QPS_MIN, QPS_MAX = 1, 16384
LOOPBACK_HOST = "localhost"   # run_perftest_loopback
# Gb/s per unit of the table (print_report_bw format_factor: MBS 0x100000 bytes, GBS 125000000 bytes).
TO_GBPS = {"Gb/sec": 1.0, "MiB/sec": 0x100000 / 125000000.0, "MB/sec": 0x100000 / 125000000.0}

# Our patterns (perftest takes any string): an RDMA device name as the kernel lists them under
# /sys/class/infiniband (mlx5_0, mlx5_bond_0, rocep4s0f0, ibp5, bnxt_re0), and a host name.
DEVICE_RE = re.compile(r"[A-Za-z][A-Za-z0-9_.-]{0,63}")
HOST_RE = re.compile(r"[A-Za-z0-9]([A-Za-z0-9.-]{0,252}[A-Za-z0-9])?|[0-9A-Fa-f:.]{2,45}")

RESULT_LINE = re.compile(r"^\s*-{20,}\s*$")
TITLE_RE = re.compile(r"^\s*(RDMA_Write(?: Bidirectional)?(?: Post List)? BW Test)\s*$")
OTHER_TITLE_RE = re.compile(r"^\s*((?:Send|RDMA_Read|Atomic \S+|RDMA_Write)\b.*\b(?:BW|Latency) Test)\s*$")
TABLE_HEADER_RE = re.compile(
    r"^\s*#bytes\s+#iterations\s+BW peak\[(Gb/sec|MiB/sec|MB/sec)\]\s+BW average\[(Gb/sec|MiB/sec|MB/sec)\]\s+MsgRate\[Mpps\]\s*$")
ROW_RE = re.compile(r"^\s*(\d+)\s+(\d+)\s+(\d+(?:\.\d+)?)\s+(\d+(?:\.\d+)?)\s+(\d+(?:\.\d+)?)\s*$")
FIELD_RE = re.compile(r"([A-Za-z][A-Za-z0-9*_. -]*?)\s*:\s*(\S+(?: \S+)*)")
ADDRESS_RE = re.compile(r"^\s*(local|remote) address: LID (\S+) QPN (\S+) PSN (\S+)")
GID_RE = re.compile(r"^\s*M?GID: ((?:\d{1,3}:){15}\d{1,3})\s*$")
CUDA_PICK_RE = re.compile(r"^\s*Picking device No\. (\d+)\s*$")
CUDA_NAME_RE = re.compile(r"^\s*\[pid = \d+, dev = (\d+)\] device name = \[(.*)\]\s*$")
FORM = ("the ib_write_bw report of one process: the 'RDMA_Write BW Test' header block (Device, Link type, Mtu), "
        "then the table '#bytes #iterations BW peak[Gb/sec|MiB/sec] BW average[...] MsgRate[Mpps]' with its rows, "
        "closed by a dashed line")


class PerftestError(ValueError):
    """Bad input, or ib_write_bw output that is not the form expected; the message names it."""


# ---------------------------------------------------------------------------
# argv
# ---------------------------------------------------------------------------


def _int(key: str, value, low: int, high: int | None, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, str) and re.fullmatch(r"\d+", value):
            value = int(value)
        else:
            raise PerftestError("%s: %r is not an integer (%s)" % (key, value, what))
    if value < low or (high is not None and value > high):
        raise PerftestError("%s: %r is out of range (%s)" % (key, value, what))
    return value


def check_device(key: str, name) -> str:
    if not isinstance(name, str) or not DEVICE_RE.fullmatch(name):
        raise PerftestError("%s: %r is not an RDMA device name (like mlx5_0: a letter, then letters, digits, '_', '.', '-'; "
                            "at most 64)" % (key, name))
    return name


def build_argv(device: str, *, size: int | None = DEFAULT_SIZE, duration: int | None = None, iterations: int | None = None,
               gid_index: int | None = None, port: int | None = None, use_cuda: int | None = None, qps: int | None = None,
               ib_port: int | None = None, server: str | None = None, binary: str = TOOL) -> list[str]:
    """The ib_write_bw argv for one side: without ``server`` the server, with it the client.

    Always ``-F`` (do not fail on cpufreq, as AzNHC and SuperBench run it) and ``--report_gbits``.
    ``duration`` (-D) and ``iterations`` (-n) exclude each other here (perftest ignores -n in duration mode).
    """
    argv = [binary, "-d", check_device("nic", device)]
    if ib_port is not None:
        argv += ["-i", str(_int("ib_port", ib_port, 1, 255, "perftest -i: 1..255 (uint8, MIN_IB_PORT 1)"))]
    if size is not None:
        argv += ["-s", str(_int("size", size, 1, SIZE_MAX, "perftest -s: 1..%d bytes" % SIZE_MAX))]
    if duration is not None and iterations is not None:
        raise PerftestError("duration and iterations: give one (ib_write_bw -D runs for seconds and ignores -n)")
    if duration is not None:
        argv += ["-D", str(_int("duration", duration, 1, None, "perftest -D: positive seconds"))]
    if iterations is not None:
        argv += ["-n", str(_int("iterations", iterations, ITERS_MIN, ITERS_MAX, "perftest -n: %d..%d" % (ITERS_MIN, ITERS_MAX)))]
    if gid_index is not None:
        argv += ["-x", str(_int("gid_index", gid_index, GID_MIN, GID_MAX, "perftest -x: %d..%d" % (GID_MIN, GID_MAX)))]
    if qps is not None:
        argv += ["-q", str(_int("qps", qps, QPS_MIN, QPS_MAX, "perftest -q: %d..%d" % (QPS_MIN, QPS_MAX)))]
    if port is not None:
        argv += ["-p", str(_int("port", port, 1, 65535, "a TCP port 1..65535"))]
    argv += ["-F", "--report_gbits"]
    if use_cuda is not None:
        argv.append("--use_cuda=%d" % _int("use_cuda", use_cuda, 0, None, "perftest --use_cuda: a GPU index >= 0"))
    if server is not None:
        if not isinstance(server, str) or not HOST_RE.fullmatch(server):
            raise PerftestError("server: %r is not a host name or address" % (server,))
        argv.append(server)
    if any(not isinstance(a, str) or "\n" in a or "\r" in a or "\0" in a for a in argv):
        raise PerftestError("argv: a word carries a newline or NUL: %r" % (argv,))
    return argv


# ---------------------------------------------------------------------------
# parser
# ---------------------------------------------------------------------------


def _refuse(what: str, line_no: int | None = None) -> PerftestError:
    where = " (line %d)" % line_no if line_no else ""
    return PerftestError("ib_write_bw: %s%s; expected %s" % (what, where, FORM))


def parse(text: str, device: str | None = None) -> dict:
    """One process's ib_write_bw stdout -> the report.

    Returns ``{test, device, link_type, mtu, gid_index, qps, units, rows: [{bytes, iterations, peak, average,
    msg_rate_mpps}], gbps, peak_gbps, local_gids, remote_gids, cuda_gpu, cuda_name}``; ``gbps``/``peak_gbps`` are
    the last row's average and peak in Gb/s (the largest size with ``-a``); ``peak_gbps`` is None where perftest
    did not measure it (it prints 0.00: duration mode, -N, more than 20000 iterations).
    """
    if not isinstance(text, str) or not text.strip():
        raise _refuse("empty output")
    lines = text.splitlines()
    titles = [i for i, line in enumerate(lines) if TITLE_RE.match(line)]
    if not titles:
        other = next((m.group(1) for m in map(OTHER_TITLE_RE.match, lines) if m), None)
        if other:
            raise _refuse("this is the report of another perftest test (%r), not ib_write_bw" % other)
        raise _refuse("no 'RDMA_Write BW Test' header")
    if len(titles) > 1:
        raise _refuse("%d reports in one text (server and client output mixed?); pass one process's stdout" % len(titles),
                      titles[1] + 1)
    start = titles[0]
    fields: dict[str, str] = {}
    index = start + 1
    while index < len(lines) and not RESULT_LINE.match(lines[index]):
        for key, value in FIELD_RE.findall(lines[index]):
            fields[key.strip().lower()] = value.strip()
        index += 1
    if index >= len(lines):
        raise _refuse("the header block is not closed by a dashed line", start + 1)
    for need in ("device", "link type", "mtu"):
        if need not in fields:
            raise _refuse("the header block has no %r field" % need.capitalize(), start + 1)
    mtu = re.fullmatch(r"(\d+)\[B\]", fields["mtu"])
    if not mtu:
        raise _refuse("Mtu %r is not '<bytes>[B]'" % fields["mtu"], start + 1)
    report = {
        "test": TITLE_RE.match(lines[start]).group(1),
        "device": fields["device"],
        "link_type": fields["link type"],
        "mtu": int(mtu.group(1)),
        "gid_index": int(fields["gid index"]) if fields.get("gid index", "").isdigit() else None,
        "qps": int(fields["number of qps"]) if fields.get("number of qps", "").isdigit() else None,
        "local_gids": [], "remote_gids": [], "cuda_gpu": None, "cuda_name": None,
    }
    if report["link_type"] not in ("IB", "Ethernet"):
        raise _refuse("Link type %r is not IB or Ethernet (perftest link_layer_str)" % report["link_type"], start + 1)
    if device is not None and report["device"] != device:
        raise PerftestError("ib_write_bw: the report is for device %r, not %r" % (report["device"], device))
    for line in lines[:start]:
        pick, name = CUDA_PICK_RE.match(line), CUDA_NAME_RE.match(line)
        if pick:
            report["cuda_gpu"] = int(pick.group(1))
        if name:
            report["cuda_name"] = name.group(2)
    headers = [i for i in range(index, len(lines)) if TABLE_HEADER_RE.match(lines[i])]
    if not headers:
        raise _refuse("no result table header after the header block")
    if len(headers) > 1:
        raise _refuse("%d result tables (server and client output mixed?)" % len(headers), headers[1] + 1)
    side = None
    for i in range(index + 1, headers[0]):
        line = lines[i]
        addr = ADDRESS_RE.match(line)
        if addr:
            side = addr.group(1)
            continue
        gid = GID_RE.match(line)
        if gid and side:
            gids = report["%s_gids" % side]
            if gid.group(1) not in gids:
                gids.append(gid.group(1))
    header = TABLE_HEADER_RE.match(lines[headers[0]])
    if header.group(1) != header.group(2):
        raise _refuse("peak and average columns in different units", headers[0] + 1)
    report["units"] = header.group(1)
    rows = []
    i = headers[0] + 1
    while i < len(lines) and not RESULT_LINE.match(lines[i]):
        row = ROW_RE.match(lines[i])
        if not row:
            raise _refuse("table line %r is not '#bytes #iterations peak average msgrate'" % lines[i].strip(), i + 1)
        rows.append({"bytes": int(row.group(1)), "iterations": int(row.group(2)), "peak": float(row.group(3)),
                     "average": float(row.group(4)), "msg_rate_mpps": float(row.group(5))})
        i += 1
    if i >= len(lines):
        raise _refuse("the result table is not closed by a dashed line (output cut short?)", headers[0] + 1)
    if not rows:
        raise _refuse("the result table has no rows", headers[0] + 1)
    factor = TO_GBPS[report["units"]]
    last = rows[-1]
    report["rows"] = rows
    report["gbps"] = round(last["average"] * factor, 4)
    report["peak_gbps"] = round(last["peak"] * factor, 4) if last["peak"] > 0 else None
    return report


def errors(stderr: str, stdout: str = "") -> str:
    """The device's words from a failed run: perftest's stderr lines (and stdout's last lines if stderr is empty)."""
    words = [line.strip() for line in (stderr or "").splitlines() if line.strip()]
    if not words:
        words = [line.strip() for line in (stdout or "").splitlines() if line.strip()][-3:]
    return "; ".join(words) or "(no output)"


# ---------------------------------------------------------------------------
# one NIC's loopback (host side: processes)
# ---------------------------------------------------------------------------


def _stop(proc: subprocess.Popen, grace: float) -> str:
    """Wait up to ``grace`` for a process to end, then SIGTERM, then SIGKILL its process group; always reaped."""
    try:
        proc.wait(timeout=grace)
        return "exited"
    except subprocess.TimeoutExpired:
        pass
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            proc.wait(timeout=grace)
            return "killed"
        except subprocess.TimeoutExpired:
            continue
    proc.wait()
    return "killed"


def _read(handle) -> str:
    handle.seek(0)
    return handle.read().decode("utf-8", "replace")


def loopback(server_argv: list[str], client_argv: list[str], device: str, timeout: float = 120.0, server_wait: float = 1.0,
             connect_retries: int = 3, env: dict | None = None) -> dict:
    """Start the server, wait ``server_wait`` (run_perftest_loopback's ``sleep 1``), run the client to localhost,
    parse its stdout. The server is stopped and reaped on every path (its process group killed after a grace).

    A client that finds no listener yet (perftest: "Couldn't connect to <host>:<port>") is retried after
    another ``server_wait``, at most ``connect_retries`` times, while the server runs.
    Returns ``{ok, gbps, peak_gbps, report?, error?, server_rc, client_rc, server}``.
    """
    deadline = time.monotonic() + timeout
    out: dict = {"ok": False, "gbps": None, "peak_gbps": None, "server_rc": None, "client_rc": None}
    with tempfile.TemporaryFile() as s_out, tempfile.TemporaryFile() as s_err:
        try:
            server = subprocess.Popen(server_argv, stdout=s_out, stderr=s_err, stdin=subprocess.DEVNULL, env=env,
                                      start_new_session=True)
        except OSError as exc:
            out["error"] = "%s server on %s could not start: %s" % (TOOL, device, exc)
            return out
        try:
            client = None
            for attempt in range(connect_retries + 1):
                time.sleep(max(0.0, min(server_wait, deadline - time.monotonic())))
                if server.poll() is not None:
                    out["error"] = "%s server on %s exited %s before the client ran: %s" % (
                        TOOL, device, server.returncode, errors(_read(s_err), _read(s_out)))
                    return out
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                try:
                    client = subprocess.run(client_argv, capture_output=True, stdin=subprocess.DEVNULL, env=env, timeout=left,
                                            start_new_session=True, check=False)
                except subprocess.TimeoutExpired:
                    client = None
                    break
                refused = client.returncode != 0 and "Couldn't connect to" in (client.stderr or b"").decode("utf-8", "replace")
                if not refused or attempt == connect_retries:
                    break
            if client is None:
                out["error"] = "%s on %s: no result within timeout %ss" % (TOOL, device, timeout)
                return out
            out["client_rc"] = client.returncode
            c_out = client.stdout.decode("utf-8", "replace")
            c_err = client.stderr.decode("utf-8", "replace")
            if client.returncode != 0:
                out["error"] = "%s client on %s exited %d: %s" % (TOOL, device, client.returncode, errors(c_err, c_out))
                return out
            try:
                report = parse(c_out, device)
            except PerftestError as exc:
                out["error"] = str(exc)
                return out
            out.update(ok=True, gbps=report["gbps"], peak_gbps=report["peak_gbps"], report=report)
            return out
        finally:
            out["server"] = _stop(server, grace=min(5.0, max(0.5, server_wait * 2)))
            out["server_rc"] = server.returncode


# ---------------------------------------------------------------------------
# the module's plan and run (nic_bandwidth)
# ---------------------------------------------------------------------------


def find_binary(bin_dir: str | None, which) -> str | None:
    """ib_write_bw in ``bin_dir`` (lab, tests) first, else ``which(name)`` (PATH); None when not installed."""
    if bin_dir and os.access(os.path.join(bin_dir, TOOL), os.X_OK):
        return os.path.join(bin_dir, TOOL)
    return which(TOOL)


def nic_names(nics) -> list[str]:
    """``nics`` as the role passes them (names, or mappings with ``name`` like the plan's NICs) -> names, checked."""
    if not isinstance(nics, list) or not nics:
        raise PerftestError("nics: %r is not a non-empty list of NIC names or mappings with 'name'" % (nics,))
    names = []
    for i, nic in enumerate(nics):
        name = nic.get("name") if isinstance(nic, dict) else nic
        check_device("nics[%d]" % i, name)
        if name in names:
            raise PerftestError("nics[%d]: %r is listed twice" % (i, name))
        names.append(name)
    return names


def plan(params: dict, binary: str = TOOL) -> dict:
    """{nic: {"port", "gpu", "server": argv, "client": argv}} for every NIC, validated before anything runs.

    NIC i (in the given order) uses TCP port ``base_port + i``, so NICs can run at once (AzNHC gives each HCA
    its own port); ``use_cuda`` maps a NIC to its GPU index (--use_cuda=<gpu>, GPUDirect)."""
    names = nic_names(params.get("nics"))
    cuda = params.get("use_cuda") or {}
    if not isinstance(cuda, dict):
        raise PerftestError("use_cuda: %r is not a mapping of NIC name to GPU index" % (cuda,))
    for nic in cuda:
        if nic not in names:
            raise PerftestError("use_cuda: %r is not one of nics %s" % (nic, names))
    base = _int("base_port", params.get("base_port", DEFAULT_PORT), 1, 65535 - len(names) + 1,
                "a TCP port; base_port + number of NICs - 1 must stay <= 65535")
    if params.get("min_gbps") is not None and (isinstance(params["min_gbps"], bool) or
                                               not isinstance(params["min_gbps"], (int, float)) or params["min_gbps"] < 0):
        raise PerftestError("min_gbps: %r is not a number >= 0 (Gb/s)" % (params["min_gbps"],))
    for key, low in (("timeout", 1), ("server_wait", 0)):
        value = params.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float)) or value < low):
            raise PerftestError("%s: %r is not a number >= %s (seconds)" % (key, value, low))
    out = {}
    for i, nic in enumerate(names):
        common = {"size": params.get("size", DEFAULT_SIZE), "duration": params.get("duration"),
                  "iterations": params.get("iterations"), "gid_index": params.get("gid_index"), "qps": params.get("qps"),
                  "port": base + i, "use_cuda": cuda.get(nic), "binary": binary}
        out[nic] = {"port": base + i, "gpu": cuda.get(nic), "server": build_argv(nic, **common),
                    "client": build_argv(nic, server=LOOPBACK_HOST, **common)}
    return out


def run_plan(planned: dict, params: dict) -> dict:
    """Run every NIC's loopback (one after another, or all at once with ``parallel``) -> {nic: result}."""
    timeout = float(params.get("timeout") or 120)
    wait = float(params.get("server_wait") if params.get("server_wait") is not None else 1.0)
    floor = params.get("min_gbps")

    def one(nic: str) -> dict:
        step = planned[nic]
        got = loopback(step["server"], step["client"], nic, timeout=timeout, server_wait=wait)
        report = got.pop("report", None) or {}
        result = {"ok": got["ok"], "gbps": got["gbps"], "peak_gbps": got["peak_gbps"], "port": step["port"], "gpu": step["gpu"],
                  "argv": {"server": step["server"], "client": step["client"]}, "server_rc": got["server_rc"],
                  "client_rc": got["client_rc"], "server": got.get("server"),
                  "link_type": report.get("link_type"), "mtu": report.get("mtu"), "gid_index": report.get("gid_index")}
        if got.get("error"):
            result["error"] = got["error"]
        elif floor is not None and float(got["gbps"] or 0.0) < floor:
            result["ok"] = False
            result["error"] = "%s loopback on %s: %.2f Gb/s is below min_gbps %s" % (TOOL, nic, float(got["gbps"] or 0.0), floor)
        return result

    if not params.get("parallel"):
        return {nic: one(nic) for nic in planned}
    import threading  # pylint: disable=import-outside-toplevel

    results: dict = {}
    threads = [threading.Thread(target=lambda n=nic: results.__setitem__(n, one(n)), name="ib_write_bw-" + nic) for nic in planned]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return {nic: results[nic] for nic in planned}
