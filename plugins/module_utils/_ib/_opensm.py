# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""The subnet manager's vocabulary: OpenSM 3.3.23 routing engines, partitions.conf keywords and codes, file locations.

Facts of OpenSM, so they live with the InfiniBand code that checks its files (_files.py) and the
fabric (_verify.py); the intent (_intent/_infiniband.py, _schema.py, _plan.py) validates and plans
with the same tables. Pure Python standard library; imports nothing.
"""

from __future__ import annotations

# OpenSM 3.3.23 routing engines (host-ib-k8s b.1); no ar_* engines upstream.
ROUTING_ENGINES: tuple[str, ...] = ("minhop", "updn", "dnup", "file", "ftree", "lash", "dor", "torus-2QoS", "nue", "dfsssp", "sssp")
# Engines that need root GUIDs when OpenSM cannot find the roots itself.
ROOTED_ENGINES: tuple[str, ...] = ("updn", "ftree")

# IBTA MTU codes used by partitions.conf ``mtu=`` (host-ib-k8s b.2).
IB_MTU_CODES: dict[int, int] = {256: 1, 512: 2, 1024: 3, 2048: 4, 4096: 5}
MEMBER_KEYWORDS: tuple[str, ...] = ("ALL", "ALL_CAS", "ALL_SWITCHES", "ALL_ROUTERS", "SELF")
MEMBERSHIPS: tuple[str, ...] = ("full", "limited", "both")

# The longest partitions.conf line OpenSM reads whole: osm_prtn_config_parse_file reads with
# fgets(line, sizeof(line) - 1) into char line[4096] (linux-rdma/opensm opensm/osm_prtn_config.c at fa74b98), so a
# longer line is cut and a GUID split across two reads. A rule may span lines (its members go on after a ',').
PARTITIONS_LINE_MAX = 4094

# Default-partition P_Key; OpenSM always creates it (partition-config.txt).
DEFAULT_PKEY = 0x7FFF

# Debian's OpenSM file locations (host-ib-k8s b.1, verified there).
OPENSM_PARTITIONS_FILE = "/etc/opensm/partitions.conf"
OPENSM_QOS_POLICY_FILE = "/etc/opensm/qos-policy.conf"
OPENSM_ROOT_GUID_FILE = "/etc/opensm/root-guids.conf"
