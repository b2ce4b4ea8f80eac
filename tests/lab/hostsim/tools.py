# SPDX-License-Identifier: GPL-3.0-or-later
"""Strict shims for dcb (iproute2: app, pfc, ets), mlnx_qos (mlnx-tools), ethtool, mlxconfig and lldpctl (lldpd),
acting on a host tree built by tree.py. Only the grammar nic_qos, nic_counters and
host_links need is accepted; everything else is refused the way the real tool
refuses it (message texts: iproute2 dcb/dcb.c, ethtool.c, optparse for mlnx_qos,
lldpd src/client/lldpcli.c).

Each shim in the lab's bin/ is a two-line script calling main(tool, root, argv).
"""

from __future__ import annotations

import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import wiring  # noqa: E402  # pylint: disable=wrong-import-position

from hostsim import tree  # noqa: E402  # pylint: disable=wrong-import-position


class ToolError(Exception):
    def __init__(self, message: str, rc: int = 1) -> None:
        super().__init__(message)
        self.rc = rc


def _nic(root: str, state: dict, netdev: str) -> dict:
    if netdev not in state["nics"] or not os.path.isdir(os.path.join(root, "sys/class/net", netdev)):
        raise ToolError('Cannot find device "%s"' % netdev)
    return state["nics"][netdev]


def _write(root: str, rel: str, value) -> None:
    with open(os.path.join(root, rel), "w", encoding="utf-8") as handle:
        handle.write("%s\n" % value)


# ---------------------------------------------------------------------------
# dcb
# ---------------------------------------------------------------------------

_DSCP_NAMES = {8 * n: "CS%d" % n for n in range(8)}
_DSCP_NAMES.update({8 * c + 2 * d: "AF%d%d" % (c, d) for c in range(1, 5) for d in range(1, 4)})
_DSCP_NAMES[46] = "EF"


def _mapping(words: list[str], what_key: str, max_key: int, what_value: str, values: dict) -> list[tuple[int, object]]:
    """KEY:VALUE pairs as dcb_parse_mapping() checks them; 'all' expands."""
    out = []
    for word in words:
        key, sep, value = word.partition(":")
        if not sep:
            raise ToolError('What is "%s"?' % word)
        if value not in values:
            raise ToolError('Invalid value of "%s" for %s' % (value, what_value))
        if key == "all":
            out += [(k, values[value]) for k in range(max_key + 1)]
            continue
        if not key.isdigit():
            raise ToolError('Invalid key "%s" for %s' % (key, what_key))
        if int(key) > max_key:
            raise ToolError("In %s:%s mapping, %s is expected to be 0..%d" % (what_key, what_value, what_key, max_key))
        out.append((int(key), values[value]))
    return out


def _prio_values() -> dict:
    return {str(p): p for p in range(256)}


def dcb(root: str, argv: list[str]) -> str:
    numeric = False
    while argv and argv[0].startswith("-"):
        if argv[0] in ("-N", "--Numeric"):
            numeric = True
            argv = argv[1:]
        else:
            raise ToolError('Option "%s" is unknown, try "dcb -help".' % argv[0])
    if not argv or argv[0] not in ("app", "pfc", "ets"):
        raise ToolError('Object "%s" is unknown, try "dcb help".' % (argv[0] if argv else ""))
    if len(argv) < 3 or argv[2] != "dev":
        raise ToolError("Expected `dev DEV', not `%s'" % (argv[2] if len(argv) > 2 else ""))
    if len(argv) < 4:
        raise ToolError("Command line is not complete. Try option \"help\"")
    obj, cmd, netdev, rest = argv[0], argv[1], argv[3], argv[4:]
    state = tree.load(root)
    nic = _nic(root, state, netdev)
    if state["stack"] == "ionic":
        # ionic has no dcbnl_ops: net/dcb/dcbnl.c dcb_doit answers -EOPNOTSUPP, and every dcb command reads first
        # (dcb.c __dcb_get_attribute: perror("Attribute read")).
        raise ToolError("Attribute read: Operation not supported")
    if obj == "app":
        out = _dcb_app(nic, cmd, rest, numeric)
    elif obj == "ets":
        out = _dcb_ets(nic, cmd, rest)
    else:
        out = _dcb_pfc(nic, cmd, rest, state["stack"])
    if state["stack"] in ("upstream", "bnxt"):
        nic["trust"] = "dscp" if nic["app"] else "pcp"
    tree.save(root, state)
    return out


def _dcb_app(nic: dict, cmd: str, rest: list[str], numeric: bool) -> str:
    if cmd == "show":
        if rest not in ([], ["dscp-prio"]):
            raise ToolError('What is "%s"?' % rest[0])
        words = ["%s:%d" % (str(d) if numeric else _DSCP_NAMES.get(d, str(d)), p) for d, p in sorted(map(tuple, nic["app"]))]
        return "dscp-prio %s\n" % " ".join(words) if words else ""
    if cmd == "flush":
        if rest not in ([], ["dscp-prio"]):
            raise ToolError('What is "%s"?' % rest[0])
        nic["app"] = []
        return ""
    if cmd not in ("add", "del", "replace"):
        raise ToolError('Command "%s" is unknown, try "dcb app help".' % cmd)
    if not rest or rest[0] != "dscp-prio":
        raise ToolError('What is "%s"?' % (rest[0] if rest else cmd))
    if len(rest) < 2:
        raise ToolError('Argument of "dscp-prio" is missing')
    pairs = _mapping(rest[1:], "DSCP", 63, "PRIO", _prio_values())
    for _dscp, prio in pairs:
        if prio > 7:
            raise ToolError("In DSCP:PRIO mapping, PRIO is expected to be 0..7")
    table = [tuple(e) for e in nic["app"]]
    if cmd == "replace":
        keys = {d for d, _p in pairs}
        table = [e for e in table if e[0] not in keys]
    for pair in pairs:
        if cmd == "del":
            table = [e for e in table if e != pair]
        elif pair not in table:
            table.append(pair)
    nic["app"] = sorted([list(e) for e in table])
    return ""


_TSA_NAMES = ("strict", "cbs", "ets", "vendor")  # dcb_ets.c tsa_names, in IEEE_8021QAZ_TSA_* order
_ETS_KEYS = ("tc-tsa", "tc-bw", "prio-tc")


def _dcb_line(name: str, values: list) -> str:
    """One ``NAME 0:V 1:V ...`` line as dcb_print_named_array prints it (each pair followed by a space)."""
    return "%s %s \n" % (name, " ".join("%d:%s" % (k, v) for k, v in enumerate(values)))


def _dcb_ets(nic: dict, cmd: str, rest: list[str]) -> str:
    """dcb ets show / set (iproute2 dcb/dcb_ets.c) over bnxt_en's ieee_getets / ieee_setets (bnxt_dcb.c)."""
    ets = nic["ets"]
    if cmd == "show":
        if rest:
            raise ToolError('What is "%s"?' % rest[0])
        line = _dcb_line
        return ("willing off ets-cap 8 cbs off \n" + line("tc-bw", ets["tc_bw"]) + line("pg-bw", [0] * 8) + line("tc-tsa", ets["tc_tsa"])
                + line("prio-tc", ets["prio_tc"]) + line("reco-tc-bw", [0] * 8) + line("reco-tc-tsa", ["strict"] * 8) + line("reco-prio-tc", [0] * 8))
    if cmd != "set":
        raise ToolError('What is "%s"?' % cmd)
    if not rest:
        raise ToolError("Usage: dcb ets set dev STRING")
    new = {key: list(value) for key, value in ets.items()}
    index = 0
    while index < len(rest):
        key = rest[index]
        if key not in _ETS_KEYS:
            raise ToolError('What is "%s"?' % key)
        words = []
        index += 1
        while index < len(rest) and ":" in rest[index]:
            words.append(rest[index])
            index += 1
        if not words:
            raise ToolError('Argument of "%s" is missing' % key)
        if key == "tc-tsa":
            for tc, tsa in _mapping(words, "TC", 7, "TSA", {n: n for n in _TSA_NAMES}):
                new["tc_tsa"][tc] = tsa
        elif key == "tc-bw":
            for tc, bw in _mapping(words, "TC", 7, "BW", {str(b): b for b in range(101)}):
                new["tc_bw"][tc] = bw
        else:
            for prio, tc in _mapping(words, "PRIO", 7, "TC", {str(t): t for t in range(8)}):
                new["prio_tc"][prio] = tc
    # dcb_ets.c dcb_ets_validate_bw: 802.1Q wants the percentages to sum to 100 when a TC is ets.
    total, has_ets = sum(new["tc_bw"]), "ets" in new["tc_tsa"]
    if not (total == 100 or (not has_ets and total == 0)):
        raise ToolError("Bandwidth percentages in tc-bw sum to %d%%, expected %d%%" % (total, 100 if has_ets else 0))
    # bnxt_dcb.c bnxt_ets_validate: only strict and ets (-ENOTSUPP = errno 524, which strerror does not name).
    if any(t not in ("strict", "ets") for t in new["tc_tsa"]):
        raise ToolError("Error when attempting to set attribute: Unknown error 524")
    nic["ets"], nic["ets_host"] = new, True
    return ""


def _dcb_pfc(nic: dict, cmd: str, rest: list[str], stack: str = "upstream") -> str:
    if cmd == "show":
        if rest not in ([], ["prio-pfc"]):
            raise ToolError('What is "%s"?' % rest[0])
        line = "prio-pfc %s\n" % " ".join("%d:%s" % (p, "on" if b else "off") for p, b in enumerate(nic["pfc"]))
        return line if rest else "pfc-cap 8 macsec-bypass off delay 0\n" + line
    if cmd != "set":
        raise ToolError('Command "%s" is unknown, try "dcb pfc help".' % cmd)
    if not rest or rest[0] != "prio-pfc":
        raise ToolError('What is "%s"?' % (rest[0] if rest else cmd))
    if len(rest) < 2:
        raise ToolError('Argument of "prio-pfc" is missing')
    pairs = _mapping(rest[1:], "PRIO", 7, "PFC", {"on": 1, "off": 0})
    if stack == "bnxt" and not nic.get("ets_host"):
        # bnxt_dcb.c bnxt_hwrm_queue_pfc_cfg: no host ETS (bp->ieee_ets NULL) -> -EINVAL, which dcbnl hands back
        # in the reply and dcb.c dcb_set_attribute_attr_cb prints.
        raise ToolError("Error when attempting to set attribute: Invalid argument")
    for prio, enabled in pairs:
        nic["pfc"][prio] = enabled
    return ""


# ---------------------------------------------------------------------------
# mlnx_qos
# ---------------------------------------------------------------------------

_MLNX_USAGE = "Usage: mlnx_qos -i <interface> [options]"


def _optparse(argv: list[str]) -> dict:
    known = {"-i": "intf", "--interface": "intf", "--trust": "trust", "--dscp2prio": "dscp2prio", "--pfc": "pfc", "-f": "pfc"}
    opts: dict = {}
    index = 0
    while index < len(argv):
        word = argv[index]
        name, eq, inline = word.partition("=")
        if name not in known:
            raise ToolError("%s\n\nmlnx_qos: error: no such option: %s" % (_MLNX_USAGE, name), rc=2)
        if eq:
            value = inline
        elif index + 1 < len(argv):
            index += 1
            value = argv[index]
        else:
            raise ToolError("%s\n\nmlnx_qos: error: %s option requires 1 argument" % (_MLNX_USAGE, name), rc=2)
        opts[known[name]] = value
        index += 1
    return opts


def mlnx_qos(root: str, argv: list[str]) -> str:
    opts = _optparse(argv)
    if "intf" not in opts:
        raise ToolError("%s\n\nmlnx_qos: error: Interface name is required" % _MLNX_USAGE, rc=2)
    state = tree.load(root)
    if state["stack"] != "mlnx":
        raise ToolError("lab: this host runs the upstream stack; mlnx_qos is not installed", rc=127)
    netdev = opts["intf"]
    nic = _nic(root, state, netdev)
    if "trust" in opts and "dscp2prio" in opts:
        raise ToolError("mlnx_qos: error: --trust and --dscp2prio can not be set together", rc=2)
    if "trust" in opts:
        if opts["trust"] not in ("pcp", "dscp"):
            raise ToolError("mlnx_qos: error: option --trust: invalid choice: '%s' (choose from 'pcp', 'dscp')" % opts["trust"], rc=2)
        nic["trust"] = opts["trust"]
    if "dscp2prio" in opts:
        _dscp2prio(nic, opts["dscp2prio"])
    if "pfc" in opts:
        bits = opts["pfc"].split(",")
        if len(bits) != 8 or any(b not in ("0", "1") for b in bits):
            raise ToolError("mlnx_qos: error: Invalid pfc value: %s (8 comma-separated 0/1, priority 0 first)" % opts["pfc"], rc=2)
        nic["pfc"] = [int(b) for b in bits]
    tree.save(root, state)
    _write(root, "sys/class/net/%s/qos/trust" % netdev, nic["trust"])
    return _mlnx_show(nic)


def _dscp2prio(nic: dict, value: str) -> None:
    if value == "flush":
        nic["dscp_map"] = {str(d): d >> 3 for d in range(64)}
        nic["trust"] = "pcp"
        return
    match = re.fullmatch(r"(set|del),(\d+),(\d+)", value)
    if not match or int(match.group(2)) > 63 or int(match.group(3)) > 7:
        raise ToolError("mlnx_qos: error: Invalid dscp2prio: %s (set|del,DSCP 0-63,PRIO 0-7 or flush)" % value, rc=2)
    dscp, prio = match.group(2), int(match.group(3))
    if match.group(1) == "set":
        nic["dscp_map"][str(int(dscp))] = prio
    elif nic["dscp_map"].get(str(int(dscp))) == prio:
        nic["dscp_map"][str(int(dscp))] = int(dscp) >> 3


def _mlnx_show(nic: dict) -> str:
    lines = ["DCBX mode: OS controlled", "Priority trust state: %s" % nic["trust"]]
    if nic["trust"] == "dscp":
        lines.append("dscp2prio mapping:")
        for prio in range(8):
            dscps = sorted((int(d) for d, p in nic["dscp_map"].items() if p == prio), reverse=True)
            for start in range(0, len(dscps), 8):
                lines.append("\tprio:%d dscp:%s" % (prio, "".join("%02d," % d for d in dscps[start:start + 8])))
    lines += ["Cable len: 7", "PFC configuration:", "\tpriority    0   1   2   3   4   5   6   7",
              "\tenabled     %s   " % "   ".join(str(b) for b in nic["pfc"])]
    for tc, prio in enumerate([1, 0, 2, 3, 4, 5, 6, 7]):
        lines += ["tc: %d ratelimit: unlimited, tsa: vendor" % tc, "\t priority:  %d" % prio]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------
# ethtool
# ---------------------------------------------------------------------------


def _tick(state: dict, nic: dict) -> None:  # pylint: disable=unused-argument
    """Traffic hook of ``ethtool -S``: nothing moves at a read. The counters move with the lab's NCCL launches
    (tests/lab/traffic.py adds each launch's bytes, packets, pauses, drops and CNPs to ``nic["stats"]`` under the
    mlx5 names and to the hw_counters files), so two reads with no launch between them show no traffic."""


# ethtool -S of the other drivers, rendered from the stats dict the lab keeps under mlx5's names (h/traffic moves it):
# driver name -> the mlx5 name it is read from (None: the driver prints it, the lab keeps it 0).
# bnxt_en: bnxt_ethtool.c (bnxt_port_stats_arr, *_pri<n> from the ext COS counters, pfc_pri<n>_* ext PFC entries).
# ionic: ionic_stats.c ionic_port_stats_desc (frames_{rx,tx}_pri_<n>: meaning unverified, kept 0).
ETHTOOL_NAMES = {
    "bnxt": [
        *[(pattern % p, source % p) for p in range(8) for pattern, source in (
            ("rx_bytes_pri%d", "rx_prio%d_bytes"), ("rx_packets_pri%d", "rx_prio%d_packets"),
            ("tx_bytes_pri%d", "tx_prio%d_bytes"), ("tx_packets_pri%d", "tx_prio%d_packets"))],
        *[(name % p, source % p) for p in range(8) for name, source in (
            ("rx_pfc_ena_frames_pri%d", "rx_prio%d_pause"), ("tx_pfc_ena_frames_pri%d", "tx_prio%d_pause"))],
        *[(name % p, source % p) for p in range(8) for name, source in (
            ("pfc_pri%d_rx_duration_us", "rx_prio%d_pause_duration"), ("pfc_pri%d_rx_transitions", "rx_prio%d_pause_transition"),
            ("pfc_pri%d_tx_duration_us", "tx_prio%d_pause_duration"))],
        ("rx_fcs_err_frames", "rx_crc_errors_phy"), ("rx_pcs_symbol_err", "rx_symbol_err_phy"), ("link_down_events", "link_down_events_phy"),
        *[("rx_discard_packets_cos%d" % c, None) for c in range(8)],
    ],
    "ionic": [
        ("frames_rx_bad_fcs", "rx_crc_errors_phy"), ("frames_rx_pripause", None), ("frames_tx_pripause", None),
        *[("frames_tx_pri_%d" % p, None) for p in range(8)], *[("frames_rx_pri_%d" % p, None) for p in range(8)],
        *[("tx_pripause_%d_1us_count" % p, "tx_prio%d_pause_duration" % p) for p in range(8)],
        *[("rx_pripause_%d_1us_count" % p, "rx_prio%d_pause_duration" % p) for p in range(8)],
    ],
}


def vendor_stats(stack: str, stats: dict) -> list[tuple[str, int]]:
    """(driver name, value) for ethtool -S of a bnxt or ionic host, from the mlx5-named stats."""
    return [(name, int(stats.get(source, 0)) if source else 0) for name, source in ETHTOOL_NAMES[stack]]


def ethtool(root: str, argv: list[str]) -> str:
    if len(argv) < 2 or argv[0] not in ("-S", "--statistics", "-a", "--show-pause", "-A", "--pause"):
        raise ToolError("ethtool: bad command line argument(s)\nFor more information run ethtool -h", rc=1)
    state = tree.load(root)
    option, netdev = argv[0], argv[1]
    if netdev not in state["nics"]:
        what = {"-S": "Cannot get stats strings information", "-a": "Cannot get device pause settings", "-A": "Cannot get device pause settings"}
        raise ToolError("%s: No such device" % what.get(option[:2], "Cannot get device pause settings"), rc=71 if option in ("-S", "--statistics") else 76)
    nic = state["nics"][netdev]
    if option in ("-S", "--statistics"):
        if len(argv) != 2:
            raise ToolError("ethtool: bad command line argument(s)\nFor more information run ethtool -h")
        _tick(state, nic)
        tree.save(root, state)
        if state["stack"] in ETHTOOL_NAMES:
            return "NIC statistics:\n" + "".join("     %s: %d\n" % (name, value) for name, value in vendor_stats(state["stack"], nic["stats"]))
        names = []
        for prio in range(8):
            names += ["rx_prio%d_bytes" % prio, "rx_prio%d_packets" % prio, "tx_prio%d_bytes" % prio, "tx_prio%d_packets" % prio,
                      "rx_prio%d_pause" % prio, "rx_prio%d_pause_duration" % prio, "tx_prio%d_pause" % prio,
                      "tx_prio%d_pause_duration" % prio, "rx_prio%d_pause_transition" % prio]
        names += ["rx_discards_phy", "tx_discards_phy", "rx_out_of_buffer", "tx_pause_storm_warning_events", "tx_pause_storm_error_events",
                  "rx_symbol_err_phy", "rx_crc_errors_phy", "link_down_events_phy"]
        return "NIC statistics:\n" + "".join("     %s: %d\n" % (n, nic["stats"].get(n, 0)) for n in names)
    if option in ("-a", "--show-pause"):
        pause = nic["pause"]
        return "Pause parameters for %s:\nAutonegotiate:\t%s\nRX:\t\t%s\nTX:\t\t%s\n\n" % (netdev, pause["autoneg"], pause["rx"], pause["tx"])
    words = argv[2:]
    if not words or len(words) % 2 or any(k not in ("autoneg", "rx", "tx") or v not in ("on", "off") for k, v in zip(words[::2], words[1::2])):
        raise ToolError("ethtool: bad command line argument(s)\nFor more information run ethtool -h")
    changes = dict(zip(words[::2], words[1::2]))
    if all(nic["pause"][k] == v for k, v in changes.items()):
        raise ToolError("no pause parameters changed, aborting", rc=80)
    nic["pause"].update(changes)
    tree.save(root, state)
    return ""


# ---------------------------------------------------------------------------
# mlxconfig (the part nic_qos uses: -e -d PCI q [NAMES], -y -d PCI set K=V)
# ---------------------------------------------------------------------------

FIRMWARE_DEFAULTS = {"ROCE_CC_PRIO_MASK_P1": "255", "CNP_DSCP_P1": "48", "CNP_802P_PRIO_P1": "6", "LINK_TYPE_P1": "ETH(2)"}


def mlxconfig(root: str, argv: list[str]) -> str:
    state = tree.load(root)
    fw = state.setdefault("firmware", {})
    words = [w for w in argv if w not in ("-e", "-y")]
    if len(words) < 3 or words[0] != "-d":
        raise ToolError("-E- Failed to open device\n-E- missing -d <device>", rc=3)
    pci = words[1]
    pcis = {tree.pci_address(i) for i in range(len(state["nics"]))}
    if pci not in pcis:
        raise ToolError("-E- Failed to open device: %s. No such file or directory" % pci, rc=3)
    params = fw.setdefault(pci, {k: {"default": v, "current": v, "next": v} for k, v in FIRMWARE_DEFAULTS.items()})
    if words[2] == "q":
        names = words[3:] or sorted(params)
        unknown = [n for n in names if n not in params]
        if unknown:
            raise ToolError("-E- The Device doesn't support %s parameter" % unknown[0], rc=3)
        lines = ["", "Device #1:", "----------", "", "Device type:    ConnectX7", "PCI device:     %s" % pci, "",
                 "Configurations:                              Default         Current         Next Boot"]
        for name in names:
            p = params[name]
            mark = "*" if p["current"] != p["default"] else " "
            lines.append("%s       %-36s %-15s %-15s %s" % (mark, name, p["default"], p["current"], p["next"]))
        tree.save(root, state)
        return "\n".join(lines) + "\n"
    if words[2] != "set" or "-y" not in argv or len(words) < 4:
        raise ToolError("-E- Unsupported command in the lab shim: %s" % " ".join(words[2:]), rc=3)
    for pair in words[3:]:
        name, sep, value = pair.partition("=")
        if not sep or name not in params:
            raise ToolError("-E- The Device doesn't support %s parameter" % name, rc=3)
        if not re.fullmatch(r"\d+|[A-Za-z_]+", value):
            raise ToolError("-E- Failed to set configuration: bad value %s for %s" % (value, name), rc=3)
        params[name]["next"] = value
    tree.save(root, state)
    return "Apply new Configuration? (y/n) [n] : y\nApplying... Done!\n-I- Please reboot machine to load new configurations.\n"


# ---------------------------------------------------------------------------
# lldpctl (lldpd): the neighbours the lab's cables bring to this host
# ---------------------------------------------------------------------------

LLDPCTL_USAGE = "Usage:   lldpctl [OPTIONS ...] [COMMAND ...]"


def json_cleanup(value):
    """lldpd src/client/json_writer.c json_element_cleanup: the -f json form from the json0 tree.
    A one-element array becomes its element, an object whose only key is "value" its value, and an
    object with a string "name" becomes {name: object}."""
    if isinstance(value, list):
        return json_cleanup(value[0]) if len(value) == 1 else [json_cleanup(v) for v in value]
    if isinstance(value, dict):
        if len(value) == 1 and "value" in value:
            return json_cleanup(value["value"])
        out = {k: json_cleanup(v) for k, v in value.items()}
        if isinstance(out.get("name"), str):
            name = out.pop("name")
            return {name: out}
        return out
    return value


def lab_neighbor(peer: dict) -> dict:
    """What the far end advertises. Switches: system name = inventory name, port ID subtype ifname = the port
    name, port description = the port name (the lab's choice: docs/hosts.md, "The lab"). Host NICs: lldpd's
    default, port ID = the NIC's MAC and description = its netdev (lldpd tests/integration/test_lldpcli.py)."""
    if "port" in peer:
        return {"system": peer["host"], "chassis": wiring.mac(peer["host"], "chassis"), "id_type": "ifname", "id": peer["port"], "descr": peer["port"]}
    return {"system": peer["host"], "chassis": wiring.mac(peer["host"], "chassis"), "id_type": "mac", "id": peer.get("mac"), "descr": peer.get("netdev")}


def lab_links(root: str) -> tuple[dict, dict]:
    """(state, wiring view of this host) - the wiring re-read now, sysfs brought up to date with it."""
    state = tree.load(root)
    lab = state.get("lab") or {}
    seen = None
    if lab.get("wiring_file"):
        seen = wiring.view(wiring.load(os.path.dirname(lab["wiring_file"])), lab["host"])
        tree.sync_links(root, lab["host"], seen, wiring.mac)
    return state, seen or {}


def lldpctl(root: str, argv: list[str]) -> str:
    fmt, ifaces, index = "plain", [], 0
    while index < len(argv):
        word = argv[index]
        if word == "-f" and index + 1 < len(argv):
            fmt, index = argv[index + 1], index + 2
        elif word.startswith("-f") and len(word) > 2:
            fmt, index = word[2:], index + 1
        elif word.startswith("-"):
            raise ToolError("lldpctl: invalid option -- '%s'\n%s" % (word.lstrip("-")[:1], LLDPCTL_USAGE))
        else:
            ifaces.append(word)
            index += 1
    state, seen = lab_links(root)
    entries = []
    for rid, (netdev, nic) in enumerate(sorted(state["nics"].items()), start=1):
        link = seen.get(nic["name"]) or {}
        if (ifaces and netdev not in ifaces) or link.get("oper") != "up" or not link.get("peer"):
            continue
        n = lab_neighbor(link["peer"])
        entries.append({"name": netdev, "via": "LLDP", "rid": str(rid), "age": "0 day, 00:01:00",
                        "chassis": [{"id": [{"type": "mac", "value": n["chassis"]}], "name": [{"value": n["system"]}],
                                     "descr": [{"value": "lab switch (tests/lab/hostsim)"}],
                                     "capability": [{"type": "Bridge", "enabled": True}, {"type": "Router", "enabled": True}]}],
                        "port": [{"id": [{"type": n["id_type"], "value": n["id"]}], "descr": [{"value": n["descr"]}], "ttl": [{"value": "120"}]}]})
    tree0 = {"lldp": [{"interface": entries}] if entries else [{}]}
    if fmt == "json0":
        return json.dumps(tree0, indent=2) + "\n"
    if fmt == "json":
        return json.dumps(json_cleanup(tree0), indent=2) + "\n"
    if fmt in ("keyvalue", "xml"):
        raise ToolError("lab: lldpctl -f %s is not simulated (json, json0, plain are)" % fmt)
    if fmt != "plain":
        sys.stderr.write('unknown output format "%s"\n' % fmt)  # lldpcli.c cmd_exec: a warning, then plain text
    rule = "-" * 79
    lines = [rule, "LLDP neighbors:", rule]
    for e in entries:
        lines += ["Interface:    %s, via: LLDP, RID: %s, Time: %s" % (e["name"], e["rid"], e["age"]), "  Chassis:",
                  "    ChassisID:    mac %s" % e["chassis"][0]["id"][0]["value"], "    SysName:      %s" % e["chassis"][0]["name"][0]["value"],
                  "  Port:", "    PortID:       %s %s" % (e["port"][0]["id"][0]["type"], e["port"][0]["id"][0]["value"]),
                  "    PortDescr:    %s" % e["port"][0]["descr"][0]["value"], "    TTL:          120", rule]
    return "\n".join(lines) + "\n"


TOOLS = {"dcb": dcb, "mlnx_qos": mlnx_qos, "ethtool": ethtool, "mlxconfig": mlxconfig, "lldpctl": lldpctl}


def main(tool: str, root: str, argv: list[str]) -> int:
    try:
        sys.stdout.write(TOOLS[tool](root, list(argv)))
    except ToolError as exc:
        sys.stderr.write("%s\n" % exc)
        return exc.rc
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2], sys.argv[3:]))
