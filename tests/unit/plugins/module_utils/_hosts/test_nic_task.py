# SPDX-License-Identifier: GPL-3.0-or-later
"""nic_qos and nic_counters end to end on lab host trees (tests/lab/hostsim),
both driver stacks: first run changes, second does not, check mode writes
nothing, unsupported settings come back with the reason, a mismatch planted
behind our back is found, bad input fails before anything is written, and NIC
counter snapshots give counters_delta the switch-counters shape."""

from __future__ import annotations

import hashlib
import os
import pathlib
import subprocess
import sys

import pytest

from ansible_collections.lossless.fabric.plugins.filter.counters_delta import counters_delta
from ansible_collections.lossless.fabric.plugins.module_utils._hosts import _nic_task
from ansible_collections.lossless.fabric.plugins.module_utils._hosts._nic import NicError
from ansible_collections.lossless.fabric.plugins.module_utils._intent import _plan

ROOT = pathlib.Path(__file__).resolve().parents[5]
sys.path.insert(0, str(ROOT / "tests" / "lab"))

from hostsim import tools, tree  # noqa: E402  # pylint: disable=wrong-import-position
from hostsim.plugin import make_host  # noqa: E402  # pylint: disable=wrong-import-position

NICS = [{"name": "mlx5_0", "netdev": "eth2"}, {"name": "mlx5_1", "netdev": "eth3"}]
INTENT = {"name": "t", "transport": "roce", "roce": {}}


def plan_for(nics=None, **roce):
    device = {"kind": "host", "nics": [dict(n, speed="400G") for n in (NICS if nics is None else nics)]}
    return _plan.build_plan(dict(INTENT, roce=roce), {"gpu1": device})["devices"]["gpu1"]


class Host:
    """A lab host tree and an in-process runner over the same shims the lab's bin/ calls."""

    def __init__(self, tmp_path, stack, **options):
        self.vars = make_host(str(tmp_path / "host"), NICS, stack, sys.executable, **options)
        self.root = self.vars["lab_host_root"]
        self.calls = []

    def runner(self, argv):
        self.calls.append(list(argv))
        if argv[0] not in tools.TOOLS:
            return 127, "", "%s: command not found" % argv[0]
        try:
            return 0, tools.TOOLS[argv[0]](self.root, list(argv[1:])), ""
        except tools.ToolError as exc:
            return exc.rc, "", str(exc)

    def which(self, name):
        return name if name in tools.TOOLS else None

    def qos(self, plan=None, check=False, **params):
        args = {"plan": plan or plan_for(), "root": self.root, "state": "present", "stack": "auto"}
        args.update(params)
        return _nic_task.run_qos(args, self.runner, self.which, check)

    def fingerprint(self):
        """Every file of the tree (sysfs values and the shims' driver state); nic_qos's own lock and timer records left out."""
        digest = {}
        for folder, _dirs, files in os.walk(self.root):
            for name in files:
                path = os.path.join(folder, name)
                if os.path.relpath(path, self.root).startswith(OWN_FILES):
                    continue
                with open(path, "rb") as handle:
                    digest[os.path.relpath(path, self.root)] = hashlib.sha256(handle.read()).hexdigest()
        return digest


# nic_qos's bookkeeping under the root: the NIC lock and the NIC rollback timers (not NIC state).
OWN_FILES = (os.path.dirname(_nic_task.LOCK_FILE) + os.sep, _nic_task.TIMER_DIR + os.sep)


@pytest.fixture(params=["mlnx", "upstream"])
def host(request, tmp_path):
    return Host(tmp_path, request.param)


def test_first_run_changes_second_does_not(host):
    first = host.qos()
    assert first["changed"] is True
    expected = {"trust", "dscp_map", "pfc", "global_pause", "cnp", "rdma_cm_tos", "roce_mode", "mtu"}
    if tree.load(host.root)["stack"] == "mlnx":
        expected |= {"dcqcn", "traffic_class"}
    for nic in ("mlx5_0", "mlx5_1"):
        assert set(first["nics"][nic]["changes"]) == expected
    assert first["ran"] == first["commands"]
    second = host.qos()
    assert second["changed"] is False
    assert second["commands"] == [] and all(not n["changes"] for n in second["nics"].values())


def test_check_mode_reads_real_values_and_writes_nothing(host):
    before = host.fingerprint()
    checked = host.qos(check=True)
    assert checked["changed"] is True and checked["commands"]
    assert checked["ran"] == []
    assert host.fingerprint() == before
    # only reads ran: mlnx_qos -i IF, dcb ... show, ethtool -a
    assert all(len(c) == 3 if c[0] == "mlnx_qos" else "show" in c if c[0] == "dcb" else c[1] == "-a" for c in host.calls), host.calls
    # diff before = what the host holds, after = the plan
    assert "mlx5_0 (eth2) mtu: 1500\n" in checked["diff"]["before"] and "mlx5_0 (eth2) mtu: 9000\n" in checked["diff"]["after"]
    # trust pcp (mlnx) or an empty APP table (upstream): no DSCP map in effect yet, all 64 entries get set
    assert "mlx5_0 (eth2) dscp_map: null\n" in checked["diff"]["before"]
    # what check mode predicted is exactly what the real run does
    assert host.qos()["ran"] == checked["commands"]


def test_mlnx_values_land_where_the_vendor_driver_keeps_them(tmp_path):
    host = Host(tmp_path, "mlnx")
    host.qos()
    state = tree.load(host.root)["nics"]["eth2"]
    assert state["trust"] == "dscp" and state["dscp_map"]["26"] == 3 and state["dscp_map"]["48"] == 6 and state["dscp_map"]["24"] == 0
    assert state["pfc"] == [0, 0, 0, 1, 0, 0, 0, 0]
    assert state["pause"] == {"autoneg": "off", "rx": "off", "tx": "off"}

    def read(rel):
        return pathlib.Path(host.root, rel).read_text().strip()

    assert read("sys/class/net/eth2/ecn/roce_np/enable/3") == "1" and read("sys/class/net/eth2/ecn/roce_rp/enable/3") == "1"
    assert read("sys/class/net/eth2/ecn/roce_np/enable/0") == "0"
    assert read("sys/class/net/eth2/ecn/roce_np/cnp_dscp") == "48" and read("sys/class/net/eth2/ecn/roce_np/cnp_802p_prio") == "6"
    assert read("sys/class/infiniband/mlx5_0/tc/1/traffic_class") == "106"
    assert read("sys/kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_tos") == "106"
    assert read("sys/kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_mode") == "RoCE v2"
    assert read("sys/class/net/eth2/mtu") == "9000"
    assert read("sys/class/net/eth2/qos/trust") == "dscp"


def test_upstream_reports_what_it_cannot_set_with_the_reason(tmp_path):
    host = Host(tmp_path, "upstream")
    result = host.qos()
    reasons = {(u["nic"], u["setting"]): u["reason"] for u in result["unsupported"]}
    assert sorted(reasons) == [("mlx5_0", "dcqcn"), ("mlx5_0", "traffic_class"), ("mlx5_1", "dcqcn"), ("mlx5_1", "traffic_class")]
    assert "not settable on the upstream driver" in reasons[("mlx5_0", "dcqcn")] and "ROCE_CC_PRIO_MASK_P1" in reasons[("mlx5_0", "dcqcn")]
    assert "NCCL_IB_TC" in reasons[("mlx5_0", "traffic_class")]
    state = tree.load(host.root)["nics"]["eth2"]
    assert sorted(map(tuple, state["app"]))[26] == (26, 3) and len(state["app"]) == 64 and state["trust"] == "dscp"
    cc = pathlib.Path(host.root, "sys/kernel/debug/mlx5/0000:3b:00.0/cc_params")
    assert [(cc / f).read_text().strip() for f in ("np_cnp_dscp", "np_cnp_prio_mode", "np_cnp_prio")] == ["48", "0", "6"]
    # the boot script carries only what this host can take
    assert not any("traffic_class" in line or "/ecn/" in line for line in result["persist"]["eth2"])


def test_upstream_without_debugfs_reports_cnp(tmp_path):
    host = Host(tmp_path, "upstream", debugfs=False)
    result = host.qos()
    reasons = {u["setting"]: u["reason"] for u in result["unsupported"] if u["nic"] == "mlx5_0"}
    assert reasons["cnp"] == "not settable on the upstream driver without debugfs (mount -t debugfs none /sys/kernel/debug)"
    assert host.qos()["changed"] is False


def _plant_pfc(h):
    if h.stack == "mlnx":
        return h.runner(["mlnx_qos", "-i", "eth3", "--pfc", "0,0,0,0,0,0,0,0"])
    return h.runner(["dcb", "pfc", "set", "dev", "eth3", "prio-pfc", "3:off"])


def _plant_dscp(h):
    if h.stack == "mlnx":
        return h.runner(["mlnx_qos", "-i", "eth3", "--dscp2prio", "set,26,0"])
    return h.runner(["dcb", "app", "add", "dev", "eth3", "dscp-prio", "26:5"])  # a second APP entry for DSCP 26


@pytest.mark.parametrize(
    "plant, setting",
    [
        (_plant_pfc, "pfc"),
        (_plant_dscp, "dscp_map"),
        (lambda h: pathlib.Path(h.root, "sys/class/net/eth3/mtu").write_text("1500\n"), "mtu"),
        (lambda h: pathlib.Path(h.root, "sys/kernel/config/rdma_cm/mlx5_1/ports/1/default_roce_tos").write_text("0\n"), "rdma_cm_tos"),
    ],
    ids=["pfc", "dscp-map", "mtu", "rdma-cm-tos"],
)
def test_a_mismatch_planted_behind_our_back_is_found_and_fixed(host, plant, setting):
    host.qos()
    host.stack = tree.load(host.root)["stack"]
    plant(host)
    gathered = host.qos(state="gathered")
    assert gathered["changed"] is False
    assert gathered["nics"]["mlx5_1"]["changes"] == [setting] and gathered["nics"]["mlx5_0"]["changes"] == []
    fixed = host.qos()
    assert fixed["changed"] is True and fixed["nics"]["mlx5_1"]["changes"] == [setting]
    if setting == "dscp_map":  # of a map only the entry that differs
        assert fixed["diff"]["after"] == 'mlx5_1 (eth3) dscp_map: {"26": 3}\n'
        assert fixed["diff"]["before"] == 'mlx5_1 (eth3) dscp_map: {"26": %s}\n' % ("0" if host.stack == "mlnx" else "null")
    assert host.qos()["changed"] is False


@pytest.mark.parametrize(
    "params, message",
    [
        ({"nics": ["mlx5_7"]}, "nics[0]: 'mlx5_7' is not an RDMA NIC on this host"),
        ({"plan": "bad-pfc"}, "plan.pfc_priorities[0]: 9 is not a priority (0-7)"),
        ({"firmware": {"CNP_DSCP_P1": "48 && reboot"}}, "firmware.CNP_DSCP_P1"),
        ({"nics": ["mlx5_0"], "pci_ids": ["15b3"]}, "nics and pci_ids: give one of them"),
    ],
    ids=["unknown-nic", "priority-out-of-range", "firmware-injection", "both-selectors"],
)
def test_bad_input_fails_before_anything_is_written(tmp_path, params, message):
    host = Host(tmp_path, "mlnx")
    before = host.fingerprint()
    if params.get("plan") == "bad-pfc":
        plan = plan_for()
        plan["pfc_priorities"] = [9]
        params = dict(params, plan=plan)
    with pytest.raises(NicError) as err:
        host.qos(**params)
    assert message in str(err.value)
    assert host.calls == [] and host.fingerprint() == before


def test_a_tool_failure_names_the_nic_the_command_and_what_it_said(tmp_path):
    host = Host(tmp_path, "upstream")
    with pytest.raises(NicError) as err:
        host.qos(stack="mlnx")  # forced onto the wrong stack: mlnx_qos is not installed there
    assert "mlx5_0: mlnx_qos -i eth2: exit 127" in str(err.value)


def test_firmware_only_when_asked_reboot_required_never_rebooted(tmp_path):
    host = Host(tmp_path, "mlnx")
    assert host.qos()["reboot_required"] is False
    assert not any(c[0] == "mlxconfig" for c in host.calls)
    first = host.qos(firmware={"ROCE_CC_PRIO_MASK_P1": 8, "CNP_DSCP_P1": 48})
    assert first["changed"] is True and first["reboot_required"] is True
    assert first["firmware"]["mlx5_0"]["changes"] == ["ROCE_CC_PRIO_MASK_P1"]
    assert "mlxconfig -y -d 0000:3b:00.0 set ROCE_CC_PRIO_MASK_P1=8" in first["commands"]
    again = host.qos(firmware={"ROCE_CC_PRIO_MASK_P1": 8, "CNP_DSCP_P1": 48})
    assert again["changed"] is False and again["reboot_required"] is True  # still pending until the user reboots
    with pytest.raises(NicError, match="mlx5_0: mlxconfig -e -d 0000:3b:00.0 q: exit 3: -E- The Device doesn't support NUM_OF_VFS parameter"):
        host.qos(firmware={"NUM_OF_VFS": 8})


def test_peer_memory_reported(tmp_path):
    assert Host(tmp_path / "a", "mlnx").qos(state="gathered")["peer_memory"] == {"present": True, "module": "nvidia_peermem", "nv_mem_version": None}
    assert Host(tmp_path / "b", "mlnx", peermem=False).qos(state="gathered")["peer_memory"]["present"] is False


def test_select_by_pci_ids(tmp_path):
    host = Host(tmp_path, "upstream")
    result = host.qos(pci_ids=["15b3:1021"])
    assert sorted(result["nics"]) == ["mlx5_0", "mlx5_1"]
    with pytest.raises(NicError, match="no RDMA NIC matches 15b3:101d"):
        host.qos(pci_ids=["15b3:101d"])


def launch_moved(root, netdev, prio=3):
    """What a lab launch (tests/lab/traffic.py) leaves in the host state: 1 MiB each way on the priority, with pauses
    (lossless). Reads move nothing themselves."""
    state = tree.load(root)
    stats = state["nics"][netdev]["stats"]
    for key, value in (("rx_prio%d_bytes", 1048576), ("tx_prio%d_bytes", 1048576), ("rx_prio%d_packets", 256), ("tx_prio%d_packets", 256),
                       ("rx_prio%d_pause", 2), ("rx_prio%d_pause_duration", 10)):
        stats[key % prio] = stats.get(key % prio, 0) + value
    tree.save(root, state)


def test_nic_counters_snapshot_and_delta_have_the_switch_shape(host):
    host.qos()
    params = {"plan": plan_for(), "root": host.root, "priorities": [3, 6]}
    pre = _nic_task.run_counters(params, host.runner, "gpu1")
    assert counters_delta(_nic_task.run_counters(params, host.runner, "gpu1"), pre)["ports"]["mlx5_0"]["rx_prio_bytes"] == {"3": 0, "6": 0}
    launch_moved(host.root, "eth2")
    post = _nic_task.run_counters(params, host.runner, "gpu1")
    assert pre["changed"] is False and pre["netdevs"] == {"mlx5_0": "eth2", "mlx5_1": "eth3"}
    snap = post["counters"]
    assert snap["kind"] == "nic" and snap["device"] == "gpu1" and snap["platform"] in ("mlnx", "upstream")
    assert sorted(snap["ports"]) == ["mlx5_0", "mlx5_1"]
    assert set(snap["ports"]["mlx5_0"]["pfc_rx_frames"]) == {"3", "6"}
    assert "rx_prio_marked" in snap["not_available"] and "pfc_rx_frames" not in snap["not_available"]
    change = counters_delta(post, pre)
    assert change["kind"] == "nic" and change["resets"] == []
    # a read moves nothing; the launch's traffic (DSCP 26) landed on priority 3, lossless: pause frames, no drop
    assert change["ports"]["mlx5_0"]["rx_prio_bytes"] == {"3": 1048576, "6": 0}
    assert change["ports"]["mlx5_0"]["pfc_rx_frames"]["3"] == 2
    assert change["ports"]["mlx5_0"]["rx_discards_phy"] == 0
    assert change["ports"]["mlx5_0"]["rp_cnp_handled"] == 0


def test_nic_counters_refuse_a_bad_priority_and_an_unknown_nic(tmp_path):
    host = Host(tmp_path, "upstream")
    with pytest.raises(NicError, match="priorities: 8 not in 0-7"):
        _nic_task.run_counters({"root": host.root, "priorities": [3, 8]}, host.runner, "gpu1")
    with pytest.raises(NicError, match="'mlx5_9' is not an RDMA NIC"):
        _nic_task.run_counters({"root": host.root, "nics": ["mlx5_9"]}, host.runner, "gpu1")


def test_lab_bin_shims_are_the_same_tools(tmp_path):
    """The bin/ scripts the lab puts on the module's path run tools.py on the host tree."""
    host = Host(tmp_path, "upstream")
    bin_dir = host.vars["lab_host_bin"]

    def run(*argv):
        return subprocess.run([os.path.join(bin_dir, argv[0]), *argv[1:]], capture_output=True, text=True, check=False, timeout=30)

    assert run("dcb", "pfc", "set", "dev", "eth2", "prio-pfc", "all:off", "3:on").returncode == 0
    assert run("dcb", "pfc", "show", "dev", "eth2").stdout.splitlines()[1] == "prio-pfc 0:off 1:off 2:off 3:on 4:off 5:off 6:off 7:off"
    bad = run("dcb", "pfc", "set", "dev", "eth2", "prio-pfc", "9:on")
    assert bad.returncode == 1 and bad.stderr.strip() == "In PRIO:PFC mapping, PRIO is expected to be 0..7"


def test_the_boot_script_alone_restores_every_setting_after_a_reboot(host, tmp_path):
    """The persist lines of eth2, run by sh with the lab's shims on PATH on a host whose runtime state a
    reboot wiped; only the test points /sys at the lab root (the script names the real paths)."""
    result = host.qos()
    tree.build(host.root, NICS, tree.load(host.root)["stack"])  # reboot: driver defaults again
    assert host.qos(state="gathered")["nics"]["mlx5_0"]["changes"]
    env = dict(os.environ, PATH="%s:%s" % (host.vars["lab_host_bin"], os.environ["PATH"]))

    def sh(lines):
        script = tmp_path / "apply.sh"
        script.write_text("set -e\n" + "".join(line.replace(" /sys/", " %s/sys/" % host.root) + "\n" for line in lines))
        return subprocess.run(["sh", str(script)], capture_output=True, text=True, env=env, check=False, timeout=120)

    done = sh(result["persist"]["eth2"])
    assert done.returncode == 0, done.stderr
    after = host.qos(state="gathered")["nics"]
    assert after["mlx5_0"]["changes"] == [] and after["mlx5_1"]["changes"], after
    # run again on a configured NIC: harmless (ethtool -A "no pause parameters changed" is not a failure)
    again = sh([line for line in result["persist"]["eth2"] if line.startswith("ethtool -A")])
    assert again.returncode == 0, again.stderr


class FakeModule:
    def __init__(self, bin_dir):
        self.params = {"bin_dir": bin_dir}
        self.ran = []

    def get_bin_path(self, name):
        return None

    def run_command(self, argv, environ_update=None):
        self.ran.append((argv, environ_update))
        return 0, "", ""


def test_tool_runner_prefers_bin_dir_and_names_a_missing_tool(tmp_path):
    (tmp_path / "dcb").write_text("#!/bin/sh\n")
    (tmp_path / "dcb").chmod(0o755)
    module = FakeModule(str(tmp_path))
    run, which = _nic_task.tool_runner(module)
    assert which("dcb") == str(tmp_path / "dcb") and which("mlnx_qos") is None
    run(["dcb", "pfc", "show", "dev", "eth2"])
    assert module.ran == [([str(tmp_path / "dcb"), "pfc", "show", "dev", "eth2"], {"LC_ALL": "C"})]
    with pytest.raises(NicError, match="mlnx_qos: not installed on this host"):
        run(["mlnx_qos", "-i", "eth2"])


# ---------------------------------------------------------------------------
# state restored: put an earlier gathered result back (the change window's NIC rollback)
# ---------------------------------------------------------------------------

# The change a window makes on top of a configured host: CNP on DSCP 40 / priority 5, data on DSCP 24.
CHANGED = {"cnp": {"dscp": 40, "priority": 5}, "data": {"dscp": 24}}


def test_restore_puts_every_file_back_byte_for_byte_and_is_idempotent(host):
    host.qos()  # the host as the fabric had it before the window
    snapshot = host.qos(state="gathered")
    kept = host.fingerprint()
    changed = host.qos(plan=plan_for(**CHANGED))
    assert changed["changed"] is True and {"cnp", "dscp_map"} <= set(changed["nics"]["mlx5_0"]["changes"])
    assert host.fingerprint() != kept

    restored = host.qos(state="restored", restore=snapshot, plan=None)
    assert restored["changed"] is True
    assert set(restored["nics"]["mlx5_0"]["changes"]) == set(changed["nics"]["mlx5_0"]["changes"])
    # the diff goes from the changed values back to the gathered ones
    assert "mlx5_0 (eth2) cnp: {\"dscp\": 40, \"priority\": 5}\n" in restored["diff"]["before"]
    assert "mlx5_0 (eth2) cnp: {\"dscp\": 48, \"priority\": 6}\n" in restored["diff"]["after"]
    assert restored["ran"] == restored["commands"] and restored["unsupported"] == []  # every gathered value went back
    # every file nic_qos (or a tool it runs) writes: sysfs, configfs, debugfs and the shims' driver state
    assert host.fingerprint() == kept

    again = host.qos(state="restored", restore=snapshot, plan=None)
    assert again["changed"] is False and again["commands"] == [] and again["ran"] == []


def test_restore_in_check_mode_writes_nothing_and_predicts_the_real_run(host):
    host.qos()
    snapshot = host.qos(state="gathered")
    host.qos(plan=plan_for(**CHANGED))
    before = host.fingerprint()
    checked = host.qos(state="restored", restore=snapshot["nics"], plan=None, check=True)  # the nics part alone is enough
    assert checked["changed"] is True and checked["ran"] == [] and host.fingerprint() == before
    assert host.qos(state="restored", restore=snapshot, plan=None)["ran"] == checked["commands"]


def test_restore_to_the_driver_defaults_of_a_fresh_host(host):
    stack = tree.load(host.root)["stack"]
    snapshot = host.qos(state="gathered")  # trust pcp, no APP table, CNP priority following the packet (upstream)
    host.qos()
    restored = host.qos(state="restored", restore=snapshot, plan=None)
    assert restored["changed"] is True
    after = host.qos(state="gathered")["nics"]["mlx5_0"]["before"]
    nic = tree.load(host.root)["nics"]["eth2"]
    assert nic["trust"] == "pcp" and nic["pfc"] == [0] * 8 and nic["pause"] == {"autoneg": "on", "rx": "on", "tx": "on"}
    if stack == "mlnx":
        # mlnx_qos shows no DSCP map under trust pcp: nothing to put back, and the map is unused again
        lost = [u for u in restored["unsupported"] if u["nic"] == "mlx5_0" and u["setting"] == "dscp_map"]
        assert lost and "not readable when gathered (trust pcp" in lost[0]["reason"]
        assert {k: v for k, v in after.items() if k != "dscp_map"} == {k: v for k, v in snapshot["nics"]["mlx5_0"]["before"].items() if k != "dscp_map"}
    else:
        assert nic["app"] == [] and after == snapshot["nics"]["mlx5_0"]["before"]
        mode = pathlib.Path(host.root, "sys/kernel/debug/mlx5/0000:3b:00.0/cc_params/np_cnp_prio_mode").read_text()
        assert mode == "1\n" and "dcb app flush dev eth2 dscp-prio" in restored["commands"]
    assert host.qos(state="restored", restore=snapshot, plan=None)["changed"] is False


def test_restore_of_a_partial_app_table_removes_the_entries_it_did_not_have(tmp_path):
    host = Host(tmp_path, "upstream")
    host.runner(["dcb", "app", "add", "dev", "eth2", "dscp-prio", "26:3"])
    snapshot = host.qos(state="gathered", nics=["mlx5_0"])
    assert snapshot["nics"]["mlx5_0"]["before"]["dscp_map"] == {"26": 3}
    host.qos()
    restored = host.qos(state="restored", restore=snapshot, plan=None)
    assert restored["nics"].keys() == {"mlx5_0"}  # only the NICs of the earlier result
    assert tree.load(host.root)["nics"]["eth2"]["app"] == [[26, 3]]
    assert any(c.startswith("dcb app del dev eth2 dscp-prio 0:0 ") for c in restored["commands"]), restored["commands"]


def _gathered(tmp_path):
    probe = Host(tmp_path / "probe", "mlnx")
    return probe.qos(state="gathered")


@pytest.mark.parametrize(
    "mutate, params, message",
    [
        (lambda s: s["nics"]["mlx5_0"]["before"].update(pfc=[0, 0, 0, 2, 0, 0, 0, 0]), {}, "restore.nics.mlx5_0.before.pfc: [0, 0, 0, 2"),
        (lambda s: s["nics"]["mlx5_0"]["before"].update(mtu="9000; reboot"), {}, "restore.nics.mlx5_0.before.mtu: '9000; reboot' is not an MTU"),
        (lambda s: s["nics"]["mlx5_0"].update(netdev="eth2\nreboot"), {}, "restore.nics.mlx5_0.netdev: 'eth2\\nreboot'"),
        (lambda s: s["nics"]["mlx5_0"]["before"].update(colour="red"), {}, "restore.nics.mlx5_0.before.colour: not a setting"),
        (lambda s: s["nics"]["mlx5_0"].update(stack="upstream"), {}, "mlx5_0: gathered on the upstream stack, now mlnx"),
        (lambda s: s["nics"]["mlx5_0"].update(netdev="eth9"), {}, "the plan gives mlx5_0 netdev 'eth9', but sysfs maps it to 'eth2'"),
        (None, {"pci_ids": ["15b3"]}, "state restored: pci_ids not allowed"),
        (None, {"nics": ["mlx5_7"]}, "nics: mlx5_7 not in the earlier result"),
        (None, {"state": "present"}, "restore: only with state restored"),
        ("empty", {}, "restore: 'dict' is not an earlier nic_qos result"),
    ],
    ids=["pfc-bit", "mtu-injection", "netdev-newline", "unknown-setting", "other-stack", "other-netdev", "pci-ids",
         "nic-not-in-snapshot", "restore-without-restored", "empty"],
)
def test_restore_refuses_bad_input_before_anything_is_written(tmp_path, mutate, params, message):
    snapshot = _gathered(tmp_path)
    if mutate == "empty":
        snapshot = {}
    elif mutate:
        mutate(snapshot)
    host = Host(tmp_path, "mlnx")
    before = host.fingerprint()
    args = dict({"state": "restored", "restore": snapshot, "plan": None}, **params)
    if args["state"] == "present":
        args["plan"] = plan_for()
    with pytest.raises(NicError) as err:
        host.qos(**args)
    assert message in str(err.value)
    assert all(c[0] != "mlnx_qos" or len(c) == 3 for c in host.calls) and host.fingerprint() == before


def test_present_and_gathered_still_need_the_plan(tmp_path):
    host = Host(tmp_path, "mlnx")
    with pytest.raises(NicError, match="plan: required with state gathered"):
        _nic_task.run_qos({"state": "gathered", "root": host.root}, host.runner, host.which, False)


# ---------------------------------------------------------------- the NIC lock and the NIC rollback timer

CHANGED_CNP = {"cnp": {"dscp": 40, "priority": 5}}


def _timer(name="w1-gpu1-nic", confirm_timeout=None):
    out = {"name": name}
    if confirm_timeout is not None:
        out["confirm_timeout"] = confirm_timeout
    return out


def _wait(predicate, what, timeout=60):
    import time  # noqa: PLC0415

    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return
        time.sleep(0.1)
    raise AssertionError("timed out waiting for %s" % what)


def _record(state_dir, name):
    from ansible_collections.lossless.fabric.plugins.module_utils._common import _rollback_timer  # noqa: PLC0415

    return _rollback_timer.run({"name": name, "state": "gathered", "state_dir": state_dir})["timer"]


def test_a_change_armed_with_a_timer_is_restored_by_the_timer_itself(host):
    host.qos()
    kept = host.fingerprint()
    bin_dir = host.vars["lab_host_bin"]
    armed = host.qos(plan=plan_for(**CHANGED_CNP), bin_dir=bin_dir, rollback_timer=_timer(confirm_timeout=2))
    assert armed["changed"] is True and armed["timer"]["status"] == "armed" and armed["timer"]["kind"] == "nic"
    state_dir = armed["timer"]["state_dir"]
    assert state_dir == os.path.join(host.root, _nic_task.TIMER_DIR) and armed["pending_until"]
    assert host.fingerprint() != kept
    # nobody confirms: the detached process restores the NICs as they were when it was armed, and says so
    _wait(lambda: _record(state_dir, "w1-gpu1-nic")["status"] == "expired", "the timer to fire")
    assert host.fingerprint() == kept
    timer = _record(state_dir, "w1-gpu1-nic")
    assert timer["outcome"]["failed"] is None and timer["outcome"]["fired"] is True
    assert "cnp" in timer["outcome"]["result"]["nics"]["mlx5_0"]["changes"]
    _wait(lambda: not _record(state_dir, "w1-gpu1-nic")["process_running"], "the timer process to end")
    # a roll back after it fired changes nothing and says the timer did it
    late = host.qos(state="restored", plan=None, rollback_timer=_timer())
    assert late["changed"] is False and late["fired"] is True and late["timer"]["status"] == "expired"


def test_a_confirmed_timer_keeps_the_change_and_a_roll_back_now_restores(host):
    from ansible_collections.lossless.fabric.plugins.module_utils._common import _rollback_timer  # noqa: PLC0415

    host.qos()
    kept = host.fingerprint()
    bin_dir = host.vars["lab_host_bin"]
    armed = host.qos(plan=plan_for(**CHANGED_CNP), bin_dir=bin_dir, rollback_timer=_timer("keep", confirm_timeout=600))
    changed = host.fingerprint()
    state_dir = armed["timer"]["state_dir"]
    # while it is armed, another run's change (and a hand-made restore) is refused: the timer would undo it
    with pytest.raises(NicError, match="under rollback timer keep until .* let that window confirm or roll back first"):
        host.qos(plan=plan_for(), bin_dir=bin_dir)
    confirmed = _rollback_timer.run({"name": "keep", "state": "confirmed", "state_dir": state_dir})
    assert confirmed["changed"] is True and confirmed["process_exited"] is True
    assert host.fingerprint() == changed
    assert host.qos(plan=plan_for(**CHANGED_CNP), bin_dir=bin_dir)["changed"] is False  # free again

    # roll back now: state restored with the timer puts back what it saved, at once
    armed = host.qos(plan=plan_for(), bin_dir=bin_dir, rollback_timer=_timer("undo", confirm_timeout=600))
    assert host.fingerprint() == kept
    checked = host.qos(state="restored", plan=None, bin_dir=bin_dir, rollback_timer=_timer("undo"), check=True)
    assert checked["changed"] is True and host.fingerprint() == kept
    undone = host.qos(state="restored", plan=None, bin_dir=bin_dir, rollback_timer=_timer("undo"))
    assert undone["changed"] is True and undone["timer"]["status"] == "rolled_back" and "cnp" in undone["nics"]["mlx5_0"]["changes"]
    assert host.fingerprint() == changed
    again = host.qos(state="restored", plan=None, bin_dir=bin_dir, rollback_timer=_timer("undo"))
    assert again["changed"] is False
    # rollback_timer itself cannot put NICs back: it says who can
    host.qos(plan=plan_for(), bin_dir=bin_dir, rollback_timer=_timer("third", confirm_timeout=600))
    with pytest.raises(_rollback_timer.TimerError, match="puts back nic, not files: roll it back with lossless.fabric.nic_qos"):
        _rollback_timer.run({"name": "third", "state": "rolled_back", "state_dir": state_dir})
    host.qos(state="restored", plan=None, bin_dir=bin_dir, rollback_timer=_timer("third"))


def test_nothing_to_change_arms_no_timer(host):
    host.qos()
    out = host.qos(rollback_timer=_timer(confirm_timeout=600))
    assert out["changed"] is False and out["timer"] is None
    assert not os.path.isdir(os.path.join(host.root, _nic_task.TIMER_DIR, "w1-gpu1-nic"))


@pytest.mark.parametrize(("params", "said"), [
    ({"state": "present", "rollback_timer": {"name": "t"}}, "rollback_timer.confirm_timeout: required with state present"),
    ({"state": "gathered", "rollback_timer": {"name": "t"}}, "rollback_timer: only with state present"),
    ({"state": "restored", "plan": None, "rollback_timer": {"name": "t", "confirm_timeout": 5}}, "no confirm_timeout"),
    ({"state": "present", "rollback_timer": {"name": "t\n", "confirm_timeout": 5}}, "rollback_timer.name: "),
    ({"state": "present", "firmware": {"X": 1}, "rollback_timer": {"name": "t", "confirm_timeout": 5}}, "firmware parameters are not restored"),
])
def test_timer_options_are_checked_before_anything_is_written(host, params, said):
    before = host.fingerprint()
    with pytest.raises(NicError, match=said.replace("(", r"\(").replace(".", r"\.")):
        host.qos(**params)
    assert host.fingerprint() == before and not os.path.exists(os.path.join(host.root, _nic_task.LOCK_FILE))


def test_a_second_run_on_the_host_refuses_while_the_first_holds_the_nic_lock(host):
    holder = subprocess.Popen(  # pylint: disable=consider-using-with
        [sys.executable, "-c", "import sys\nfrom ansible_collections.lossless.fabric.plugins.module_utils._hosts import _nic_task\n"
         "with _nic_task.host_lock(sys.argv[1], 'nic_qos state=present (site.yml)'):\n    print('held', flush=True)\n    sys.stdin.readline()\n",
         host.root], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
    try:
        assert holder.stdout.readline().strip() == "held"
        before = host.fingerprint()
        with pytest.raises(NicError, match=r"NIC changes on this host are locked by another run: pid %d \(started .*\), nic_qos state=present \(site.yml\)"
                           % holder.pid):
            host.qos()
        assert host.fingerprint() == before and host.calls == [c for c in host.calls if c[0] != "mlnx_qos" or len(c) <= 3]
        # reading is not a change: it does not need the lock
        assert host.qos(state="gathered")["changed"] is False
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)
    # the holder is gone (however it ended): the lock is free
    assert host.qos()["changed"] is True
