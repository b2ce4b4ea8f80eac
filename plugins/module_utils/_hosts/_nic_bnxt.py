# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""Broadcom NetXtreme-E (Thor / Thor2): bnxt_en (Ethernet) and bnxt_re (RDMA), the ``bnxt`` stack.

Vendor-neutral kernel interfaces only (sources in docs/hosts.md, "Broadcom"):

- trust, DSCP map, ETS and PFC: iproute2 ``dcb`` over DCBNL. bnxt_en implements the IEEE ops
  (drivers/net/ethernet/broadcom/bnxt/bnxt_dcb.c ``dcbnl_ops``: ieee_getets/setets, getpfc/setpfc,
  setapp/delapp, getdcbx/setdcbx) and has no apptrust op: a DSCP APP entry programs the firmware's
  DSCP->priority table (``bnxt_hwrm_queue_dscp2pri_cfg``), so, as on upstream mlx5, a full APP table
  is DSCP trust. Two driver rules shape the order: PFC is refused (-EINVAL) until the host has set
  ETS (``bnxt_hwrm_queue_pfc_cfg``: ``if (!my_ets) return -EINVAL``), and every set is refused while
  the firmware LLDP/DCBX agent owns DCB (``DCB_CAP_DCBX_HOST`` clear): that host says
  "Error when attempting to set attribute: Invalid argument" and nic_qos fails naming the step.
- ETS as Broadcom's own bnxt_setupcc.sh (version 236.1.155.0, ``dcb_pgm_pfc_ets``) sets it with
  dcb: the RoCE priority in TC 1, every other priority in TC 0, ``tc-bw 0:50 1:50`` (its default
  ROCE_BW 50), TC 0 and 1 ``ets``; the remaining TCs ``strict`` with 0 % as its 8-TC form.
- congestion control (DCQCN) and the CNP: mainline bnxt_re's debugfs
  ``/sys/kernel/debug/bnxt_re/<PCI>/cc_config/`` (drivers/infiniband/hw/bnxt_re/debugfs.c
  ``bnxt_re_cc_gen0_name``: enable_cc, tos_ecn, cc_mode, alt_vlan_pcp, alt_vlan_dscp, ...). On:
  ``enable_cc 1``, ``tos_ecn 1``, ``cc_mode 1`` and off: ``enable_cc 0``, ``tos_ecn 0``, as
  bnxt_setupcc.sh writes them. The CNP's priority and DSCP are ``alt_vlan_pcp`` and ``alt_vlan_dscp``
  (the firmware's alt_vlan_pcp / alt_tos_dscp, which Broadcom's driver fills from its configfs
  cnp_prio / cnp_dscp). One switch for the device: nic_qos reads it as the value of every planned
  priority. Without debugfs mounted, or on a kernel before the cc_config directory, these two
  settings are ``unsupported`` with the reason.
- no device-wide verbs traffic class (bnxt_re has no ``tc/`` sysfs): ``unsupported``; RDMA-CM ToS and
  mode in configfs, MTU in sysfs, global pause with ethtool, as on mlx5.

Broadcom's out-of-tree bnxt_re adds a configfs (``/sys/kernel/config/bnxt_re/<DEV>/ports/1/cc/``,
bnxt_setupcc.sh's first choice); mainline has none, so nic_qos does not use it.
"""

from __future__ import annotations

from typing import Any

from ansible_collections.lossless.fabric.plugins.module_utils._hosts._nic import (
    Action,
    NicError,
    NicState,
    Unsupported,
    parse_dcb_ets,
)
from ansible_collections.lossless.fabric.plugins.module_utils._intent._contract import roce_priority

# bnxt_setupcc.sh dcb_pgm_pfc_ets: L2 in TC 0, RoCE in TC 1, ROCE_BW default 50 (L2_BW = 100 - ROCE_BW).
ROCE_TC, OTHER_TC, ROCE_BW = 1, 0, 50
CC_FILES = ("enable_cc", "tos_ecn", "cc_mode")

# ethtool -S names of bnxt_en (drivers/net/ethernet/broadcom/bnxt/bnxt_ethtool.c: bnxt_port_stats_arr,
# BNXT_RX/TX_STATS_PRI_ENTRY -> "<counter>_pri<n>" (only when the firmware maps priorities to queues,
# bp->pri2cos_valid), BNXT_RX/TX_STATS_EXT_PFC_ENTRY -> pfc_pri<n>_{rx,tx}_{duration_us,transitions},
# bnxt_port_stats_ext_arr) -> the snapshot's names.
ETHTOOL_PRIO = {
    "rx_bytes_pri{p}": "rx_prio_bytes",
    "rx_packets_pri{p}": "rx_prio_packets",
    "tx_bytes_pri{p}": "tx_prio_bytes",
    "tx_packets_pri{p}": "tx_prio_packets",
    "rx_pfc_ena_frames_pri{p}": "pfc_rx_frames",
    "tx_pfc_ena_frames_pri{p}": "pfc_tx_frames",
    "pfc_pri{p}_rx_duration_us": "pfc_rx_duration",
    "pfc_pri{p}_tx_duration_us": "pfc_tx_duration",
    "pfc_pri{p}_rx_transitions": "pfc_rx_transitions",
}
ETHTOOL_SCALARS = {
    "rx_fcs_err_frames": "rx_crc_errors_phy",
    "rx_pcs_symbol_err": "rx_symbol_err_phy",
    "rx_corrected_bits": "rx_corrected_bits_phy",
    "link_down_events": "link_down_events_phy",
}
# /sys/class/infiniband/<DEV>/ports/1/hw_counters of bnxt_re (drivers/infiniband/hw/bnxt_re/hw_counters.c
# bnxt_re_stat_descs at mainline 73a98bc5: tx_cnp_pkts, rx_cnp_pkts, rx_ecn_marked_pkts, oos_drop_count,
# rx_out_of_buffer, seq_err_naks_rcvd, dup_req, to_retransmits) and the later names of the same counters
# (the rename to the mlx5 words: np_cnp_pkts, rp_cnp_handled, np_ecn_marked_roce_packets, out_of_buffer,
# out_of_sequence, req_cqe_error, resp_cqe_error; release unverified) -> the snapshot's names.
# to_retransmits (timeout retransmissions) stands for mlx5's local_ack_timeout_err (ack timer expiries).
HW_COUNTERS = {
    "tx_cnp_pkts": "np_cnp_sent",
    "np_cnp_pkts": "np_cnp_sent",
    "np_cnp_sent": "np_cnp_sent",
    "rx_cnp_pkts": "rp_cnp_handled",
    "rp_cnp_handled": "rp_cnp_handled",
    "rx_ecn_marked_pkts": "np_ecn_marked_roce_packets",
    "np_ecn_marked_roce_packets": "np_ecn_marked_roce_packets",
    "oos_drop_count": "out_of_sequence",
    "out_of_sequence": "out_of_sequence",
    "rx_out_of_buffer": "out_of_buffer",
    "out_of_buffer": "out_of_buffer",
    "seq_err_naks_rcvd": "packet_seq_err",
    "dup_req": "duplicate_request",
    "to_retransmits": "local_ack_timeout_err",
    "req_cqe_error": "req_cqe_error",
    "resp_cqe_error": "resp_cqe_error",
}


def ets_for(priority: int) -> dict[str, list]:
    """bnxt_setupcc.sh's ETS for RoCE priority ``priority``, all 8 TCs written out (the read-back compares all 8)."""
    return {
        "prio_tc": [ROCE_TC if p == priority else OTHER_TC for p in range(8)],
        "tc_bw": [100 - ROCE_BW, ROCE_BW, 0, 0, 0, 0, 0, 0],
        "tc_tsa": ["ets", "ets", *["strict"] * 6],
    }


class BnxtState(NicState):
    """One bnxt_en / bnxt_re NIC."""

    DRIVER = "bnxt_en"
    COUNTERS = (ETHTOOL_PRIO, ETHTOOL_SCALARS, HW_COUNTERS)

    def plan_wanted(self, want: dict[str, Any], plan: dict | None) -> dict[str, Any]:
        if plan is None:
            return want
        return {**want, "ets": ets_for(roce_priority(plan))}

    # -- reads -------------------------------------------------------------

    def _read_ets(self) -> Any:
        ets = parse_dcb_ets(self.tool(["dcb", "ets", "show", "dev", self.netdev]))
        return ets if None not in ets.values() else None

    def _cc(self) -> str:
        return "/sys/kernel/debug/bnxt_re/%s/cc_config" % self.nic["pci"]

    def _cc_values(self, names: tuple) -> dict[str, int] | Unsupported:
        if not self.fs.isdir("/sys/kernel/debug/bnxt_re"):
            return Unsupported("bnxt_re congestion control is set through debugfs: mount it (mount -t debugfs none /sys/kernel/debug)")
        values = {name: self.fs.read("%s/%s" % (self._cc(), name)) for name in names}
        if any(v is None or not v.strip().isdigit() for v in values.values()):
            return Unsupported("%s has no readable %s: this kernel's bnxt_re has no cc_config (mainline debugfs.c)" % (self._cc(), " / ".join(names)))
        return {name: int(str(v)) for name, v in values.items()}

    def _read_dcqcn(self) -> Any:
        values = self._cc_values(CC_FILES)
        if isinstance(values, Unsupported):
            return values
        if values["enable_cc"] == 1 and values["tos_ecn"] == 1 and values["cc_mode"] == 1:
            state: int | None = 1
        elif values["enable_cc"] == 0:
            state = 0  # the switch is off, whatever the rest holds
        else:
            state = None  # on, but not as bnxt_setupcc.sh sets it (ECN or the DCQCN mode off): rewrite it
        # One device-wide switch: every priority reads as it (plan_nic compares the planned ones).
        return {point: {str(p): state for p in range(8)} for point in ("np", "rp")}

    def _read_cnp(self) -> Any:
        values = self._cc_values(("alt_vlan_dscp", "alt_vlan_pcp"))
        if isinstance(values, Unsupported):
            return values
        return {"dscp": values["alt_vlan_dscp"], "priority": values["alt_vlan_pcp"]}

    def _read_traffic_class(self) -> Any:
        return Unsupported("bnxt_re has no device-wide verbs traffic class (no tc/ sysfs in drivers/infiniband/hw/bnxt_re); "
                           "verbs applications set it per QP: NCCL_IB_TC from the plan")

    # -- actions -----------------------------------------------------------

    def _set_ets(self, want: dict, have: Any) -> list[Action]:
        argv = ["dcb", "ets", "set", "dev", self.netdev,
                "tc-tsa", *["%d:%s" % (tc, tsa) for tc, tsa in enumerate(want["tc_tsa"])],
                "tc-bw", *["%d:%d" % (tc, bw) for tc, bw in enumerate(want["tc_bw"])],
                "prio-tc", *["%d:%d" % (p, tc) for p, tc in enumerate(want["prio_tc"])]]
        return [Action("run", argv=argv)]

    def _set_dcqcn(self, want: dict, have: Any) -> list[Action]:
        bits = {v for point in want.values() for v in point.values()}
        if not bits:
            return []
        if len(bits) > 1:
            # One switch for the device: a plan cannot have it on for one priority and off for another here.
            raise NicError("%s: bnxt_re congestion control is one switch per device; the plan wants %r" % (self.name, want))
        on = bits == {1}
        values = (("enable_cc", 1), ("tos_ecn", 1), ("cc_mode", 1)) if on else (("enable_cc", 0), ("tos_ecn", 0))
        return [Action("write", path="%s/%s" % (self._cc(), name), value=str(value)) for name, value in values]

    def _set_cnp(self, want: dict, have: Any) -> list[Action]:
        have = have or {}
        steps = []
        if have.get("dscp") != want["dscp"]:
            steps.append(Action("write", path=self._cc() + "/alt_vlan_dscp", value=str(want["dscp"])))
        if want["priority"] is not None and have.get("priority") != want["priority"]:
            steps.append(Action("write", path=self._cc() + "/alt_vlan_pcp", value=str(want["priority"])))
        return steps
