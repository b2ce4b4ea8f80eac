#!/usr/bin/python
# Copyright: lossless.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
# The work happens on the controller, in plugins/action/cabling_verify.py (the comparison in
# plugins/module_utils/_cabling/_compare.py); this file carries the documentation ansible-doc renders.

from __future__ import annotations

DOCUMENTATION = r"""
module: cabling_verify
short_description: Prove the cabling - every intended link against what both its ends see (LLDP, link state, speed)
version_added: 0.1.0
description:
  - Compares the links the intent describes (O(cabling), the plan's C(cabling)) with what the devices see - the
    observations of M(lossless.fabric.switch_links), M(lossless.fabric.host_links) and M(lossless.fabric.ib_links) - and
    returns one finding per intended link - V(ok), V(missing) (down, or no neighbour at any end read), V(wrong_peer)
    (expected X, found Y), V(swapped) (two links crossed - one finding naming both), V(degraded) (slower than intended, or an
    InfiniBand width below 4X) - plus V(unexpected) (a neighbour on a port in scope that has no intended peer, or a fabric
    device on an end that expected someone else), V(unproven) (no end proves or contradicts the link - the right device
    with a port ID and description that name none of its ports, such as a Junos ifIndex, or a neighbour without a
    system name - the found text says which) and V(unread) (a device of the cabling that gave no observation).
  - The evidence of both ends of a link is combined - the switch's LLDP and the host's lldpd, or both switches' LLDP; one end
    that proves the peer is enough, one end that sees someone else makes the link a V(wrong_peer).
  - A neighbour is the intended peer when its system name (case-insensitive, a domain after the first C(.) ignored) is the
    peer's inventory name and its port ID or port description is the peer port's name - for a host NIC its name, netdev or MAC.
  - Fails unless every finding is V(ok) or allowed by O(exceptions); an V(unread) device always fails unless allowed. The
    report is written first, so the data hall gets it either way.
  - Writes C(<name>.md) (for people - one line per bad link - both ends, rail, finding, expected and found, allowed and why) and
    C(<name>.json) (every finding, the summary) into O(report_dir), only when their content changed. The same input gives
    the same bytes.
  - Runs on the controller. docs/cabling.md describes the check and the report.
extends_documentation_fragment:
  - lossless.fabric._attributes
  - lossless.fabric._attributes.actiongroup_fabric
  - lossless.fabric._attributes.controller
attributes:
  action:
    description: Runs on the controller and writes local files.
    support: full
  check_mode:
    support: full
    details:
      - Judges the cabling and fails the same way, but writes no report (as M(lossless.fabric.nccl_report)); with C(--diff)
        it shows the files it would write.
  diff_mode:
    support: full
    details:
      - The JSON and Markdown report before and after.
  idempotent:
    support: full
    details:
      - Files whose content is unchanged are not rewritten; the report holds no time stamp.
options:
  cabling:
    description:
      - The intended links - C(fabric_plan_result.cabling) (M(lossless.fabric.fabric_plan) RV(lossless.fabric.fabric_plan#module:cabling)).
    type: dict
    required: true
  observations:
    description:
      - What each device sees, C({device - {port or NIC - observation}}) - the C(ends) of the readers, by inventory name
        (see docs/cabling.md for the shape). A device of the cabling absent here (and from O(readings)) is V(unread).
    type: dict
    default: {}
  readings:
    description:
      - The readers' registered results, C({inventory host - {reader - result}}) (reader C(switch_links), C(host_links) or
        C(ib_links)); merged into O(observations). A failed or unreachable result makes its device V(unread) with the reader's
        message; a skipped one is ignored. An C(ib_links) result gives every device of the InfiniBand fabric it read.
    type: dict
    default: {}
  devices:
    description:
      - The device plans, C(fabric_plan_result.devices); a host NIC's C(netdev) (and C(mac) when given) names it when a
        switch's LLDP shows the host by netdev or MAC and the host gave no C(self) of its own.
    type: dict
    default: {}
  exceptions:
    description:
      - Findings that are allowed, each C(end) (V(<host>:<port or NIC>) - one end of the link - or V(<host>) - any end of
        that device), C(finding) (one of V(missing), V(wrong_peer), V(swapped), V(degraded), V(unexpected), V(unproven), V(unread)) and
        C(reason) (one line - a ticket, an RMA number). An allowed finding stays in the report, marked allowed with its reason.
      - An entry with another key, a finding not in that list or a reason that is not one line fails the task before
        anything is compared, naming the entry, the key and the value. An exception that matches no finding is reported
        (RV(unused_exceptions), a warning and a line of the report) - it does not fail the task.
    type: list
    elements: raw
    default: []
  report_dir:
    description:
      - Folder on the controller the report goes to, normally C(lossless_fabric_report_dir); created when missing.
        Empty - no files, the report is only returned.
    type: path
    default: ""
  name:
    description:
      - Base name of the two files (letters, digits, C(.), C(_), C(-); starting with a letter or digit).
    type: str
    default: cabling
  title:
    description:
      - First line of the Markdown report (one line).
    type: str
    default: Cabling check
seealso:
  - module: lossless.fabric.fabric_plan
  - module: lossless.fabric.switch_links
  - module: lossless.fabric.host_links
  - module: lossless.fabric.ib_links
author:
  - lossless.fabric contributors (@lossless-fabric)
"""

EXAMPLES = r"""
- name: Compare what the readers saw with the intended links, write the report, fail on a bad link
  lossless.fabric.cabling_verify:
    cabling: "{{ fabric_plan_result.cabling }}"
    devices: "{{ fabric_plan_result.devices }}"
    readings:
      leaf1: {switch_links: "{{ hostvars['leaf1'].leaf_links }}"}
      gpu1: {host_links: "{{ hostvars['gpu1'].nic_links }}"}
    exceptions:
      - {end: "leaf1:swp2", finding: degraded, reason: "RMA 1234: optic on order"}
    report_dir: "{{ lossless_fabric_report_dir }}"
  delegate_to: localhost
  run_once: true

- name: Observations handed in directly
  lossless.fabric.cabling_verify:
    cabling: "{{ fabric_plan_result.cabling }}"
    observations:
      leaf1:
        swp1:
          oper: up
          speed: 400G
          width: null
          neighbors: [{system: gpu1, port: "02:aa:bb:cc:dd:ee", port_id_subtype: mac, port_descr: eth2, chassis_id: null}]
  delegate_to: localhost
"""

RETURN = r"""
verdict:
  description: V(passed) (every finding ok or allowed) or V(failed).
  returned: success
  type: str
  sample: failed
findings:
  description:
    - Every finding - C(finding) (the kind), C(a) and C(b) (the two ends as V(<host>:<port or NIC>); for V(unread) C(a) is the
      device and C(b) null; for V(unexpected) C(b) is the intended peer or null), C(rail), C(speed) (intended), C(links) (the
      intended links it is about; two for V(swapped)), C(ends), C(expected), C(found), C(allowed) and C(reason).
  returned: success
  type: list
  elements: dict
  sample:
    - {finding: swapped, a: "leaf1:swp1", b: "gpu1:mlx5_0", rail: 0, speed: 400G, allowed: false, reason: null,
       expected: "leaf1:swp1 - gpu1:mlx5_0 and leaf1:swp2 - gpu2:mlx5_0", found: "crossed: leaf1:swp1 - gpu2:mlx5_0 and leaf1:swp2 - gpu1:mlx5_0"}
summary:
  description: Count per finding kind, and C(allowed), C(links) (intended links) and C(unused_exceptions).
  returned: success
  type: dict
  sample: {ok: 5, missing: 0, wrong_peer: 0, swapped: 0, degraded: 1, unexpected: 0, unproven: 0, unread: 0, allowed: 1, links: 6, unused_exceptions: 0}
unused_exceptions:
  description: The exceptions that matched no finding, each with its C(index) in O(exceptions).
  returned: success
  type: list
  elements: dict
report:
  description: The report as written - C(markdown) and C(json) (text).
  returned: success
  type: dict
files:
  description: The report files by kind (C(json), C(markdown)); empty without O(report_dir).
  returned: success
  type: dict
  sample: {json: /var/reports/cabling.json, markdown: /var/reports/cabling.md}
"""
