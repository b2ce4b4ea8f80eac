# SPDX-License-Identifier: GPL-3.0-or-later
"""SONiC simulator (tests/lab/switchsim/sonic.py): each rule against the patch a wrong driver would send.

In-process shells for the rules (fast); one netmiko session over SSH for the shell forms and the
faults the SSH server applies. Sources of every rule: tests/lab/switchsim/README.md "SONiC".
"""
from __future__ import annotations

import json
import os
import pathlib
import sys
import time

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tests" / "lab"))

import wiring  # noqa: E402
from switchsim.client import SimProcess  # noqa: E402
from switchsim.server import Simulator  # noqa: E402

PORTS = ["Ethernet0", "Ethernet8"]


@pytest.fixture
def sim(tmp_path):
    cfg = {"time_scale": 0.002, "switches": [{"name": "leaf5", "platform": "sonic", "ports": PORTS}]}
    simulator = Simulator(cfg, str(tmp_path))
    yield simulator
    simulator.stop()


@pytest.fixture
def sh(sim):
    return sim.devices["leaf5"].new_shell(None)


def db(sim) -> dict:
    return json.loads(sim.devices["leaf5"].running_config())


def write(sh, path: str, text: str, delim: str = "'EOF'") -> str:
    out = sh.handle(f"cat > {path} <<{delim}")
    assert out == "" and sh.prompt() == "> "
    for line in text.splitlines():
        assert sh.handle(line) == ""
    return sh.handle(delim.strip("'\""))


def apply(sh, ops: list, dry: bool = False) -> str:
    assert write(sh, "/tmp/p.json-patch", "[\n" + ",\n".join(json.dumps(op) for op in ops) + "\n]") == ""
    return sh.handle("sudo config apply-patch " + ("--dry-run " if dry else "") + "/tmp/p.json-patch")


def rc(sh) -> str:
    return sh.handle("echo $?").strip()


def failed(out: str, sh) -> bool:
    """GCU's failure shape: its message, click's usage lines and Error:, exit status 2."""
    return ("Failed to apply patch" in out and 'Try "config apply-patch -h" for help.' in out
            and "\nError: " in out and "Patch applied successfully." not in out and rc(sh) == "2")


# --- the shell, sudo and the factory CONFIG_DB -------------------------------------------------
def test_prompt_factory_db_and_config_needs_root(sim, sh):
    assert sh.prompt() == "admin@leaf5:~$ "
    shown = json.loads(sh.handle("show runningconfiguration all"))
    assert sorted(shown["PORT"]) == PORTS and shown["PORT"]["Ethernet0"]["mtu"] == "9100"
    assert shown["DEVICE_METADATA"]["localhost"]["hostname"] == "leaf5" and shown["bgpraw"] == ""
    assert json.loads(sh.handle("sonic-cfggen -d --print-data")) == {k: v for k, v in shown.items() if k != "bgpraw"}
    assert sh.handle("config checkpoint cp1").strip() == "Root privileges are required for this operation"
    assert rc(sh) == "1"
    assert "cp1" not in sim.devices["leaf5"].checkpoints
    assert sh.handle("nv show").strip() == "-bash: nv: command not found" and rc(sh) == "127"
    out = sh.handle("sudo config frobnicate")
    assert 'Error: No such command "frobnicate".' in out and rc(sh) == "2"


# --- YANG: ranges, patterns, enums, unknown tables and fields, leafrefs, musts --------------------
def test_yang_range_rejects_a_value_outside_it_and_accepts_the_bound(sim, sh):
    out = apply(sh, [{"op": "replace", "path": "/PORT/Ethernet0/mtu", "value": "9217"}])
    assert failed(out, sh), out
    assert 'Value "9217" does not satisfy the constraint "68..9216" (range, length, or pattern).' in out
    assert "Validate json patch: [{" in out and "failed due to:Data Loading Failed" in out
    assert db(sim)["PORT"]["Ethernet0"]["mtu"] == "9100"
    assert "Patch applied successfully." in apply(sh, [{"op": "replace", "path": "/PORT/Ethernet0/mtu", "value": "9216"}])
    assert db(sim)["PORT"]["Ethernet0"]["mtu"] == "9216"


@pytest.mark.parametrize("ops, text", [
    ([{"op": "add", "path": "/DSCP_TO_TC_MAP", "value": {"RDMA": {"64": "3"}}}], "Data Loading Failed\nInvalid DSCP"),
    ([{"op": "add", "path": "/DSCP_TO_TC_MAP", "value": {"RDMA": {"26": "16"}}}], "Data Loading Failed\nInvalid Traffic Class"),
    ([{"op": "add", "path": "/PORT_QOS_MAP", "value": {"Ethernet0": {"pfc_enable": "3,8"}}}],
     'Value "3,8" does not satisfy the constraint "([0-7](,[0-7])*)?"'),
    ([{"op": "add", "path": "/WRED_PROFILE", "value": {"ROCE": {"ecn": "ecn_on"}}}], 'Invalid value "ecn_on" in "ecn" element.'),
    ([{"op": "add", "path": "/WRED_PROFILE", "value": {"ROCE": {"green_drop_probability": "101"}}}], '"0..100"'),
    ([{"op": "add", "path": "/SCHEDULER", "value": {"s0": {"type": "DWRR", "weight": "0"}}}], '"1..100"'),
    ([{"op": "add", "path": "/PFC_WD", "value": {"Ethernet0": {"detection_time": "50"}}}], '"100..5000"'),
    ([{"op": "add", "path": "/BUFFER_PG", "value": {"Ethernet0|8": {"profile": "NULL"}}}], "Invalid Buffer PG number"),
    ([{"op": "add", "path": "/BUFFER_PROFILE", "value": {"p": {"size": "1", "pool": "ingress_lossless_pool",
                                                               "dynamic_th": "8"}}}], '"-8..7"'),
])
def test_yang_value_checks_reject_what_the_models_forbid(sim, sh, ops, text):
    before = db(sim)
    out = apply(sh, ops)
    assert failed(out, sh) and text in out, out
    assert db(sim) == before


def test_unknown_table_and_unknown_field_are_refused(sim, sh):
    out = apply(sh, [{"op": "add", "path": "/ROCE_MAGIC", "value": {"x": {"a": "1"}}}])
    assert failed(out, sh)
    assert "sonic_yang(6):Note: Below table(s) have no YANG models: ROCE_MAGIC" in out
    assert "- localhost: Given patch is not valid because it has changes to tables without YANG models" in out
    out = apply(sh, [{"op": "add", "path": "/PORT/Ethernet0/pfc_mode", "value": "on"}])
    assert failed(out, sh)
    assert "All Keys are not parsed in PORT\ndict_keys(['Ethernet0'])\nexceptionList:[\"'pfc_mode'\"]" in out
    assert "ROCE_MAGIC" not in db(sim) and "pfc_mode" not in db(sim)["PORT"]["Ethernet0"]


def test_leafref_needs_the_referenced_entry_in_the_same_or_an_earlier_patch(sim, sh):
    qos = {"op": "add", "path": "/PORT_QOS_MAP", "value": {"Ethernet0": {"dscp_to_tc_map": "RDMA"}}}
    out = apply(sh, [qos])
    assert failed(out, sh)
    assert ('Leafref "/dtm:sonic-dscp-tc-map/dtm:DSCP_TO_TC_MAP/dtm:DSCP_TO_TC_MAP_LIST/dtm:name" of value "RDMA" '
            'points to a non-existing leaf.') in out
    ok = apply(sh, [{"op": "add", "path": "/DSCP_TO_TC_MAP", "value": {"RDMA": {"26": "3"}}}, qos])
    assert "Patch applied successfully." in ok, ok
    assert db(sim)["PORT_QOS_MAP"]["Ethernet0"]["dscp_to_tc_map"] == "RDMA"
    out = apply(sh, [{"op": "add", "path": "/QUEUE", "value": {"Ethernet9|3": {"scheduler": "nope"}}}])
    assert failed(out, sh) and "/port:sonic-port/port:PORT/port:PORT_LIST/port:name" not in out  # union: LYE_INVAL
    assert 'Invalid value "Ethernet9" in "ifname" element.' in out


def test_must_conditions_of_wred_and_pfcwd(sim, sh):
    wred = {"ROCE": {"green_min_threshold": "2000", "green_max_threshold": "1000"}}
    out = apply(sh, [{"op": "add", "path": "/WRED_PROFILE", "value": wred}])
    assert failed(out, sh) and "Green max threshold must be greater than or equal to min threshold" in out
    pfcwd = {"GLOBAL": {"POLL_INTERVAL": "400"}, "Ethernet0": {"detection_time": "200"}}
    out = apply(sh, [{"op": "add", "path": "/PFC_WD", "value": pfcwd}])
    assert failed(out, sh) and "detection_time must be greater than or equal to POLL_INTERVAL" in out
    out = apply(sh, [{"op": "add", "path": "/PFC_WD", "value": {"GLOBAL": {"action": "drop"}}}])
    assert failed(out, sh) and "Must condition \"../ifname != 'GLOBAL'\" not satisfied." in out
    out = apply(sh, [{"op": "add", "path": "/BUFFER_PROFILE", "value": {"p": {"pool": "ingress_lossless_pool"}}}])
    assert failed(out, sh) and 'Missing required element "size" in "BUFFER_PROFILE_LIST".' in out


# --- JSON Patch (RFC 6902 / 6901) ---------------------------------------------------------------
@pytest.mark.parametrize("ops, text", [
    ([{"op": "add", "path": "PORT/Ethernet0/mtu", "value": "9000"}], "Failed to apply patch due to: Location must start with /"),
    ([{"op": "add", "path": "/PORT/Ether~2net0", "value": {}}], "Found invalid escape ~2"),
    ([{"op": "merge", "path": "/PORT", "value": {}}], "Unknown operation 'merge'"),
    ([{"path": "/PORT"}], "Operation does not contain 'op' member"),
    ([{"op": "add", "path": "/PORT/Ethernet0/mtu"}], "The operation does not contain a 'value' member"),
    ([{"op": "add", "path": "/PFC_WD/Ethernet0", "value": {"action": "drop"}}], "failed due to:member 'PFC_WD' not found in {"),
    ([{"op": "replace", "path": "/PORT/Ethernet0/fec", "value": "rs"}], "can't replace a non-existent object 'fec'"),
    ([{"op": "remove", "path": "/PORT/Ethernet0/fec"}], "can't remove a non-existent object 'fec'"),
])
def test_bad_patches_fail_with_json_patch_errors(sim, sh, ops, text):
    before = db(sim)
    out = apply(sh, ops)
    assert failed(out, sh) and text in out, out
    assert db(sim) == before


def test_json_pointer_escapes_are_decoded(sim, sh):
    out = apply(sh, [{"op": "add", "path": "/SCHEDULER", "value": {}},
                     {"op": "add", "path": "/SCHEDULER/a~1b~0c", "value": {"type": "STRICT"}}])
    assert "Patch applied successfully." in out, out
    assert db(sim)["SCHEDULER"] == {"a/b~c": {"type": "STRICT"}}


def test_a_failing_test_op_applies_nothing_and_a_passing_one_applies_the_rest(sim, sh):
    change = {"op": "replace", "path": "/PORT/Ethernet0/mtu", "value": "9000"}
    out = apply(sh, [{"op": "test", "path": "/PORT/Ethernet0/mtu", "value": "1500"}, change])
    assert failed(out, sh)
    assert "9100 (<class 'str'>) is not equal to tested value 1500 (<class 'str'>)" in out
    assert db(sim)["PORT"]["Ethernet0"]["mtu"] == "9100"
    out = apply(sh, [{"op": "test", "path": "/PORT/Ethernet0/mtu", "value": "9100"}, change])
    assert "Patch applied successfully." in out and db(sim)["PORT"]["Ethernet0"]["mtu"] == "9000"


def test_non_string_values_and_empty_tables_are_refused(sim, sh):
    out = apply(sh, [{"op": "replace", "path": "/PORT/Ethernet0/mtu", "value": 9000}])
    assert failed(out, sh) and "localhost: after applying patch to config, there are still some parts not updated" in out
    out = apply(sh, [{"op": "add", "path": "/SCHEDULER", "value": {}}])
    assert failed(out, sh) and "given patch is not valid because it will result in empty tables" in out
    assert "Table: SCHEDULER" in out
    assert db(sim)["PORT"]["Ethernet0"]["mtu"] == "9100" and "SCHEDULER" not in db(sim)


def test_dry_run_prints_the_changes_and_changes_nothing(sim, sh):
    before = db(sim)
    out = apply(sh, [{"op": "replace", "path": "/PORT/Ethernet0/mtu", "value": "9000"}], dry=True)
    lines = out.splitlines()
    assert lines[0] == "** DRY RUN EXECUTION **" and lines[-1] == "Patch applied successfully."
    assert 'Patch Applier:   * [{"op": "replace", "path": "/PORT/Ethernet0/mtu", "value": "9000"}]' in lines
    assert '** DryRun: Would apply [{"op": "replace", "path": "/PORT/Ethernet0/mtu", "value": "9000"}]' in lines
    assert db(sim) == before
    empty = apply(sh, [], dry=True)
    assert "Patch Applier: The localhost patch was converted into 0 changes." in empty


# --- checkpoints, rollback, save ----------------------------------------------------------------
def test_checkpoint_list_rollback_delete(sim, sh):
    assert sh.handle("sudo config list-checkpoints").strip() == "[]"
    out = sh.handle("sudo config checkpoint cp1")
    assert out.rstrip().endswith("Checkpoint created successfully.")
    assert "Saving config db content to /etc/sonic/checkpoints/cp1.cp.json." in out
    assert json.loads(sh.handle("sudo config list-checkpoints")) == ["cp1"]
    apply(sh, [{"op": "replace", "path": "/PORT/Ethernet0/mtu", "value": "9000"}])
    out = sh.handle("sudo config rollback cp1")
    assert out.rstrip().endswith("Config rolled back successfully.") and rc(sh) == "0"
    assert db(sim)["PORT"]["Ethernet0"]["mtu"] == "9100"
    assert sh.handle("sudo config delete-checkpoint cp1").rstrip().endswith("Checkpoint deleted successfully.")
    assert sh.handle("sudo config list-checkpoints").strip() == "[]"
    out = sh.handle("sudo config delete-checkpoint cp1")
    assert "Failed to delete config checkpoint" in out and "Error: Checkpoint 'cp1' does not exist" in out and rc(sh) == "2"
    out = sh.handle("sudo config rollback cp1")
    assert "Failed to rollback config" in out and "Usage: config rollback [OPTIONS] CHECKPOINT_NAME" in out


def test_save_stores_the_startup_config_and_asks_without_yes(sim, sh):
    dev = sim.devices["leaf5"]
    apply(sh, [{"op": "replace", "path": "/PORT/Ethernet0/mtu", "value": "9000"}])
    assert dev.saved["PORT"]["Ethernet0"]["mtu"] == "9100"
    sh.handle("sudo config save")
    assert sh.ask is not None and sh.ask[0] == "Existing files will be overwritten, continue? [y/N]: "
    assert sh.ask[1]("n") == "Aborted!\n" and dev.saved["PORT"]["Ethernet0"]["mtu"] == "9100"
    out = sh.handle("sudo config save -y")
    assert out.strip() == "Running command: /usr/local/bin/sonic-cfggen -d --print-data > /etc/sonic/config_db.json"
    assert json.loads(dev.startup_lines()[0])["PORT"]["Ethernet0"]["mtu"] == "9000"


# --- the device-side rollback timer (systemd-run / systemctl) ------------------------------------
def _wait(predicate, seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()


def test_the_timer_rolls_back_at_its_deadline(sim, sh):
    sh.handle("sudo config checkpoint s1")
    out = sh.handle("sudo systemd-run --unit=lf-rollback-s1 --on-active=300 config rollback s1")
    assert out == "Running timer as unit: lf-rollback-s1.timer\nWill run service as unit: lf-rollback-s1.service\n"
    apply(sh, [{"op": "replace", "path": "/PORT/Ethernet0/mtu", "value": "9000"}])
    assert sh.handle("systemctl is-active lf-rollback-s1.timer").strip() == "active"
    row = sh.handle("systemctl list-timers --all --no-pager --no-legend 'lf-rollback-*.timer'")
    assert "lf-rollback-s1.timer lf-rollback-s1.service" in row and " left " in row
    assert sim.devices["leaf5"].pending_state()["pending_commit"]
    assert _wait(lambda: db(sim)["PORT"]["Ethernet0"]["mtu"] == "9100"), "the timer did not roll back"
    assert sh.handle("systemctl is-active lf-rollback-s1.timer").strip() == "inactive" and rc(sh) == "3"
    assert sh.handle("systemctl list-timers --all --no-pager --no-legend 'lf-rollback-*.timer'") == ""
    assert not sim.devices["leaf5"].pending_state()["pending_commit"]


def test_stopping_the_timer_keeps_the_change(sim, sh):
    sh.handle("sudo config checkpoint s2")
    sh.handle("sudo systemd-run --unit=lf-rollback-s2 --on-active=5min config rollback s2")
    apply(sh, [{"op": "replace", "path": "/PORT/Ethernet0/mtu", "value": "9000"}])
    assert sh.handle("systemctl stop lf-rollback-s2.timer").startswith("Failed to stop")  # needs root
    assert sh.handle("sudo systemctl stop lf-rollback-s2.timer") == "" and rc(sh) == "0"
    time.sleep(300 * 0.002 + 0.3)   # past the scaled deadline
    assert db(sim)["PORT"]["Ethernet0"]["mtu"] == "9000"
    assert not any(e["event"] == "timer_fired" for e in sim.devices["leaf5"].events)
    out = sh.handle("sudo systemctl stop lf-rollback-s2.timer")
    assert out.strip() == "Failed to stop lf-rollback-s2.timer: Unit lf-rollback-s2.timer not loaded." and rc(sh) == "5"
    assert "Unit lf-rollback-s3.timer" not in sh.handle("sudo systemd-run --unit=lf-rollback-s3 --on-active=1h true")
    assert "already loaded" in sh.handle("sudo systemd-run --unit=lf-rollback-s3 --on-active=1h true")
    assert "Failed to parse timer value: soon" in sh.handle("sudo systemd-run --unit=x --on-active=soon true")


# --- the shell forms the patch file travels in ----------------------------------------------------
def test_heredoc_quoting_and_file_permissions(sim, sh):
    sh.handle("false")
    write(sh, "/tmp/a", "rc=$?", delim="EOF")        # unquoted: bash expands ($? of `false`)
    write(sh, "/tmp/b", "rc=$?", delim="'EOF'")      # quoted: literal
    assert sh.handle("cat /tmp/a").strip() == "rc=1" and sh.handle("cat /tmp/b").strip() == "rc=$?"
    assert sh.handle("echo x > /etc/sonic/x").strip() == "-bash: /etc/sonic/x: Permission denied"
    assert sh.handle("rm -f /tmp/a; cat /tmp/a").strip() == "cat: /tmp/a: No such file or directory"
    out = sh.handle("sudo config apply-patch /tmp/none.json")
    assert "Failed to apply patch due to: [Errno 2] No such file or directory: '/tmp/none.json'" in out
    write(sh, "/tmp/c", "[{oops}]")
    assert "Expecting property name enclosed in double quotes: line 1 column 3 (char 2)" in sh.handle(
        "sudo config apply-patch /tmp/c")


def test_commit_error_fault_fails_the_apply_in_gcu_shape_not_the_dry_run_nor_the_rollback(sim, sh):
    """The change fails as it is applied: a dry run applies nothing and passes, and a rollback goes through."""
    assert "Checkpoint created successfully." in sh.handle("sudo config checkpoint cp1")
    assert "Patch applied successfully." in apply(sh, [{"op": "replace", "path": "/PORT/Ethernet0/mtu", "value": "9000"}])
    sim.devices["leaf5"].set_faults({"commit_error": "Failed to apply changes to ConfigDB"})
    change = [{"op": "replace", "path": "/PORT/Ethernet0/mtu", "value": "9001"}]
    assert "Patch applied successfully." in apply(sh, change, dry=True)
    out = apply(sh, change)
    assert failed(out, sh) and "- localhost: Failed to apply changes to ConfigDB" in out
    assert db(sim)["PORT"]["Ethernet0"]["mtu"] == "9000"
    assert "Config rolled back successfully." in sh.handle("sudo config rollback cp1")
    assert db(sim)["PORT"]["Ethernet0"]["mtu"] == "9100"


def test_reject_lines_fault_matches_each_field_change_of_a_grouped_patch(sim, sh):
    leaf = '{"op": "add", "path": "/PORT_QOS_MAP/Ethernet0/pfc_enable", "value": "3"}'
    sim.devices["leaf5"].set_faults({"reject_lines": ["^" + leaf.replace("|", "\\|") + "$"]})
    grouped = [{"op": "add", "path": "/PORT_QOS_MAP", "value": {"Ethernet0": {"pfc_enable": "3"}}}]
    out = apply(sh, grouped, dry=True)
    assert failed(out, sh) and "Error: the switch rejected: " + leaf in out
    assert "PORT_QOS_MAP" not in db(sim)
    other = apply(sh, [{"op": "add", "path": "/PORT_QOS_MAP", "value": {"Ethernet8": {"pfc_enable": "3"}}}])
    assert "Patch applied successfully." in other   # only the matching change is refused
    sim.devices["leaf5"].set_faults({"reject_lines": ["^sudo config checkpoint"]})
    assert sim.devices["leaf5"].rejected("sudo config checkpoint x")
    out = sh.reject("sudo config checkpoint x")
    assert "Error: the switch rejected: sudo config checkpoint x" in out and "x" not in sim.devices["leaf5"].checkpoints


# --- counters and links ---------------------------------------------------------------------
def test_counters_follow_the_control_api_and_the_config(sim, sh):
    dev = sim.devices["leaf5"]
    dev.set_counters("Ethernet0", {"pfc_rx": {"3": 1204}, "tx_packets": {"3": 5}, "watchdog_storms": {"3": 2},
                                   "watchdog_status": {"3": "DEADLOCK"}, "wred_drops": {"3": 7}})
    pfc = sh.handle("show pfc counters")
    assert pfc.startswith("  Port Rx    PFC0") and "Ethernet0       0       0       0   1,204" in pfc
    assert "  Port Tx    PFC0" in pfc
    queue = sh.handle("show queue counters Ethernet0")
    assert queue.startswith("For namespace :\n     Port    TxQ    Counter/pkts")
    assert json.loads(sh.handle("show queue counters Ethernet0 --json"))["Ethernet0"]["UC3"]["totalpacket"] == "5"
    assert "Ethernet0    UC3               7" in sh.handle("show queue wredcounters Ethernet0")
    assert [r.split()[:3] for r in sh.handle("show pfcwd stats").splitlines()[2:]] == [["Ethernet0:3", "N/A", "2/0"]]
    apply(sh, [{"op": "add", "path": "/PORT_QOS_MAP", "value": {"Ethernet0": {"pfc_enable": "3,4", "pfcwd_sw_enable": "3,4"}}}])
    assert sh.handle("sudo pfcwd start --action drop --restoration-time 200 Ethernet0 200") == ""
    stats = sh.handle("show pfcwd stats")
    assert [r.split()[:3] for r in stats.splitlines()[2:]] == [["Ethernet0:3", "stormed", "2/0"]]
    every = {r.split()[0]: r.split()[1] for r in sh.handle("show pfcwd stats -e").splitlines()[2:]}
    assert every["Ethernet0:4"] == "operational" and every["Ethernet0:5"] == "N/A" and len(every) == 16


def test_lldp_and_interface_status_from_the_wiring(tmp_path):
    hostvars = {
        "leaf5": {"lossless_fabric_device": {"kind": "switch", "platform": "sonic", "ports": {
            "Ethernet0": {"speed": "400G", "peer": {"host": "spine1", "port": "Ethernet1/1"}},
            "Ethernet8": {"speed": "400G"}}}},
        "spine1": {"lossless_fabric_device": {"kind": "switch", "platform": "eos", "ports": {
            "Ethernet1/1": {"speed": "400G", "peer": {"host": "leaf5", "port": "Ethernet0"}}}}},
    }
    wiring.write(str(tmp_path), wiring.build(hostvars))
    cfg = {"wiring_file": os.path.join(str(tmp_path), wiring.FILE), "switches": [
        {"name": "leaf5", "platform": "sonic", "ports": PORTS}, {"name": "spine1", "platform": "eos", "ports": ["Ethernet1/1"]}]}
    simulator = Simulator(cfg, str(tmp_path))
    try:
        sh = simulator.devices["leaf5"].new_shell(None)
        table = sh.handle("show lldp table").splitlines()
        assert table[0] == "Capability codes: (R) Router, (B) Bridge, (O) Other"
        assert table[1].split() == ["LocalPort", "RemoteDevice", "RemotePortID", "Capability", "RemotePortDescr"]
        assert table[3].split() == ["Ethernet0", "spine1", "Ethernet1/1", "BR"]
        assert table[-1] == "Total entries displayed:  1"
        status = sh.handle("show interfaces status").splitlines()
        assert status[0].split()[:4] == ["Interface", "Lanes", "Speed", "MTU"]
        assert status[2].split()[0] == "Ethernet0" and status[2].split()[7:9] == ["up", "up"]
        assert status[3].split()[7:9] == ["down", "up"]
        # What the EOS spine hears from this SONiC leaf: lldpmgrd's port ID = the PORT alias (subtype local).
        eos = simulator.devices["spine1"].lldp_ports()["Ethernet1/1"]["peer"]
        assert eos["system"] == "leaf5" and eos["port_id"] == "etp1" and eos["subtype"] == "local"
    finally:
        simulator.stop()


def test_peer_views_without_neighbours_print_their_empty_forms(sim, sh):
    """Issue 32: lldpshow prints its header and a 0 count when lldpctl answers with no neighbour (not nothing: the
    project's reader refuses a view without its table); lldpctl's detail is its header alone, and nothing for a
    port it does not name (lldpshow -p); intfutil description prints N/A for a port without a description;
    show/platform.py summary and its --json; an unknown platform sub-command is click's error."""
    table = sh.handle("show lldp table").splitlines()
    assert table[1].split() == ["LocalPort", "RemoteDevice", "RemotePortID", "Capability", "RemotePortDescr"]
    assert set(table[2].replace(" ", "")) == {"-"} and table[-1] == "Total entries displayed:  0"
    from ansible_collections.lossless.fabric.plugins.module_utils._platforms.sonic import _driver  # noqa: PLC0415

    ends = _driver.Driver.parse_links({"show lldp table": "\n".join(table), "show interfaces status": sh.handle("show interfaces status")})
    assert sorted(ends) == PORTS and not any(end["neighbors"] for end in ends.values())
    rule = "-" * 79
    assert sh.handle("show lldp neighbors").splitlines() == [rule, "LLDP neighbors:", rule]
    assert sh.handle("show lldp neighbors Ethernet0").strip() == ""
    apply(sh, [{"op": "add", "path": "/PORT/Ethernet8/description", "value": "gpu2 mlx5_0"}])
    description = sh.handle("show interfaces description").splitlines()
    assert description[0] == "  Interface    Oper    Admin    Alias    Description"
    assert [line.split(None, 4) for line in description[2:]] == [
        ["Ethernet0", "down", "up", "etp1", "N/A"], ["Ethernet8", "down", "up", "etp2", "gpu2 mlx5_0"]]
    assert sh.handle("show interfaces description Ethernet8").splitlines()[2].split()[0] == "Ethernet8"
    summary = sh.handle("show platform summary").splitlines()
    assert summary[:4] == ["Platform: x86_64-lab_sonic-r0", "HwSKU: lab-sonic-32x400G", "ASIC: broadcom", "ASIC Count: 1"]
    assert json.loads(sh.handle("show platform summary --json"))["hwsku"] == "lab-sonic-32x400G"
    assert 'Error: No such command "frobnicate".' in sh.handle("show platform frobnicate") and rc(sh) == "2"


def test_lldp_neighbors_detail_from_the_wiring(tmp_path):
    hostvars = {
        "leaf5": {"lossless_fabric_device": {"kind": "switch", "platform": "sonic", "ports": {
            "Ethernet0": {"speed": "400G", "peer": {"host": "spine1", "port": "Ethernet1/1"}}, "Ethernet8": {"speed": "400G"}}}},
        "spine1": {"lossless_fabric_device": {"kind": "switch", "platform": "eos", "ports": {
            "Ethernet1/1": {"speed": "400G", "peer": {"host": "leaf5", "port": "Ethernet0"}}}}},
    }
    wiring.write(str(tmp_path), wiring.build(hostvars))
    cfg = {"wiring_file": os.path.join(str(tmp_path), wiring.FILE), "switches": [
        {"name": "leaf5", "platform": "sonic", "ports": PORTS}, {"name": "spine1", "platform": "eos", "ports": ["Ethernet1/1"]}]}
    simulator = Simulator(cfg, str(tmp_path))
    try:
        sh = simulator.devices["leaf5"].new_shell(None)
        lines = sh.handle("show lldp neighbors").splitlines()
        rule = "-" * 79
        assert lines[:3] == [rule, "LLDP neighbors:", rule] and lines[-1] == rule
        assert lines[3].startswith("Interface:    Ethernet0, via: LLDP, RID: 1, Time: 0 day, 00:00:")
        assert lines[4:12] == ["  Chassis:", "    ChassisID:    mac " + wiring.mac("spine1", "chassis"), "    SysName:      spine1",
                               "    TTL:          120", "    Capability:   Bridge, on", "    Capability:   Router, on", "  Port:",
                               "    PortID:       ifname Ethernet1/1"]
        assert sh.handle("show lldp neighbors Ethernet0") == sh.handle("show lldp neighbors")
        assert sh.handle("show lldp neighbors Ethernet8").strip() == ""
    finally:
        simulator.stop()


# --- over SSH: netmiko, the PS2 prompts and the server-side faults -----------------------------------
netmiko = pytest.importorskip("netmiko")


def test_netmiko_session_heredoc_and_drop_while_loading(tmp_path):
    cfg = {"time_scale": 0.002, "switches": [{"name": "leaf6", "platform": "sonic", "port": 0, "username": "admin",
                                              "password": "s3cret-sonic", "ports": PORTS}]}
    with SimProcess(cfg, str(tmp_path)) as s:
        def connect():
            return netmiko.ConnectHandler(device_type="edgecore_sonic", host="127.0.0.1", port=s.port("leaf6"),
                                          username="admin", password="s3cret-sonic", conn_timeout=10)
        conn = connect()
        assert conn.find_prompt() == "admin@leaf6:~$"
        body = '[\n{"op": "replace", "path": "/PORT/Ethernet0/mtu", "value": "9000"}\n]'
        echoed = conn.send_command_timing("cat > /tmp/s.json-patch <<'LF_PATCH_EOF'\n" + body + "\nLF_PATCH_EOF")
        assert echoed.count("\n> ") == 4   # bash's PS2 before each here-document line and the delimiter
        out = conn.send_command("sudo config apply-patch /tmp/s.json-patch", read_timeout=20)
        assert out.splitlines()[-1] == "Patch applied successfully."
        conn.disconnect()
        before = s.running("leaf6")
        s.set_faults("leaf6", {"drop_after_commands": 2})
        conn = connect()
        with pytest.raises(Exception):  # noqa: B017 - netmiko raises its own errors on a closed channel
            conn.send_command_timing("cat > /tmp/t.json-patch <<'LF_PATCH_EOF'\n[\n"
                                     '{"op": "replace", "path": "/PORT/Ethernet0/mtu", "value": "1500"}\n]\nLF_PATCH_EOF')
            conn.send_command("sudo config apply-patch /tmp/t.json-patch", read_timeout=5)
        assert s.running("leaf6") == before
        s.set_faults("leaf6", {"drop_after_commands": None, "reject_lines": ['^{"op": "replace".*"1500"}$']})
        conn = connect()
        conn.send_command_timing("cat > /tmp/t.json-patch <<'LF_PATCH_EOF'\n[\n"
                                 '{"op": "replace", "path": "/PORT/Ethernet0/mtu", "value": "1500"}\n]\nLF_PATCH_EOF')
        out = conn.send_command("sudo config apply-patch /tmp/t.json-patch", read_timeout=20)
        assert "Failed to apply patch due to:" in out and '"value": "1500"}' in out and "Error: " in out
        assert s.running("leaf6") == before
        conn.disconnect()


# --- GCU's field-operation validators per release and SKU (tests/lab/switchsim/sonic_gcu.py) -------------
MELLANOX = "Mellanox-SN4700-O8C48"   # spc3 on every release's list (202305+)
UNKNOWN = "Accton-AS7726-32X"        # on no list
ILLEGAL = "Modification of {} table is illegal- validating function generic_config_updater.field_operation_validators.{} returned False"


def shell(tmp_path, release: str, hwsku: str | None = None, **extra):
    spec = {"name": "leaf5", "platform": "sonic", "ports": PORTS, "version": release, **extra}
    if hwsku:
        spec["hwsku"] = hwsku
    simulator = Simulator({"time_scale": 0.002, "switches": [spec]}, str(tmp_path))
    return simulator, simulator.devices["leaf5"].new_shell(None)


NEW_WRED = {"op": "add", "path": "/WRED_PROFILE/LF_ECN", "value": {"ecn": "ecn_all", "green_min_threshold": "150000",
                                                                   "green_max_threshold": "1500000", "green_drop_probability": "5"}}
NEW_WD = {"op": "add", "path": "/PFC_WD", "value": {"Ethernet0": {"action": "drop", "detection_time": "200", "restoration_time": "400"}}}
NEW_PROFILE = {"op": "add", "path": "/BUFFER_PROFILE/LF_PG",
               "value": {"pool": "ingress_lossless_pool", "size": "164864", "xoff": "145408", "xon": "19456"}}


@pytest.mark.parametrize("release", ["202305", "202405", "202505"])
@pytest.mark.parametrize("hwsku", [MELLANOX, UNKNOWN])
def test_gcu_refuses_a_new_wred_profile_watchdog_table_and_buffer_profile(tmp_path, release, hwsku):
    """The issue's patch (new WRED_PROFILE, BUFFER_PROFILE and the PFC_WD table) is refused on 202305-202505 for a listed
    SKU and an unlisted one; the old simulator (no validators) accepted all three."""
    sim, sh = shell(tmp_path, release, hwsku)
    try:
        wred_fn = "wred_profile_config_update_validator" if release == "202505" else "rdma_config_update_validator"
        for op, table, fn in ((NEW_WRED, "WRED_PROFILE", wred_fn), (NEW_WD, "PFC_WD", "rdma_config_update_validator"),
                              (NEW_PROFILE, "BUFFER_PROFILE", "rdma_config_update_validator")):
            before = db(sim)
            out = apply(sh, [op], dry=True)
            assert failed(out, sh) and ILLEGAL.format(table, fn) in out, out
            assert db(sim) == before
    finally:
        sim.stop()


@pytest.mark.parametrize("release", ["202511", "master"])
def test_gcu_from_202511_lets_wred_and_whole_buffer_profiles_through_but_not_the_watchdog_table(tmp_path, release):
    sim, sh = shell(tmp_path, release, UNKNOWN)
    try:
        assert "Patch applied successfully." in apply(sh, [NEW_WRED, NEW_PROFILE])
        out = apply(sh, [NEW_WD])
        assert failed(out, sh) and ILLEGAL.format("PFC_WD", "rdma_config_update_validator") in out
        # a field of an existing profile: only xoff / dynamic_th, and only on a listed SKU
        out = apply(sh, [{"op": "replace", "path": "/BUFFER_PROFILE/LF_PG/size", "value": "200000"}])
        assert failed(out, sh) and ILLEGAL.format("BUFFER_PROFILE", "buffer_profile_config_update_validator") in out
    finally:
        sim.stop()


def test_gcu_202211_has_no_field_validators(tmp_path):
    sim, sh = shell(tmp_path, "202211", UNKNOWN)
    try:
        out = apply(sh, [NEW_WRED, NEW_WD, NEW_PROFILE])
        assert "Patch applied successfully." in out and db(sim)["PFC_WD"]["Ethernet0"]["detection_time"] == "200"
    finally:
        sim.stop()


@pytest.mark.parametrize("release, name, ok", [
    ("202405", "AZURE_LOSSLESS", True), ("202405", "LF_ECN", False),   # up to 202411: the profile must be AZURE_LOSSLESS
    ("202505", "AZURE_LOSSLESS", True), ("202505", "LF_ECN", True),    # 202505: any profile name, last segment
])
def test_gcu_lets_a_listed_sku_replace_the_green_thresholds_of_an_existing_profile(tmp_path, release, name, ok):
    sim, sh = shell(tmp_path, release, MELLANOX, initial_config=[json.dumps({
        "op": "add", "path": "/WRED_PROFILE/LF_ECN", "value": {"ecn": "ecn_all", "green_min_threshold": "1", "green_max_threshold": "2000000"}})])
    try:
        change = [{"op": "replace", "path": f"/WRED_PROFILE/{name}/green_min_threshold", "value": "150000"}]
        out = apply(sh, change)
        assert ("Patch applied successfully." in out) is ok, out
        # other fields (ecn) are refused on every listed SKU; the same replace on an unlisted SKU too
        assert failed(apply(sh, [{"op": "replace", "path": f"/WRED_PROFILE/{name}/ecn", "value": "ecn_green"}]), sh)
    finally:
        sim.stop()
    sim, sh = shell(tmp_path, release, UNKNOWN)
    try:
        out = apply(sh, [{"op": "replace", "path": "/WRED_PROFILE/AZURE_LOSSLESS/green_min_threshold", "value": "150000"}])
        assert failed(out, sh) and "Modification of WRED_PROFILE table is illegal" in out
    finally:
        sim.stop()


def test_gcu_buffer_profile_xoff_needs_a_digit_in_the_name_and_a_listed_asic_with_a_headroom_date(tmp_path):
    profiles = {"pg_lossless_400000_3m_profile": {"pool": "ingress_lossless_pool", "size": "1", "xoff": "1"},
                "ingress_lossless_profile": {"pool": "ingress_lossless_pool", "size": "1", "xoff": "1"}}
    init = [json.dumps({"op": "add", "path": "/BUFFER_PROFILE", "value": profiles})]
    for hwsku, ok in ((MELLANOX, True), ("Force10-S6000", False)):   # td2: no headroom date ("")
        sim, sh = shell(tmp_path / hwsku, "202405", hwsku, initial_config=init)
        try:
            out = apply(sh, [{"op": "replace", "path": "/BUFFER_PROFILE/pg_lossless_400000_3m_profile/xoff", "value": "2"}])
            assert ("Patch applied successfully." in out) is ok, out
            out = apply(sh, [{"op": "replace", "path": "/BUFFER_PROFILE/ingress_lossless_profile/xoff", "value": "2"}])
            assert failed(out, sh)
        finally:
            sim.stop()


def test_gcu_build_date_gate_and_the_illegal_removals(tmp_path):
    init = [json.dumps({"op": "add", "path": "/PFC_WD", "value": {"GLOBAL": {"POLL_INTERVAL": "200"}}})]
    # th2 from 20181100 for the watchdog; a tagged build older than that date is refused, an untagged one is not dated
    for build, ok in (("20180531.01", False), ("20231105.10", True), ("202405.7-0a1b2c3d", True)):
        sim, sh = shell(tmp_path / build, "202405", "Arista-7260CX3-C64", initial_config=init, build_version=build)
        try:
            out = apply(sh, [{"op": "replace", "path": "/PFC_WD/GLOBAL/POLL_INTERVAL", "value": "300"}])
            assert ("Patch applied successfully." in out) is ok, out
            out = apply(sh, [{"op": "remove", "path": "/PFC_WD/GLOBAL"}])
            assert failed(out, sh) and "Given patch operation is invalid. Operation: remove is illegal on field: /PFC_WD/GLOBAL" in out
        finally:
            sim.stop()


def test_gcu_validates_the_rollback_too(tmp_path):
    """config rollback replaces the config through the same PatchApplier: a WRED change made by ecnconfig on an unlisted SKU
    cannot be rolled back by GCU (the driver undoes it with ecnconfig first)."""
    sim, sh = shell(tmp_path, "202405", UNKNOWN)
    try:
        assert "Checkpoint created successfully." in sh.handle("sudo config checkpoint cp")
        assert sh.handle("sudo ecnconfig -p AZURE_LOSSLESS -gmin 150000 -gmax 1500000 -gdrop 5") == ""
        assert db(sim)["WRED_PROFILE"]["AZURE_LOSSLESS"]["green_max_threshold"] == "1500000"
        out = sh.handle("sudo config rollback cp")
        assert "Failed to rollback config" in out and "Modification of WRED_PROFILE table is illegal" in out
        assert sh.handle("sudo ecnconfig -p AZURE_LOSSLESS -gmin 1048576 -gmax 2097152 -gdrop 5") == ""
        assert "Config rolled back successfully." in sh.handle("sudo config rollback cp")
    finally:
        sim.stop()


# --- the dry-run text per release ------------------------------------------------------------------------
@pytest.mark.parametrize("release, count, twice", [
    ("202211", "Patch Applier: The patch was sorted into 1 change:", True),
    ("202305", "Patch Applier: The patch was converted into 1 change:", True),
    ("202405", "Patch Applier: The localhost patch was converted into 1 change:", False),
    ("master", "Patch Applier: The localhost patch was converted into 1 change:", False),
])
def test_dry_run_text_per_release(tmp_path, release, count, twice):
    sim, sh = shell(tmp_path, release)
    try:
        out = apply(sh, [{"op": "replace", "path": "/PORT/Ethernet0/mtu", "value": "9000"}], dry=True)
        change = 'Patch Applier:   * [{"op": "replace", "path": "/PORT/Ethernet0/mtu", "value": "9000"}]'
        assert count in out and out.count(change) == (2 if twice else 1), out
        assert out.count("** DryRun: Would apply") == 1 and "Patch applied successfully." in out
        empty = apply(sh, [], dry=True)
        assert ("into 0 changes." in empty) and "applying 0 changes in order." in empty.lower()
        assert ("localhost" in empty) is not twice
        out = apply(sh, [{"op": "replace", "path": "/PORT/Ethernet0/mtu", "value": "99999"}])
        assert ("Failed to apply patch due to: " in out) is not twice and "Failed to apply patch" in out
    finally:
        sim.stop()


# --- CLI tools: pfcwd, ecnconfig, show version; the watchdog mask; buffermgrd ------------------------------
def test_pfcwd_start_needs_pfc_on_the_port_and_stop_removes_the_entry(sim, sh):
    out = sh.handle("sudo pfcwd start --action drop Ethernet0 200")
    assert "restoration time not defined; default to 2 times detection time: 400 ms" in out
    assert "SKIPPED: PFC is not enabled on port: Ethernet0" in out and "PFC_WD" not in db(sim)
    assert "is not in the valid range of 100 to 5000" in sh.handle("sudo pfcwd start Ethernet0 50") and rc(sh) == "2"
    assert "Failed to run command, invalid options:\nEthernet9" in sh.handle("sudo pfcwd start Ethernet9 200")
    assert sh.handle("pfcwd start Ethernet0 200").strip() == "Root privileges are required for this operation"
    apply(sh, [{"op": "add", "path": "/PORT_QOS_MAP", "value": {"Ethernet0": {"pfc_enable": "3"}}}])
    assert sh.handle("sudo pfcwd start --action forward --restoration-time 300 Ethernet0 200") == ""
    assert db(sim)["PFC_WD"] == {"Ethernet0": {"action": "forward", "detection_time": "200", "restoration_time": "300"}}
    assert sh.handle("sudo pfcwd stop Ethernet0") == "" and "PFC_WD" not in db(sim)


def test_ecnconfig_changes_an_existing_profile_only(sim, sh):
    assert sh.handle("sudo ecnconfig -p LF_ECN -gmin 1").strip() == \
        "Exception caught:  Input arguments error. Invalid WRED profile LF_ECN for namespace None"
    assert "Invalid WRED profile parameters" in sh.handle("sudo ecnconfig -p AZURE_LOSSLESS -gmin 3000000")
    assert sh.handle("sudo ecnconfig -p AZURE_LOSSLESS -gmin 150000 -gmax 1500000 -gdrop 7") == ""
    row = db(sim)["WRED_PROFILE"]["AZURE_LOSSLESS"]
    assert (row["green_min_threshold"], row["green_max_threshold"], row["green_drop_probability"], row["ecn"]) == \
        ("150000", "1500000", "7", "ecn_all")


def test_the_watchdog_watches_the_pfcwd_sw_enable_tcs_only(sim, sh):
    """pfcwdorch (202205+) registers the TCs of pfcwd_sw_enable; the old simulator watched pfc_enable."""
    dev = sim.devices["leaf5"]
    dev.set_counters("Ethernet0", {"watchdog_storms": {"3": 1, "4": 1}})
    apply(sh, [{"op": "add", "path": "/PORT_QOS_MAP", "value": {"Ethernet0": {"pfc_enable": "3,4", "pfcwd_sw_enable": "3"}}}])
    sh.handle("sudo pfcwd start --action drop --restoration-time 400 Ethernet0 200")
    rows = {r.split()[0]: r.split()[1] for r in sh.handle("show pfcwd stats").splitlines()[2:]}
    assert rows == {"Ethernet0:3": "operational", "Ethernet0:4": "N/A"}


def test_show_version_prints_the_build_the_sku_and_the_asic(tmp_path):
    sim, sh = shell(tmp_path, "202405", MELLANOX)
    try:
        out = sh.handle("show version")
        assert "\nSONiC Software Version: SONiC.202405.0-6f2a1c3d\n" in out
        assert f"\nHwSKU: {MELLANOX}\nASIC: mellanox\n" in out
    finally:
        sim.stop()


def test_buffermgrd_rewrites_the_lossless_pg_on_a_port_change_unless_it_names_the_computed_profile(tmp_path):
    """Traditional model: a PORT change makes buffermgrd point BUFFER_PG at pg_lossless_<speed>_<cable>_profile (created if
    absent, reused untouched if present). A custom name is lost; the computed name with our values survives."""
    sim, sh = shell(tmp_path, "202211", UNKNOWN, buffer_model="traditional")
    try:
        base = [{"op": "add", "path": "/CABLE_LENGTH", "value": {"AZURE": {"Ethernet0": "3m", "Ethernet8": "3m"}}},
                {"op": "add", "path": "/PORT_QOS_MAP", "value": {"Ethernet0": {"pfc_enable": "3,4"}, "Ethernet8": {"pfc_enable": "3,4"}}},
                {"op": "add", "path": "/BUFFER_PROFILE", "value": {
                    "LF_PG": {"pool": "ingress_lossless_pool", "size": "200000", "xoff": "180000", "xon": "20000"},
                    "pg_lossless_400000_3m_profile": {"pool": "ingress_lossless_pool", "size": "200000", "xoff": "180000", "xon": "20000"}}},
                {"op": "add", "path": "/BUFFER_PG", "value": {"Ethernet0|3-4": {"profile": "LF_PG"},
                                                              "Ethernet8|3-4": {"profile": "pg_lossless_400000_3m_profile"}}}]
        assert "Patch applied successfully." in apply(sh, base)
        # the same patch changed PORT_QOS_MAP pfc_enable: buffermgrd already ran for both ports
        assert db(sim)["BUFFER_PG"]["Ethernet0|3-4"] == {"profile": "pg_lossless_400000_3m_profile"}
        assert db(sim)["BUFFER_PROFILE"]["pg_lossless_400000_3m_profile"]["xoff"] == "180000"
        assert "Patch applied successfully." in apply(sh, [{"op": "add", "path": "/BUFFER_PG/Ethernet0|3-4/profile", "value": "LF_PG"}])
        assert db(sim)["BUFFER_PG"]["Ethernet0|3-4"] == {"profile": "LF_PG"}   # no PORT change: kept
        assert "Patch applied successfully." in apply(sh, [{"op": "replace", "path": "/PORT/Ethernet0/mtu", "value": "9000"}])
        assert db(sim)["BUFFER_PG"]["Ethernet0|3-4"] == {"profile": "pg_lossless_400000_3m_profile"}
        assert db(sim)["BUFFER_PG"]["Ethernet8|3-4"] == {"profile": "pg_lossless_400000_3m_profile"}
    finally:
        sim.stop()


# --- the collection's driver against the simulator, per release and SKU ------------------------------------
class SimConn:
    """A terminal onto an in-process simulator shell: each line typed is echoed, answered, then prompted."""

    def __init__(self, shell_):
        self.shell = shell_
        self.out = ""
        self.base_prompt = shell_.prompt().rstrip("$ ")

    def read_channel(self):
        out, self.out = self.out, ""
        return out

    def write_channel(self, data):
        for line in data.split("\n")[:-1]:
            self.out += line + "\n" + self.shell.handle(line) + self.shell.prompt()


def _driver_world(tmp_path, release, hwsku):
    from ansible_collections.lossless.fabric.plugins.module_utils._intent import _plan  # noqa: PLC0415
    from ansible_collections.lossless.fabric.plugins.module_utils._platforms.sonic import _driver  # noqa: PLC0415

    spec = {"name": "leaf5", "platform": "sonic", "ports": PORTS, "version": release}
    if hwsku:
        spec["hwsku"] = hwsku
    simulator = Simulator({"time_scale": 1.0, "switches": [spec]}, str(tmp_path))
    device = {"kind": "switch", "platform": "sonic", "release": release, "ports": {p: {"speed": "400G"} for p in PORTS}}
    if hwsku:
        device["hwsku"] = hwsku
    plan = _plan.build_plan({"name": "lab", "transport": "roce", "roce": {}}, {"leaf5": device})["devices"]["leaf5"]
    return simulator, _driver.Driver, plan


@pytest.mark.parametrize("release, hwsku, wred_by", [
    ("202211", None, "gcu"), ("202305", UNKNOWN, "ecnconfig"), ("202405", MELLANOX, "gcu"), ("202405", UNKNOWN, "ecnconfig"),
    ("202505", None, "ecnconfig"), ("master", UNKNOWN, "gcu"),
])
def test_the_driver_goes_through_each_releases_validators_and_an_empty_change_reads_as_none(tmp_path, release, hwsku, wred_by):
    sim, Driver, plan = _driver_world(tmp_path, release, hwsku)
    try:
        dev = sim.devices["leaf5"]
        lines = Driver.render(plan)
        driver = Driver(SimConn(dev.new_shell(None)), "leaf5")
        driver.open_session("s1")
        driver.load(lines)
        diff = driver.diff()
        assert diff and ("sudo ecnconfig -p AZURE_LOSSLESS" in diff) is (wred_by == "ecnconfig"), diff
        assert "sudo pfcwd start --action drop --restoration-time" in diff
        driver.commit(3600)
        assert driver.readback_missing(lines) == []
        driver.confirm("s1")
        config = json.loads(dev.running_config())
        assert config["PORT_QOS_MAP"]["Ethernet0"]["pfcwd_sw_enable"] == config["PORT_QOS_MAP"]["Ethernet0"]["pfc_enable"] == "3"
        assert sorted(config["PFC_WD"]) == PORTS and not dev.checkpoints and not dev.units
        assert not [f for f in dev.files if f.startswith("/tmp/s1")]
        # the same plan again: no change on this release's dry-run text
        again = Driver(SimConn(dev.new_shell(None)), "leaf5")
        again.open_session("s2")
        again.load(lines)
        assert again.diff() == ""
        again.abort()
    finally:
        sim.stop()


@pytest.mark.parametrize("release, hwsku", [("202405", UNKNOWN), ("202505", MELLANOX)])
def test_the_driver_rolls_back_cli_and_gcu_changes_alike(tmp_path, release, hwsku):
    """ecnconfig / pfcwd changes are undone by the rollback script before config rollback, which GCU validates: the
    switch is back to its checkpoint (a bare config rollback would be refused on an unlisted SKU)."""
    sim, Driver, plan = _driver_world(tmp_path, release, hwsku)
    try:
        dev = sim.devices["leaf5"]
        before = json.loads(dev.running_config())
        driver = Driver(SimConn(dev.new_shell(None)), "leaf5")
        driver.open_session("s1")
        driver.load(Driver.render(plan))
        driver.commit(3600)
        assert json.loads(dev.running_config()) != before
        driver.rollback("s1")
        assert json.loads(dev.running_config()) == before and not dev.checkpoints
    finally:
        sim.stop()


def test_the_driver_refuses_a_switch_whose_show_version_disagrees_with_the_inventory(tmp_path):
    from ansible_collections.lossless.fabric.plugins.module_utils._platforms import _base  # noqa: PLC0415

    sim, Driver, plan = _driver_world(tmp_path, "202405", MELLANOX)
    try:
        dev = sim.devices["leaf5"]
        dev.release, dev.build_version = "202505", "202505.3-0a1b2c3d"
        driver = Driver(SimConn(dev.new_shell(None)), "leaf5")
        driver.open_session("s1")
        with pytest.raises(_base.DeviceError) as caught:
            driver.load(Driver.render(plan))
        text = str(caught.value)
        assert caught.value.state == _base.UNCHANGED and "leaf5" in text
        assert "the inventory says release 202405, HwSKU Mellanox-SN4700-O8C48, the switch says release 202505" in text
        assert not dev.checkpoints
    finally:
        sim.stop()


# --- issue 33 point 3: the op the switch refused, or the command -----------------------------------------
@pytest.mark.parametrize("release", ["202305", "202505"])
def test_the_driver_names_the_field_the_switch_refused_not_the_first_line_of_the_echoed_patch(tmp_path, release):
    """reject_lines on one field change deep in the patch: the error names that op (GCU's notices echo the whole patch
    first, whose first path is /PORT/Ethernet0/mtu), the device's words are the failure without the echo."""
    from ansible_collections.lossless.fabric.plugins.module_utils._platforms import _base  # noqa: PLC0415

    sim, Driver, plan = _driver_world(tmp_path, release, None)
    try:
        dev = sim.devices["leaf5"]
        refused = '{"op": "add", "path": "/PORT_QOS_MAP/Ethernet8/pfc_enable", "value": "3"}'
        dev.set_faults({"reject_lines": ["^" + refused.replace("{", "\\{") + "$"]})
        driver = Driver(SimConn(dev.new_shell(None)), "leaf5")
        driver.open_session("s1")
        with pytest.raises(_base.DeviceError) as caught:
            driver.load(Driver.render(plan))
        assert caught.value.line == refused and caught.value.state == _base.UNCHANGED
        assert "refused add /PORT_QOS_MAP/Ethernet8/pfc_enable" in str(caught.value)
        assert "the switch rejected: " + refused in caught.value.device_said and "Patch Applier" not in caught.value.device_said
        assert not dev.checkpoints
    finally:
        sim.stop()


@pytest.mark.parametrize("release", ["202305", "202505"])
def test_a_commit_that_fails_naming_no_op_names_the_command_and_is_rolled_back(tmp_path, release):
    from ansible_collections.lossless.fabric.plugins.module_utils._platforms import _base  # noqa: PLC0415

    sim, Driver, plan = _driver_world(tmp_path, release, None)
    try:
        dev = sim.devices["leaf5"]
        before = json.loads(dev.running_config())
        dev.set_faults({"commit_error": "TCAM resource exhausted"})
        driver = Driver(SimConn(dev.new_shell(None)), "leaf5")
        driver.open_session("s1")
        driver.load(Driver.render(plan))       # a dry run applies nothing: it passes
        with pytest.raises(_base.DeviceError) as caught:
            driver.commit(3600)
        assert caught.value.line == "sudo config apply-patch /tmp/s1.json-patch"
        assert caught.value.state == _base.ROLLED_BACK and json.loads(dev.running_config()) == before
        said = caught.value.device_said
        assert said.endswith("TCAM resource exhausted") and "Patch Applier" not in said and "Usage:" not in said
    finally:
        sim.stop()
