#!/usr/bin/python
# Copyright: lossless.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
module: ib_fabric_verify
short_description: Compare an InfiniBand fabric snapshot and OpenSM files with the fabric intent
version_added: 0.1.0
description:
  - Compares the snapshot of M(lossless.fabric.ib_fabric_facts) with the intent and fails with the full list of mismatches in
    RV(mismatches), each naming the port, partition or file line, the expected and the observed value.
  - "Checks (those whose section the snapshot holds): C(topology) - switch, CA and link counts (O(expect)), every host NIC GUID
    of the plan present; C(ports) - every linked port Active, none below O(expect.min_width) / O(expect.min_speed); C(sm) - a
    master SM with the intent's C(sm.priority); C(sl2vl) / C(vlarb) - the tables of the intent's C(qos) on CA and switch
    ports; C(pkeys) - every partition member holds its P_Key with the right membership and no other CA port holds it;
    C(paths) - PathRecord SL per partition as the QoS policy sets it; C(counters) - error counters under O(expect.counters);
    C(tenants) - every tenant port holds its tenant's P_Key with the tenant's membership and no other tenant's, no partition
    lets ports of two tenants reach each other (both members, one full), and the SA returns no PathRecord between two
    tenants (C(docs/tenants.md)). A tenant's SR-IOV VF GUIDs (partition members the plan marks C(vf)) that are no port of
    the snapshot are listed in RV(not_verified), never counted as proven: upstream OpenSM shows no virtual ports."
  - With O(files), also checks the rendered OpenSM files offline (the opensm role does this before writing anything) -
    opensm.conf keys and values, partitions.conf grammar, unique P_Keys, member GUIDs present in the fabric (when O(facts)
    has the topology; the intent's VF GUIDs are let through, as OpenSM skips a member that is no port and ibnetdiscover
    does not list virtual ports), qos-policy.conf grammar with a DEFAULT level. With O(installed_files) it reports which files differ
    and which changed opensm.conf keys OpenSM only reads at start (RV(restart_keys)).
  - Pure comparison; never touches a device.
extends_documentation_fragment:
  - lossless.fabric._attributes
  - lossless.fabric._attributes.info_module
  - lossless.fabric._attributes.actiongroup_fabric
  - lossless.fabric._attributes.posix
options:
  intent:
    description: The validated intent, C(fabric_plan_result.intent).
    type: dict
    required: true
  devices:
    description: The per-host plans, C(fabric_plan_result.devices) (host NIC GUIDs for the topology check).
    type: dict
    default: {}
  facts:
    description: The snapshot, RV(lossless.fabric.ib_fabric_facts#module:ib_fabric).
    type: dict
  files:
    description: Rendered file contents to check offline.
    type: dict
    # One list of OpenSM files for both options (the YAML alias below), as _FILE_OPTIONS is for the spec.
    suboptions: &opensm_files
      opensm_conf:
        description: opensm.conf text.
        type: str
      partitions_conf:
        description: partitions.conf text.
        type: str
      qos_policy_conf:
        description: qos-policy.conf text.
        type: str
  installed_files:
    description: The files as installed now (same keys as O(files); a missing file is V(null)), to report what would change.
    type: dict
    suboptions: *opensm_files
  checks:
    description: Checks to run (default all whose data is present).
    type: list
    elements: str
    choices: [topology, ports, sm, sl2vl, vlarb, pkeys, paths, counters, tenants]
  expect:
    description: What the fabric should look like beyond the intent.
    type: dict
    default: {}
    suboptions:
      switches:
        description: Number of switches.
        type: int
      cas:
        description: Number of CAs (every host NIC and SM HCA is one).
        type: int
      links:
        description: Number of links.
        type: int
      min_width:
        description: Narrowest acceptable active link width.
        type: str
        choices: [1X, 2X, 4X, 8X, 12X]
      min_speed:
        description: Slowest acceptable active link speed (a simulator is fixed at what its topology says).
        type: str
        choices: [SDR, DDR, QDR, FDR10, FDR, EDR, HDR, NDR, XDR]
      counters:
        description:
          - perfquery counter name -> highest acceptable value, on every linked port.
          - Default is 0 for every error counter (C(SymbolErrorCounter), C(LinkErrorRecoveryCounter), C(LinkDownedCounter),
            C(PortRcvErrors), C(PortRcvRemotePhysicalErrors), C(PortRcvSwitchRelayErrors), C(PortXmitDiscards),
            C(PortXmitConstraintErrors), C(PortRcvConstraintErrors), C(LocalLinkIntegrityErrors),
            C(ExcessiveBufferOverrunErrors), C(VL15Dropped)); C(PortXmitWait) (congestion) only when named.
        type: dict
  fail_on_mismatch:
    description: Fail the task when there is a mismatch; V(false) returns them for a report.
    type: bool
    default: true
seealso:
  - module: lossless.fabric.ib_fabric_facts
author:
  - lossless.fabric contributors (@lossless-fabric)
"""

EXAMPLES = r"""
- name: Read the fabric
  lossless.fabric.ib_fabric_facts:
    partitions: "{{ fabric_plan_result.intent.infiniband.partitions }}"
  register: ib

- name: The fabric is what the intent says
  lossless.fabric.ib_fabric_verify:
    intent: "{{ fabric_plan_result.intent }}"
    devices: "{{ fabric_plan_result.devices }}"
    facts: "{{ ib.ib_fabric }}"
    expect:
      switches: 6
      links: 17
      min_width: 4X
      min_speed: HDR
      counters: {SymbolErrorCounter: 10, PortXmitDiscards: 0}

- name: The tenants are apart - each port in its own partition only, no path between two tenants
  lossless.fabric.ib_fabric_verify:
    intent: "{{ fabric_plan_result.intent }}"
    facts: "{{ ib.ib_fabric }}"
    checks: [tenants]

- name: Check rendered OpenSM files before writing them
  lossless.fabric.ib_fabric_verify:
    intent: "{{ fabric_plan_result.intent }}"
    checks: []
    files:
      partitions_conf: "{{ fabric_plan_result.devices[inventory_hostname].partitions_conf }}"
      qos_policy_conf: "{{ fabric_plan_result.devices[inventory_hostname].qos_policy_conf }}"
"""

RETURN = r"""
mismatches:
  description: Every difference found, one sentence each.
  returned: always
  type: list
  elements: str
  sample:
    - 'pkeys: partition gpu (pkey 0x0001): member "gpu2 mlx5_0" (0x0c42a10300020001) does not hold it (expected full)'
    - 'counters: ca "gpu1 mlx5_0" port 1 SymbolErrorCounter = 7, above the threshold 0'
checked:
  description: The checks that ran (C(files) when O(files) was given).
  returned: always
  type: list
  elements: str
not_checked:
  description: Checks asked for whose section the snapshot does not hold.
  returned: always
  type: list
  elements: str
not_verified:
  description: What a check could not see and so did not prove - a tenant's VF GUID that is no port of the snapshot (its P_Key
    table was not read); also given as a warning.
  returned: always
  type: list
  elements: str
  sample:
    - "tenants: tenant 'team-a' VF GUID 0x0c42a1030f010000 (partition team-a, pkey 0x0001, full): not a port of the fabric's
      snapshot (a virtual port is not seen by ibnetdiscover/smpquery): its P_Key table is not verified"
changed_files:
  description: Keys of O(files) whose text differs from O(installed_files).
  returned: when O(installed_files) is given
  type: list
  elements: str
restart_keys:
  description: opensm.conf keys that change and that OpenSM reads only at start (a SIGHUP does not apply them).
  returned: when O(installed_files) is given
  type: list
  elements: str
"""

from ansible.module_utils.basic import AnsibleModule  # noqa: E402

from ansible_collections.lossless.fabric.plugins.module_utils._ib import _files as _ib_files  # noqa: E402
from ansible_collections.lossless.fabric.plugins.module_utils._ib import _verify as _ib_verify  # noqa: E402

_FILE_OPTIONS = {key: {"type": "str"} for key in ("opensm_conf", "partitions_conf", "qos_policy_conf")}

ARGUMENT_SPEC = {
    "intent": {"type": "dict", "required": True},
    "devices": {"type": "dict", "default": {}},
    "facts": {"type": "dict"},
    "files": {"type": "dict", "options": dict(_FILE_OPTIONS)},
    "installed_files": {"type": "dict", "options": dict(_FILE_OPTIONS)},
    "checks": {"type": "list", "elements": "str", "choices": list(_ib_verify.CHECKS)},
    "expect": {
        "type": "dict", "default": {},
        "options": {
            "switches": {"type": "int"},
            "cas": {"type": "int"},
            "links": {"type": "int"},
            "min_width": {"type": "str", "choices": ["1X", "2X", "4X", "8X", "12X"]},
            "min_speed": {"type": "str", "choices": ["SDR", "DDR", "QDR", "FDR10", "FDR", "EDR", "HDR", "NDR", "XDR"]},
            "counters": {"type": "dict"},
        },
    },
    "fail_on_mismatch": {"type": "bool", "default": True},
}


def _counters(module: AnsibleModule) -> dict | None:
    raw = module.params["expect"].get("counters")
    if raw is None:
        return None
    out = {}
    for name, value in raw.items():
        try:
            out[str(name)] = int(value)
        except (TypeError, ValueError):
            module.fail_json(msg="expect.counters.%s: %r is not an integer threshold" % (name, value))
    return out


def main() -> None:
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    params = module.params
    intent = params["intent"]
    if not isinstance(intent.get("infiniband"), dict):
        module.fail_json(msg="intent: no infiniband section (transport %r); give fabric_plan_result.intent" % intent.get("transport"))
    result = {"changed": False, "mismatches": [], "checked": [], "not_checked": [], "not_verified": []}
    files = {k: v for k, v in (params["files"] or {}).items() if v is not None}
    if files:
        result["checked"].append("files")
        result["mismatches"] += _ib_files.check_files(files, _ib_verify.known_guids(params["facts"], intent))
    if params["installed_files"] is not None:
        installed = params["installed_files"]
        result["changed_files"] = sorted(k for k, v in files.items() if installed.get(k) != v)
        result["restart_keys"] = (_ib_files.needs_restart(installed.get("opensm_conf"), files["opensm_conf"])
                                  if "opensm_conf" in result["changed_files"] else [])
    if params["facts"]:
        if "nodes" not in params["facts"]:
            module.fail_json(msg="facts: not an ib_fabric_facts snapshot (no nodes); give the module's ib_fabric return value")
        expect = dict(params["expect"], counters=_counters(module))
        checks = params["checks"] if params["checks"] is not None else list(_ib_verify.CHECKS)
        found = _ib_verify.verify(params["facts"], intent, params["devices"], expect, checks)
        result["mismatches"] += found["mismatches"]
        result["checked"] += found["checked"]
        result["not_checked"] += found["not_checked"]
        result["not_verified"] += found["not_verified"]
        for line in found["not_verified"]:
            module.warn(line)
    if result["mismatches"] and params["fail_on_mismatch"]:
        count = len(result["mismatches"])
        module.fail_json(msg="%d mismatch%s:\n%s" % (count, "" if count == 1 else "es", "\n".join(result["mismatches"])), **result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
