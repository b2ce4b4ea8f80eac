# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""The platform registry's records: one ``_base.Platform`` per switch OS, data only.

The intent validates a device with its platform's record (interface names, maximum MTU,
ECN starting values), and each driver module publishes its record as ``PLATFORM``. The
records live here, apart from the drivers, so that whatever imports the intent - host
modules among them (``nccl_*``, ``ib_fabric_verify`` through ``_ib_files``) - carries
vendor data and no switch driver code: imports point one way. Adding a platform is its
record here (``DRIVEN`` or ``PLANNED``) plus its driver module (docs/adding-a-platform.md).
"""

from __future__ import annotations

from ansible_collections.lossless.fabric.plugins.module_utils._platforms._base import Platform
from ansible_collections.lossless.fabric.plugins.module_utils._platforms.eos import _vendor as _vendor_eos
from ansible_collections.lossless.fabric.plugins.module_utils._platforms.junos import _vendor as _vendor_junos
from ansible_collections.lossless.fabric.plugins.module_utils._platforms.nvue import _vendor as _vendor_nvue
from ansible_collections.lossless.fabric.plugins.module_utils._platforms.nxos import _vendor as _vendor_nxos
from ansible_collections.lossless.fabric.plugins.module_utils._platforms.sonic import _vendor as _vendor_sonic

EOS = Platform(
    "eos",
    r"Ethernet[0-9]+(/[0-9]+){0,2}",
    "Ethernet1/1",
    # Largest interface MTU EOS accepts: 'mtu 68-9214' (reference switch-lossless-cli.md section 1.7).
    max_mtu=9214,
    # ECN starting values per speed: _vendor_eos (each entry's source or "unverified" there, docs/vendor-eos.md).
    ecn_defaults=_vendor_eos.ecn_defaults,
    # 'commit timer <hh:mm:ss>' (EOS manual, configuration sessions): the driver sends 00:00:01-23:59:59; a longer
    # timer would need a day field the command has no form for (the EOS range itself is unverified).
    commit_timer_s=(1, 24 * 3600 - 1),
    roce_errors=_vendor_eos.roce_errors,
    roce_modes=_vendor_eos.ROCE_MODES,
)

# requires_ports: the NVUE renderer sets the lossless class on the plan's ports and refuses a plan without any.
NVUE = Platform("nvue", r"swp[0-9]+(s[0-9]+)?", "swp1s0", ecn_defaults=_vendor_nvue.ecn_defaults, requires_ports=True,
                roce_modes=_vendor_nvue.ROCE_MODES)


def _no_ecn_bytes(speed_gbps: int) -> dict[str, int]:
    """Juniper publishes its RoCE starting values as a drop profile in percent of the queue buffer
    (fill-level 55-90 %, Juniper/jvd AI/ML backend QFX5240 configuration; _vendor_junos), not bytes per
    speed: there is no byte table. The plan derives the bytes from queue_buffer_bytes (ecn_defaults_of_buffer)."""
    raise ValueError(
        f"junos: no ECN byte defaults for {speed_gbps}G: Juniper's starting values are fill levels "
        f"{_vendor_junos.ECN_FILL_LEVEL_PERCENT[0]}-{_vendor_junos.ECN_FILL_LEVEL_PERCENT[1]} % of the queue buffer "
        "(derived from lossless_fabric_device.queue_buffer_bytes)"
    )


JUNOS = Platform(
    "junos",
    r"(et|xe|ge)-[0-9]+/[0-9]+/[0-9]+(:[0-9]+)?",
    "et-0/0/1:0",
    # max_mtu is the IP MTU; the media MTU the driver renders adds the 14-byte Ethernet header
    # and QFX takes at most 9216 (_vendor_junos, docs/vendor-junos.md).
    max_mtu=_vendor_junos.MAX_IP_MTU,
    max_mtu_why=(
        f" (mtu.switch is the IP MTU; Junos' media MTU adds the {_vendor_junos.L2_OVERHEAD_BYTES}-byte Ethernet header"
        f" and QFX takes at most {_vendor_junos.MEDIA_MTU_MAX})"
    ),
    ecn_in_percent_of_queue_buffer=True,
    ecn_defaults=_no_ecn_bytes,
    ecn_defaults_of_buffer=_vendor_junos.ecn_defaults_bytes,
    # 'commit confirmed <minutes>', 1 through 65,535 minutes (Juniper's Junos XML protocol guide, <confirm-timeout>;
    # junos/_driver.py _CONFIRM_MINUTES_MAX has the citation).
    commit_timer_s=(60, 65535 * 60),
    roce_errors=_vendor_junos.roce_errors,
    ecn_of_buffer_error=_vendor_junos.fill_levels_error,
    roce_modes=_vendor_junos.ROCE_MODES,
)

SONIC = Platform(
    "sonic",
    # SONiC port names are CONFIG_DB PORT keys 'Ethernet<N>' (sonic-buildimage port_config.ini / platform.json).
    r"Ethernet[0-9]+",
    "Ethernet0",
    # sonic-port.yang: leaf mtu { type uint16 { range 68..9216; } } on 202505, 1..9216 in older releases (_vendor_sonic, docs/vendor-sonic.md).
    max_mtu=_vendor_sonic.MAX_MTU,
    # WRED_PROFILE green_min/max_threshold are 'units bytes' (sonic-wred-profile.yang). SONiC publishes no
    # per-speed RoCE starting values (qos_config.j2 and the platforms' qos.json.j2 differ per ASIC and SKU):
    # the collection's derived rule (ecn_defaults None).
    notes=(
        "{host}: platform sonic: the stock DSCP_TO_TC_MAP|AZURE puts DSCP {dscp} in a lossy traffic class "
        "(its lossless TCs 3 and 4 are fed by DSCP 3 and 4); the plan installs an explicit map, "
        "but 'config qos reload' restores the stock one and silently makes priority {priority} traffic lossy",
    ),
    # the SONiC renderer writes PORT_QOS_MAP, QUEUE and BUFFER_PG per port and refuses a plan without any
    requires_ports=True,
    roce_modes=_vendor_sonic.ROCE_MODES,
)

NXOS = Platform(
    "nxos",
    # Nexus 9000 front-panel ports: Ethernet<slot>/<port>, Ethernet<slot>/<port>/<breakout> (NX-OS interface naming).
    _vendor_nxos.INTERFACE_PATTERN,
    _vendor_nxos.INTERFACE_EXAMPLE,
    # Largest interface MTU NX-OS takes on a Nexus 9000: 'mtu' 576-9216, default 1500 (Cisco's NX-OS object model,
    # CiscoDevNet/terraform-provider-nxos gen/definitions/physical_interface.yaml, l1PhysIf mtu; its registry docs:
    # https://registry.terraform.io/providers/ciscodevnet/nxos/latest/docs/resources/physical_interface#mtu).
    # A Layer 2 port takes only 1500 or the system jumbo MTU (9216 by default): unverified on N9K (the Nexus
    # 7000's error text). docs/vendor-nxos.md.
    max_mtu=_vendor_nxos.MAX_MTU,
    # Cisco publishes no per-speed ECN starting values (its AI/ML blueprint gives one example queuing policy,
    # not a table): the collection's derived rule (ecn_defaults None).
    # 'configure replace ... commit-timeout <s>': 30-3600 s (_vendor_nxos.COMMIT_TIMEOUT_S_RANGE, with its source).
    commit_timer_s=_vendor_nxos.COMMIT_TIMEOUT_S_RANGE,
    roce_errors=_vendor_nxos.roce_errors,
    requires_ports=True,
    # The PFC watchdog is only switched on or off: its times have no sourced CLI syntax (docs/vendor-nxos.md).
    notes=(_vendor_nxos.WATCHDOG_TIMES_NOTE,),
    roce_modes=_vendor_nxos.ROCE_MODES,
)

# Platforms with a driver, in the registry's order; each name is also its module under _platforms.
DRIVEN: tuple[Platform, ...] = (EOS, NVUE, JUNOS, SONIC, NXOS)

# Platforms the intent knows but no driver configures yet (supported=False): the intent
# refuses them with "not supported yet", and their notes are recorded before the driver
# exists. A platform's record moves to DRIVEN when its driver lands. None today (nxos was the
# last, issue 19); tests use a monkeypatched record for the refusal.
PLANNED: tuple[Platform, ...] = ()


def registry() -> dict[str, Platform]:
    """The platform registry, name -> record: every driven platform (in DRIVEN order), then PLANNED.
    A fresh dict each call; ValueError when a name is twice in it. (That each driver module's
    PLATFORM is its record is the contract suite's test.)"""
    found: dict[str, Platform] = {}
    for record in (*DRIVEN, *PLANNED):
        if record.name in found:
            raise ValueError("platform %r is twice in the registry (_platforms/_records.py)" % record.name)
        found[record.name] = record
    return found
