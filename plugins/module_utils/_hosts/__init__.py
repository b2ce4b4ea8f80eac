# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""GPU hosts: NIC QoS settings and counters (_nic: mlx5 and the shared machinery; _nic_bnxt: Broadcom;
_nic_ionic: AMD; _nic_task: the modules' tasks), host links, perftest."""
