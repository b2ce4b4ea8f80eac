#!/usr/bin/python
# Copyright: lossless.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
module: ib_fabric_facts
short_description: Read an InfiniBand fabric's topology, QoS tables, partitions and counters with infiniband-diags
version_added: 0.1.0
description:
  - Runs the infiniband-diags tools on a host attached to the fabric (typically the subnet manager host) and returns one
    structured snapshot in RV(ib_fabric).
  - "Sections: C(topology) (C(ibnetdiscover): nodes, links, LIDs; always read), C(ports) (C(iblinkinfo): state, width,
    speed of every port), C(sm) (C(sminfo): the master SM), C(sl2vl) and C(vlarb) (C(smpquery sl2vl) / C(smpquery vlarb)
    on every linked port), C(pkeys) (C(smpquery pkeys) on every CA port), C(paths) (C(saquery -p --pkey) between the
    pairs of O(paths) and one pair per partition of O(partitions)), C(counters) (C(perfquery) on every linked port),
    C(tenants) (C(saquery -p) from a port of each tenant to a port of each other tenant - the tenants are the partitions of
    O(partitions) marked C(tenant) - asked with no P_Key and with each of the two tenants' P_Keys)."
  - A command that fails is listed in RV(ib_fabric.errors) and its reading is absent; only a failed C(ibnetdiscover)
    (or no master SM within O(wait_timeout) when O(wait=true)) fails the task.
  - Never changes the fabric; the task never reports a change.
extends_documentation_fragment:
  - lossless.fabric._attributes
  - lossless.fabric._attributes.info_module
  - lossless.fabric._attributes.actiongroup_fabric
  - lossless.fabric._attributes.posix
options:
  diag_bin:
    description:
      - Folder holding the infiniband-diags tools (C(ibnetdiscover), C(iblinkinfo), C(sminfo), C(smpquery), C(saquery),
        C(perfquery)). Default is the C(PATH) of the remote user.
      - The lab sets it to its wrappers, which run the real tools inside the simulated fabric's network namespace.
    type: path
  sections:
    description: What to read besides the topology.
    type: list
    elements: str
    choices: [topology, ports, sm, sl2vl, vlarb, pkeys, paths, counters, tenants]
    default: [topology, ports, sm, sl2vl, vlarb, pkeys, paths, counters, tenants]
  paths:
    description: Port pairs whose PathRecord (SL, MTU, rate) to read for a P_Key.
    type: list
    elements: dict
    default: []
    suboptions:
      src:
        description: Source port GUID.
        type: str
        required: true
      dst:
        description: Destination port GUID.
        type: str
        required: true
      pkey:
        description: P_Key to ask the SA for, like V(0x8001).
        type: str
        required: true
  partitions:
    description:
      - The intent's partitions (C(fabric_plan_result.intent.infiniband.partitions)); for each, the first full member and
        the next member found in the fabric become a path pair for the C(paths) section.
    type: list
    elements: dict
    default: []
  timeout:
    description: Seconds one diag command may take.
    type: int
    default: 30
  wait:
    description: Before reading, wait until a master SM answers C(sminfo) (with O(sm_priority) when given).
    type: bool
    default: false
  wait_timeout:
    description: Seconds to wait for the master SM when O(wait=true).
    type: int
    default: 60
  wait_sleep:
    description: Seconds between two C(sminfo) tries.
    type: int
    default: 1
  sm_priority:
    description: With O(wait=true), also wait until the master SM reports this priority (a reload that took effect).
    type: int
notes:
  - Read-only; diag tools send SMPs/SA queries/PMA reads, which need the rights of the C(umad) device (root on real hosts).
  - A simulated fabric (ibsim) cannot show a real link speed, any data-plane counter movement or P_Key enforcement bits;
    see docs/infiniband.md.
seealso:
  - module: lossless.fabric.ib_fabric_verify
author:
  - lossless.fabric contributors (@lossless-fabric)
"""

EXAMPLES = r"""
- name: Everything, from the subnet manager host (normally partitions come from fabric_plan_result.intent.infiniband.partitions)
  lossless.fabric.ib_fabric_facts:
    partitions:
      - name: gpu
        pkey: "0x8001"
        members:
          - {guid: "0x0c42a10300010001", membership: full}
          - {guid: "0x0c42a10300020001", membership: full}
  register: ib

- name: Only topology and the master SM, waiting for a reload to take effect
  lossless.fabric.ib_fabric_facts:
    sections: [topology, sm]
    wait: true
    sm_priority: 14
    diag_bin: /opt/lab/ibsim/bin

- name: PathRecord of one pair
  lossless.fabric.ib_fabric_facts:
    sections: [topology, paths]
    paths:
      - {src: "0x0c42a10300010001", dst: "0x0c42a10300020001", pkey: "0x8001"}
"""

RETURN = r"""
ib_fabric:
  description: The snapshot. Port keys are C(<node GUID>/<port>); GUIDs are C(0x) and 16 lower-case hex digits.
  returned: success
  type: dict
  contains:
    collected:
      description: The sections read.
      type: list
      elements: str
    nodes:
      description: Node GUID -> C(type) (switch, ca, router), C(description), C(lid), C(ports_count), C(port_guids) (port ->
        port GUID, CAs), C(port_lids), C(links) (port -> C(remote_guid), C(remote_port), C(width), C(speed)).
      type: dict
    links:
      description: Every link once, C(a) and C(b) ends (C(guid), C(port), C(description)), C(width), C(speed).
      type: list
      elements: dict
    summary:
      description: Counts of C(switches), C(cas), C(routers), C(links).
      type: dict
      sample: {switches: 6, cas: 9, routers: 0, links: 17}
    ports:
      description: Port key -> C(state), C(physical_state), C(width), C(speed), C(speed_gbps) (per lane), C(lid), C(peer_lid).
      type: dict
    sm:
      description: The master SM as C(sminfo) reports it (C(lid), C(guid), C(priority), C(state_name), C(activity_count)).
      type: dict
    sl2vl:
      description: Port key -> C(type) and C(rows) (in-port -> 16 VLs, one per SL).
      type: dict
    vlarb:
      description: Port key -> C(high) and C(low) tables (lists of C(vl), C(weight), zero entries included), C(high_cap), C(low_cap).
      type: dict
    pkeys:
      description: CA port GUID -> C(pkeys) (non-zero table entries; bit 15 set = full member), C(capacity), C(node), C(port).
      type: dict
    paths:
      description: One entry per pair - C(src), C(dst), C(pkey), C(partition), C(found), C(sl), C(mtu), C(rate).
      type: list
      elements: dict
    counters:
      description: Port key -> perfquery PortCounters field -> value.
      type: dict
    tenants:
      description:
        - One entry per cross-tenant PathRecord query - C(src), C(dst) (port GUIDs), C(src_tenant), C(dst_tenant), C(pkey)
          (V(null) - any partition the two share), C(found) (V(null) when the query could not be made), C(record_pkey), C(sl).
      type: list
      elements: dict
    errors:
      description: Commands that failed - C(command), C(rc), C(stderr).
      type: list
      elements: dict
    commands_run:
      description: How many diag commands ran.
      type: int
"""

import os  # noqa: E402
import time  # noqa: E402

from ansible.module_utils.basic import AnsibleModule  # noqa: E402

from ansible_collections.lossless.fabric.plugins.module_utils._ib import _facts as _ib  # noqa: E402

ARGUMENT_SPEC = {
    "diag_bin": {"type": "path"},
    "sections": {"type": "list", "elements": "str", "choices": list(_ib.SECTIONS), "default": list(_ib.SECTIONS)},
    "paths": {
        "type": "list", "elements": "dict", "default": [],
        "options": {"src": {"type": "str", "required": True}, "dst": {"type": "str", "required": True},
                    "pkey": {"type": "str", "required": True, "no_log": False}},  # a partition key, not a secret
    },
    "partitions": {"type": "list", "elements": "dict", "default": []},
    "timeout": {"type": "int", "default": 30},
    "wait": {"type": "bool", "default": False},
    "wait_timeout": {"type": "int", "default": 60},
    "wait_sleep": {"type": "int", "default": 1},
    "sm_priority": {"type": "int"},
}


class Diags:
    """Runs one tool of diag_bin (or PATH) and returns (rc, stdout, stderr)."""

    def __init__(self, module: AnsibleModule) -> None:
        self.module = module
        self.bin = module.params["diag_bin"]
        self.timeout = module.params["timeout"]

    def tool(self, name: str) -> str:
        if self.bin:
            path = os.path.join(self.bin, name)
            if not os.access(path, os.X_OK):
                self.module.fail_json(msg="diag_bin: %s is not an executable %s (install infiniband-diags)" % (path, name))
            return path
        path = self.module.get_bin_path(name, opt_dirs=["/usr/sbin", "/sbin"])
        if path is None:
            self.module.fail_json(msg="%s not found in PATH: install infiniband-diags or set diag_bin" % name)
        return path

    def __call__(self, argv: list) -> tuple[int, str, str]:
        cmd = [self.tool(argv[0])] + [str(a) for a in argv[1:]]
        try:
            return self.module.run_command(cmd, timeout=self.timeout)
        except TypeError:  # ansible-core without run_command(timeout=)
            return self.module.run_command(cmd)


def wait_for_sm(module: AnsibleModule, run: Diags) -> None:
    params = module.params
    deadline = time.monotonic() + params["wait_timeout"]
    last = "no answer"
    while True:
        rc, out, err = run(["sminfo"])
        if rc == 0:
            try:
                sm = _ib.parse_sminfo(out)
            except _ib.IbParseError as exc:
                last = str(exc)
            else:
                if sm["state_name"] == "master" and params["sm_priority"] in (None, sm["priority"]):
                    return
                last = "SM %s is %s with priority %d" % (sm["guid"], sm["state_name"], sm["priority"])
        else:
            last = (err or out).strip()
        if time.monotonic() >= deadline:
            want = " with priority %d" % params["sm_priority"] if params["sm_priority"] is not None else ""
            module.fail_json(msg="no master SM%s within %d s; last sminfo: %s" % (want, params["wait_timeout"], last))
        time.sleep(params["wait_sleep"])


def main() -> None:
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    run = Diags(module)
    if module.params["wait"]:
        wait_for_sm(module, run)
    sections = list(dict.fromkeys(["topology"] + module.params["sections"]))
    try:
        paths = [dict(p, src=_ib.guid(p["src"]), dst=_ib.guid(p["dst"]), pkey=_ib.pkey_text(p["pkey"])) for p in module.params["paths"]]
    except ValueError as exc:
        module.fail_json(msg="paths: %s (GUIDs and P_Keys are hex, like 0x0c42a10300010001 and 0x8001)" % exc)
    collector = _ib.Collector(run, sections, paths=paths, partitions=module.params["partitions"])
    try:
        facts = collector.collect()
    except _ib.IbCollectError as exc:
        module.fail_json(msg=str(exc), error=exc.error)
    for error in facts["errors"]:
        module.warn("%s failed (rc %s): %s" % (error["command"], error["rc"], error["stderr"]))
    module.exit_json(changed=False, ib_fabric=facts)


if __name__ == "__main__":
    main()
