#!/usr/bin/python
# Copyright: lossless.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
# Thin glue: validation, the record, the detached timer process and the put-back are plugins/module_utils/_common/_rollback_timer.py.

from __future__ import annotations

DOCUMENTATION = r"""
module: rollback_timer
short_description: A confirmation timer for files on a host - a change that rolls itself back unless confirmed
version_added: 0.1.0
description:
  - Gives a change to files of an ordinary host (first user - the OpenSM files of a subnet manager) what a switch's commit
    timer gives a switch change - it stays pending until it is confirmed, and puts itself back when the time runs out.
  - O(state=armed) saves each file of O(paths) - content, mode, owner and group, or the fact that it does not exist - under
    O(state_dir)C(/NAME/) (directory 0700, copies 0600), then starts a detached process on the host and returns. Make the
    change after arming.
  - At the deadline (O(confirm_timeout) seconds after arming), unless the timer was confirmed or rolled back, that process
    puts every file back atomically (a temporary file in the same directory, the saved mode and owner, a rename; a file that
    did not exist when the timer was armed is removed), then runs O(commands) in order, and records what it did. The timer's
    status is then V(expired).
  - O(state=confirmed) keeps the change - the process exits within a second and the saved copies are deleted.
  - O(state=rolled_back) puts the files back and runs the commands at once, in the task, and stops the process.
  - O(state=gathered) only reads the timer's record.
  - The process and the tasks coordinate through the record C(state.json) in O(state_dir)C(/NAME/), under an fcntl lock -
    whichever comes first wins and the other sees its outcome; no process is ever signalled.
  - The timer lives in one process - a host reboot or a C(kill -9) of that process loses it, and nothing is put back then.
    The saved copies stay in O(state_dir); O(state=gathered) reports the timer as overdue, names them and warns, and
    O(state=rolled_back) or O(state=confirmed) settles it. See C(docs/rollback-timer.md) of the collection.
extends_documentation_fragment:
  - lossless.fabric._attributes
  - lossless.fabric._attributes.actiongroup_fabric
  - lossless.fabric._attributes.posix
attributes:
  check_mode:
    support: full
    details:
      - O(state=armed) reads the files and returns the same result shape (RV(backup), RV(pending_until)) but writes nothing
        and starts no process.
      - O(state=rolled_back) reports what putting back would do to each file (RV(restored)) and the commands it would run
        (with C(rc) null); O(state=confirmed) reports whether it would change the record.
  diff_mode:
    support: none
  idempotent:
    support: partial
    details:
      - V(confirmed), V(rolled_back) and V(gathered) are idempotent - a second V(confirmed) or V(rolled_back) reports
        C(changed=false).
      - V(armed) starts a new timer every time and fails while a timer of that name is armed.
options:
  name:
    description:
      - The timer's id, unique on the host. Letters, digits, C(_), C(.) and C(-), starting with a letter or digit, at most 64
        characters. The change window uses C(<window name>-<inventory_hostname>-opensm).
    type: str
    required: true
  state:
    description:
      - V(armed) saves O(paths) and starts the timer; fails if a timer of this name is armed (naming its deadline).
      - V(confirmed) keeps the change; fails if the timer already rolled back (by itself or by V(rolled_back)), or does not exist.
      - V(rolled_back) puts the files back and runs O(commands) now; on a timer that already fired by itself it changes nothing
        and returns what was done then (RV(fired) true). Fails if the timer was confirmed or does not exist, and when a file
        cannot be put back or a command fails (naming the argv, rc and stderr).
      - V(gathered) only reads; RV(timer) says V(absent) for a timer that does not exist.
    type: str
    choices: [armed, confirmed, rolled_back, gathered]
    default: gathered
  paths:
    description:
      - Absolute paths of the files to put back (required with O(state=armed), only used then). No newline or NUL, no
        duplicates, in normal form.
      - Each must be a regular file or not exist; a symlink or a directory is refused. A file that does not exist now is
        removed when the timer fires.
    type: list
    elements: path
  commands:
    description:
      - Commands to run, in order, after the files are put back (only used with O(state=armed)), for example the reload or
        restart of the service that reads the files.
      - Each is an argv list, run without a shell, with a timeout of 120 seconds, its output captured (cut after 4096
        characters). A word with a newline or NUL is refused.
      - The first command that fails (exit code other than 0, cannot start, timeout) stops the rest; it is reported.
      - The commands are not run when a file could not be put back.
    type: list
    elements: raw
    default: []
  confirm_timeout:
    description:
      - Seconds from arming until the timer fires by itself (required with O(state=armed), only used then); greater than 0.
    type: int
  state_dir:
    description:
      - Where the timer keeps its record and saved copies (C(STATE_DIR/NAME/state.json), C(STATE_DIR/NAME/files/)).
      - Created 0700 if missing. Must be on a file system that survives as long as the timer (not a tmpfs that is cleared).
    type: path
    default: /var/lib/lossless-fabric/rollback-timers
notes:
  - Needs the rights to write O(paths), O(state_dir) and to run O(commands) - usually C(become). As root the saved owner is
    restored; otherwise a file whose owner cannot be restored is written with the module user's and the item of
    RV(restored) carries a C(warning).
  - Times are the host's clock (UTC in the results).
  - A systemd-logind with C(KillUserProcesses=yes) kills the timer process when the SSH session ends (RV(timer.process_running)
    then says false soon after arming); the default on Debian, Ubuntu and RHEL keeps it.
seealso:
  - module: lossless.fabric.switch_config
    description: The switch side - C(confirm=false) commits with the device's own rollback timer.
author:
  - lossless.fabric contributors (@lossless-fabric)
"""

EXAMPLES = r"""
- name: Arm a 15 minute timer over the OpenSM files before changing them
  lossless.fabric.rollback_timer:
    name: "{{ window_name }}-{{ inventory_hostname }}-opensm"
    state: armed
    paths:
      - /etc/opensm/opensm.conf
      - /etc/opensm/partitions.conf
      - /etc/opensm/qos-policy.conf
    commands:
      - [systemctl, restart, opensm]
    confirm_timeout: 900
  become: true
  register: timer

- name: The change itself (rolled back by the timer unless confirmed)
  ansible.builtin.template:
    src: opensm.conf.j2
    dest: /etc/opensm/opensm.conf
    mode: "0644"
  become: true

- name: Keep the change once the checks passed
  lossless.fabric.rollback_timer:
    name: "{{ window_name }}-{{ inventory_hostname }}-opensm"
    state: confirmed
  become: true

- name: Or put the files back now (also fine after the timer fired by itself)
  lossless.fabric.rollback_timer:
    name: "{{ window_name }}-{{ inventory_hostname }}-opensm"
    state: rolled_back
  become: true
  register: rollback

- name: What happened to the timer
  lossless.fabric.rollback_timer:
    name: "{{ window_name }}-{{ inventory_hostname }}-opensm"
  register: timer_state

- name: Lab - a private state directory
  lossless.fabric.rollback_timer:
    name: lab-1
    state: armed
    paths: [/tmp/lab/opensm.conf]
    confirm_timeout: 60
    state_dir: /tmp/lab/timers
"""

RETURN = r"""
pending_until:
  description: UTC time (ISO 8601, as M(lossless.fabric.switch_config) returns it) at which the timer fires unless confirmed.
  returned: when O(state=armed)
  type: str
  sample: "2026-11-30T10:15:00+00:00"
deadline_epoch:
  description: The same deadline in seconds since the epoch.
  returned: when O(state=armed)
  type: float
  sample: 1796033700.25
backup:
  description: What was saved of each path at arm time.
  returned: when O(state=armed)
  type: list
  elements: dict
  sample: [{"path": "/etc/opensm/opensm.conf", "existed": true, "sha256": "9f86d08..."},
           {"path": "/etc/opensm/qos-policy.conf", "existed": false, "sha256": null}]
  contains:
    path:
      description: The file.
      type: str
    existed:
      description: Whether it existed; when false, firing removes it.
      type: bool
    sha256:
      description: SHA-256 of the saved content (null when it did not exist).
      type: str
fired:
  description: With O(state=rolled_back), true when the timer had already fired by itself (then RV(restored) and RV(commands)
    are what it did at that time and nothing was done now).
  returned: when O(state=rolled_back)
  type: bool
restored:
  description: Per path, what putting it back did (or would do, in check mode).
  returned: when O(state=rolled_back)
  type: list
  elements: dict
  sample: [{"path": "/etc/opensm/opensm.conf", "action": "written"}, {"path": "/etc/opensm/qos-policy.conf", "action": "removed"}]
  contains:
    path:
      description: The file.
      type: str
    action:
      description: V(written), V(removed), V(unchanged), or V(failed) (then C(error) says why and the saved copies are kept).
      type: str
    error:
      description: Why the file could not be put back.
      type: str
      returned: when C(action) is V(failed)
    warning:
      description: The owner could not be restored (not running as root).
      type: str
      returned: when it applies
commands:
  description: The commands that ran, in order (stopped at the first that failed); in check mode, those that would run.
  returned: when O(state=rolled_back)
  type: list
  elements: dict
  sample: [{"argv": ["systemctl", "restart", "opensm"], "rc": 0, "stdout": "", "stderr": ""}]
  contains:
    argv:
      description: The command.
      type: list
      elements: str
    rc:
      description: Exit code; null when it could not start or timed out (C(stderr) says which) and in check mode.
      type: int
    stdout:
      description: Standard output, cut after 4096 characters.
      type: str
    stderr:
      description: Standard error, cut after 4096 characters.
      type: str
process_exited:
  description: Whether the timer process was seen gone after O(state=confirmed) or O(state=rolled_back) (it re-reads the
    record at least once a second).
  returned: when O(state=confirmed) or O(state=rolled_back) changed the timer (not in check mode)
  type: bool
timer:
  description: The timer's record as it is after the task.
  returned: always
  type: dict
  sample:
    name: win-42-opensm
    status: armed
    pending_until: "2026-11-30T10:15:00+00:00"
    deadline_epoch: 1796033700.25
    armed_at: "2026-11-30T10:00:00+00:00"
    settled_at: null
    paths: [/etc/opensm/opensm.conf]
    commands: [[systemctl, restart, opensm]]
    outcome: null
    pid: 4242
    process_running: true
    overdue: false
    saved_copies: [{"path": "/etc/opensm/opensm.conf", "copy": "/var/lib/lossless-fabric/rollback-timers/win-42-opensm/files/0", "existed": true}]
  contains:
    name:
      description: The timer's id.
      type: str
    status:
      description: V(armed), V(confirmed), V(rolled_back) (by O(state=rolled_back)), V(expired) (fired by itself at its
        deadline) or V(absent) (no such timer).
      type: str
    pending_until:
      description: The deadline, UTC ISO 8601.
      type: str
    deadline_epoch:
      description: The deadline in seconds since the epoch.
      type: float
    armed_at:
      description: When it was armed, UTC ISO 8601.
      type: str
    settled_at:
      description: When it was confirmed, rolled back or fired, UTC ISO 8601.
      type: str
    kind:
      description: V(files) (this module's timers), or V(nic) - a timer armed by M(lossless.fabric.nic_qos) O(lossless.fabric.nic_qos#module:rollback_timer),
        whose record holds NIC values instead of file copies; O(state=confirmed) and O(state=gathered) work on it, O(state=rolled_back)
        refuses (roll it back with M(lossless.fabric.nic_qos)). Null when absent.
      type: str
    state_dir:
      description: The folder of its record.
      type: str
    paths:
      description: The files it guards.
      type: list
      elements: str
    commands:
      description: The argv lists it runs after putting the files back.
      type: list
      elements: list
    outcome:
      description: When it rolled back (V(expired) or V(rolled_back)) - C(fired), C(at), C(restored), C(commands),
        C(commands_skipped) and C(failed) (the failure message, or null).
      type: dict
    pid:
      description: The timer process.
      type: int
    process_running:
      description: Whether that process is alive now.
      type: bool
    overdue:
      description: Armed, deadline passed and no process - the timer was lost (host reboot, kill -9) and nothing was put back;
        settle it with O(state=rolled_back) or O(state=confirmed).
      type: bool
    saved_copies:
      description: Where each file's saved copy is (C(copy) null for a file that did not exist), while they are kept.
      type: list
      elements: dict
"""

from ansible.module_utils.basic import AnsibleModule  # noqa: E402

from ansible_collections.lossless.fabric.plugins.module_utils._common import _rollback_timer  # noqa: E402

ARGUMENT_SPEC = dict(
    name=dict(type="str", required=True),
    state=dict(type="str", choices=["armed", "confirmed", "rolled_back", "gathered"], default="gathered"),
    paths=dict(type="list", elements="path"),
    commands=dict(type="list", elements="raw", default=[]),
    confirm_timeout=dict(type="int"),
    state_dir=dict(type="path", default=_rollback_timer.DEFAULT_STATE_DIR),
)


def main() -> None:
    module = AnsibleModule(
        argument_spec=ARGUMENT_SPEC,
        required_if=[("state", "armed", ["paths", "confirm_timeout"])],
        supports_check_mode=True,
    )
    try:
        result = _rollback_timer.run(module.params, check_mode=module.check_mode)
    except _rollback_timer.TimerError as exc:
        module.fail_json(msg=str(exc), **exc.result)
    for warning in result.pop("warnings", []):
        module.warn(warning)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
