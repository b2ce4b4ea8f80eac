# SPDX-License-Identifier: GPL-3.0-or-later
"""A strict ``ib_write_bw`` (perftest) for a hostsim host: the loopback the nic_bandwidth module runs.

What it follows (linux-rdma/perftest at 00b55b6660d0170dabe2c1b49193e8fbe265086e):
- the command line as ``parser()`` of src/perftest_parameters.c reads it: glibc getopt_long over the short
  string and ``long_options`` (unknown option, missing argument, ambiguous abbreviation: glibc's message
  with argv[0], then perftest's " Invalid Command or flag." and usage head), " Duplicated argument",
  the value checks (CHECK_VALUE* texts and ranges), one positional word = the server's name;
  every failure ends " Parser function exited with Error" and exit 1 (src/write_bw.c).
- the device: ``ctx_find_dev`` ("IB device %s not found", then " Unable to find the Infiniband/RoCE device");
  a NIC whose cable is down: check_link's " Port number 1 state is Down" and " Couldn't get context for the device".
- the pairing: a client reaches a server only on the same host and port ("Couldn't connect to %s:%d",
  "Unable to open file descriptor for socket connection", " Unable to init the socket connection");
  a second server on a busy port: "Couldn't listen to port %d". The rendezvous is a file under the host tree
  (``.hostsim/perftest/<port>.json``), the result the client hands the server ``<port>.result.json``.
- the output: ctx_print_test_info, the address lines, RESULT_FMT(_G) and REPORT_FMT(_EXT), the CUDA lines
  of src/cuda_memory.c; " WARNING: BW peak won't be measured in this run." in duration mode.

Lab choices (docs/hosts.md, "NIC bandwidth (ib_write_bw)", unverified against hardware):
- bandwidth: with ``lab_perf_faults`` the model's ``Fabric.loopback_gbps`` (tests/lab/nccl/perfmodel.py, GB/s,
  times 8); without, the NIC's line rate (its cable speed) x LOOPBACK_EFFICIENCY, no noise. Peak = average in
  iteration mode (perftest measures it; the lab has no second number), 0.00 in duration mode.
- options accepted: those the module sends (-d -i -s -D -n -x -q -p -F --report_gbits --use_cuda) and
  --perform_warm_up, -N; any other real perftest option is refused with a "lab:" message.
- a server waits for its client at most SERVER_WAIT_S (a real one waits forever); GPUs per host: LAB_GPUS;
  --use_cuda without nvidia_peermem loaded fails as issue linux-rdma/perftest#346 shows.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import wiring  # noqa: E402  # pylint: disable=wrong-import-position

from hostsim import tree  # noqa: E402  # pylint: disable=wrong-import-position

LOOPBACK_EFFICIENCY = 0.97   # lab choice: a healthy 400G loopback near 388 Gb/s (AzNHC's floor on NDR is 380)
LAB_GPUS = 8                 # lab choice: 8 GPUs per host
SERVER_WAIT_S = float(os.environ.get("HOSTSIM_PERFTEST_WAIT", "600"))
POLL_S = 0.01
RESULT_LINE = "-" * 87 + "\n"
SHORT = "w:y:p:d:i:m:s:n:t:u:S:x:c:q:I:o:M:r:Q:A:l:D:f:B:T:L:E:J:j:K:k:X:W:aFegzRvhbNVCHUOZP"
# long_options of parser(): name -> (has_arg, short letter or None for flag-style options).
LONG = {
    "port": (1, "p"), "ib-dev": (1, "d"), "ib-port": (1, "i"), "mtu": (1, "m"), "size": (1, "s"), "iters": (1, "n"),
    "tx-depth": (1, "t"), "qp-timeout": (1, "u"), "sl": (1, "S"), "gid-index": (1, "x"), "all": (0, "a"),
    "CPU-freq": (0, "F"), "connection": (1, "c"), "qp": (1, "q"), "events": (0, "e"), "vector": (1, "X"),
    "inline_size": (1, "I"), "outs": (1, "o"), "mcg": (0, "g"), "comm_rdma_cm": (0, "z"), "rdma_cm": (0, "R"),
    "tos": (1, "T"), "hop_limit": (1, "L"), "help": (0, "h"), "MGID": (1, "M"), "rx-depth": (1, "r"),
    "bidirectional": (0, "b"), "cq-mod": (1, "Q"), "noPeak": (0, "N"), "version": (0, "V"), "report-cycles": (0, "C"),
    "report-histogrm": (0, "H"), "report-unsorted": (0, "U"), "atomic_type": (1, "A"), "dualport": (0, "O"),
    "post_list": (1, "l"), "duration": (1, "D"), "margin": (1, "f"), "source_mac": (1, "B"), "dest_mac": (1, "E"),
    "dest_ip": (1, "J"), "source_ip": (1, "j"), "dest_port": (1, "K"), "source_port": (1, "k"), "ethertype": (1, "Y"),
    "limit_bw": (1, "w"), "limit_msgrate": (1, "y"), "server": (0, "Z"), "client": (0, "P"), "mac_fwd": (0, "v"),
    "use_rss": (0, "G"), "report-counters": (1, "W"),
}
for _name in ("force-link", "remote_mac", "local_mac", "remote_ip", "local_ip", "remote_port", "local_port", "pkey_index",
              "burst_size", "typical_pkt_size", "rate_limit", "rate_limit_type", "rate_units", "output", "out_json_file",
              "latency_gap", "flow_label", "retry_count", "payload_file_path", "use_cuda", "use_cuda_bus_id", "cuda_mem_type",
              "use_musa", "use_musa_bus_id", "use_rocm", "use_neuron", "use_hl", "use_mlu", "use_opencl", "opencl_platform_id",
              "use_ib_dm_dmabuf", "gpu_touch", "mmap", "mmap-offset", "dlid", "tclass", "wait_destroy", "flows", "flows_burst",
              "reply_every", "vlan_pcp", "recv_post_list", "bind_source_ip", "cqe_poll", "pin_cores", "numa_node"):
    LONG[_name] = (1, None)
for _name in ("run_infinitely", "report_gbits", "use-srq", "use-null-mr", "report-both", "reversed", "tcp", "cpu_util",
              "out_json", "dont_xchg_versions", "use_cuda_dmabuf", "use_cuda_pcie_mapping", "use_data_direct", "use_musa_dmabuf",
              "use_musa_pcie_mapping", "use_rocm_dmabuf", "use_neuron_dmabuf", "use_mlu_dmabuf", "ipv6", "ipv6-addr",
              "report-per-port", "odp", "use_hugepages", "use_old_post_send", "promiscuous", "raw_mcast", "mr_per_qp",
              "perform_warm_up", "vlan_en", "write_with_imm", "send_with_imm", "connectionless", "disable_dynamic_polling",
              "data_validation", "data_validation_debug", "disable_numa"):
    LONG[_name] = (0, None)
SIMULATED = {"d", "i", "s", "D", "n", "x", "q", "p", "F", "N", "report_gbits", "use_cuda", "perform_warm_up"}
# The ones that must be equal on both sides for the lab's pairing ("The SAME OPTIONS must be passed to both", README).
SYMMETRIC = ("s", "D", "n", "q", "report_gbits", "i")


class PerftestFailure(Exception):
    def __init__(self, stderr: str, stdout: str = "", rc: int = 1) -> None:
        super().__init__(stderr)
        self.stderr, self.stdout, self.rc = stderr, stdout, rc


def _parser_error(prog: str, glibc: str, stdout: str = "") -> PerftestFailure:
    usage = ("Usage:\n  %s            start a server and wait for connection\n  %s <host>     connect to server at <host>\n"
             % (prog, prog))
    return PerftestFailure("%s Invalid Command or flag.\n Please check command line and run again.\n\n"
                           " Parser function exited with Error\n" % glibc, stdout + usage)


def getopt(prog: str, argv: list[str]) -> tuple[list[tuple[str, str | None]], list[str]]:
    """glibc getopt_long with argument permutation: ([(key, value)], positional words)."""
    shorts = {}
    for i, ch in enumerate(SHORT):
        if ch != ":":
            shorts[ch] = SHORT[i + 1:i + 2] == ":"
    opts, words, i = [], [], 0
    while i < len(argv):
        word = argv[i]
        if word == "--":
            words += argv[i + 1:]
            break
        if word.startswith("--"):
            name, eq, value = word[2:].partition("=")
            matches = [n for n in LONG if n == name] or [n for n in LONG if n.startswith(name)]
            if not matches:
                raise _parser_error(prog, "%s: unrecognized option '--%s'\n" % (prog, name))
            if len(matches) > 1:
                raise _parser_error(prog, "%s: option '--%s' is ambiguous; possibilities: %s\n"
                                    % (prog, name, " ".join("'--%s'" % m for m in matches)))
            has_arg, letter = LONG[matches[0]]
            key = letter or matches[0]
            if has_arg and not eq:
                if i + 1 >= len(argv):
                    raise _parser_error(prog, "%s: option '--%s' requires an argument\n" % (prog, matches[0]))
                i += 1
                value = argv[i]
            elif not has_arg and eq:
                raise _parser_error(prog, "%s: option '--%s' doesn't allow an argument\n" % (prog, matches[0]))
            opts.append((key, value if has_arg else None))
        elif word.startswith("-") and len(word) > 1:
            j = 1
            while j < len(word):
                ch = word[j]
                if ch not in shorts:
                    raise _parser_error(prog, "%s: invalid option -- '%s'\n" % (prog, ch))
                if shorts[ch]:
                    value = word[j + 1:]
                    if not value:
                        if i + 1 >= len(argv):
                            raise _parser_error(prog, "%s: option requires an argument -- '%s'\n" % (prog, ch))
                        i += 1
                        value = argv[i]
                    opts.append((ch, value))
                    break
                opts.append((ch, None))
                j += 1
        else:
            words.append(word)
        i += 1
    return opts, words


def _strtol(text: str) -> int | None:
    """C strtol(text, &end, 0) with a full-consumption check (CHECK_VALUE): None when not all an integer."""
    m = re.fullmatch(r"\s*([+-]?)(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)", text)
    if not m:
        return None
    digits = m.group(2)
    value = int(digits, 16) if digits[:2].lower() == "0x" else int(digits, 8) if digits.startswith("0") else int(digits)
    return -value if m.group(1) == "-" else value


def _fail(msg: str) -> PerftestFailure:
    return PerftestFailure("%s\n Parser function exited with Error\n" % msg)


def parse_options(prog: str, argv: list[str]) -> dict:
    """The checked options {key: value} plus 'server' (None for a server), as parser() leaves them."""
    raw, words = getopt(prog, argv)
    seen, opts = set(), {}
    for key, value in raw:
        if key in seen:
            raise _fail(" Duplicated argument: %s " % ("-" + key if len(key) == 1 else key))
        seen.add(key)
        if key not in SIMULATED:
            raise PerftestFailure("lab: ib_write_bw option %s is a real perftest option the lab does not simulate "
                                  "(tests/lab/hostsim/perftest.py)\n" % ("-" + key if len(key) == 1 else "--" + key))
        opts[key] = value
    checks = {"p": ("Port", "int", None, None), "i": ("IB Port", "uint8_t", None, None),
              "n": ("Iteration num", "uint64_t", 5, 4294967296), "x": ("Gid index", "uint8_t", 0, 64),
              "q": ("num of Qps", "int", 1, 16384), "D": ("Duration period", "int", None, None),
              "use_cuda": ("CUDA device", "int", None, None)}
    for key, (name, ctype, low, high) in checks.items():
        if key not in opts:
            continue
        value = _strtol(opts[key])
        if value is None:
            raise _fail(" %s argument %s should be %s" % (name, opts[key], ctype))
        if ctype == "uint8_t":
            value &= 0xFF
        if low is not None and not low <= value <= high:
            raise _fail(" %s should be between %d and %d" % (name, low, high))
        if key == "i" and value < 1:
            raise _fail("IB Port can't be less than 1")
        if key == "D" and value <= 0:
            raise _fail(" Duration period must be positive")
        if key == "use_cuda" and value < 0:
            raise _fail(" CUDA device must be non-negative int")
        opts[key] = value
    if "s" in opts:
        text, factor = opts["s"], 1
        if text.endswith("K"):
            text, factor = text[:-1], 1024
        elif text.endswith("M"):
            text, factor = text[:-1], 1024 * 1024
        m = re.match(r"\s*([+-]?\d+)", text)  # strtol(optarg, NULL, 0): the leading number, rest ignored
        size = (int(m.group(1)) if m else 0) * factor
        if size < 1 or size > 4294967295 // 2:
            raise _fail(" Message Size should be between 1 and %d" % (4294967295 // 2))
        opts["s"] = size
    if len(words) > 1:
        raise PerftestFailure(" Invalid Command line. Please check command rerun \n Parser function exited with Error\n")
    opts["server"] = words[0] if words else None
    return opts


# ---------------------------------------------------------------------------
# the run
# ---------------------------------------------------------------------------


def _nic(state: dict, device: str) -> tuple[str, dict]:
    for netdev, nic in state["nics"].items():
        if nic["name"] == device:
            return netdev, nic
    raise PerftestFailure("IB device %s not found\n Unable to find the Infiniband/RoCE device\n" % device)


def _read(root: str, rel: str) -> str:
    try:
        with open(os.path.join(root, rel), encoding="utf-8") as handle:
            return handle.read().strip()
    except OSError:
        return ""


def _link(root: str, state: dict, device: str, netdev: str) -> dict:
    """{'oper', 'speed'} of the NIC's cable now (the wiring re-read, as lldpctl does)."""
    lab = state.get("lab") or {}
    if lab.get("wiring_file") and lab.get("host"):
        seen = wiring.view(wiring.load(os.path.dirname(lab["wiring_file"])), lab["host"])
        return seen.get(device) or {"oper": "down", "speed": None}
    speed = _read(root, "sys/class/net/%s/speed" % netdev)
    oper = _read(root, "sys/class/net/%s/operstate" % netdev) or "up"
    return {"oper": oper, "speed": "%dG" % (int(speed) // 1000) if speed.lstrip("-").isdigit() and int(speed) > 0 else None}


def _active_mtu(root: str, netdev: str) -> int:
    """RoCE active MTU: the largest IB MTU that fits the netdev MTU less the RoCE headers (reference host-ib-k8s
    a.5: netdev MTU >= ~4200 gives 4096; the steps below are the lab's reading of that rule)."""
    text = _read(root, "sys/class/net/%s/mtu" % netdev)
    mtu = int(text) if text.isdigit() else 1500
    for ib_mtu in (4096, 2048, 1024, 512, 256):
        if mtu >= ib_mtu + 100:
            return ib_mtu
    return 256


def gbps_for(root: str, state: dict, device: str, netdev: str) -> float:
    """The loopback's average in Gb/s: the perf model when the lab runs with faults, else line rate x efficiency."""
    lab = state.get("lab") or {}
    run_dir = os.path.dirname(lab["wiring_file"]) if lab.get("wiring_file") else None
    if run_dir and os.path.exists(os.path.join(run_dir, "perf.json")):
        from nccl import perfmodel  # pylint: disable=import-outside-toplevel

        fabric = perfmodel.Fabric.from_run_dir(run_dir)
        if fabric is not None:
            try:
                return fabric.loopback_gbps(lab["host"], device, perfmodel.next_launch(run_dir)) * 8.0
            except perfmodel.PerfModelError as exc:
                raise PerftestFailure("lab: %s\n" % exc) from exc
    speed = _link(root, state, device, netdev).get("speed")
    m = re.fullmatch(r"(\d+(?:\.\d+)?)G", str(speed or ""))
    if not m:
        raise PerftestFailure("lab: no link speed for %s (no cable in the lab wiring); the shim cannot make a bandwidth\n" % device)
    return float(m.group(1)) * LOOPBACK_EFFICIENCY


def _gid(host: str, device: str) -> str:
    """The NIC's link-local GID (fe80::/64 + the EUI-64 of its lab MAC) in perftest's PERF_GID_FMT (decimal bytes)."""
    mac = [int(b, 16) for b in wiring.mac(host, device).split(":")]
    raw = [0xFE, 0x80, 0, 0, 0, 0, 0, 0, mac[0] ^ 2, mac[1], mac[2], 0xFF, 0xFE, mac[3], mac[4], mac[5]]
    return ":".join("%02d" % b for b in raw)


def _header(opts: dict, device: str, mtu: int, gid_index: int, client: bool) -> str:
    cq_mod = 1 if opts.get("s", 65536) > 8192 else 100   # MSG_SIZE_CQ_MOD_LIMIT 8192 -> DISABLED_CQ_MOD_VALUE 1
    lines = [RESULT_LINE.rstrip("\n"), "                    RDMA_Write BW Test",
             " Dual-port       : OFF\t\tDevice         : %s" % device,
             " Number of qps   : %d\t\tTransport type : IB" % opts.get("q", 1),
             " Connection type : RC\t\tUsing SRQ      : OFF",
             " PCIe relax order: ON\t\tLock-free      : OFF",
             " ibv_wr* API     : ON\t\tUsing Enhanced Reorder      : OFF"]
    if client:
        lines.append(" TX depth        : 128")
    lines += [" CQ Moderation   : %d" % cq_mod, " CQE Poll Batch  : Dynamic", " Mtu             : %d[B]" % mtu,
              " Link type       : Ethernet", " GID index       : %d" % gid_index, " Max inline data : 0[B]",
              " rdma_cm QPs\t : OFF", " Data ex. method : Ethernet", RESULT_LINE.rstrip("\n")]
    return "\n".join(lines) + "\n"


def _addresses(host: str, local: str, remote: str, qps: int, seed: str) -> str:
    out = []
    for side, device in (("local", local), ("remote", remote)):
        for q in range(qps):
            digest = hashlib.sha256(("%s/%s/%s/%d" % (seed, side, device, q)).encode()).digest()
            out.append(" %s address: LID 0000 QPN %#06x PSN %#06x RKey %#08x VAddr %#016x" % (
                side, 0x100 + q, int.from_bytes(digest[:3], "big"), int.from_bytes(digest[3:6], "big"),
                0x7F0000000000 + int.from_bytes(digest[6:10], "big") * 0x1000))
            out.append(" GID: %s" % _gid(host, device))
    return "\n".join(out) + "\n" + RESULT_LINE


def _table(opts: dict, gbps: float) -> str:
    size = opts.get("s", 65536)
    units = "Gb/sec" if "report_gbits" in opts else "MiB/sec"
    value = gbps if units == "Gb/sec" else gbps * 125000000.0 / 0x100000
    bytes_per_s = gbps * 125000000.0
    if "D" in opts:
        iters = int(bytes_per_s * opts["D"] / size)
        peak = 0.0
    else:
        iters = opts.get("n", 5000) * opts.get("q", 1)
        peak = 0.0 if "N" in opts or iters > 20000 else value
    rate = bytes_per_s / size / 1e6
    head = " #bytes     #iterations    BW peak[%s]    BW average[%s]   MsgRate[Mpps]\n" % (units, units)
    if value < 0.1 and units == "Gb/sec":
        row = " %-7d    %d           %-7.6f            %-7.6f            %-7.6f\n" % (size, iters, peak, value, rate)
    else:
        row = " %-7d    %-10d       %-7.2f            %-7.2f\t\t     %-7.6f\n" % (size, iters, peak, value, rate)
    return head + row + RESULT_LINE


def _cuda(opts: dict, root: str, size: int) -> str:
    gpu = opts["use_cuda"]
    if gpu >= LAB_GPUS:
        raise PerftestFailure("No such device ID (%d) exists in system\n" % gpu,
                              "Perftest doesn't supports CUDA tests with inline messages: inline size set to 0\ninitializing CUDA\n")
    if not os.path.isdir(os.path.join(root, "sys/module/nvidia_peermem")):
        raise PerftestFailure("Couldn't allocate MR with error=14\nfailed to create mr\nFailed to create MR\n Couldn't create IB resources\n")
    lines = ["initializing CUDA", "Listing all CUDA devices in system:"]
    lines += ["CUDA device %d: PCIe address is %02X:00" % (i, 0x18 + 0x10 * i) for i in range(LAB_GPUS)]
    lines += ["", "Picking device No. %d" % gpu, "[pid = %d, dev = %d] device name = [NVIDIA H100 80GB HBM3]" % (os.getpid(), gpu),
              "creating CUDA Ctx", "making it the current CUDA Ctx", "CUDA device integrated: 0",
              "cuMemAlloc() of a %d bytes GPU buffer" % (2 * size), "allocated GPU buffer address at 00007f3dfa600000 pointer=0x7f3dfa600000"]
    return "\n".join(lines) + "\n"


def _rendezvous(root: str) -> str:
    folder = os.path.join(root, ".hostsim", "perftest")
    os.makedirs(folder, exist_ok=True)
    return folder


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _write_json(path: str, data: dict) -> None:
    tmp = "%s.%d.tmp" % (path, os.getpid())
    with open(tmp, "w", encoding="utf-8") as handle:
        json.dump(data, handle)
    os.replace(tmp, path)


def _load_json(path: str) -> dict | None:
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except (OSError, ValueError):
        return None


def ib_write_bw(root: str, argv: list[str], prog: str = "ib_write_bw") -> str:
    opts = parse_options(prog, argv)
    state = tree.load(root)
    device = opts.get("d") or sorted(n["name"] for n in state["nics"].values())[0]  # default: the first device found
    netdev, _nic_state = _nic(state, device)
    host = (state.get("lab") or {}).get("host") or "host"
    link = _link(root, state, device, netdev)
    if link.get("oper") != "up":
        raise PerftestFailure(" Port number %d state is Down\n Couldn't get context for the device\n" % opts.get("i", 1))
    if opts.get("i", 1) != 1:
        raise PerftestFailure(" Unable to query port %d attributes\n Couldn't get context for the device\n" % opts["i"])
    port = opts.get("p", 18515)
    out = " WARNING: BW peak won't be measured in this run.\n" if "D" in opts else ""
    if "use_cuda" in opts:
        out += "Perftest doesn't supports CUDA tests with inline messages: inline size set to 0\n"
    folder = _rendezvous(root)
    spot, result = os.path.join(folder, "%d.json" % port), os.path.join(folder, "%d.result.json" % port)
    mtu, gid_index = _active_mtu(root, netdev), opts.get("x", 0)
    symmetric = {k: opts.get(k) for k in SYMMETRIC}
    if opts["server"] is None:
        current = _load_json(spot)
        if current and _alive(current["pid"]):
            raise PerftestFailure("Couldn't listen to port %d\nUnable to open file descriptor for socket connection\n"
                                  " Unable to init the socket connection\n" % port, out)
        out += "\n************************************\n* Waiting for client to connect... *\n************************************\n"
        if os.path.exists(result):
            os.unlink(result)
        _write_json(spot, {"pid": os.getpid(), "device": device, "options": symmetric})

        def leave(_signum, _frame):
            if (_load_json(spot) or {}).get("pid") == os.getpid():
                os.unlink(spot)
            sys.exit(143)

        signal.signal(signal.SIGTERM, leave)
        waited = 0.0
        while not os.path.exists(result):
            if waited > SERVER_WAIT_S:
                os.unlink(spot)
                raise PerftestFailure("lab: no client within %ss (HOSTSIM_PERFTEST_WAIT); a real server waits forever\n"
                                      % SERVER_WAIT_S, out)
            time.sleep(POLL_S)
            waited += POLL_S
        done = _load_json(result) or {}
        for path in (spot, result):
            if os.path.exists(path):
                os.unlink(path)
        # CUDA memory is set up after the connection (ctx_init; the server's CUDA lines follow its banner)
        cuda = _cuda(opts, root, opts.get("s", 65536)) if "use_cuda" in opts else ""
        out += cuda + _header(opts, device, mtu, gid_index, client=False)
        out += _addresses(host, device, done.get("device", device), opts.get("q", 1), "%s:%d" % (host, port))
        return out + _table(opts, float(done.get("gbps", 0.0)))
    if opts["server"] not in ("localhost", "127.0.0.1", "::1", host):
        raise PerftestFailure("lab: the ib_write_bw shim runs loopback only (server 'localhost' or %s), not %r\n"
                              % (host, opts["server"]))
    current = _load_json(spot)
    if not current or not _alive(current["pid"]) or os.path.exists(result):
        raise PerftestFailure("Couldn't connect to %s:%d\nUnable to open file descriptor for socket connection\n"
                              " Unable to init the socket connection\n" % (opts["server"], port), out)
    if current["options"] != symmetric:
        raise PerftestFailure("lab: the server on port %d runs with %s, this client with %s; perftest needs the same options "
                              "on both sides (README, 'Running Tests'); what a real pair does then is not simulated\n"
                              % (port, current["options"], symmetric), out)
    cuda = _cuda(opts, root, opts.get("s", 65536)) if "use_cuda" in opts else ""
    gbps = min(gbps_for(root, state, device, netdev), gbps_for(root, state, current["device"], _nic(state, current["device"])[0])) \
        if current["device"] != device else gbps_for(root, state, device, netdev)
    _write_json(result, {"gbps": gbps, "device": device})
    out += cuda + _header(opts, device, mtu, gid_index, client=True)
    out += _addresses(host, device, current["device"], opts.get("q", 1), "%s:%d" % (host, port))
    return out + _table(opts, gbps)


def main(root: str, argv: list[str], prog: str = "ib_write_bw") -> int:
    try:
        sys.stdout.write(ib_write_bw(root, list(argv), prog))
    except PerftestFailure as exc:
        sys.stdout.write(exc.stdout)
        sys.stdout.flush()
        sys.stderr.write(exc.stderr)
        return exc.rc
    return 0
