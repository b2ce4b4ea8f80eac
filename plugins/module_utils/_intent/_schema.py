# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""The intent's schema as data: one row per leaf key of ``lossless_fabric`` and ``lossless_fabric_device``.

Each ``Leaf`` gives the key's path, type, default, range or choices and a one-line doc.
Two things come from this one table:

- validation: a section calls ``value(ctx, src, leaf_path, parent_path)`` for every leaf
  whose ``check`` is ``SCHEMA``; the default (or one the section derives and passes in),
  range, choices and the noun of the error message ("64 is not a DSCP (0-63)") are the
  row's.  Rows marked ``HAND`` (lists, patterns, keys with a message or rule of their own)
  are checked by the section's code, which still reads the row's default, range, choices and
  list length (``BY_PATH[path].default``, ``.low``, ...) so each value is written once, here;
  cross-key rules (data.priority in pfc.priorities, ...) are always code.
- the key tables of docs/intent.md, which ``tools/intent_docs.py`` rewrites between the
  ``<!-- intent-schema:NAME -->`` markers (tests/unit/plugins/module_utils/_intent/test_schema.py
  fails when the two disagree).

Every row gives its default and its range either as data or as an explicit marker:

- default: a value (``None`` is null), or ``REQUIRED`` (the key must be given), ``DERIVED``
  (computed from other keys or the inventory: ``default_doc`` says how, the code computes it)
  or ``ABSENT`` (no default: an absent key stays unset);
- range: ``low``/``high`` (inclusive, or both exclusive with ``exclusive``), ``choices``,
  ``min_len``/``max_len`` for a list (then ``low``/``high``/``choices`` bound each entry);
  a bool's range is its type; otherwise ``range_is`` says why there is no range data:
  ``RULE`` (a pattern or a reference checked by code: ``range_doc`` says which), ``DERIVED``
  (a bound that depends on other values) or ``ANY`` (a mapping whose keys are rows of their own).

``default_doc`` / ``range_doc`` are prose: with a marker they are the whole explanation, with
data they are a note the docs print after the rendered value ("1500-9216, and at most the
platform's maximum").  A bound that depends on other keys lives only in that note and in code.
Paths are below ``lossless_fabric`` except those starting ``lossless_fabric_device.``; a path
below a list names the list ``[]`` (``infiniband.partitions[].rate``); the docs table of a
section prints the path below its prefix.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from ansible_collections.lossless.fabric.plugins.module_utils._ib._opensm import IB_MTU_CODES, MEMBER_KEYWORDS, MEMBERSHIPS, ROUTING_ENGINES
from ansible_collections.lossless.fabric.plugins.module_utils._intent._contract import NIC_STACKS
from ansible_collections.lossless.fabric.plugins.module_utils._intent._tables import (
    _MAX_RAILS,
    COLLECTIVES,
    DEVICE_KINDS,
    K8S_ATTACH_STRATEGIES,
    K8S_CNIS,
    K8S_MNC_IPAMS,
    K8S_MNC_PLUGINS,
    NCCL_TRANSPORTS,
    PATTERNS,
    PLATFORMS,
    SM_ROLES,
    SPEEDS,
    TRANSPORTS,
    UINT32_MAX,
)

# lossless_fabric.roce.mode (issue 36): the fabric's congestion design. Readers of a plan written before it use
# plan.get("mode", "lossless") (interfaces point 1).
LOSSLESS, ECN_ONLY, PFC_ONLY = "lossless", "ecn_only", "pfc_only"
ROCE_MODES: tuple[str, ...] = (LOSSLESS, ECN_ONLY, PFC_ONLY)

# The platform names, from the registry (_platforms): a new driver is listed with no edit here.
_SUPPORTED = tuple(f"`{name}`" for name, record in PLATFORMS.items() if record.supported)
_PLANNED = tuple(f"`{name}`" for name, record in PLATFORMS.items() if not record.supported)

# A default two rows show: resources[].rdma_hca_max's own, and the derived resources' prose.
_RDMA_HCA_MAX = 63

_ROW: Any = object()  # "the row's default" in value()
SCHEMA = "schema"  # validated from this row
HAND = "hand"  # validated by the section's own code (see its module), from this row's data


class Mark:
    """A marker in place of data: ``Leaf.default`` or ``Leaf.range_is`` (see the module doc).

    Not a str, so no default value (kubernetes' attach strategy ``"none"``) can be taken for one;
    compare with ``is``."""

    __slots__ = ("word",)

    def __init__(self, word: str) -> None:
        self.word = word

    def __repr__(self) -> str:
        return f"Mark({self.word!r})"

    def __str__(self) -> str:
        return self.word


REQUIRED = Mark("required")  # default: the key must be given
DERIVED = Mark("derived")  # default or range: computed from other values; the row's *_doc says how
ABSENT = Mark("none")  # default: none, an absent key stays unset
RULE = Mark("rule")  # range: a pattern or reference checked by code; range_doc says which
ANY = Mark("any")  # range: a mapping; its keys are rows of their own
UNSET: Any = Mark("unset")  # a row that gave neither (refused by test_intent_schema)
DEFAULT_MARKS = (REQUIRED, DERIVED, ABSENT)
RANGE_MARKS = (RULE, DERIVED, ANY)


class Leaf(NamedTuple):
    path: str
    type: str
    default: Any = UNSET
    low: int | None = None
    high: int | None = None
    choices: tuple[Any, ...] | None = None
    what: str = ""
    nullable: bool = False
    default_doc: str | None = None
    range_doc: str | None = None
    doc: str = ""
    check: str = SCHEMA
    min_len: int | None = None  # a list's length (then low/high/choices bound each entry)
    max_len: int | None = None
    exclusive: bool = False  # low < x < high (numbers that are not counts)
    range_is: Mark | None = None  # RULE, DERIVED or ANY where the row has no range data

    def has_default(self) -> bool:
        """The default is a value (None: null), not a marker."""
        return not isinstance(self.default, Mark)

    def has_range(self) -> bool:
        """The range is data: bounds, choices, a list length, or a bool's two values."""
        return self.type == "bool" or any(v is not None for v in (self.low, self.high, self.choices, self.min_len, self.max_len))

    def outside(self, value: Any) -> bool:
        """A number beyond ``low``/``high`` (as the row's range reads: inclusive unless ``exclusive``)."""
        if self.exclusive:
            return (self.low is not None and value <= self.low) or (self.high is not None and value >= self.high)
        return (self.low is not None and value < self.low) or (self.high is not None and value > self.high)


def _flow(value: Any) -> str:
    """``value`` as YAML flow text, as an intent writes it: [ftree, minhop], {vl: 0, weight: 64}."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_flow(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{key}: {_flow(item)}" for key, item in value.items()) + "}"
    text = str(value)
    if isinstance(value, str) and (not text or text.lower() in ("true", "false", "yes", "no", "on", "off", "null", "~") or text.isdigit()):
        return f'"{text}"'  # YAML would read it as another type
    return text


LEAVES: tuple[Leaf, ...] = (
    # ---- top: docs/intent.md table 'top' (docs header: '| key | type | default | range / values | meaning |')
    Leaf("name", "str", REQUIRED, check=HAND, range_is=RULE, range_doc="name pattern above", doc="fabric name; appears in generated file headers"),
    Leaf(
        "transport",
        "str",
        REQUIRED,
        choices=TRANSPORTS,
        what="a transport",
        doc="selects the section below; the other transport's section must be absent",
    ),
    Leaf("roce", "map", {}, check=HAND, default_doc="(all defaults)", range_is=ANY, doc="RoCEv2 QoS (switches and hosts)"),
    Leaf("infiniband", "map", {}, check=HAND, default_doc="(all defaults)", range_is=ANY, doc="OpenSM policy (subnet managers, hosts)"),
    Leaf("targets", "map", {}, check=HAND, default_doc="(all defaults)", range_is=ANY, doc="NCCL benchmark gate"),
    Leaf(
        "tenants",
        "list",
        (),
        check=HAND,
        range_is=RULE,
        range_doc="names unique; a host in one tenant only where a tenant has a partition or a VLAN (below)",
        doc="tenants sharing the fabric: their hosts, InfiniBand partition, RoCE VLAN, Kubernetes namespace (docs/tenants.md)",
    ),
    Leaf(
        "topology",
        "map",
        ABSENT,
        check=HAND,
        range_is=ANY,
        doc="the cabling pattern ([Cabling](#cabling-topology-port-and-nic-peer-nic-rail-optional))",
    ),
    # ---- roce: docs/intent.md table 'roce' (docs header: '| key | type | default | range | meaning / who gets it |')
    Leaf(
        "roce.mode",
        "str",
        default="lossless",
        choices=ROCE_MODES,
        what="a fabric mode",
        doc=(
            "`lossless`: PFC + ECN/DCQCN; `ecn_only`: lossy fabric, no PFC anywhere (no watchdog, no headroom), ECN/DCQCN and the CNP "
            "class kept; `pfc_only`: PFC without ECN marking, DCQCN off ([Fabric modes](#fabric-modes-rocemode))"
        ),
    ),
    Leaf("roce.trust", "str", default="dscp", choices=("dscp",), what="a trust mode", doc="classify by DSCP (switches, NICs)"),
    Leaf("roce.data.dscp", "int", default=26, low=0, high=63, what="a DSCP", doc="DSCP of RoCE data"),
    Leaf(
        "roce.data.priority",
        "int",
        default=3,
        low=0,
        high=7,
        what="a priority",
        doc="priority = traffic class = queue of RoCE data; must be in `pfc.priorities`",
    ),
    Leaf(
        "roce.data.bandwidth_percent",
        "int",
        default=50,
        low=1,
        high=99,
        what="a bandwidth share in percent",
        doc=(
            "ETS/DWRR share of the RoCE data class; the other weighted classes split the rest evenly (the lowest takes the remainder); the "
            "strict CNP class has no share (reference 1.5, 3.6, 7.3)"
        ),
    ),
    Leaf(
        "roce.cnp.dscp",
        "int",
        default=48,
        low=0,
        high=63,
        what="a DSCP",
        doc="DSCP of CNPs (NIC notification point, switch map); must differ from `data.dscp`",
    ),
    Leaf(
        "roce.cnp.priority",
        "int",
        default=6,
        low=0,
        high=7,
        what="a priority",
        doc="priority/queue of CNPs; must differ from `data.priority` and not be a PFC priority",
    ),
    Leaf("roce.cnp.strict", "bool", default=True, doc="strict-priority scheduling of the CNP queue (switches)"),
    Leaf(
        "roce.pfc.priorities",
        "list of int",
        (3,),
        low=0,
        high=7,
        what="a priority",
        check=HAND,
        min_len=1,
        max_len=8,
        range_doc=", unique",
        doc="lossless priorities (switch ports, NIC PFC bitmap); mode `ecn_only`: none (absent or `[]`)",
    ),
    Leaf("roce.pfc.watchdog.enabled", "bool", default=True, doc="PFC watchdog on switches; mode `ecn_only`: off (`true` is refused)"),
    Leaf("roce.pfc.watchdog.detection_time_ms", "int", default=200, low=100, high=5000, what="a detection time in ms", doc="storm detection time"),
    Leaf(
        "roce.pfc.watchdog.restoration_time_ms",
        "int",
        default=400,
        low=100,
        high=60000,
        what="a restoration time in ms",
        doc="time the queue stays in the storm action",
    ),
    Leaf("roce.pfc.watchdog.action", "str", default="drop", choices=("drop", "forward"), what="a watchdog action", doc="what a stormed queue does"),
    Leaf(
        "roce.ecn.min_threshold_bytes",
        "int or null",
        low=1,
        high=UINT32_MAX,
        what="a threshold in bytes",
        nullable=True,
        default=DERIVED,
        default_doc="per port speed and platform (null)",
        doc="WRED/ECN Kmin on the data queue; null: per port speed; mode `pfc_only`: none (a value is refused)",
    ),
    Leaf(
        "roce.ecn.max_threshold_bytes",
        "int or null",
        low=1,
        high=UINT32_MAX,
        what="a threshold in bytes",
        nullable=True,
        default=DERIVED,
        default_doc="per port speed and platform (null)",
        range_doc=", above `min_threshold_bytes`",
        doc="Kmax; must be above Kmin (also against a derived value)",
    ),
    Leaf(
        "roce.ecn.max_probability_percent",
        "int or null",
        low=1,
        high=100,
        what="a percentage",
        nullable=True,
        default=DERIVED,
        default_doc="per platform, 20 on most (null)",
        doc="Pmax",
    ),
    Leaf(
        "roce.dcqcn.enabled",
        "bool",
        default=True,
        doc="DCQCN reaction + notification point on `data.priority` (NICs); mode `pfc_only`: off (`true` is refused)",
    ),
    Leaf(
        "roce.mtu.switch",
        "int",
        default=9214,
        low=1500,
        high=9216,
        what="a switch MTU",
        default_doc="(9202 when a Junos switch is in scope)",
        range_doc=", and at most the platform's maximum (EOS 9214, NVUE 9216, Junos 9202)",
        doc=(
            "the IP MTU of every switch port (EOS `mtu` and the NVUE/Linux link MTU count the IP packet; Junos' media MTU counts the 14-byte "
            "Ethernet header too, so Junos renders `mtu.switch + 14`, at most QFX's 9216: docs/vendor-junos.md); also the port MTU of the "
            "headroom formula. Unset with a Junos switch in scope, every switch gets 9202 so the fabric keeps one IP MTU. That EOS's `mtu` is "
            "the IP MTU: from our reference notes, not re-checked against Arista's page in this review (unverified)"
        ),
    ),
    Leaf(
        "roce.mtu.host",
        "int",
        default=9000,
        low=1280,
        high=9216,
        what="a host MTU",
        range_doc=", ≤ `mtu.switch - 18`",
        doc="host netdev MTU; at most `mtu.switch - 18` (Ethernet + 802.1Q header)",
    ),
    Leaf(
        "roce.rdma_cm_tos",
        "int or null",
        low=0,
        high=255,
        what="a ToS byte",
        nullable=True,
        default=DERIVED,
        default_doc="`roce_tos(data.dscp)` (null)",
        doc="configfs `default_roce_tos` for RDMA-CM users; null: `roce_tos(data.dscp)` (106)",
    ),
    Leaf(
        "roce.gid_index",
        "int or null",
        default=None,
        low=0,
        high=255,
        what="a GID index",
        nullable=True,
        doc=(
            "pin `NCCL_IB_GID_INDEX`; null leaves NCCL's default −1: NCCL scans the GID table for a RoCEv2 / AF_INET GID (nccl-tests reference "
            "7), automatic since NCCL 2.21 per Juniper's AI data-center JVD (not checked against NCCL's release notes); set it for older NCCL "
            "(3 is common)"
        ),
    ),
    Leaf(
        "roce.cable_length_m",
        "int",
        default=5,
        low=1,
        high=10000,
        what="a cable length in metres",
        doc="cable length of ports that do not give one (headroom)",
    ),
    Leaf(
        "roce.headroom.cell_bytes",
        "int",
        default=144,
        low=32,
        high=1024,
        what="a cell size in bytes",
        doc="ASIC buffer cell (Spectrum-1: 96; Spectrum-2/3: 144)",
    ),
    Leaf(
        "roce.headroom.small_packet_percent",
        "int",
        default=100,
        low=0,
        high=100,
        what="a percentage",
        doc="share of 64-byte packets assumed (100 = worst case)",
    ),
    Leaf("roce.headroom.lossless_mtu_bytes", "int", default=1024, low=64, high=9216, what="an MTU in bytes", doc="SONiC `LOSSLESS_TRAFFIC_PATTERN.mtu`"),
    Leaf("roce.headroom.pipeline_latency_bytes", "int", default=18432, low=0, high=1048576, what="a latency in bytes", doc="Xon (18 KiB on Spectrum-1/2/3)"),
    Leaf("roce.headroom.mac_phy_delay_bytes", "int", default=800, low=0, high=1048576, what="a delay in bytes", doc="MAC/PHY delay (HLD: 0.8 KB)"),
    # ---- infiniband: docs/intent.md table 'infiniband' (docs header: '| key | type | default | range | meaning / who gets it |')
    Leaf("infiniband.sm.priority", "int", default=14, low=0, high=15, what="an SM priority", doc="`sm_priority` of the `master` subnet manager"),
    Leaf(
        "infiniband.sm.standby_priority",
        "int",
        default=1,
        low=0,
        high=15,
        what="an SM priority",
        range_doc=", < `sm.priority`",
        doc="`sm_priority` of `standby` subnet managers",
    ),
    Leaf(
        "infiniband.sm.routing_engine",
        "str or list",
        ("ftree", "minhop"),
        choices=ROUTING_ENGINES,
        what="an OpenSM 3.3.23 routing engine",
        check=HAND,
        min_len=1,
        range_doc="(OpenSM 3.3.23), unique",
        doc="tried in order (`routing_engine`)",
    ),
    Leaf("infiniband.sm.lmc", "int", default=0, low=0, high=7, what="an LMC", doc="LIDs per port = 2^lmc"),
    Leaf(
        "infiniband.sm.root_guids",
        "list of GUID",
        (),
        check=HAND,
        range_is=RULE,
        range_doc="each `0x` + 16 hex",
        doc="written to `root_guid_file` for `updn`/`ftree`",
    ),
    Leaf("infiniband.qos.enabled", "bool", default=True, doc="opensm.conf `qos`"),
    Leaf("infiniband.qos.max_vls", "int", default=8, low=1, high=15, what="a VL count", doc="`qos_max_vls`"),
    Leaf(
        "infiniband.qos.high_limit",
        "int",
        default=255,
        low=0,
        high=255,
        what="a high limit",
        doc="`qos_high_limit` (×4 KB of high-priority data before a low-priority chance; 255 = unlimited)",
    ),
    Leaf(
        "infiniband.qos.vlarb_high",
        "list of `{vl, weight}`",
        tuple({"vl": vl, "weight": 64} for vl in (0, 3)),
        check=HAND,
        min_len=1,
        max_len=64,
        default_doc="(entries with vl ≥ `max_vls` left out; `[{vl: 0, weight: 64}]` if none is left)",
        doc="`qos_vlarb_high`",
    ),
    Leaf(
        "infiniband.qos.vlarb_low",
        "list of `{vl, weight}`",
        tuple({"vl": vl, "weight": 64} for vl in range(8)),
        check=HAND,
        min_len=1,
        max_len=64,
        default_doc="(entries with vl ≥ `max_vls` left out)",
        doc="`qos_vlarb_low`",
    ),
    *(
        leaf
        for table in ("vlarb_high", "vlarb_low")
        for leaf in (
            Leaf(
                f"infiniband.qos.{table}[].vl",
                "int",
                REQUIRED,
                low=0,
                high=14,
                what="a data VL",
                check=HAND,
                range_doc=", < `max_vls`",
                doc="a data VL of the table (15 is the management VL)",
            ),
            Leaf(f"infiniband.qos.{table}[].weight", "int", REQUIRED, low=0, high=255, what="a weight", check=HAND, doc="its weight (64-byte units)"),
        )
    ),
    *(
        Leaf(
            f"infiniband.qos.sl2vl.{kind}",
            "list of 16 int",
            (0, 1, 2, 3, 4, 5, 6, 7, 7, 7, 7, 7, 7, 7, 7, 7),
            low=0,
            high=15,
            what="a VL",
            check=HAND,
            min_len=16,
            max_len=16,
            default_doc="(VLs ≥ `max_vls` lowered to `max_vls - 1`)",
            range_doc=", < `max_vls` or 15 (drop)",
            doc=doc,
        )
        for kind, doc in (("ca", "`qos_ca_sl2vl`"), ("switch", "`qos_swe_sl2vl` (switch external ports)"))
    ),
    Leaf(
        "infiniband.qos.levels",
        "list of `{name, sl}`",
        ({"name": "default", "sl": 0}, {"name": "rdma", "sl": 3}),
        check=HAND,
        min_len=1,
        range_doc="; a `default` level is mandatory; names unique (case-insensitive)",
        doc="qos-policy.conf `qos-levels` (`default` is written `DEFAULT`)",
    ),
    Leaf("infiniband.qos.levels[].name", "str", REQUIRED, check=HAND, range_is=RULE, range_doc="name pattern", doc="level name"),
    Leaf("infiniband.qos.levels[].sl", "int", 0, low=0, high=15, what="a service level", doc="the level's SL"),
    Leaf(
        "infiniband.partitions",
        "list",
        (
            {
                "name": "gpu",
                "pkey": "0x8001",
                "ipoib": True,
                "mtu": 4096,
                "rate": None,
                "sl": 3,
                "qos_level": "rdma",
                "default_membership": "limited",
                "members": [{"keyword": "ALL_CAS", "membership": "full"}, {"keyword": "SELF", "membership": "full"}],
            },
        ),
        check=HAND,
        range_is=RULE,
        range_doc="names and P_Keys unique",
        doc="partitions.conf, qos-policy.conf match rules",
    ),
    Leaf(
        "infiniband.compute_partition",
        "str or null",
        DERIVED,
        nullable=True,
        check=HAND,
        default_doc="the first partition",
        range_is=RULE,
        range_doc="a defined partition",
        doc="its SL becomes `NCCL_IB_SL`",
    ),
    # ---- partition: docs/intent.md table 'partition' (docs header: '| key | type | default | range | meaning |')
    Leaf("infiniband.partitions[].name", "str", REQUIRED, check=HAND, range_is=RULE, range_doc="name pattern", doc="partition name"),
    Leaf(
        "infiniband.partitions[].pkey",
        "int or hex str",
        REQUIRED,
        check=HAND,
        range_is=RULE,
        range_doc="0x0001-0x7fff after masking bit 15",
        doc="`0x8001` and `0x0001` are the same partition (bit 15 is the membership bit)",
    ),
    Leaf("infiniband.partitions[].ipoib", "bool", default=True, doc="`ipoib` flag: create the IPoIB broadcast group"),
    # Its own message ("is not an IB MTU (one of ...)"): checked in _infiniband; the choices here are for the tests.
    Leaf(
        "infiniband.partitions[].mtu",
        "int or null",
        default=4096,
        choices=tuple(IB_MTU_CODES),
        what="an IB MTU",
        nullable=True,
        check=HAND,
        doc="`mtu=` IBTA code 1-5",
    ),
    Leaf(
        "infiniband.partitions[].rate",
        "int or null",
        default=None,
        low=2,
        high=22,
        what="an IBTA rate code",
        nullable=True,
        range_doc="(IBTA rate code)",
        doc="`rate=` (e.g. 3 = 10, 7 = 40, 16 = 100, 17 = 200, 21 = 400 Gb/s)",
    ),
    Leaf(
        "infiniband.partitions[].sl",
        "int or null",
        default=None,
        low=0,
        high=15,
        what="a service level",
        nullable=True,
        doc="`sl=`: SL of SA PathRecords for this P_Key; null: not written",
    ),
    Leaf(
        "infiniband.partitions[].qos_level",
        "str or null",
        None,
        nullable=True,
        check=HAND,
        default_doc="(= `default`)",
        range_is=RULE,
        range_doc="a defined level",
        doc="qos-match-rule `pkey → qos-level-name`",
    ),
    Leaf("infiniband.partitions[].default_membership", "str", default="limited", choices=MEMBERSHIPS, what="a membership", doc="`defmember=`"),
    Leaf(
        "infiniband.partitions[].members",
        "list",
        REQUIRED,
        check=HAND,
        min_len=1,
        doc=(
            "`{guid: '0x…16 hex', membership}` or `{keyword: %s, membership}`; a bare string is a "
            "GUID (`0x…`) or a keyword with `default_membership`" % "\\|".join(MEMBER_KEYWORDS)
        ),
    ),
    # ---- targets: docs/intent.md table 'targets' (docs header: '| key | type | default | range | meaning |')
    Leaf(
        "targets.tolerance_percent",
        "int or float",
        5,
        low=0,
        high=100,
        exclusive=True,
        check=HAND,
        doc="slack below a target before the gate fails (percent)",
    ),
    Leaf(
        "targets.require_transport",
        "str or null",
        choices=NCCL_TRANSPORTS,
        what="an NCCL transport",
        nullable=True,
        default=DERIVED,
        default_doc="`RoCE` (roce), `IB` (infiniband)",
        doc="transport NCCL must report",
    ),
    Leaf("targets.require_gdr", "bool", True, check=HAND, doc="GPUDirect RDMA must be in use; null turns the check off"),
    Leaf(
        "targets.collectives",
        "map",
        {},
        choices=COLLECTIVES,
        what="a collective",
        check=HAND,
        range_doc="(the keys; the nccl-tests binaries)",
        doc="per collective, a list of targets",
    ),
    Leaf(
        "targets.collectives.<c>[].min_size",
        "int or size str",
        REQUIRED,
        low=1,
        check=HAND,
        range_doc="(bytes)",
        doc="smallest message size the target applies to",
    ),
    Leaf(
        "targets.collectives.<c>[].max_size",
        "int, size str or null",
        None,
        low=1,
        nullable=True,
        check=HAND,
        default_doc="(no upper bound)",
        range_doc="(bytes), ≥ `min_size`",
        doc="largest size",
    ),
    Leaf(
        "targets.collectives.<c>[].min_busbw",
        "int, float or `auto`",
        REQUIRED,
        low=0,
        exclusive=True,
        check=HAND,
        doc="minimum bus bandwidth in **GB/s** (bytes, the unit of nccl-tests' `busbw` column); `auto`: derived from the hosts' NICs"
        " (NICs per host x link rate x a cited efficiency; all_reduce, all_gather, reduce_scatter, alltoall; docs/benchmark.md)",
    ),
    Leaf(
        "targets.node",
        "list",
        [],
        check=HAND,
        default_doc="(no node baseline)",
        range_is=ANY,
        doc="node baseline: one node's own GPUs (nccl-tests all_reduce_perf, one process, no MPI), a list of targets per GPU model",
    ),
    Leaf(
        "targets.node[].gpu_model",
        "str",
        REQUIRED,
        check=HAND,
        range_is=ANY,
        range_doc="as nccl-tests' device list names it, e.g. `NVIDIA H100 80GB HBM3`",
        doc="the GPU model the target applies to",
    ),
    Leaf("targets.node[].min_size", "int or size str", REQUIRED, low=1, check=HAND, range_doc="(bytes)", doc="smallest message size"),
    Leaf(
        "targets.node[].max_size",
        "int, size str or null",
        None,
        low=1,
        nullable=True,
        check=HAND,
        default_doc="(no upper bound)",
        range_doc="(bytes), ≥ `min_size`",
        doc="largest size",
    ),
    Leaf("targets.node[].min_busbw", "int or float", REQUIRED, low=0, exclusive=True, check=HAND, doc="minimum bus bandwidth in **GB/s**"),
    # ---- kubernetes: docs/intent.md table 'kubernetes' (docs header: '| key | type | default | range / values | meaning |')
    Leaf(
        "kubernetes.namespace",
        "str",
        "lossless-fabric",
        check=HAND,
        range_is=RULE,
        range_doc="DNS label",
        doc="namespace of the device plugin (cni `multi_nic_cni`; the Network Operator uses its own)",
    ),
    Leaf(
        "kubernetes.node_selector",
        "map str→str",
        {"feature.node.kubernetes.io/pci-15b3.present": "true"},
        check=HAND,
        default_doc="(NFD's Mellanox label)",
        range_is=RULE,
        range_doc='label keys/values; values are strings (quote `"true"`)',
        doc="nodes that run the plugin and must advertise every resource",
    ),
    Leaf(
        "kubernetes.cni",
        "str",
        default="multi_nic_cni",
        choices=K8S_CNIS,
        what="a CNI choice",
        doc=(
            "secondary network: Multi-NIC CNI (upstream suspended since v1.3.1) or the NVIDIA Network Operator (Helm chart + NicClusterPolicy);"
            " the other choice's section must be absent"
        ),
    ),
    Leaf(
        "kubernetes.device_plugin.image",
        "str",
        "ghcr.io/mellanox/k8s-rdma-shared-dev-plugin:v1.5.3",
        check=HAND,
        default_doc="; with `network_operator`: `<network_operator.repository>/k8s-rdma-shared-dev-plugin:<network_operator.version>`",
        range_is=RULE,
        range_doc="pinned: a tag other than `latest`, or `@sha256:` (a tag with `network_operator`)",
        doc="plugin image",
    ),
    Leaf(
        "kubernetes.device_plugin.resources",
        "list or null",
        DERIVED,
        nullable=True,
        check=HAND,
        min_len=1,
        default_doc=(
            f"one resource `rdma_shared_device_a`, `rdma_hca_max` {_RDMA_HCA_MAX}, selecting every host NIC's `netdev` (`if_names`); with no"
            " netdev: `vendors [15b3]` + `link_types` of the transport"
        ),
        doc="the plugin's `configList`",
    ),
    Leaf(
        "kubernetes.device_plugin.resources[].name",
        "str",
        REQUIRED,
        check=HAND,
        range_is=RULE,
        range_doc="`^[A-Za-z0-9]([A-Za-z0-9_]{0,61}[A-Za-z0-9])?$`, unique",
        doc="advertised as `<prefix>/<name>`",
    ),
    Leaf(
        "kubernetes.device_plugin.resources[].prefix",
        "str",
        "rdma",
        check=HAND,
        range_is=RULE,
        range_doc="DNS subdomain, not `*.kubernetes.io`/`*.k8s.io`",
        doc="`resourcePrefix`",
    ),
    Leaf(
        "kubernetes.device_plugin.resources[].rdma_hca_max",
        "int",
        default=_RDMA_HCA_MAX,
        low=1,
        high=10000,
        what="a pod count per node",
        doc="pods that may share the resource per node (`rdmaHcaMax`)",
    ),
    Leaf(
        "kubernetes.device_plugin.resources[].selectors",
        "map",
        REQUIRED,
        check=HAND,
        range_is=RULE,
        range_doc="at least one non-empty list",
        doc=(
            "`vendors` / `device_ids` (4 lower-case hex digits as strings: `'15b3'`, `'1021'`), `drivers` (`mlx5_core`), `if_names` (netdevs), "
            "`link_types` (`ether`, `infiniband`); OR within a list, AND across lists"
        ),
    ),
    Leaf(
        "kubernetes.multi_nic_cni.namespace",
        "str",
        "multi-nic-cni-operator",
        check=HAND,
        range_is=RULE,
        range_doc="DNS label",
        doc="namespace of the controller (and of the `multi-nicd` daemon it creates)",
    ),
    Leaf(
        "kubernetes.multi_nic_cni.version",
        "str",
        "v1.3.1",
        check=HAND,
        range_is=RULE,
        range_doc="`vX.Y.Z`",
        doc="release: the CRDs the role ships for it, the controller image tag; the controller's release fixes the daemon image",
    ),
    Leaf(
        "kubernetes.multi_nic_cni.controller_image",
        "str",
        DERIVED,
        check=HAND,
        default_doc="`ghcr.io/foundation-model-stack/multi-nic-cni-controller:<version>`",
        range_is=RULE,
        range_doc="pinned",
        doc="",
    ),
    Leaf(
        "kubernetes.multi_nic_cni.network.name",
        "str",
        "multinic-rdma",
        check=HAND,
        range_is=RULE,
        range_doc="DNS label",
        doc="MultiNicNetwork name = the net-attach-def name pods annotate",
    ),
    Leaf(
        "kubernetes.multi_nic_cni.network.plugin",
        "str",
        default="macvlan",
        choices=K8S_MNC_PLUGINS,
        what="a Multi-NIC CNI plugin",
        doc="main CNI plugin; `mellanox` (host-device for GPUDirect RoCE) needs the Network Operator's `sriovDevicePlugin` (a warning says so)",
    ),
    Leaf(
        "kubernetes.multi_nic_cni.network.ipam",
        "str",
        choices=K8S_MNC_IPAMS,
        what="a Multi-NIC CNI IPAM",
        default=DERIVED,
        default_doc="`host-device-ipam` for `mellanox`, else `multi-nic-ipam`",
        doc="`host-device-ipam` only with `mellanox`, and `mellanox` only with it",
    ),
    Leaf(
        "kubernetes.multi_nic_cni.network.subnet",
        "str",
        "172.30.0.0/16",
        check=HAND,
        default_doc='; `""` with `host-device-ipam`',
        range_is=RULE,
        range_doc="IPv4 CIDR, host bits zero; must be absent with `host-device-ipam`",
        doc="pod address space of the network",
    ),
    Leaf(
        "kubernetes.multi_nic_cni.network.master_nets",
        "list of CIDR",
        (),
        check=HAND,
        default_doc="(every secondary NIC the daemon finds)",
        range_is=RULE,
        range_doc="IPv4 CIDRs",
        doc="host subnets whose NICs may be masters (`masterNets`)",
    ),
    Leaf(
        "kubernetes.multi_nic_cni.network.attach_policy.strategy",
        "str",
        default="none",
        choices=K8S_ATTACH_STRATEGIES,
        what="an attach strategy",
        doc="how many / which masters a pod gets",
    ),
    Leaf(
        "kubernetes.multi_nic_cni.network.attach_policy.target",
        "str or null",
        None,
        nullable=True,
        check=HAND,
        range_is=RULE,
        range_doc="`<n>Gbps`, `<n>Mbps`, `<n>Kbps`; required for `costOpt`, `perfOpt`",
        doc="bandwidth target",
    ),
    Leaf(
        "kubernetes.multi_nic_cni.network.namespaces",
        "list",
        (),
        check=HAND,
        default_doc="(every namespace)",
        range_is=RULE,
        range_doc="DNS labels",
        doc="where the controller creates the net-attach-def",
    ),
    Leaf(
        "kubernetes.multi_nic_cni.network.mtu",
        "int or null",
        low=1280,
        high=9216,
        what="an MTU",
        nullable=True,
        check=HAND,  # checked in _kubernetes from this range, with the cross-key rule (<= roce.mtu.host)
        default=DERIVED,
        default_doc="`roce.mtu.host` (null with `mellanox`)",
        range_doc=", ≤ `roce.mtu.host`",
        doc="MTU of the macvlan/ipvlan child interface",
    ),
    Leaf(
        "kubernetes.network_operator.namespace",
        "str",
        "nvidia-network-operator",
        check=HAND,
        range_is=RULE,
        range_doc="DNS label",
        doc="Helm release namespace",
    ),
    Leaf("kubernetes.network_operator.chart_version", "str", "26.4.1", check=HAND, range_is=RULE, range_doc="`X.Y.Z`", doc="chart `nvidia/network-operator`"),
    Leaf(
        "kubernetes.network_operator.version",
        "str",
        "network-operator-v26.4.1",
        check=HAND,
        range_is=RULE,
        range_doc="image tag",
        doc="tag of every NicClusterPolicy component (device plugin, Multus, CNI plugins, NV-IPAM)",
    ),
    Leaf(
        "kubernetes.network_operator.repository",
        "str",
        "nvcr.io/nvidia/mellanox",
        check=HAND,
        range_is=RULE,
        range_doc="image repository",
        doc="repository of those components",
    ),
    # ---- topology: docs/intent.md table 'topology' (docs header: '| key | type | default | range / values | meaning |').
    # All checked in _topology._pattern (its messages, the pattern's required keys, the cross-key rules); the ranges
    # and choices here are the ones its ctx.integer / check_int / choice calls enforce, for the tests.
    Leaf(
        "topology.pattern",
        "str",
        choices=PATTERNS,
        what="a topology pattern",
        nullable=True,  # null is absent: no pattern
        default=ABSENT,
        check=HAND,
        doc="generate the links; without it only `switches` / `ib_switch_type` may be given",
    ),
    Leaf("topology.scalable_units", "int", REQUIRED, low=1, high=1024, what="a count of scalable units", check=HAND, doc="SUs"),
    Leaf(
        "topology.hosts_per_unit",
        "int",
        low=1,
        high=1024,
        what="a count of hosts per scalable unit",
        default=REQUIRED,
        check=HAND,
        doc="hosts per SU (at most 100,000 hosts in all)",
    ),
    Leaf(
        "topology.rails",
        "int",
        low=1,
        high=_MAX_RAILS,
        what="a count of rails (NICs per host)",
        default=REQUIRED,
        check=HAND,
        doc="rails = NICs per host taking part",
    ),
    Leaf(
        "topology.leaves_per_rail",
        "int",
        default=1,
        low=1,
        high=64,
        what="a count of leaves per rail and scalable unit",
        check=HAND,
        range_doc=", divides `hosts_per_unit`",
        doc="leaves per rail and SU; host h of the SU goes to leaf `h // (hosts_per_unit / leaves_per_rail)`",
    ),
    Leaf("topology.spines", "int", default=0, low=0, high=1024, what="a count of spines", check=HAND, doc="spines; 0: leaves only"),
    Leaf(
        "topology.uplinks_per_spine",
        "int",
        default=1,
        low=1,
        high=64,
        what="a count of links from each leaf to each spine",
        check=HAND,
        doc="links from each leaf to each spine",
    ),
    # parse_speed takes '400g' and '0400G' too: not a plain choice, so no choices here.
    Leaf(
        "topology.speed",
        "str",
        REQUIRED,
        check=HAND,
        range_is=RULE,
        range_doc="a link speed (as `ports.<ifname>.speed` above)",
        doc="the speed of every generated link; both ends' `speed` must equal it",
    ),
    Leaf(
        "topology.names.host",
        "template",
        "gpu{host}",
        check=HAND,
        range_is=RULE,
        range_doc="fields `{unit}` `{index}` `{host}` (1-based: SU, host in SU, host overall)",
        doc="inventory host names",
    ),
    Leaf(
        "topology.names.leaf",
        "template",
        "leaf-su{unit}-r{rail}",
        check=HAND,
        range_is=RULE,
        range_doc="`{unit}`, `{rail}` (0-based, as NIC rails), `{leaf}` (1-based within rail and SU)",
        doc="leaf names",
    ),
    Leaf("topology.names.spine", "template", "spine{spine}", check=HAND, range_is=RULE, range_doc="`{spine}` (1-based)", doc="spine names"),
    Leaf(
        "topology.ports.leaf_hosts.name",
        "template",
        "swp{n}",
        check=HAND,
        range_is=RULE,
        range_doc="`{n}`: port number",
        doc="leaf port of the i-th host of that leaf: number `first + i`",
    ),
    Leaf(
        "topology.ports.leaf_hosts.first",
        "int",
        default=1,
        low=0,
        high=100000,
        what="a port number",
        nullable=True,  # null: the default
        check=HAND,
        doc="number of a leaf's first host port",
    ),
    Leaf(
        "topology.ports.leaf_spines.name",
        "template",
        "swp{n}",
        check=HAND,
        range_is=RULE,
        range_doc="`{n}`: port number",
        doc="leaf uplink k to spine s: number `first + s × uplinks_per_spine + k`",
    ),
    Leaf(
        "topology.ports.leaf_spines.first",
        "int or null",
        low=0,
        high=100000,
        what="a port number",
        nullable=True,
        default=DERIVED,
        check=HAND,
        default_doc="right after the host ports (`leaf_hosts.first + hosts_per_unit / leaves_per_rail`)",
        doc="number of a leaf's first uplink",
    ),
    Leaf(
        "topology.ports.spine_leaves.name",
        "template",
        "swp{n}",
        check=HAND,
        range_is=RULE,
        range_doc="`{n}`: port number",
        doc="spine port to leaf L (leaves in SU, rail, leaf order): number `first + L × uplinks_per_spine + k`",
    ),
    Leaf(
        "topology.ports.spine_leaves.first",
        "int",
        default=1,
        low=0,
        high=100000,
        what="a port number",
        nullable=True,  # null: the default
        check=HAND,
        doc="number of a spine's first leaf port",
    ),
    Leaf(
        "topology.switches",
        "list of names",
        (),
        check=HAND,
        range_is=RULE,
        range_doc="InfiniBand only; each a name",
        doc="InfiniBand switches named by hand-written NIC peers (they are not inventory hosts)",
    ),
    Leaf(
        "topology.ib_switch_type",
        "name",
        ABSENT,
        check=HAND,
        range_is=RULE,
        range_doc="InfiniBand only; required once IB links are described",
        doc=(
            "the switch system type written into the topology file: the IBNL name `ibdiagnet --write_topo_file` prints for your switches "
            "(we ship no list: unverified which names a given ibdiagnet knows)"
        ),
    ),
    # ---- tenants: docs/intent.md table 'tenants' (docs header: '| key | type | default | range / values | meaning |').
    # Checked in _tenants (after the devices: hosts are inventory hosts, partition members their NICs' GUIDs); the
    # ranges and choices here are the ones its checks enforce.
    Leaf("tenants[].name", "str", REQUIRED, check=HAND, range_is=RULE, range_doc="name pattern; unique", doc="the tenant's name"),
    Leaf(
        "tenants[].hosts",
        "list of str",
        ABSENT,
        check=HAND,
        min_len=1,
        range_doc="; inventory hosts of kind `host`; exactly one of `hosts` / `host_group`",
        doc="the tenant's GPU hosts",
    ),
    Leaf(
        "tenants[].host_group",
        "str",
        ABSENT,
        check=HAND,
        range_is=RULE,
        range_doc="an inventory group holding at least one host of kind `host`",
        doc="the tenant's GPU hosts as an inventory group (its hosts of kind `host`)",
    ),
    Leaf(
        "tenants[].namespace",
        "str or null",
        None,
        nullable=True,
        check=HAND,
        range_is=RULE,
        range_doc="a DNS label; unique among the tenants of one cluster (one `kubeconfig`)",
        doc="Kubernetes: the tenant's namespace",
    ),
    Leaf(
        "tenants[].kubeconfig",
        "str or null",
        None,
        nullable=True,
        check=HAND,
        range_is=RULE,
        range_doc="an absolute path",
        doc="Kubernetes: the tenant's own kubeconfig (a virtual cluster's); null: the fabric's cluster",
    ),
    Leaf(
        "tenants[].vlan",
        "int or null",
        None,
        low=1,
        high=4094,
        what="a VLAN ID",
        nullable=True,
        check=HAND,
        range_doc="; RoCE only; unique",
        doc="RoCE: the tenant's VLAN",
    ),
    Leaf(
        "tenants[].partition",
        "map",
        ABSENT,
        check=HAND,
        range_is=ANY,
        range_doc="InfiniBand: required; RoCE: absent",
        doc="InfiniBand: the tenant's partition, generated as an `infiniband.partitions` entry whose members are the tenant hosts' NIC GUIDs",
    ),
    Leaf(
        "tenants[].partition.name",
        "str",
        DERIVED,
        check=HAND,
        default_doc="the tenant's name",
        range_is=RULE,
        range_doc="name pattern; unique among all partitions",
        doc="partition name in partitions.conf",
    ),
    Leaf(
        "tenants[].partition.pkey",
        "int or hex str",
        REQUIRED,
        check=HAND,
        range_is=RULE,
        range_doc="0x0001-0x7ffe after masking bit 15; unique among the tenants and `infiniband.partitions`",
        doc="the tenant's P_Key (not the default partition's 0x7fff)",
    ),
    Leaf(
        "tenants[].partition.membership",
        "str",
        "full",
        choices=("full", "limited"),
        what="a tenant membership",
        doc="membership of the tenant's ports in its partition (`limited`: they reach only full members, such as the SM port, not each other)",
    ),
    Leaf("tenants[].partition.ipoib", "bool", default=True, doc="`ipoib` flag: create the partition's IPoIB broadcast group"),
    Leaf(
        "tenants[].qos_level",
        "str or null",
        None,
        nullable=True,
        check=HAND,
        default_doc="(= `default`)",
        range_is=RULE,
        range_doc="InfiniBand only; a defined `infiniband.qos.levels` name",
        doc="the QoS level (and so the SL) of the tenant's partition",
    ),
    # ---- device: lossless_fabric_device, one per inventory host (the kinds table and the notes below it say which kind takes what)
    Leaf(
        "lossless_fabric_device.kind",
        "str",
        REQUIRED,
        choices=DEVICE_KINDS,
        check=HAND,
        doc="what the host is; the keys below apply to the kinds named",
    ),
    Leaf(
        "lossless_fabric_device.platform",
        "str",
        REQUIRED,
        check=HAND,
        default_doc="(switch)",
        range_is=RULE,
        range_doc=", ".join(_SUPPORTED),
        doc="switch OS" + (" (%s %s registered, not yet supported)" % (", ".join(_PLANNED), "is" if len(_PLANNED) == 1 else "are") if _PLANNED else ""),
    ),
    Leaf(
        "lossless_fabric_device.ports.<ifname>.speed",
        "str",
        REQUIRED,
        check=HAND,
        range_is=RULE,
        range_doc=" ".join(f"`{name}`" for name in SPEEDS),
        doc="port speed (switch)",
    ),
    Leaf(
        "lossless_fabric_device.ports.<ifname>.cable_length_m",
        "int",
        low=1,
        high=10000,
        what="a cable length in metres",
        default=DERIVED,
        default_doc="`roce.cable_length_m`",
        doc="cable length of the port (headroom)",
    ),
    Leaf(
        "lossless_fabric_device.ports.<ifname>.description", "str", "", check=HAND, range_is=RULE, range_doc="description rules above", doc="port description"
    ),
    # peer and rail: checked in _topology (_Checker._resolve, _read_host), with the cabling rules
    Leaf(
        "lossless_fabric_device.ports.<ifname>.peer",
        "`{host, port}` or `{host, nic}`",
        ABSENT,
        check=HAND,
        range_is=RULE,
        range_doc="an inventory host's port (or an InfiniBand switch's port number) or NIC: see Cabling",
        doc="the other end of the port's cable (switch)",
    ),
    Leaf(
        "lossless_fabric_device.queue_buffer_bytes",
        "int",
        ABSENT,
        low=1024,
        high=2**40,
        what="a buffer size in bytes",
        check=HAND,
        range_doc="; above every port's ECN max threshold",
        doc="buffer of the RoCE queue (switch); required for junos, ignored elsewhere",
    ),
    Leaf(
        "lossless_fabric_device.nics[].name",
        "str",
        REQUIRED,
        check=HAND,
        range_is=RULE,
        range_doc="RDMA device name, unique per host",
        doc="the RDMA device (`mlx5_0`) (host)",
    ),
    Leaf(
        "lossless_fabric_device.nics[].netdev",
        "str",
        REQUIRED,
        check=HAND,
        default_doc="with RoCE",
        range_is=RULE,
        range_doc="interface name (at most 15 characters), unique per host",
        doc="its network interface (host)",
    ),
    Leaf("lossless_fabric_device.nics[].speed", "str", REQUIRED, check=HAND, range_is=RULE, range_doc="as ports", doc="NIC speed (host)"),
    Leaf(
        "lossless_fabric_device.nics[].guid", "str or null", None, nullable=True, check=HAND, range_is=RULE, range_doc="`0x` + 16 hex", doc="port GUID (host)"
    ),
    # SR-IOV virtual functions (issue 37, C1): NVIDIA's MLNX_OFED / DOCA SR-IOV chapter: ConnectX adapters expose
    # "up to 127 virtual instances (Virtual Functions (VFs)) for each port" (the firmware's NUM_OF_VFS may allow fewer).
    Leaf(
        "lossless_fabric_device.nics[].vfs",
        "int",
        0,
        low=0,
        high=127,
        what="a VF count",
        range_doc="(ConnectX: up to 127 VFs per port, NVIDIA MLNX_OFED \"Single Root IO Virtualization\"); on InfiniBand with `vf_guids`",
        doc="SR-IOV virtual functions to create on the NIC (host; both transports)",
    ),
    Leaf(
        "lossless_fabric_device.nics[].vf_guids",
        "list",
        (),
        check=HAND,
        range_is=RULE,
        range_doc=(
            "InfiniBand only: exactly `vfs` GUIDs (`0x` + 16 hex), VF i gets the i-th; unique in the fabric, never a NIC's `guid`"
        ),
        doc="the VFs' port GUIDs (host): members of its tenant's partition, written to the host's SR-IOV operator GUID file",
    ),
    # The SR-IOV operator's GUID file names a PF by pciAddress (what it looks the GUIDs up by: the PF's PCI address in
    # sysfs form) or pfGuid (compared with the netdev's hardware address, 20 octets on IPoIB: never an 8-octet GUID).
    Leaf(
        "lossless_fabric_device.nics[].pci",
        "str or null",
        None,
        nullable=True,
        check=HAND,
        range_is=RULE,
        range_doc="PCI address `DDDD:BB:DD.F` in lower-case hex, as sysfs names it; required with `vf_guids`",
        doc="the NIC's PCI address (host): names the PF in the host's SR-IOV operator GUID file",
    ),
    Leaf(
        "lossless_fabric_device.nics[].rail",
        "int or null",
        None,
        low=0,
        high=_MAX_RAILS - 1,
        what="a rail",
        nullable=True,
        check=HAND,
        range_doc=", one NIC per rail on a host",
        doc="the NIC's rail (host): orders the host's `nccl_ib_hca`; with the pattern, the NIC of rail r",
    ),
    Leaf(
        "lossless_fabric_device.nics[].stack",
        "str",
        ABSENT,
        choices=NIC_STACKS,
        check=HAND,
        doc="the NIC's software stack (host), over the one nic_qos detects from the bound driver (docs/hosts.md)",
    ),
    Leaf(
        "lossless_fabric_device.nics[].peer",
        "`{host, port}`",
        ABSENT,
        check=HAND,
        range_is=RULE,
        range_doc="a switch port (an InfiniBand switch's port number): see Cabling",
        doc="the other end of the NIC's cable (host)",
    ),
    Leaf("lossless_fabric_device.gpus", "int", default=8, low=1, high=16, what="a GPU count", doc="GPUs of the host (host)"),
    Leaf(
        "lossless_fabric_device.role",
        "str",
        REQUIRED,
        choices=SM_ROLES,
        what="an SM role",
        doc="`sm_priority` from `sm.priority` (master) or `sm.standby_priority` (subnet_manager)",
    ),
)

BY_PATH: dict[str, Leaf] = {leaf.path: leaf for leaf in LEAVES}

# The docs tables: name -> (path prefix, header). A leaf belongs to the table with the longest
# prefix it starts with (so partition keys land in 'partition', not in 'infiniband').
TABLES: dict[str, tuple[str, str]] = {
    "top": ("", "| key | type | default | range / values | meaning |"),
    "roce": ("roce.", "| key | type | default | range | meaning / who gets it |"),
    "infiniband": ("infiniband.", "| key | type | default | range | meaning / who gets it |"),
    "partition": ("infiniband.partitions[].", "| key | type | default | range | meaning |"),
    "targets": ("targets.", "| key | type | default | range | meaning |"),
    "kubernetes": ("kubernetes.", "| key | type | default | range / values | meaning |"),
    "topology": ("topology.", "| key | type | default | range / values | meaning |"),
    "tenants": ("tenants[].", "| key | type | default | range / values | meaning |"),
    "device": ("lossless_fabric_device.", "| key | type | default | range / values | meaning |"),
}


def table_of(leaf: Leaf) -> str:
    if "." not in leaf.path:
        return "top"
    best = max((name for name, (prefix, _h) in TABLES.items() if prefix and leaf.path.startswith(prefix)), key=lambda n: len(TABLES[n][0]))
    return best


def value(ctx: Any, src: dict, leaf_path: str, path: str, default: Any = _ROW) -> Any:
    """Check the leaf ``leaf_path`` in the mapping ``src`` found at ``path``; return its value or BAD.

    Uses the row's default, range, choices and noun, through the collector's own checks
    (so the messages are those of Ctx.integer/boolean/choice).  ``default`` replaces the row's
    where it is derived from other keys (its ``default_doc`` says how); a marker default
    (required, derived, none) reads as absent."""
    leaf = BY_PATH[leaf_path]
    if leaf.check != SCHEMA:
        raise KeyError(f"{leaf_path}: validated by hand, not from the schema")
    if default is _ROW:
        default = leaf.default if leaf.has_default() else None
    key = leaf_path.rsplit(".", 1)[-1]
    if leaf.type == "bool":
        return ctx.boolean(src, key, path, default)
    if leaf.choices is not None:
        return ctx.choice(src, key, path, default, leaf.choices, leaf.what, nullable=leaf.nullable)
    return ctx.integer(src, key, path, default, leaf.low, leaf.high, leaf.what, nullable=leaf.nullable)


def _with_note(cell: str, note: str | None) -> str:
    if not note:
        return cell
    return f"{cell}{'' if note[0] in ',;' else ' '}{note}"


def default_cell(leaf: Leaf) -> str:
    """The docs' default column: the value (or the marker's word), then the row's note."""
    if not leaf.has_default():
        word = str(leaf.default) if leaf.default is not DERIVED else "derived:"
        return _with_note(word, leaf.default_doc)
    if leaf.default is None or isinstance(leaf.default, (bool, int)):
        cell = _flow(leaf.default)
    else:
        cell = f"`{_flow(leaf.default)}`"
    return _with_note(cell, leaf.default_doc)


def _bounds(leaf: Leaf) -> str:
    if leaf.low is None and leaf.high is None:
        return ""
    if leaf.exclusive:
        if leaf.high is None:
            return f"> {leaf.low}"
        return f"{leaf.low} < x < {leaf.high}" if leaf.low is not None else f"< {leaf.high}"
    if leaf.high is None:
        return f"≥ {leaf.low}"
    if leaf.low is None:
        return f"≤ {leaf.high}"
    return f"{leaf.low}-{leaf.high}"


def range_cell(leaf: Leaf) -> str:
    """The docs' range column: list length, bounds or choices (each entry's, for a list), then the row's note."""
    parts = []
    if leaf.min_len is not None or leaf.max_len is not None:
        if leaf.min_len == leaf.max_len:
            parts.append(f"exactly {leaf.min_len} entries")
        elif leaf.max_len is None:
            parts.append(f"≥ {leaf.min_len} {'entry' if leaf.min_len == 1 else 'entries'}")
        else:
            parts.append(f"{leaf.min_len or 0}-{leaf.max_len} entries")
    each = "each " if parts else ""
    if leaf.low is not None or leaf.high is not None:
        parts.append(each + _bounds(leaf))
    if leaf.choices is not None:
        parts.append(each + ", ".join(f"`{c}`" for c in leaf.choices))
    if not parts:
        cell = "derived:" if leaf.range_is is DERIVED else ""
        return _with_note(cell, leaf.range_doc) if cell else (leaf.range_doc or "")
    return _with_note("; ".join(parts), leaf.range_doc)


def render_table(name: str) -> str:
    """The Markdown table ``name`` of docs/intent.md, header and separator included."""
    prefix, header = TABLES[name]
    lines = [header, "|---|---|---|---|---|"]
    for leaf in LEAVES:
        if table_of(leaf) != name:
            continue
        key = leaf.path[len(prefix) :]
        cells = [f"`{key}`", leaf.type, default_cell(leaf), range_cell(leaf), leaf.doc]
        lines.append("|" + "|".join(f" {cell} " if cell else " " for cell in cells) + "|")
    return "\n".join(lines)


MARK_BEGIN = "<!-- intent-schema:{name} begin: generated from plugins/module_utils/_intent/_schema.py by tools/intent_docs.py; edit the schema -->"
MARK_END = "<!-- intent-schema:{name} end -->"


def rewrite_docs(text: str) -> str:
    """``text`` (docs/intent.md) with every table between its markers rendered anew from ``LEAVES``.

    Raises ValueError when a table's markers are missing or out of order, so a table cannot
    silently stop being generated."""
    for name in TABLES:
        begin, end = MARK_BEGIN.format(name=name), MARK_END.format(name=name)
        start = text.find(begin)
        stop = text.find(end)
        if start < 0 or stop < start or text.count(begin) != 1 or text.count(end) != 1:
            raise ValueError(f"docs/intent.md: table {name!r}: need exactly one {begin!r} followed by one {end!r}")
        text = text[: start + len(begin)] + "\n\n" + render_table(name) + "\n\n" + text[stop:]
    return text
