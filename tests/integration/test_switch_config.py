# SPDX-License-Identifier: GPL-3.0-or-later
"""switch_config and the switch_qos role through ansible-playbook against the
strict switch simulator, on every platform of tests/lab/switch_platforms.py."""

from __future__ import annotations

import os
import sys
import time

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# switchsim: tests/lab/switchsim, the simulator package switchlab puts on the path.
from switchlab import PASSWORD, PLATFORMS, recap, results, switchsim  # noqa: E402  # pylint: disable=import-error,wrong-import-position

ROLE_PLAY = [{"name": "switches", "hosts": "switches", "gather_facts": False, "roles": [{"role": "lossless.fabric.switch_qos"}]}]


def _plan_then(tasks, name="switches"):
    """A play that plans the fabric, then runs tasks on every switch."""
    return [{
        "name": name, "hosts": "switches", "gather_facts": False,
        "roles": [{"role": "lossless.fabric.fabric_plan", "vars": {"fabric_plan_show_summary": False}}],
        "tasks": tasks,
    }]


def _push(**extra):
    args = {"plan": "{{ fabric_plan_result.devices[inventory_hostname] }}"}
    args.update(extra)
    return [
        {"name": "push", "lossless.fabric.switch_config": args, "register": "pushed", "ignore_errors": True},
        {"name": "show", "ansible.builtin.debug": {"msg": "RESULT {{ pushed | to_json }}"}},
    ]


@pytest.mark.parametrize("platform", PLATFORMS)
def test_first_run_changes_second_does_not_and_check_diff_shows_without_changing(switch_lab, platform):
    lab = switch_lab({"sw1": platform})
    before = lab.running("sw1")

    checked = lab.playbook(ROLE_PLAY, "--check", "--diff")
    assert recap(checked)["sw1"]["changed"] >= 1
    assert lab.running("sw1") == before, "check mode changed the device"

    first = lab.playbook(ROLE_PLAY, "--diff")
    assert recap(first)["sw1"]["changed"] == 1 and recap(first)["sw1"]["failed"] == 0
    assert "running (before)" in first.stdout and "running (after)" in first.stdout  # --diff: before/after as well
    assert lab.running("sw1") != before

    second = lab.playbook(ROLE_PLAY)
    assert recap(second)["sw1"]["changed"] == 0, second.stdout

    third = lab.playbook(ROLE_PLAY, "--check", "--diff")
    assert recap(third)["sw1"]["changed"] == 0


@pytest.mark.parametrize("platform", PLATFORMS)
def test_rejected_line_aborts_names_line_and_device_error(switch_lab, platform):
    lab = switch_lab({"sw1": platform})
    before = lab.running("sw1")
    rendered = lab.playbook(_plan_then([
        {"lossless.fabric.switch_config": {"state": "rendered", "plan": "{{ fabric_plan_result.devices[inventory_hostname] }}"}, "register": "r"},
        {"ansible.builtin.debug": {"msg": "RESULT {{ r | to_json }}"}},
    ]))
    lines = results(rendered)[0]["rendered"]
    victim = lines[len(lines) // 2].strip()
    lab.sim.set_faults("sw1", {"reject_lines": ["^" + _regex(victim) + "$"]})
    out = lab.playbook(_plan_then(_push()))
    res = results(out)[0]
    assert res["failed"] and res["device_state"] == "unchanged", res
    assert victim in res["msg"] and res["device_said"], res
    assert lab.running("sw1") == before


@pytest.mark.parametrize("platform", PLATFORMS)
def test_connection_dropped_while_loading_leaves_device_unchanged(switch_lab, platform):
    lab = switch_lab({"sw1": platform})
    before = lab.running("sw1")
    lab.sim.set_faults("sw1", {"drop_after_commands": 8})
    out = lab.playbook(_plan_then(_push()))
    res = results(out)[0]
    assert res["failed"], res
    assert "sw1" in res["msg"]
    assert lab.running("sw1") == before


@pytest.mark.parametrize("platform", PLATFORMS)
def test_pending_commit_confirmed_by_a_later_task_stays(switch_lab, platform):
    lab = switch_lab({"sw1": platform})
    before = lab.running("sw1")
    out = lab.playbook(_plan_then(_push(confirm=False, confirm_timeout=120) + [
        {"name": "confirm", "lossless.fabric.switch_config": {"state": "confirmed", "session": "{{ pushed.session }}"}},
    ]))
    res = results(out)[0]
    assert res["device_state"] == "pending confirmation" and res["pending_until"], res
    time.sleep(120 * 0.01 + 1.0)  # past the (scaled) timer: a confirmed commit stays
    assert lab.running("sw1") != before
    assert not lab.sim.pending("sw1").get("pending_commit")


@pytest.mark.parametrize("platform", PLATFORMS)
def test_pending_commit_rolled_back_by_a_later_task_or_by_the_timer(switch_lab, platform):
    lab = switch_lab({"sw1": platform, "sw2": platform})
    before = {name: lab.running(name) for name in ("sw1", "sw2")}
    # 600 device seconds are 6 s here (time scale 0.01): long enough that sw2 is still pending when
    # the next task has run on a loaded 2-core machine (120 s = 1.2 s was not), short enough to wait out.
    out = lab.playbook(_plan_then(_push(confirm=False, confirm_timeout=600) + [
        {"name": "roll back sw1", "lossless.fabric.switch_config": {"state": "rolled_back", "session": "{{ pushed.session }}"},
         "when": "inventory_hostname == 'sw1'"},
    ]))
    assert recap(out)["sw1"]["failed"] == 0
    assert lab.running("sw1") == before["sw1"], "rolled_back left the change in place"
    assert lab.running("sw2") != before["sw2"], "sw2 should still carry the pending change"
    deadline = time.monotonic() + 600 * 0.01 + 15
    while time.monotonic() < deadline and lab.running("sw2") != before["sw2"]:
        time.sleep(0.2)
    assert lab.running("sw2") == before["sw2"], "the timer did not roll sw2 back"


@pytest.mark.parametrize("platform", PLATFORMS)
def test_dropped_after_commit_before_confirm_rolls_back_on_the_timer(switch_lab, platform):
    lab = switch_lab({"sw1": platform})
    before = lab.running("sw1")
    # Everything committed with a timer, then the controller goes away: nobody confirms.
    lab.playbook(_plan_then(_push(confirm=False, confirm_timeout=120)))
    assert lab.running("sw1") != before
    deadline = time.monotonic() + 120 * 0.01 + 10
    while time.monotonic() < deadline and lab.running("sw1") != before:
        time.sleep(0.2)
    assert lab.running("sw1") == before


# The command each driver sends to commit with a timer, and to confirm (the simulator's drop_after fault runs it,
# then drops the connection before the reply).
COMMIT_SENT = {"eos": r"^commit timer", "nvue": r"^nv config apply --confirm \d", "junos": r"^commit confirmed",
               "sonic": r"^sudo config apply-patch /tmp", "nxos": r"^configure replace \S+ commit-timeout"}
CONFIRM_SENT = {"eos": r"^configure session \S+ commit$", "nvue": r"^nv config apply \d+ --confirm-yes", "junos": r"^commit$",
                "sonic": r"^sudo systemctl stop lf-rollback", "nxos": r"^configure replace commit$"}


@pytest.mark.parametrize("platform", PLATFORMS)
def test_a_commit_whose_reply_is_lost_is_read_back_as_pending_and_changed(switch_lab, platform):
    # Issue 33 points 5 and 6: the commit ran, its reply was lost. NVUE and SONiC said changed=false; Junos "unknown".
    lab = switch_lab({"sw1": platform})
    lab.sim.set_faults("sw1", {"drop_after": COMMIT_SENT[platform]})
    res = results(lab.playbook(_plan_then(_push(confirm_timeout=600))))[0]
    assert res["failed"] and res["changed"] is True, res
    assert res["device_state"] == "pending confirmation" and res["pending_until"], res
    assert "read back: the commit of session %s is pending confirmation" % res["session"] in res["msg"], res["msg"]
    assert lab.sim.pending("sw1")["pending_commit"]


@pytest.mark.parametrize("platform", PLATFORMS)
def test_a_confirm_whose_reply_is_lost_is_read_back_as_kept(switch_lab, platform):
    # Issue 33 point 6: the confirm ran, its reply was lost; SONiC and NX-OS said "pending confirmation" (a timer would
    # roll it back) while the change was kept, EOS "unknown". Read back, it is a kept change, and saved.
    lab = switch_lab({"sw1": platform})
    before = lab.running("sw1")
    lab.sim.set_faults("sw1", {"drop_after": CONFIRM_SENT[platform]})
    res = results(lab.playbook(_plan_then(_push(confirm_timeout=600))))[0]
    if platform == "nxos":
        # Issue 31: NX-OS publishes no form of its commit timer's state, so a live change whose files are still on
        # bootflash may be pending or kept: neither "kept" (a timer may still roll it back) nor "pending" (a timer
        # may not) is known; "unknown", with what to do (docs/vendor-nxos.md, "The transaction").
        assert res["failed"] and res["changed"] is True and res["device_state"] == "unknown", res
        assert "the switch shows no timer state" in res["msg"] and "confirm it again" in res["msg"], res["msg"]
        assert lab.running("sw1") != before
        return
    assert not res.get("failed") and res["changed"] is True, res
    assert res["device_state"] == "committed" and "pending_until" not in res, res
    assert "the confirm went through" in res["read_back"] and "connection was lost after the confirm" in res["warnings"][0], res
    assert not lab.sim.pending("sw1")["pending_commit"] and lab.running("sw1") != before


@pytest.mark.parametrize("platform", PLATFORMS)
def test_wrong_password_and_changed_host_key_fail_clearly_without_retries(switch_lab, platform):
    lab = switch_lab({"sw1": platform})
    lab.sim.set_faults("sw1", {"wrong_password": True})
    out = lab.playbook(_plan_then(_push()))
    res = results(out)[0]
    assert res["failed"] and "authentication failed" in res["msg"] and "not retried" in res["msg"], res
    auths = [e for e in lab.sim.log("sw1").get("events", []) if "auth" in str(e).lower()]
    assert len(auths) <= 2, auths  # one attempt (paramiko may log the method probe), no storm

    lab.sim.set_faults("sw1", {"wrong_password": None})
    lab.sim.rotate_host_key("sw1")
    out = lab.playbook(_plan_then(_push()))
    res = results(out)[0]
    assert res["failed"] and "HOST KEY CHANGED" in res["msg"], res


def test_sixteen_switches_with_forks(switch_lab):
    lab = switch_lab({"sw%02d" % i: PLATFORMS[i % len(PLATFORMS)] for i in range(16)})
    out = lab.playbook(ROLE_PLAY, "--forks", "16")
    counts = recap(out)
    assert len([h for h in counts if h.startswith("sw")]) == 16
    assert all(counts[h]["changed"] == 1 and counts[h]["failed"] == 0 for h in counts if h.startswith("sw")), out.stdout
    again = lab.playbook(ROLE_PLAY, "--forks", "16")
    assert all(c["changed"] == 0 for h, c in recap(again).items() if h.startswith("sw"))


def test_no_secret_in_verbose_output(switch_lab):
    lab = switch_lab({"sw1": "eos"})
    out = lab.playbook(ROLE_PLAY, "-vvv", "--diff")
    assert PASSWORD not in out.stdout + out.stderr  # also asserted for every run by lab.playbook


def _regex(text):
    import re  # pylint: disable=import-outside-toplevel

    return re.escape(text)


def test_fabric_wide_mode_pushes_every_switch_and_reports_each(switch_lab):
    lab = switch_lab({"sw-%s" % p: p for p in PLATFORMS})
    push = [
        {"name": "fabric-wide", "run_once": True, "register": "pushed", "ignore_errors": True,
         "lossless.fabric.switch_config": {"fabric": "{{ ansible_play_hosts }}", "plans": "{{ fabric_plan_result.devices }}"}},
        {"name": "show", "run_once": True, "ansible.builtin.debug": {"msg": "RESULT {{ pushed | to_json }}"}},
    ]
    res = results(lab.playbook(_plan_then(push)))[0]
    assert not res.get("failed") and res["changed"], res
    assert {h: r["device_state"] for h, r in res["switches"].items()} == {"sw-%s" % p: "committed" for p in PLATFORMS}

    res = results(lab.playbook(_plan_then(push)))[0]
    assert not res["changed"] and all(r["device_state"] == "unchanged" for r in res["switches"].values()), res

    lab.sim.set_faults("sw-nvue", {"wrong_password": True})
    res = results(lab.playbook(_plan_then(push)))[0]
    assert res["failed"] and "1 of %d switches failed" % len(PLATFORMS) in res["msg"] and "sw-nvue" in res["msg"], res
    assert not res["switches"]["sw-eos"].get("failed")


DUPLICATE_PORT = "    ports:\n      Ethernet1: {speed: 100G}\n      Ethernet1: {speed: 400G}\n"


@pytest.mark.parametrize("where", ["hosts.yml", "host_vars"])
def test_a_key_given_twice_in_an_inventory_is_an_error_with_the_shipped_ansible_cfg(tmp_path, where):
    # pylint: disable=import-outside-toplevel
    from labrun import BIN, ansible_env, run

    device = "  lossless_fabric_device:\n    kind: switch\n    platform: eos\n" + DUPLICATE_PORT
    if where == "hosts.yml":
        (tmp_path / "hosts.yml").write_text("all:\n  hosts:\n    leaf1:\n" + "".join("    " + line + "\n" for line in device.splitlines()))
    else:
        (tmp_path / "hosts.yml").write_text("all:\n  hosts:\n    leaf1:\n")
        (tmp_path / "host_vars").mkdir()
        (tmp_path / "host_vars" / "leaf1.yml").write_text(device.replace("\n  ", "\n")[2:])
    argv = [os.path.join(BIN, "ansible-inventory"), "-i", str(tmp_path / "hosts.yml"), "--host", "leaf1"]
    out = run(argv)
    assert out.returncode != 0, out.stdout
    assert "Found duplicate mapping key 'Ethernet1'" in out.stderr, out.stderr
    # The control: Ansible's own default only warns, and the last value wins.
    warned = run(argv, env=ansible_env(ANSIBLE_DUPLICATE_YAML_DICT_KEY="warn"))
    assert warned.returncode == 0 and '"speed": "400G"' in warned.stdout, warned.stdout + warned.stderr


# --- a hung switch: every wait bounded, the step and the state named ------------------------------

# Where each platform's transaction stops answering, as the command the simulator's 'hang' fault matches
# (the commands are the ones each driver sends; the step is the one switch_config was in): step -> {platform:
# command}, collected from every grammar's HANG_AT (tests/lab/switchsim/<platform>.py; a grammar without one,
# or without a step every platform has, fails here at collection).
HANG_AT = switchsim.hang_at(PLATFORMS)
HANG_CASES = [(platform, step) for step, by_platform in HANG_AT.items() for platform in by_platform]
HANG_STATE = {"connect": "unchanged", "open session": "unchanged", "load": "unchanged", "commit": "unknown",
              "read-back": "pending confirmation", "confirm": "unknown"}


def _direct_args(lab, name, **extra):
    """switch_config's arguments for one lab switch, as the action plugin fills them from the inventory."""
    # pylint: disable=import-outside-toplevel
    import yaml

    from ansible_collections.lossless.fabric.plugins.module_utils._intent import _plan
    from ansible_collections.lossless.fabric.plugins.module_utils._switches import _config as _switch_config

    inventory = yaml.safe_load((lab.inventory / "hosts.yml").read_text())
    hosts = inventory["all"]["children"]["switches"]["hosts"]
    plan = _plan.build_plan(inventory["all"]["vars"]["lossless_fabric"], {h: v["lossless_fabric_device"] for h, v in hosts.items()})["devices"][name]
    args = {key: spec.get("default") for key, spec in _switch_config.ARGUMENT_SPEC.items()}
    args.update(plan=plan, platform=plan["platform"], host="127.0.0.1", port=lab.sim.port(name), username="admin", password=PASSWORD,
                host_key_checking=True, known_hosts_file=str(lab.known_hosts))
    args.update(extra)
    return args


@pytest.mark.parametrize("platform, step", HANG_CASES, ids=["%s-%s" % case for case in HANG_CASES])
def test_a_hung_switch_fails_at_its_step_naming_the_device_and_the_state_it_is_in(switch_lab, platform, step):
    from ansible_collections.lossless.fabric.plugins.module_utils._switches import _config as _switch_config  # pylint: disable=import-outside-toplevel

    lab = switch_lab({"sw1": platform})
    before = lab.running("sw1")
    lab.sim.set_faults("sw1", {"hang": HANG_AT[step][platform]})
    res = _switch_config.run(_direct_args(lab, "sw1", timeout=1, step_timeout=1, confirm_timeout=120), device="sw1")
    assert res["failed"] and res["step"] == step and res["device_state"] == HANG_STATE[step], res
    assert res["msg"].startswith("sw1"), res["msg"]
    assert ("no answer after login within 1 s" if step == "connect" else "at step %r: nothing for 1 s (step_timeout)" % step) in res["msg"], res["msg"]
    assert "Pattern not detected" not in res["msg"] and "\n" not in res["msg"], res["msg"]
    assert "device state: " + HANG_STATE[step] in res["msg"], res["msg"]
    assert any(e["event"] == "fault_hang" for e in lab.sim.log("sw1")["events"])
    lab.sim.set_faults("sw1", {"hang": None})
    # What the report says is what the device holds.
    pending = lab.sim.pending("sw1").get("pending_commit")
    if HANG_STATE[step] == "pending confirmation":
        assert pending and lab.running("sw1") != before
        assert "rolls the commit back by itself at " + res["pending_until"] in res["msg"], res["msg"]
    elif step == "confirm":
        assert pending, "the confirm never reached the device: the commit is still pending"
        assert "committed if the confirm went through" in res["msg"], res["msg"]
    else:
        # unchanged, or a commit that hung before the device took it (unknown to switch_config, but nothing committed)
        assert not pending and lab.running("sw1") == before
    if pending:
        deadline = time.monotonic() + 120 * 0.01 + 10
        while time.monotonic() < deadline and lab.running("sw1") != before:
            time.sleep(0.2)
        assert lab.running("sw1") == before, "the device's own timer did not roll the commit back"


@pytest.mark.parametrize("platform", PLATFORMS)
def test_step_timeout_from_a_playbook_bounds_a_hung_read_back(switch_lab, platform):
    lab = switch_lab({"sw1": platform})
    lab.sim.set_faults("sw1", {"hang": HANG_AT["read-back"][platform]})
    res = results(lab.playbook(_plan_then(_push(step_timeout=2, confirm_timeout=120))))[0]
    assert res["failed"] and res["device_state"] == "pending confirmation" and res["step"] == "read-back", res
    assert res["msg"].startswith("sw1: the device stopped answering at step 'read-back': nothing for 2 s (step_timeout)"), res["msg"]


def test_a_hand_written_plan_with_an_injected_interface_name_never_reaches_the_switch(switch_lab):
    lab = switch_lab({"sw1": "eos"})
    before = lab.running("sw1")
    mine = "fabric_plan_result.devices[inventory_hostname]"
    bad = "{{ %s | combine({'ports': {'Ethernet1x;reboot': %s.ports.Ethernet1}}, recursive=True) }}" % (mine, mine)
    res = results(lab.playbook(_plan_then(_push(plan=bad))))[0]
    assert res["failed"] and res["plan_errors"] == [
        "sw1: plan.ports['Ethernet1x;reboot']: interface name 'Ethernet1x;reboot' contains ';', which could start a second command or a comment"], res
    assert not [e for e in lab.sim.log("sw1").get("events", []) if "auth" in str(e)], "switch_config connected before checking the plan"
    assert lab.running("sw1") == before


@pytest.mark.parametrize("value, shown", [("0", "0"), ("'300\\n'", "'300\\\\n'"), ("-5", "-5")])
def test_switch_qos_refuses_a_rollback_timer_that_is_not_seconds_before_connecting(switch_lab, value, shown):
    lab = switch_lab({"sw1": "eos"})
    out = lab.playbook(ROLE_PLAY, "-e", "{\"switch_qos_confirm_timeout\": %s}" % value.replace("'", '"'), check=False)
    assert out.returncode != 0
    assert "sw1: switch_qos_confirm_timeout: %s is not a number of seconds above 0" % shown in out.stdout, out.stdout[-3000:]
    assert not [e for e in lab.sim.log("sw1").get("events", []) if "auth" in str(e)]
