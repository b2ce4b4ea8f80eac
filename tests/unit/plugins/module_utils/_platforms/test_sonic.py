# SPDX-License-Identifier: GPL-3.0-or-later
"""The SONiC driver: rendered JSON Patch lines, CONFIG_DB parsing, the GCU transaction's commands,
counters and links readers on sonic-utilities' published outputs (fixtures/sonic/SOURCES.md)."""

from __future__ import annotations

import json
import pathlib

import pytest

from ansible_collections.lossless.fabric.plugins.module_utils._intent import _plan
from ansible_collections.lossless.fabric.plugins.module_utils._platforms import _base
from ansible_collections.lossless.fabric.plugins.module_utils._platforms.sonic import _driver as sonic

FIXTURES = pathlib.Path(__file__).parent / "fixtures" / "sonic"
Driver = sonic.Driver


def fixture(name):
    return (FIXTURES / name).read_text()


def plan(**device):
    ports = {"Ethernet0": {"speed": "400G", "description": "gpu1 mlx5_0"}, "Ethernet8": {"speed": "400G", "cable_length_m": 30}}
    dev = {"kind": "switch", "platform": "sonic", "ports": ports}
    dev.update(device)
    return _plan.build_plan({"name": "lab", "transport": "roce", "roce": {}}, {"leaf1": dev})["devices"]["leaf1"]


def ops(lines):
    return [json.loads(line) for line in lines if not line.startswith("#")]


def value(lines, path):
    found = [op["value"] for op in ops(lines) if op["path"] == path]
    assert len(found) == 1, (path, found)
    return found[0]


# --- render -----------------------------------------------------------------------------------------


def test_render_is_one_add_of_one_leaf_per_line():
    lines = Driver.render(plan())
    assert lines[0] == "# sonic release 202505 hwsku -"  # the expectation 'show version' is checked against
    assert all(op["op"] == "add" and op["path"].count("/") == 3 and isinstance(op["value"], str) for op in ops(lines))
    assert len({op["path"] for op in ops(lines)}) == len(lines) - 1  # no leaf twice


def test_render_values_come_from_the_plan():
    p = plan()
    lines = Driver.render(p)
    assert value(lines, "/DSCP_TO_TC_MAP/LF_ROCE/26") == "3" and value(lines, "/DSCP_TO_TC_MAP/LF_ROCE/48") == "6"
    assert value(lines, "/DSCP_TO_TC_MAP/LF_ROCE/0") == "0"
    assert len([op for op in ops(lines) if op["path"].startswith("/DSCP_TO_TC_MAP/")]) == 64
    assert value(lines, "/PORT/Ethernet0/mtu") == str(p["mtu"])
    assert value(lines, "/PORT/Ethernet0/description") == "gpu1 mlx5_0"
    assert value(lines, "/PORT_QOS_MAP/Ethernet0/pfc_enable") == "3"
    assert value(lines, "/PORT_QOS_MAP/Ethernet0/dscp_to_tc_map") == "LF_ROCE"
    assert value(lines, "/QUEUE/Ethernet0|3/scheduler") == "LF_DWRR_50"
    assert value(lines, "/QUEUE/Ethernet0|6/scheduler") == "LF_STRICT"
    assert value(lines, "/SCHEDULER/LF_STRICT/type") == "STRICT"
    assert value(lines, "/SCHEDULER/LF_DWRR_50/weight") == "50"
    ecn = p["ports"]["Ethernet0"]["ecn"]
    # 202505 (the default release): the stock lossless profile's green thresholds (GCU's validators and ecnconfig
    # change nothing else); master: a profile of our own, which no validator guards there
    assert value(lines, "/QUEUE/Ethernet0|3/wred_profile") == "AZURE_LOSSLESS"
    assert value(lines, "/WRED_PROFILE/AZURE_LOSSLESS/green_min_threshold") == str(ecn["min_threshold_bytes"])
    assert not [op for op in ops(lines) if op["path"] == "/WRED_PROFILE/AZURE_LOSSLESS/ecn"]
    own = Driver.render(plan(release="master"))
    profile = "LF_ECN_%d_%d_%d" % (ecn["min_threshold_bytes"], ecn["max_threshold_bytes"], ecn["max_probability_percent"])
    assert value(own, "/QUEUE/Ethernet0|3/wred_profile") == profile
    assert value(own, "/WRED_PROFILE/%s/ecn" % profile) == "ecn_all"
    assert value(own, "/WRED_PROFILE/%s/green_min_threshold" % profile) == str(ecn["min_threshold_bytes"])
    # the watchdog watches the plan's lossless TCs (pfcwdorch reads pfcwd_sw_enable, not pfc_enable)
    assert value(lines, "/PORT_QOS_MAP/Ethernet0/pfcwd_sw_enable") == value(lines, "/PORT_QOS_MAP/Ethernet0/pfc_enable") == "3"
    assert value(lines, "/PFC_WD/Ethernet0/detection_time") == str(p["watchdog"]["detection_time_ms"])
    assert value(lines, "/PFC_WD/Ethernet0/restoration_time") == str(p["watchdog"]["restoration_time_ms"])
    assert value(lines, "/PFC_WD/Ethernet0/action") == "drop"
    assert value(lines, "/CABLE_LENGTH/AZURE/Ethernet8") == "30m"
    # the default buffer model is dynamic: the switch computes the headroom (profile NULL)
    assert value(lines, "/BUFFER_PG/Ethernet0|3/profile") == "NULL"
    assert not [op for op in ops(lines) if op["path"].startswith("/BUFFER_PROFILE/")]


def test_render_traditional_buffers_carry_the_plans_headroom():
    """Named as buffermgrd names the profile it points BUFFER_PG at (pg_lossless_<speed>_<cable>_profile), so that its
    rewrite on a PORT change finds ours and keeps it (202211: the one release whose GCU lets the profile be written)."""
    p = plan(buffer_model="traditional", release="202211")
    lines = Driver.render(p)
    room = p["ports"]["Ethernet8"]["headroom"]
    name = "pg_lossless_400000_30m_profile"
    assert value(lines, "/BUFFER_PG/Ethernet8|3/profile") == name
    assert value(lines, "/BUFFER_PROFILE/%s/xoff" % name) == str(room["xoff_bytes"])
    assert value(lines, "/BUFFER_PROFILE/%s/size" % name) == str(room["size_bytes"])
    assert value(lines, "/BUFFER_PROFILE/%s/pool" % name) == "ingress_lossless_pool"


def test_render_groups_consecutive_lossless_priorities_into_one_pg():
    p = plan()
    for port in p["ports"].values():
        port["pfc_priorities"] = [3, 4]
    assert value(Driver.render(p), "/BUFFER_PG/Ethernet0|3-4/profile") == "NULL"


def test_buffer_model_is_a_sonic_key():
    errors = _plan.validate({"name": "lab", "transport": "roce", "roce": {}},
                            {"leaf1": {"kind": "switch", "platform": "eos", "buffer_model": "dynamic", "ports": {"Ethernet1": {"speed": "400G"}}}})[0]
    assert any("buffer_model" in e and "sonic only" in e for e in errors), errors
    errors = _plan.validate({"name": "lab", "transport": "roce", "roce": {}},
                            {"leaf1": {"kind": "switch", "platform": "sonic", "buffer_model": "static", "ports": {"Ethernet0": {"speed": "400G"}}}})[0]
    assert any("'static' is not a SONiC buffer model" in e for e in errors), errors


def test_render_refuses_a_value_with_a_control_character():
    p = plan()
    p["ports"]["Ethernet0"]["description"] = "gpu1\nsudo reboot"
    with pytest.raises(_base.DeviceError, match="control character"):
        Driver.render(p)


def test_render_refuses_a_port_name_that_is_not_sonics():
    p = plan()
    p["ports"]["Ethernet0/1"] = p["ports"].pop("Ethernet0")
    with pytest.raises(ValueError, match="not a CONFIG_DB|not a SONiC port name"):
        Driver.render(p)


# --- parse (CONFIG_DB JSON) ---------------------------------------------------------------------------


def test_parse_a_published_config_db():
    parsed = Driver.parse(fixture("gcu_add_rack_current_config.json"))
    doc = json.loads(fixture("gcu_add_rack_current_config.json"))
    name = next(n for n in sorted(doc["PORT_QOS_MAP"]) if n.startswith("Ethernet"))
    intf = parsed["interfaces"][name]
    assert intf["pfc_priorities"] == sorted(int(p) for p in doc["PORT_QOS_MAP"][name]["pfc_enable"].split(","))
    assert intf["trust"] == "dscp"
    assert intf["mtu"] == int(doc["PORT"][name]["mtu"])
    table = doc["DSCP_TO_TC_MAP"][doc["PORT_QOS_MAP"][name]["dscp_to_tc_map"]]
    assert parsed["dscp_map"] == {d: int(tc) for d, tc in sorted(table.items(), key=lambda kv: int(kv[0])) if int(tc) != 0}


def test_parse_reads_both_reference_forms_of_a_published_switch_alike():
    old = Driver.parse(fixture("db_migrator_qos_reference_format_3_0_1.json"))  # '[SCHEDULER|scheduler.1]'
    new = Driver.parse(fixture("db_migrator_qos_reference_format_3_0_3.json"))  # 'scheduler.1'
    assert old["interfaces"]["Ethernet0"] == new["interfaces"]["Ethernet0"]
    intf = new["interfaces"]["Ethernet0"]
    assert intf["pfc_priorities"] == [3, 4] and intf["trust"] == "dscp" and intf["mtu"] == 9100
    # QUEUE|Ethernet0|3 -> WRED_PROFILE AZURE_LOSSLESS (ecn_all, green 1048576..2097152, 5 %)
    assert intf["ecn"]["3"] == {"min_threshold_bytes": 1048576, "max_threshold_bytes": 2097152, "max_probability_percent": 5}
    assert intf["bandwidth_percent"]["3"] == 15 and intf["bandwidth_percent"]["0"] == 14
    assert intf["strict_queues"] == [] and intf["watchdog"] is False


def test_parse_reads_show_runningconfiguration_all_with_bgpraw():
    running = json.dumps({**json.loads(Driver.running_of(Driver.render(plan()))), "bgpraw": "!\nrouter bgp 65100\n"}, indent=4)
    assert Driver.parse(running)["interfaces"]["Ethernet0"]["pfc_priorities"] == [3]


@pytest.mark.parametrize("text", ["", "not json", "[]", '{"DEVICE_METADATA": {}}', "Error: something"])
def test_parse_refuses_what_is_not_config_db(text):
    with pytest.raises(ValueError, match="^sonic: "):
        Driver.parse(text)


def test_missing_lines_compares_leaf_values():
    lines = Driver.render(plan())
    doc = json.loads(Driver.running_of(lines))
    doc["PORT_QOS_MAP"]["Ethernet8"]["pfc_enable"] = "3,4"
    del doc["QUEUE"]["Ethernet0|3"]["wred_profile"]
    missing = Driver.missing_lines(lines, json.dumps(doc))
    assert [json.loads(m)["path"] for m in missing] == ["/QUEUE/Ethernet0|3/wred_profile", "/PORT_QOS_MAP/Ethernet8/pfc_enable"]


# --- the patch sent, against a switch's CONFIG_DB ---------------------------------------------------


def test_patch_adds_missing_tables_and_keys_whole_and_skips_equal_leaves():
    lines = Driver.render(plan(release="master"))
    running = json.loads(fixture("gcu_add_rack_current_config.json"))
    running["PORT"]["Ethernet0"] = {"mtu": str(plan()["mtu"]), "lanes": "0,1,2,3"}
    patch = Driver(None, "leaf1").patch(lines[1:], json.dumps(running))
    paths = [op["path"] for op in patch]
    assert "/PORT/Ethernet0/mtu" not in paths  # already the plan's value
    assert "/PORT/Ethernet0/description" in paths  # a leaf under an existing key
    assert "/WRED_PROFILE" in paths and "WRED_PROFILE" not in running  # a missing table: one add of the whole table
    assert "/DSCP_TO_TC_MAP/LF_ROCE" in paths  # a missing key in an existing table
    wred = next(op for op in patch if op["path"] == "/WRED_PROFILE")["value"]
    fields = {"ecn", "wred_green_enable", "green_min_threshold", "green_max_threshold", "green_drop_probability"}
    assert all(set(profile) == fields for profile in wred.values())


# --- the transaction over a scripted shell --------------------------------------------------------------


class Shell:
    """A scripted bash channel: answers each command with the text the test gives, then the prompt."""

    base_prompt = "admin@leaf1:~"

    def __init__(self, answers):
        self.answers = answers
        self.sent = []
        self.out = ""

    def read_channel(self):
        out, self.out = self.out, ""
        return out

    def write_channel(self, data):
        lines, commands, i = data.rstrip("\n").split("\n"), [], 0
        while i < len(lines):   # a here-document is one command up to its delimiter line
            end = lines.index("LF_PATCH_EOF", i) + 1 if "<<'LF_PATCH_EOF'" in lines[i] else i + 1
            commands.append("\n".join(lines[i:end]))
            i = end
        for command in commands:
            self.sent.append(command)
            answer = next((text for prefix, text in self.answers if command.startswith(prefix)), "")
            echo = command.replace("\n", "\n> ")
            self.out += echo + "\n" + (answer + "\n" if answer else "") + self.base_prompt + "$ "


# show/main.py version(): the lines the driver reads, as a 202505 untagged build prints them.
SHOW_VERSION = """
SONiC Software Version: SONiC.202505.12-0a1b2c3d
SONiC OS Version: 12
Distribution: Debian 12.8
Kernel: 6.1.0-29-2-amd64
Build commit: 0a1b2c3d
Build date: Mon Jan  6 00:00:00 UTC 2025
Built by: builder@build

Platform: x86_64-accton_as7726_32x-r0
HwSKU: Accton-AS7726-32X
ASIC: broadcom
ASIC Count: 1"""

DRY = "\n".join([
    "** DRY RUN EXECUTION **",
    "Patch Applier: localhost: Patch application starting.",
    "Patch Applier: The localhost patch was converted into 1 change:",
    "Patch Applier: localhost: applying 1 change in order:",
    'Patch Applier:   * [{"op": "add", "path": "/PORT/Ethernet0/mtu", "value": "9214"}]',
    "Patch Applier: localhost patch application completed.",
    "Patch applied successfully.",
])


def session(answers):
    running = json.loads(Driver.running_of(Driver.render(plan())))
    running["PORT"]["Ethernet0"]["mtu"] = "9100"
    base = [("show version", SHOW_VERSION),
            ("show runningconfiguration all", json.dumps(running, indent=4)),
            ("sonic-cfggen -d --print-data", json.dumps(running, indent=4)),
            ("sudo config checkpoint", "Checkpoint created successfully."),
            ("sudo config delete-checkpoint", "Checkpoint deleted successfully."),
            ("sudo config rollback", "Config rolled back successfully."),
            ("sudo bash /tmp/", "Config rolled back successfully.")]
    shell = Shell(answers + base)
    driver = Driver(shell, "leaf1")
    return shell, driver


def test_transaction_commands_and_device_diff():
    shell, driver = session([("sudo config apply-patch --dry-run", DRY), ("sudo config apply-patch /tmp", "Patch applied successfully."),
                             ("sudo systemd-run", "Running timer as unit: lf-rollback-s1.timer\nWill run service as unit: lf-rollback-s1.service"),
                             ("systemctl list-timers", "")])
    lines = Driver.render(plan())
    driver.open_session("s1")
    driver.load(lines)
    assert driver.diff() == '[{"op": "add", "path": "/PORT/Ethernet0/mtu", "value": "9214"}]'
    shell.answers.insert(0, ("systemctl list-timers", "Wed 2026-12-02 05:00:00 UTC 4min 10s left n/a n/a lf-rollback-s1.timer lf-rollback-s1.service"))
    driver.commit(300)
    assert driver.pending() == {"session": "s1", "remaining_s": 250, "unit": "lf-rollback-s1.timer"}
    driver.confirm("s1")
    driver.save()
    undo = next(c for c in shell.sent if c.startswith("cat > /tmp/s1.undo"))
    assert undo.split("\n")[1:] == ["config rollback s1", "LF_PATCH_EOF"]  # no CLI change to undo first
    heredoc = next(c for c in shell.sent if c.startswith("cat > "))
    body = heredoc.split("\n")
    assert body[0] == "cat > /tmp/s1.json-patch <<'LF_PATCH_EOF'" and body[-1] == "LF_PATCH_EOF"
    assert json.loads("\n".join(body[1:-1])) == [{"op": "replace", "path": "/PORT/Ethernet0/mtu", "value": "9214"}]
    assert [c for c in shell.sent if not c.startswith(("cat > ", "show runningconfiguration"))] == [
        "systemctl list-timers --all --no-pager --no-legend 'lf-rollback-*.timer'",
        "sudo config checkpoint s1",
        "show version",
        "sonic-cfggen -d --print-data",
        "sudo config apply-patch --dry-run /tmp/s1.json-patch",
        "sudo systemd-run --unit=lf-rollback-s1 --on-active=300 bash /tmp/s1.undo",
        "sudo config apply-patch /tmp/s1.json-patch",
        "rm -f /tmp/s1.json-patch",
        "systemctl list-timers --all --no-pager --no-legend 'lf-rollback-*.timer'",
        "systemctl list-timers --all --no-pager --no-legend 'lf-rollback-*.timer'",
        "sudo systemctl stop lf-rollback-s1.timer",
        "rm -f /tmp/s1.undo",
        "sudo config delete-checkpoint s1",
        "sudo config save -y",
    ]


# GCU's failure shapes (sonic-utilities config/main.py apply_patch; generic_config_updater/main.py, gu_common.py):
# the notices echo the whole patch before the failure, 202405+ validate_patch echoes it inside the failure too.
USAGE = 'Usage: config apply-patch [OPTIONS] PATCH_FILE_PATH\nTry "config apply-patch -h" for help.\n\nError: '
ECHO_202305 = ("** DRY RUN EXECUTION **\nPatch Applier: Patch application starting.\nPatch Applier: Patch: "
               '[{"op": "replace", "path": "/PORT/Ethernet0/mtu", "value": "9214"}, {"op": "replace", "path": "/PORT/Ethernet8/mtu", "value": "9214"}]\n'
               "Patch Applier: Getting current config db.\nPatch Applier: Sorting patch updates.\n")
ECHO_202405 = ECHO_202305.replace("Patch Applier: ", "Patch Applier: localhost: ")
VALIDATE = ("Validate json patch: [{'op': 'replace', 'path': '/PORT/Ethernet0/mtu', 'value': '9214'}, {'op': 'replace', 'path': "
            "'/PORT/Ethernet8/mtu', 'value': '9214'}] failed due to:Data Loading Failed\n"
            'Value "9214" does not satisfy the constraint "68..9100" (range, length, or pattern).')
REFUSED_E8 = 'Given patch will produce invalid config. Error: the switch rejected: {"op": "add", "path": "/PORT/Ethernet8/mtu", "value": "9214"}'
ILLEGAL_PORT = ("Modification of PORT table is illegal- validating function "
                "generic_config_updater.field_operation_validators.port_config_update_validator returned False")
DRY_RUN = "sudo config apply-patch --dry-run /tmp/s1.json-patch"


@pytest.mark.parametrize("out, line, said", [
    # 202305: 'Failed to apply patch', click's Error: an op written out in the failure is the op refused (not the
    # first path of the echoed patch)
    (ECHO_202305 + "Failed to apply patch\n" + USAGE + REFUSED_E8, '{"op": "add", "path": "/PORT/Ethernet8/mtu", "value": "9214"}', REFUSED_E8),
    # 202405+: the same failure under its scope, printed twice (secho and click)
    (ECHO_202405 + "Failed to apply patch due to: Failed to apply patch on the following scopes:\n- localhost: " + REFUSED_E8 + "\n" + USAGE
     + "Failed to apply patch on the following scopes:\n- localhost: " + REFUSED_E8,
     '{"op": "add", "path": "/PORT/Ethernet8/mtu", "value": "9214"}', "- localhost: " + REFUSED_E8),
    # a YANG failure names no op; 202405+ validate_patch echoes the patch inside the failure: the command is named
    (ECHO_202405 + "Failed to apply patch due to: " + VALIDATE + "\n" + USAGE + VALIDATE, DRY_RUN, "Data Loading Failed"),
    # a field-operation validator names a table: the patch changes two keys of it, so the command is named
    (ECHO_202305 + "Failed to apply patch\n" + USAGE + ILLEGAL_PORT, DRY_RUN, ILLEGAL_PORT),
    # gu_common.py's hard-coded illegal removals name the field
    (ECHO_202305 + "Failed to apply patch\n" + USAGE + "Given patch operation is invalid. Operation: remove is illegal on field: /PFC_WD/GLOBAL",
     '{"op": "remove", "path": "/PFC_WD/GLOBAL"}', "Operation: remove is illegal on field: /PFC_WD/GLOBAL"),
])
def test_a_refused_dry_run_names_the_op_the_failure_names_or_the_command(out, line, said):
    """Issue 33 point 3: the op is read from the failure lines, never from the patch GCU echoes before them."""
    shell, driver = two_mtu_session([("sudo config apply-patch --dry-run", out), ("systemctl list-timers", "")])
    driver.open_session("s1")
    with pytest.raises(_base.DeviceError) as caught:
        driver.load(Driver.render(plan()))
    assert caught.value.state == _base.UNCHANGED
    assert caught.value.line == line
    assert said in caught.value.device_said and "Patch Applier" not in caught.value.device_said
    assert "Usage:" not in caught.value.device_said and "Validate json patch" not in caught.value.device_said
    assert "sudo config delete-checkpoint s1" in shell.sent


def test_a_validator_refusing_the_one_op_of_its_table_names_that_op():
    shell, driver = session([("sudo config apply-patch --dry-run", ECHO_202305 + "Failed to apply patch\n" + USAGE + ILLEGAL_PORT),
                             ("systemctl list-timers", "")])
    driver.open_session("s1")
    with pytest.raises(_base.DeviceError) as caught:
        driver.load(Driver.render(plan()))
    assert json.loads(caught.value.line) == {"op": "replace", "path": "/PORT/Ethernet0/mtu", "value": "9214"}
    assert "refused replace /PORT/Ethernet0/mtu" in str(caught.value)


def test_a_failed_commit_names_the_command_when_the_failure_names_no_op():
    shell, driver = session([("sudo config apply-patch --dry-run", DRY),
                             ("sudo config apply-patch /tmp", ECHO_202405.replace("** DRY RUN EXECUTION **\n", "")
                              + "Failed to apply patch due to: Failed to apply patch on the following scopes:\n- localhost: TCAM resource exhausted\n"
                              + USAGE + "Failed to apply patch on the following scopes:\n- localhost: TCAM resource exhausted"),
                             ("sudo systemd-run", "Running timer as unit: lf-rollback-s1.timer"), ("sudo systemctl stop", ""),
                             ("systemctl list-timers", "")])
    driver.open_session("s1")
    driver.load(Driver.render(plan()))
    with pytest.raises(_base.DeviceError) as caught:
        driver.commit(300)
    assert caught.value.line == "sudo config apply-patch /tmp/s1.json-patch" and caught.value.state == _base.ROLLED_BACK
    assert caught.value.device_said == "Failed to apply patch on the following scopes:\n- localhost: TCAM resource exhausted"


def two_mtu_session(answers):
    """A switch whose two ports both differ from the plan (two ops in table PORT)."""
    shell, driver = session(answers)
    running = json.loads(Driver.running_of(Driver.render(plan())))
    for port in ("Ethernet0", "Ethernet8"):
        running["PORT"][port]["mtu"] = "9100"
    shell.answers.insert(0, ("sonic-cfggen -d --print-data", json.dumps(running, indent=4)))
    return shell, driver


def test_another_runs_pending_timer_is_refused_before_anything_changes():
    shell, driver = session([("systemctl list-timers", "Wed 2026-12-02 05:00:00 UTC 59s left n/a n/a lf-rollback-other.timer lf-rollback-other.service")])
    with pytest.raises(_base.DeviceError, match="lf-rollback-other.timer") as caught:
        driver.open_session("s1")
    assert caught.value.state == _base.UNCHANGED
    assert not [c for c in shell.sent if c.startswith("sudo")]


@pytest.mark.parametrize("listing", ["", "n/a n/a Wed 2026-12-02 05:00:00 UTC 3min ago lf-rollback-s1.timer lf-rollback-s1.service"])
def test_confirm_after_the_timer_fired_reports_rolled_back(listing):
    shell, driver = session([("systemctl list-timers", listing)])
    driver.session = "s1"
    driver._committed_with_timer = True  # pylint: disable=protected-access
    with pytest.raises(_base.DeviceError, match="has run out") as caught:
        driver.confirm("s1")
    assert caught.value.state == _base.ROLLED_BACK


@pytest.mark.parametrize("name", ["s1; reboot", "s1\nreboot", "", "-x", "a" * 70])
def test_session_names_carry_no_shell_syntax(name):
    shell, driver = session([])
    with pytest.raises(_base.DeviceError, match="session name"):
        driver.open_session(name)
    assert shell.sent == []


def test_load_refuses_a_line_that_is_not_one_of_our_ops():
    shell, driver = session([("systemctl list-timers", "")])
    driver.open_session("s1")
    # a fabric mode removes a /TABLE/key or /TABLE/key/field (issue 36), never a whole table
    with pytest.raises(_base.DeviceError, match="not an add of one CONFIG_DB value|not a JSON Patch|not a /TABLE/key or /TABLE/key/field path"):
        driver.load(['{"op": "remove", "path": "/PORT"}'])


# --- counters and links on sonic-utilities' outputs ---------------------------------------------------


def counters():
    return {
        "show pfc counters": fixture("show_pfc_counters.txt"),
        "show queue counters": fixture("show_queue_counters.txt"),
        "show queue wredcounters": fixture("show_queue_wredcounters.txt"),
        "show pfcwd stats": fixture("show_pfcwd_stats.txt"),
    }


def test_counters_from_the_published_outputs():
    ports, errors = Driver.parse_counters(counters())
    assert errors == {}
    assert ports["Ethernet0"]["pfc_rx_frames"]["0"] == 1200 and ports["Ethernet8"]["pfc_tx_frames"]["7"] == 817
    assert ports["Ethernet0"]["queue_drops"]["1"] == 39 and ports["Ethernet8"]["queue_drops"]["1"] == 68
    assert ports["Ethernet0"]["wred_drops"]["1"] == 60 and ports["Ethernet0"]["ecn_marked"]["1"] == 39
    assert ports["Ethernet0"]["watchdog_storms"] == {"3": 1} and ports["Ethernet0"]["watchdog_status"] == {"3": "DEADLOCK"}
    assert ports["Ethernet4"]["watchdog_status"] == {"3": "OK"} and ports["Ethernet4"]["watchdog_restores"] == {"3": 2}
    assert "10" not in ports["Ethernet0"]["queue_drops"]  # MC10: a multicast queue, not read


def test_counters_refuse_a_form_they_do_not_read():
    outputs = counters()
    outputs["show queue counters"] = fixture("show_pfc_counters.txt")
    outputs["show pfcwd stats"] = "Error: pfcwd is not running"
    ports, errors = Driver.parse_counters(outputs)
    assert sorted(errors) == ["show pfcwd stats", "show queue counters"]
    assert "Port  TxQ" in errors["show queue counters"]


def test_counter_commands_check_the_port_names():
    assert Driver.counter_commands(["Ethernet0"]) == list(Driver.COUNTER_COMMANDS)
    with pytest.raises(ValueError, match="ports: 'swp1'"):
        Driver.counter_commands(["swp1"])


def test_links_from_the_published_outputs():
    ends = Driver.parse_links({"show lldp table": fixture("show_lldp_table.txt"), "show interfaces status": fixture("show_interfaces_status.txt")})
    assert [n["port"] for n in ends["Ethernet0"]["neighbors"]] == ["00:00:00:00:00:01", "00:00:00:00:00:02"]
    assert ends["Ethernet0"]["neighbors"][0]["system"] == "dummy" and ends["Ethernet0"]["neighbors"][0]["port_descr"] == "First MAC"
    assert ends["Ethernet0"]["oper"] == "down" and ends["Ethernet0"]["speed"] is None
    assert ends["Ethernet32"] == {"oper": "up", "speed": "40G", "width": None, "neighbors": []}


def test_links_refuse_an_unknown_status_form():
    with pytest.raises(_base.LinkFormError, match="^sonic: 'show interfaces status'"):
        Driver.parse_links({"show lldp table": fixture("show_lldp_table.txt"), "show interfaces status": "Error: no such command"})


def test_a_patch_file_bash_cannot_write_is_refused_before_the_dry_run():
    shell, driver = session([("cat > ", "-bash: /tmp/s1.json-patch: Permission denied"), ("systemctl list-timers", "")])
    driver.open_session("s1")
    with pytest.raises(_base.DeviceError, match="writing /tmp/s1.json-patch failed") as caught:
        driver.load(Driver.render(plan()))
    assert caught.value.state == _base.UNCHANGED
    assert not [c for c in shell.sent if "apply-patch" in c]


def test_an_untimed_commit_arms_no_timer_and_drops_the_checkpoint():
    shell, driver = session([("sudo config apply-patch --dry-run", DRY), ("sudo config apply-patch /tmp", "Patch applied successfully."),
                             ("systemctl list-timers", "")])
    driver.open_session("s1")
    driver.load(Driver.render(plan()))
    driver.commit(None)
    assert not [c for c in shell.sent if c.startswith("sudo systemd-run")]
    assert shell.sent[-3:] == ["rm -f /tmp/s1.json-patch", "rm -f /tmp/s1.undo", "sudo config delete-checkpoint s1"]


def test_a_failed_timed_apply_is_rolled_back_at_once():
    shell, driver = session([("sudo config apply-patch --dry-run", DRY),
                             ("sudo config apply-patch /tmp", "Failed to apply patch due to: boom\nError: boom"),
                             ("sudo systemd-run", "Running timer as unit: lf-rollback-s1.timer\nWill run service as unit: lf-rollback-s1.service"),
                             ("systemctl list-timers", "")])
    driver.open_session("s1")
    driver.load(Driver.render(plan()))
    with pytest.raises(_base.DeviceError, match="apply-patch failed") as caught:
        driver.commit(120)
    assert caught.value.state == _base.ROLLED_BACK and "boom" in str(caught.value)
    assert shell.sent[-4:] == ["sudo systemctl stop lf-rollback-s1.timer", "sudo bash /tmp/s1.undo", "rm -f /tmp/s1.undo",
                               "sudo config delete-checkpoint s1"]


def test_an_answer_keeps_the_leading_spaces_of_a_right_aligned_header():
    """queuestat and pfcwd right-align their tables (tabulate stralign='right'): the first header cell
    starts with spaces, and cutting them off moves every header cell off the ruler's dash groups."""
    answer = ("show pfcwd stats\n"
              "     QUEUE    STATUS    STORM DETECTED/RESTORED    TX OK/DROP    RX OK/DROP    TX LAST OK/DROP    RX LAST OK/DROP\n"
              "-----------  --------  -------------------------  ------------  ------------  -----------------  -----------------\n"
              "Ethernet0:3   stormed                        1/0        100/300        100/300              0/0                0/0\n")
    text = sonic.Driver._strip_echo("show pfcwd stats", answer)  # pylint: disable=protected-access
    assert text.startswith("     QUEUE")
    ports, errors = sonic.Driver.parse_counters({"show pfcwd stats": text})
    assert errors == {} and ports["Ethernet0"]["watchdog_storms"]["3"] == 1


def test_counter_output_of_a_command_the_driver_did_not_ask_for_is_refused():
    ports, errors = sonic.Driver.parse_counters({"show interfaces counters": "IFACE  STATE  RX_OK\n-----  -----  -----\n"})
    assert ports == {} and list(errors) == ["show interfaces counters"]
    assert "not a counter command this driver reads" in errors["show interfaces counters"]


# --- per release and SKU: the path, the refusals before any device, the dry-run text --------------------------

MELLANOX = "Mellanox-SN4700-O8C48"


def test_a_release_sku_with_no_documented_path_is_refused_when_the_plan_is_built():
    intent = {"name": "lab", "transport": "roce", "roce": {}}
    device = {"kind": "switch", "platform": "sonic", "release": "202405", "hwsku": MELLANOX, "buffer_model": "traditional",
              "ports": {"Ethernet0": {"speed": "400G"}}}
    errors = _plan.validate(intent, {"leaf3": device})[0]
    assert any(e.startswith("leaf3: lossless_fabric_device.release: release 202405, HwSKU Mellanox-SN4700-O8C48: no documented path "
                            "for a static lossless BUFFER_PROFILE") for e in errors), errors
    assert not _plan.validate(intent, {"leaf3": dict(device, release="202211")})[0]
    # two speeds, two ECN values: one stock profile holds only one on 202305-202505, a profile of our own on master
    mixed = dict(device, buffer_model="dynamic", ports={"Ethernet0": {"speed": "400G"}, "Ethernet8": {"speed": "100G"}})
    errors = _plan.validate(intent, {"leaf3": mixed})[0]
    assert any("release 202405, HwSKU Mellanox-SN4700-O8C48: the ports need 2 different ECN thresholds" in e for e in errors), errors
    assert not _plan.validate(intent, {"leaf3": dict(mixed, release="master")})[0]
    errors = _plan.validate(intent, {"leaf3": dict(mixed, release="202106")})[0]
    assert any("'202106' is not a SONiC release branch" in e for e in errors), errors
    errors = _plan.validate(intent, {"leaf3": {"kind": "switch", "platform": "eos", "hwsku": MELLANOX, "ports": {"Ethernet1": {"speed": "400G"}}}})[0]
    assert any("hwsku: applies to platform sonic only" in e for e in errors), errors


RUNNING = {"PORT": {"Ethernet0": {"mtu": "9100"}, "Ethernet8": {"mtu": "9100"}},
           "WRED_PROFILE": {"AZURE_LOSSLESS": {"ecn": "ecn_all", "green_min_threshold": "1048576", "green_max_threshold": "2097152",
                                               "green_drop_probability": "5"}},
           "PFC_WD": {"Ethernet8": {"action": "alert", "detection_time": "400", "restoration_time": "800"}}}


@pytest.mark.parametrize("release, hwsku, asic, build, by_gcu", [
    ("202305", MELLANOX, "mellanox", "202305.9-0a1b2c3d", True),      # listed (spc3), no build date: no gate
    ("202305", "Accton-AS7726-32X", "broadcom", "202305.9-0a1b2c3d", False),
    ("202405", "Arista-7260CX3-C64", "broadcom", "20180531.01", False),   # th2 from 20181100: a tag built before it
    ("202405", "Arista-7260CX3-C64", "broadcom", "20240531.01", True),
    ("202505", None, "broadcom", "202505.1-0a1b2c3d", False),
    ("202511", "Accton-AS7726-32X", "broadcom", "202511.1-0a1b2c3d", True),   # no WRED validator from 202511
])
def test_split_sends_what_gcu_refuses_through_ecnconfig_and_the_watchdog_through_pfcwd(release, hwsku, asic, build, by_gcu):
    lines = Driver.render(plan(release=release, **({"hwsku": hwsku} if hwsku else {})))
    ops_, cli, undo = Driver(None, "leaf1").split(lines, json.dumps(RUNNING), release, asic, hwsku, build)
    wred_ops = [op for op in ops_ if op["path"].startswith("/WRED_PROFILE")]
    assert not [op for op in ops_ if op["path"].startswith("/PFC_WD")]
    p = plan()
    wd = p["watchdog"]
    start = "sudo pfcwd start --action drop --restoration-time %d" % wd["restoration_time_ms"]
    assert "%s Ethernet0 Ethernet8 %d" % (start, wd["detection_time_ms"]) in cli
    # undo: the port without a watchdog is stopped, the other one restarted with what it had
    assert "pfcwd stop Ethernet0" in undo and "pfcwd start --action alert --restoration-time 800 Ethernet8 400" in undo
    if release in ("202511",):
        assert [op["op"] for op in wred_ops] == ["add"]   # a new profile of our own, whole
    elif by_gcu:
        assert {op["op"] for op in wred_ops} == {"replace"} and not [c for c in cli if "ecnconfig" in c]
        tunable = ("green_min_threshold", "green_max_threshold", "green_drop_probability")
        assert {op["path"] for op in wred_ops} == {"/WRED_PROFILE/AZURE_LOSSLESS/%s" % f for f in tunable}
    else:
        ecn = p["ports"]["Ethernet0"]["ecn"]
        assert not wred_ops
        assert "sudo ecnconfig -p AZURE_LOSSLESS -gdrop %d -gmax %d -gmin %d" % (
            ecn["max_probability_percent"], ecn["max_threshold_bytes"], ecn["min_threshold_bytes"]) in cli
        assert "ecnconfig -p AZURE_LOSSLESS -gdrop 5 -gmax 2097152 -gmin 1048576" in undo


# PatchApplier's dry run of an empty patch on each release's text (docs/research/sonic-gcu.md 1.4).
EMPTY = {
    "202211": ["Patch Applier: Sorting patch updates.", "Patch Applier: The patch was sorted into 0 changes.",
               "Patch Applier: Applying 0 changes in order.", "Patch Applier: Verifying patch updates are reflected on ConfigDB."],
    "202305": ["Patch Applier: Sorting patch updates.", "Patch Applier: The patch was converted into 0 changes.",
               "Patch Applier: Applying 0 changes in order.", "Patch Applier: Patch application completed."],
    "202405": ["Patch Applier: localhost: sorting patch updates.", "Patch Applier: The localhost patch was converted into 0 changes.",
               "Patch Applier: localhost: applying 0 changes in order.", "Patch Applier: localhost patch application completed."],
}
CHANGE = '[{"op": "replace", "path": "/PORT/Ethernet0/mtu", "value": "9214"}]'
ONE = {
    "202211": ["Patch Applier: The patch was sorted into 1 change:", "Patch Applier:   * " + CHANGE, "Patch Applier: Applying 1 change in order:",
               "Patch Applier:   * " + CHANGE, "** DryRun: Would apply " + CHANGE],
    "202305": ["Patch Applier: The patch was converted into 1 change:", "Patch Applier:   * " + CHANGE,
               "Patch Applier: Applying 1 change in order:", "Patch Applier:   * " + CHANGE, "** DryRun: Would apply " + CHANGE],
    "202405": ["Patch Applier: The localhost patch was converted into 1 change:", "Patch Applier: localhost: applying 1 change in order:",
               "Patch Applier:   * " + CHANGE, "** DryRun: Would apply " + CHANGE],
}


@pytest.mark.parametrize("release", sorted(EMPTY))
def test_the_dry_run_reads_each_releases_text_and_an_empty_patch_as_no_change(release):
    for body, want in ((EMPTY[release], ""), (ONE[release], CHANGE)):
        out = "\n".join(["** DRY RUN EXECUTION **"] + body + ["Patch applied successfully."])
        shell, driver = session([("sudo config apply-patch --dry-run", out), ("systemctl list-timers", "")])
        driver.open_session("s1")
        driver.load(Driver.render(plan()))
        assert driver.diff() == want   # the change listed twice up to 202311 is one change
    shell, driver = session([("sudo config apply-patch --dry-run", "Patch applied successfully."), ("systemctl list-timers", "")])
    driver.open_session("s1")
    driver.load(Driver.render(plan()))
    with pytest.raises(_base.DeviceError, match="sorted/converted into N changes"):
        driver.diff()
