# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""The fabric intent: schema, validation and every derived value.

One description of the fabric (inventory variable ``lossless_fabric``) plus
one per device (``lossless_fabric_device``) go in; a plan comes out that
names every priority, DSCP, threshold, OpenSM file and NCCL variable each
device or benchmark gets.  Nothing downstream re-derives these values, so a
switch, a NIC and an NCCL job cannot disagree (see docs/intent.md).

Pure Python standard library: the action plugin, filters and unit tests all
import it without Ansible.

The package, one module per part (each imports only those above it):

- ``_tables``: speeds, pause quanta, vocabularies, the platform registry, name patterns, IntentError;
- ``_schema``: every leaf key as data (path, type, default, range, doc): validation of the scalar
  keys and the tables of docs/intent.md (tools/intent_docs.py) both come from it;
- ``_derive``: parse_speed, roce_tos, ecn_defaults, headroom;
- ``_checks``: the error collector ``_Ctx`` and its type/range/text checks;
- ``_roce``, ``_infiniband``, ``_targets``, ``_kubernetes``: the sections of ``lossless_fabric``;
- ``_devices``: ``lossless_fabric_device`` (switches, hosts, subnet managers); the cabling is
  ``_topology`` (a sibling module), which gets this package as ``ix``;
- ``_plan``: ``validate``, ``build_plan`` and every per-device plan.

Callers keep importing the package (``from ...module_utils import _intent``; ``_intent.X``):
it re-exports every name of every part, private ones included.
"""

from __future__ import annotations

from ansible_collections.lossless.fabric.plugins.module_utils._intent._checks import (
    _Ctx,  # noqa: F401
    _key_repr,  # noqa: F401
    _natural_key,  # noqa: F401
    _ok,  # noqa: F401
    _suggest,  # noqa: F401
    _type_name,  # noqa: F401
    unsafe_reason,  # noqa: F401
)
from ansible_collections.lossless.fabric.plugins.module_utils._intent._derive import (
    _ceil_kib,  # noqa: F401
    _derived_ecn_defaults,  # noqa: F401
    _is_int,  # noqa: F401
    _is_number,  # noqa: F401
    _platform_ecn_defaults,  # noqa: F401
    ecn_defaults,  # noqa: F401
    headroom,  # noqa: F401
    parse_size,  # noqa: F401
    parse_speed,  # noqa: F401
    roce_tos,  # noqa: F401
)
from ansible_collections.lossless.fabric.plugins.module_utils._intent._devices import (
    _DEVICE_KEYS,  # noqa: F401
    _NIC_KEYS,  # noqa: F401
    _PORT_KEYS,  # noqa: F401
    _eos_device,  # noqa: F401
    _junos_device,  # noqa: F401
    _normalize_device,  # noqa: F401
    _normalize_host,  # noqa: F401
    _normalize_switch,  # noqa: F401
    _port_ecn_ok,  # noqa: F401
    _release,  # noqa: F401
    _speed,  # noqa: F401
    _supported_platforms,  # noqa: F401
    canonical_port,  # noqa: F401
    check_port_names,  # noqa: F401
)
from ansible_collections.lossless.fabric.plugins.module_utils._intent._infiniband import (
    _DEFAULT_LEVELS,  # noqa: F401
    _DEFAULT_PARTITIONS,  # noqa: F401
    _DEFAULT_SL2VL,  # noqa: F401
    _DEFAULT_VLARB_HIGH,  # noqa: F401
    _DEFAULT_VLARB_LOW,  # noqa: F401
    _IB_KEYS,  # noqa: F401
    _PARTITION_KEYS,  # noqa: F401
    _QOS_KEYS,  # noqa: F401
    _SM_KEYS,  # noqa: F401
    _compute_sl,  # noqa: F401
    _ib_cross_checks,  # noqa: F401
    _ib_section,  # noqa: F401
    _level_sl,  # noqa: F401
    _member,  # noqa: F401
    _partition,  # noqa: F401
    _pkey,  # noqa: F401
    _sl2vl,  # noqa: F401
    _vlarb,  # noqa: F401
)
from ansible_collections.lossless.fabric.plugins.module_utils._intent._kubernetes import (
    _DNS_LABEL_RE,  # noqa: F401
    _DNS_SUBDOMAIN_RE,  # noqa: F401
    _K8S_ATTACH_KEYS,  # noqa: F401
    _K8S_DP_KEYS,  # noqa: F401
    _K8S_DRIVER_RE,  # noqa: F401
    _K8S_IMAGE_RE,  # noqa: F401
    _K8S_KEYS,  # noqa: F401
    _K8S_LABEL_KEY_RE,  # noqa: F401
    _K8S_LABEL_VALUE_RE,  # noqa: F401
    _K8S_MNC_KEYS,  # noqa: F401
    _K8S_NET_KEYS,  # noqa: F401
    _K8S_NETOP_KEYS,  # noqa: F401
    _K8S_NETOP_TAG_RE,  # noqa: F401
    _K8S_NS_RULE,  # noqa: F401
    _K8S_PCI_ID_RE,  # noqa: F401
    _K8S_PLUGIN_SPELLINGS,  # noqa: F401
    _K8S_REPOSITORY_RE,  # noqa: F401
    _K8S_RESOURCE_KEYS,  # noqa: F401
    _K8S_RESOURCE_RE,  # noqa: F401
    _K8S_SELECTOR_KEYS,  # noqa: F401
    _K8S_TARGET_RE,  # noqa: F401
    _K8S_VERSION_RE,  # noqa: F401
    K8S_DEFAULTS,  # noqa: F401
    _k8s_attach_policy,  # noqa: F401
    _k8s_choice,  # noqa: F401
    _k8s_cidr,  # noqa: F401
    _k8s_image,  # noqa: F401
    _k8s_label_map,  # noqa: F401
    _k8s_list,  # noqa: F401
    _k8s_mapping,  # noqa: F401
    _k8s_multi_nic,  # noqa: F401
    _k8s_network,  # noqa: F401
    _k8s_network_operator,  # noqa: F401
    _k8s_pattern,  # noqa: F401
    _k8s_resource,  # noqa: F401
    _k8s_resources,  # noqa: F401
    _k8s_selectors,  # noqa: F401
    _k8s_text,  # noqa: F401
    _kubernetes_derive,  # noqa: F401
    _kubernetes_section,  # noqa: F401
)
from ansible_collections.lossless.fabric.plugins.module_utils._intent._plan import (
    _TOP_KEYS,  # noqa: F401
    _dscp_map,  # noqa: F401
    _dscp_map_full,  # noqa: F401
    _fabric_mtu_default,  # noqa: F401
    _ib_host_plan,  # noqa: F401
    _junos_plan,  # noqa: F401
    _level_name,  # noqa: F401
    _members_text,  # noqa: F401
    _nccl_env,  # noqa: F401
    _nic_list,  # noqa: F401
    _normalize,  # noqa: F401
    _normalize_intent,  # noqa: F401
    _partitions_conf,  # noqa: F401
    _platform_notes,  # noqa: F401
    _qos_policy_conf,  # noqa: F401
    _roce_host_plan,  # noqa: F401
    _share_bandwidth,  # noqa: F401
    _sm_plan,  # noqa: F401
    _split_percent,  # noqa: F401
    _summary,  # noqa: F401
    _switch_plan,  # noqa: F401
    build_plan,  # noqa: F401
    validate,  # noqa: F401
)
from ansible_collections.lossless.fabric.plugins.module_utils._intent._roce import (
    _ECN_KEYS,  # noqa: F401
    _HEADROOM_KEYS,  # noqa: F401
    _ROCE_KEYS,  # noqa: F401
    _WATCHDOG_KEYS,  # noqa: F401
    _port_ecn,  # noqa: F401
    _roce_cross_checks,  # noqa: F401
    _roce_section,  # noqa: F401
)

# Every name of every section, private ones too: callers, tests and _topology (which gets this
# package as ``ix``) reach them as ``_intent.X``; the sections import each other directly.
from ansible_collections.lossless.fabric.plugins.module_utils._intent._tables import (
    _BAD,  # noqa: F401
    _DESCRIPTION_MAX,  # noqa: F401
    _DESCRIPTION_RE,  # noqa: F401
    _GUID_RE,  # noqa: F401
    _NAME_RE,  # noqa: F401
    _NETDEV_RE,  # noqa: F401
    _RDMA_DEV_RE,  # noqa: F401
    _SPEED_RE,  # noqa: F401
    _UINT32_MAX,  # noqa: F401
    COLLECTIVES,  # noqa: F401
    DEVICE_KINDS,  # noqa: F401
    K8S_ATTACH_STRATEGIES,  # noqa: F401
    K8S_CNIS,  # noqa: F401
    K8S_LINK_TYPES,  # noqa: F401
    K8S_MNC_IPAMS,  # noqa: F401
    K8S_MNC_PLUGINS,  # noqa: F401
    L2_OVERHEAD_BYTES,  # noqa: F401
    NCCL_TRANSPORTS,  # noqa: F401
    PAUSE_QUANTA,  # noqa: F401
    PLATFORMS,  # noqa: F401
    SM_ROLES,  # noqa: F401
    SPEEDS,  # noqa: F401
    TRANSPORTS,  # noqa: F401
    IntentError,  # noqa: F401
    Platform,  # noqa: F401
)
from ansible_collections.lossless.fabric.plugins.module_utils._intent._targets import (
    _TARGET_ENTRY_KEYS,  # noqa: F401
    _TARGET_KEYS,  # noqa: F401
    _target_entry,  # noqa: F401
    _targets_section,  # noqa: F401
    validate_targets,  # noqa: F401
)

__all__ = [
    "COLLECTIVES",
    "IntentError",
    "PAUSE_QUANTA",
    "PLATFORMS",
    "SPEEDS",
    "Platform",
    "build_plan",
    "ecn_defaults",
    "headroom",
    "parse_size",
    "parse_speed",
    "roce_tos",
    "unsafe_reason",
    "validate",
    "validate_targets",
]
