# SPDX-License-Identifier: GPL-3.0-or-later
"""Build one GPU host's file tree, as the mlx5 driver lays it out (reference
host-ib-k8s a.0-a.8) - or bnxt_en/bnxt_re (stack bnxt) or ionic (stack ionic) - under a root directory:

    sys/devices/pci0000:00/<PCI>/{vendor,device,net/<IF>/}
    sys/class/infiniband/<DEV>/device -> the PCI directory; ports/1/{link_layer,hw_counters/}
    sys/class/net/<IF>/{mtu,device}
    stack mlnx:     sys/class/net/<IF>/qos/trust, ecn/roce_{np,rp}/..., sys/class/infiniband/<DEV>/tc/1/traffic_class
    stack upstream: sys/kernel/debug/mlx5/<PCI>/cc_params/np_cnp_* (when debugfs is "mounted")
    stack bnxt:     sys/kernel/debug/bnxt_re/<PCI>/cc_config/* (when debugfs is "mounted"), bnxt_re hw_counters
    stack ionic:    no DCB, no congestion-control file, no hw_counters (firmware-named, unverified)
    all:            sys/devices/.../<PCI>/driver -> sys/bus/pci/drivers/<driver> (mlx5_core, bnxt_en, ionic)
    both:           sys/kernel/config/rdma_cm/<DEV>/ports/1/default_roce_{tos,mode}
    .hostsim/state.json: what the driver holds that no file shows (dcbnl APP table, PFC, pause, stats)
    links (sync_links):  sys/class/net/<IF>/{operstate,speed,address} from the lab wiring (tests/lab/wiring.py)

Limits (docs/hosts.md): configfs creates ports/ when a directory is made; a plain
tree cannot, so the rdma_cm/<DEV> directories exist from the start.
"""

from __future__ import annotations

import json
import os

STATE = os.path.join(".hostsim", "state.json")
# ConnectX-7 (reference c.1 device IDs); PCI addresses per NIC index.
VENDOR, DEVICE = "0x15b3", "0x1021"
STACKS = ("mlnx", "upstream", "bnxt", "ionic")
# Per stack: the driver the netdev is bound to (its sys/bus/pci/drivers/<name> directory, the device's
# driver link) and the PCI vendor:device. Broadcom BCM57608 (Thor2) 14e4:1760 (bnxt.c bnxt_pci_tbl);
# AMD Pensando 1dd8:1002 (ionic_bus_pci.c ionic_id_table, PCI_DEVICE_ID_PENSANDO_IONIC_ETH_PF).
DRIVERS = {"mlnx": ("mlx5_core", VENDOR, DEVICE), "upstream": ("mlx5_core", VENDOR, DEVICE),
           "bnxt": ("bnxt_en", "0x14e4", "0x1760"), "ionic": ("ionic", "0x1dd8", "0x1002")}
MLX5_HW_COUNTERS = ("out_of_sequence", "packet_seq_err", "local_ack_timeout_err", "implied_nak_seq_err", "duplicate_request",
                    "rnr_nak_retry_err", "out_of_buffer", "np_ecn_marked_roce_packets", "np_cnp_sent", "rp_cnp_handled",
                    "rp_cnp_ignored", "req_cqe_error", "resp_cqe_error", "req_remote_access_errors", "roce_adp_retrans")
# bnxt_re's hw_counters (drivers/infiniband/hw/bnxt_re/hw_counters.c bnxt_re_stat_descs, mainline 73a98bc5), the ones
# the lab keeps: the RoCE congestion and error counters.
BNXT_HW_COUNTERS = ("tx_cnp_pkts", "rx_cnp_pkts", "rx_ecn_marked_pkts", "oos_drop_count", "rx_out_of_buffer", "seq_err_naks_rcvd",
                    "dup_req", "to_retransmits", "rnr_naks_rcvd", "missing_resp", "rx_roce_discards")
# bnxt_re debugfs cc_config (drivers/infiniband/hw/bnxt_re/debugfs.c bnxt_re_cc_gen0_name). The values a fresh card
# reads are the firmware's (unverified): the lab starts with congestion control off and the CNP on DSCP 0 / priority 0.
BNXT_CC_FILES = ("enable_cc", "run_avg_weight_g", "num_phase_per_state", "init_cr", "init_tr", "tos_ecn", "tos_dscp",
                 "alt_vlan_pcp", "alt_vlan_dscp", "rtt", "cc_mode", "tcp_cp", "tx_queue", "inactivity_cp")


def _write(root: str, rel: str, value) -> None:
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("%s\n" % value)


def _link(root: str, rel: str, target_rel: str) -> None:
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if os.path.lexists(path):
        os.unlink(path)
    os.symlink(os.path.relpath(os.path.join(root, target_rel), os.path.dirname(path)), path)


def pci_address(index: int) -> str:
    return "0000:%02x:00.0" % (0x3B + index)


def build(root: str, nics: list[dict], stack: str, debugfs: bool = True, peermem: bool = True, mtu: int = 1500) -> dict:
    """Create the tree for ``nics`` ([{name, netdev}]) in driver-default state; return the state."""
    if stack not in STACKS:
        raise ValueError("lab_nic_stack: %r is not one of %s" % (stack, ", ".join(STACKS)))
    state: dict = {"stack": stack, "nics": {}}
    driver, vendor, device = DRIVERS[stack]
    os.makedirs(os.path.join(root, "sys/bus/pci/drivers", driver), exist_ok=True)
    for index, nic in enumerate(nics):
        name, netdev, pci = nic["name"], nic["netdev"], pci_address(index)
        dev = "sys/devices/pci0000:00/%s" % pci
        _write(root, dev + "/vendor", vendor)
        _write(root, dev + "/device", device)
        _link(root, dev + "/driver", "sys/bus/pci/drivers/%s" % driver)
        os.makedirs(os.path.join(root, dev, "net", netdev), exist_ok=True)
        _link(root, "sys/class/infiniband/%s/device" % name, dev)
        port = "sys/class/infiniband/%s/ports/1" % name
        _write(root, port + "/link_layer", "Ethernet")
        # ionic: the firmware names its hw_counters (ionic_hw_stats.c); which names a Pollara gives is unverified, so the lab has none.
        for counter in {"bnxt": BNXT_HW_COUNTERS, "ionic": ()}.get(stack, MLX5_HW_COUNTERS):
            _write(root, "%s/hw_counters/%s" % (port, counter), 0)
        net = "sys/class/net/%s" % netdev
        _write(root, net + "/mtu", mtu)
        _link(root, net + "/device", dev)
        if stack == "mlnx":
            _write(root, net + "/qos/trust", "pcp")
            for point in ("np", "rp"):
                for prio in range(8):
                    # Firmware default ROCE_CC_PRIO_MASK 255 would enable all; a fresh lab host has them off to show the change.
                    _write(root, "%s/ecn/roce_%s/enable/%d" % (net, point, prio), 0)
            _write(root, net + "/ecn/roce_np/cnp_dscp", 0)
            _write(root, net + "/ecn/roce_np/cnp_802p_prio", 0)
            _write(root, net + "/ecn/roce_np/min_time_between_cnps", 4)
            _write(root, "sys/class/infiniband/%s/tc/1/traffic_class" % name, "Global tclass=0")
        elif stack == "bnxt" and debugfs:
            for name_cc in BNXT_CC_FILES:
                _write(root, "sys/kernel/debug/bnxt_re/%s/cc_config/%s" % (pci, name_cc), 0)
        elif stack == "upstream" and debugfs:
            cc = "sys/kernel/debug/mlx5/%s/cc_params" % pci
            _write(root, cc + "/np_cnp_dscp", 0)
            _write(root, cc + "/np_cnp_prio_mode", 1)
            _write(root, cc + "/np_cnp_prio", 0)
        cma = "sys/kernel/config/rdma_cm/%s/ports/1" % name
        _write(root, cma + "/default_roce_tos", 0)
        _write(root, cma + "/default_roce_mode", "IB/RoCE v1")
        state["nics"][netdev] = {
            "name": name,
            "trust": "pcp",
            # mlnx: the firmware's DSCP map (d >> 3) once trust is dscp; upstream: the dcbnl APP table, empty.
            "dscp_map": {str(d): d >> 3 for d in range(64)},
            "app": [],
            "pfc": [0] * 8,
            # ionic_get_pauseparam reports autoneg off, always (ionic_ethtool.c).
            "pause": {"autoneg": "off" if stack == "ionic" else "on", "rx": "on", "tx": "on"},
            "stats": {},
            # dcb ets (bnxt): what ieee_getets reads before the host set ETS (bnxt_dcb.c: zeroed, ets_cap = max_tc);
            # ets_host: whether the host has set it (bnxt_en refuses PFC until then).
            "ets": {"tc_bw": [0] * 8, "tc_tsa": ["strict"] * 8, "prio_tc": [0] * 8},
            "ets_host": False,
        }
    if peermem:
        os.makedirs(os.path.join(root, "sys/module/nvidia_peermem"), exist_ok=True)
    for folder in ("etc/systemd/system", "etc/udev/rules.d"):  # as on any systemd host
        os.makedirs(os.path.join(root, folder), exist_ok=True)
    save(root, state)
    return state


def load(root: str) -> dict:
    with open(os.path.join(root, STATE), encoding="utf-8") as handle:
        return json.load(handle)


def save(root: str, state: dict) -> None:
    path = os.path.join(root, STATE)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as handle:
        json.dump(state, handle, indent=1, sort_keys=True)
    os.replace(tmp, path)


# Mb/s as /sys/class/net/<IF>/speed prints it (net-sysfs.c speed_show: the ethtool link speed, -1 = SPEED_UNKNOWN).
def _mbps(speed) -> str:
    if not speed:
        return "-1"
    return str(int(float(str(speed).rstrip("Gg")) * 1000))


def sync_links(root: str, host: str, seen: dict | None, mac) -> None:
    """Write each NIC's operstate/speed/address as the lab's cables make them.

    ``seen`` is wiring.view(wiring, host) ({} or None: no wiring file, every link up at an unknown speed);
    ``mac(host, nic)`` the NIC's address (wiring.mac). A NIC the wiring lists but no cable reaches is down
    (operstate "down", speed -1: the kernel's SPEED_UNKNOWN while there is no carrier).
    """
    state = load(root)
    for netdev, nic in state["nics"].items():
        link = (seen or {}).get(nic["name"]) if seen else {"oper": "up", "speed": None}
        link = link or {"oper": "down", "speed": None}
        net = "sys/class/net/%s" % netdev
        _write(root, net + "/operstate", "up" if link["oper"] == "up" else "down")
        _write(root, net + "/speed", _mbps(link["speed"]) if link["oper"] == "up" else "-1")
        _write(root, net + "/address", mac(host, nic["name"]))
