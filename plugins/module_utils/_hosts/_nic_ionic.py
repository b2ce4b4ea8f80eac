# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""AMD Pensando / Pollara: ionic (Ethernet) and ionic_rdma (RDMA), the ``ionic`` stack.

What mainline Linux gives (sources in docs/hosts.md, "AMD"):

- no DCBNL: drivers/net/ethernet/pensando/ionic has no dcbnl_rtnl_ops (no ionic_dcb.c; no file of the
  driver sets ``dcbnl_ops``), so iproute2 ``dcb`` cannot read or set trust, the DSCP map, ETS or PFC
  there (the kernel answers -EOPNOTSUPP before the driver is asked). AMD configures Pollara QoS with
  its own tool (nicctl) whose documentation this project could not read: unverified, not modelled.
  Those settings come back ``unsupported`` with this reason, never silently skipped.
- no congestion-control knob: the RDMA driver (drivers/infiniband/hw/ionic, merged in 2025) has no
  debugfs, configfs or sysfs file for DCQCN or the CNP; ``unsupported``.
- global pause: ethtool -A; ionic_set_pauseparam refuses autoneg (-EOPNOTSUPP) and get_pauseparam
  reports it off (drivers/net/ethernet/pensando/ionic/ionic_ethtool.c): nic_qos asks autoneg off.
- RDMA-CM ToS and mode in configfs, MTU in sysfs: the kernel's, as on every driver.

Counters: ethtool -S names from ionic_stats.c ``ionic_port_stats_desc``; the RDMA hw_counters names
come from the firmware (ionic_hw_stats.c asks the device for them: IONIC_V1_ADMIN_STATS_HDRS), so only
a name that is already one of the snapshot's is taken, and which ones a card has is unverified.
"""

from __future__ import annotations

from typing import Any

from ansible_collections.lossless.fabric.plugins.module_utils._hosts._nic import HW_COUNTERS as MLX5_HW_COUNTERS
from ansible_collections.lossless.fabric.plugins.module_utils._hosts._nic import NicState, Unsupported

NO_DCB = ("mainline ionic registers no DCBNL ops (drivers/net/ethernet/pensando/ionic), so dcb cannot read or set it; "
          "AMD's own tool (nicctl) is not modelled: no public source this project could read (unverified)")
NO_CC = ("the ionic RDMA driver (drivers/infiniband/hw/ionic) exposes no congestion-control file (debugfs, configfs or sysfs); "
         "AMD's own tool (nicctl) is not modelled: no public source this project could read (unverified)")

# ionic_stats.c ionic_port_stats_desc: the per-priority pause time in 1 us units (the names say so; mlx5's
# *_pause_duration is in microseconds too). frames_{rx,tx}_pri_<n> are left out: ionic_if.h does not say
# whether they count data frames or PFC frames of priority n (unverified), so they map to nothing.
ETHTOOL_PRIO = {
    "rx_pripause_{p}_1us_count": "pfc_rx_duration",
    "tx_pripause_{p}_1us_count": "pfc_tx_duration",
}
ETHTOOL_SCALARS = {"frames_rx_bad_fcs": "rx_crc_errors_phy"}
HW_COUNTERS = {name: name for name in MLX5_HW_COUNTERS}


class IonicState(NicState):
    """One ionic NIC."""

    DRIVER = "ionic"
    COUNTERS = (ETHTOOL_PRIO, ETHTOOL_SCALARS, HW_COUNTERS)

    def _read_qos(self) -> dict[str, Any]:
        return {"trust": Unsupported(NO_DCB), "dscp_map": Unsupported(NO_DCB), "pfc": Unsupported(NO_DCB)}

    def _read_ets(self) -> Any:
        return Unsupported(NO_DCB)

    def _read_dcqcn(self) -> Any:
        return Unsupported(NO_CC)

    def _read_cnp(self) -> Any:
        return Unsupported(NO_CC)

    def _read_traffic_class(self) -> Any:
        return Unsupported("ionic has no device-wide verbs traffic class (no tc/ sysfs in drivers/infiniband/hw/ionic); "
                           "verbs applications set it per QP: NCCL_IB_TC from the plan")
