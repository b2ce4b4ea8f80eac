#!/usr/bin/python
# Copyright: lossless.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
# The work happens on the controller, in plugins/action/switch_config.py; this
# file carries the documentation ansible-doc renders.

from __future__ import annotations

DOCUMENTATION = r"""
module: switch_config
short_description: Apply a switch's lossless QoS plan as a transaction with automatic rollback
version_added: 0.1.0
description:
  - Renders the switch's plan (from M(lossless.fabric.fabric_plan)) into the platform's configuration and applies it
    over one SSH connection (netmiko, in the controller's worker) as a transaction.
  - Opens the vendor's private session or candidate (EOS C(configure session), Junos C(configure private), NVUE pending
    revision), loads the lines, and takes the device's own diff. A line the device rejects aborts the session and fails
    the task naming the line and what the device said; the device is left unchanged.
  - An empty diff aborts the session (C(changed=false)). In check mode the diff is returned and the session aborted, so
    C(--check --diff) shows exactly what a real run would send, read from the real device.
  - Otherwise the change is committed with the vendor's rollback timer (EOS C(commit timer), Junos C(commit confirmed),
    NVUE C(nv config apply --confirm)), read back, and confirmed only when the read-back holds every line of the plan;
    on a mismatch it is rolled back and the task fails.
  - With O(confirm=false) the commit stays pending; a later task with O(state=confirmed) or O(state=rolled_back) settles
    it, and if nobody does, the device rolls itself back when the timer ends.
  - Every failure names the device, the line where there is one, what the device said, the step (RV(step)) and the
    state the device was left in (RV(device_state)).
  - Every wait is bounded - O(timeout) for the connection and the first prompt, O(step_timeout) for each step after it -
    so a switch that stops answering fails the task instead of holding the play.
extends_documentation_fragment:
  - lossless.fabric._attributes
  - lossless.fabric._attributes.actiongroup_fabric
  - lossless.fabric._switch_connection
  # The platform option and attribute, written from the platform registry (the choices are every driven platform).
  - lossless.fabric._switch_platform.plan
attributes:
  action:
    description: Runs on the controller; netmiko connects from the worker process.
    support: full
  check_mode:
    support: full
    details:
      - Loads the lines into a private session on the real device, returns the device's diff and aborts the session.
  diff_mode:
    support: full
    details:
      - The diff is the device's own (EOS C(show session-config diffs), Junos C(show | compare), NVUE C(nv config diff)),
        shown with the running configuration before and, after a commit, after the change (two extra reads, only with C(--diff)).
  idempotent:
    support: full
    details:
      - A second run with the same plan finds an empty device diff and reports no change.
options:
  state:
    description:
      - V(merged) applies the plan as a transaction.
      - V(rendered) returns the configuration lines without contacting the device.
      - V(gathered) reads the device and returns its lossless QoS configuration as structure.
      - V(parsed) turns O(running_config) (captured C(show) output) into the same structure, offline.
      - V(confirmed) confirms a commit left pending by O(confirm=false); V(rolled_back) rolls it back now.
    type: str
    default: merged
    choices: [merged, rendered, gathered, parsed, confirmed, rolled_back]
  plan:
    description:
      - The switch's plan, C(fabric_plan_result.devices[inventory_hostname]). V(merged) and V(rendered) need it or O(plans).
    type: dict
  running_config:
    description:
      - Captured running configuration for O(state=parsed) (EOS C(show running-config), Junos C(show configuration | display set),
        NVUE C(nv config show -o commands)).
    type: str
  confirm:
    description:
      - Confirm the commit once the read-back matches. V(false) leaves it pending for a later O(state=confirmed) or
        O(state=rolled_back), or for the device's own rollback when O(confirm_timeout) ends.
    type: bool
    default: true
  confirm_timeout:
    description:
      - Seconds after which the device rolls the commit back unless it is confirmed. Junos counts whole minutes (rounded up).
    type: int
    default: 300
  session:
    description:
      - Session name for O(state=merged) (default C(lossless-fabric-<UTC timestamp>)), or the pending session to settle
        with O(state=confirmed) / O(state=rolled_back) (default the one the device reports).
    type: str
  save:
    description:
      - Save the running configuration as the startup configuration after a confirmed commit.
    type: bool
    default: true
  backup:
    description:
      - Return the running configuration read before the change (with O(state=gathered), the one read) as RV(backup).
        It is the device's text as is, hashed
        secrets included, so that it can be restored; register it under C(no_log) or write it to a protected file.
        (Diffs mask values after C(secret), C(password), C(key) and C(community).)
    type: bool
    default: false
  plans:
    description:
      - Plans of many switches keyed by inventory hostname, C(fabric_plan_result.devices); the plan of a switch is
        C(plans[inventory_hostname]) when O(plan) is not given. Needed with O(fabric).
    type: dict
  fabric:
    description:
      - Fabric-wide mode. Push to every listed inventory host from this one task (run it once, e.g. in a play on
        localhost after the M(lossless.fabric.fabric_plan) role, or with C(run_once)), each switch
        over its own connection from a pool of O(workers) threads, with that host's connection variables. The result
        holds one result per switch in RV(switches); the task fails when any switch fails, naming each.
      - Saves Ansible's per-host task start-up, which dominates when many switches change little.
    type: list
    elements: str
  workers:
    description:
      - Threads of the fabric-wide mode.
    type: int
    default: 32
  step_timeout:
    description:
      - Seconds any one step after login may wait for the switch (read the running config, open the session, load, diff,
        commit, read back, confirm, save, roll back). A step that runs out has its SSH connection closed under it, and the
        task fails naming the device, the step, and the state the device was left in - V(unchanged) before the commit,
        V(pending confirmation) (with the time its rollback timer ends) after it, V(unknown) when the commit or the confirm
        itself hung (the commit may have gone through, in which case the device's timer rolls it back unless confirmed).
      - The default is not a vendor figure (no vendor documents how long a commit may take); raise it for switches that
        are slow to commit. The platform drivers keep their own, shorter, per-command limits.
    type: int
    default: 120
seealso:
  - module: lossless.fabric.fabric_plan
author:
  - lossless.fabric contributors (@lossless-fabric)
"""

EXAMPLES = r"""
- name: Apply the switch's plan (commit, read back, confirm)
  lossless.fabric.switch_config:
    plan: "{{ fabric_plan_result.devices[inventory_hostname] }}"

- name: Change window - commit with a 15-minute rollback timer and leave it pending
  lossless.fabric.switch_config:
    plan: "{{ fabric_plan_result.devices[inventory_hostname] }}"
    confirm: false
    confirm_timeout: 900
  register: pushed

- name: Keep the change once the post-checks pass
  lossless.fabric.switch_config:
    state: confirmed
    session: "{{ pushed.session | default(omit) }}"

# Fabric-wide, in a play on localhost after the lossless.fabric.fabric_plan role:
# every switch from one task, a result per switch.
- name: Fabric-wide - every switch from one task
  lossless.fabric.switch_config:
    fabric: "{{ groups['switches'] }}"
    plans: "{{ fabric_plan_result.devices }}"
  register: pushed_all

- name: Back up the running configuration (the device's text, hashed secrets included)
  lossless.fabric.switch_config:
    state: gathered
    backup: true
  register: running
  no_log: true

- name: Review the lines for one switch in CI, without a device
  lossless.fabric.switch_config:
    state: rendered
    plan: "{{ fabric_plan_result.devices['leaf1'] }}"
  delegate_to: localhost

- name: Import brownfield config from a captured show
  lossless.fabric.switch_config:
    state: parsed
    platform: eos
    running_config: "{{ lookup('ansible.builtin.file', 'captures/leaf1-running.txt') }}"
"""

RETURN = r"""
commands:
  description: The configuration lines rendered from the plan, in the order they are sent.
  returned: when O(state) is V(merged) or V(rendered)
  type: list
  elements: str
  sample: ["qos map dscp 26 to traffic-class 3", "interface Ethernet1/1", "   priority-flow-control on"]
rendered:
  description: Same as RV(commands), for O(state=rendered).
  returned: when O(state=rendered)
  type: list
  elements: str
device_diff:
  description: The device's own diff of the session against the running configuration; empty when nothing changes.
  returned: when O(state=merged) and the session opened
  type: str
device_state:
  description: What the device was left in - V(unchanged), V(committed), V(pending confirmation), V(rolled back) or V(unknown).
  returned: when the device was contacted
  type: str
session:
  description: The session name of the commit; pass it to a later O(state=confirmed) or O(state=rolled_back).
  returned: when a commit was made or settled
  type: str
pending_until:
  description:
    - UTC time (ISO 8601) at which the device rolls the pending commit back unless it is confirmed (counted from just
      before the commit was sent).
  returned: when O(confirm=false) and a commit was made, and on a failure that left the commit pending or its state unknown
  type: str
readback_missing:
  description: Lines of the plan the read-back after commit did not find (the commit is rolled back when any is missing).
  returned: when a commit was made
  type: list
  elements: str
gathered:
  description:
    - The device's lossless QoS configuration as structure (dscp_map, watchdog, interfaces).
    - On NVUE also C(applied_state), what the ASIC runs read from the operational views in the same structure
      (marked C(operational)), and C(applied_state_differs), one line per value where it differs from the configuration.
  returned: when O(state=gathered)
  type: dict
parsed:
  description: O(running_config) as the same structure as RV(gathered).
  returned: when O(state=parsed)
  type: dict
pending:
  description: The pending commit the device reported (session, remaining seconds), or null.
  returned: when O(state) is V(confirmed) or V(rolled_back)
  type: dict
backup:
  description: The running configuration before the change (with O(state=gathered), the one read).
  returned: when O(backup=true) and O(state) is V(merged) or V(gathered)
  type: str
switches:
  description: Fabric-wide mode - the result of each switch (the keys above), keyed by inventory hostname.
  returned: when O(fabric) is given
  type: dict
failed_line:
  description: The line the device rejected.
  returned: when a line was rejected
  type: str
device_said:
  description: What the device answered to the failed line or command.
  returned: on device failure
  type: str
step:
  description:
    - The step that failed - V(connect), V(gather), V(open session), V(load), V(diff), V(abort), V(commit), V(read-back),
      V(confirm), V(save), V(rollback) or V(pending). A step that outlasts O(step_timeout) fails with
      C(the device stopped answering at step ...), its connection closed, and RV(device_state) says what the device holds.
  returned: on failure after the connection was attempted
  type: str
  sample: read-back
"""
