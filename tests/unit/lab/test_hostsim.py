# SPDX-License-Identifier: GPL-3.0-or-later
"""The GPU-host lab: the shims are strict (the real tools' refusals), act on
the tree, and the launcher plug-in builds one tree per host and keeps it."""

from __future__ import annotations

import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tests" / "lab"))

import launcher  # noqa: E402  # pylint: disable=wrong-import-position
from hostsim import tools, tree  # noqa: E402  # pylint: disable=wrong-import-position
from hostsim.plugin import Hosts  # noqa: E402  # pylint: disable=wrong-import-position

NICS = [{"name": "mlx5_0", "netdev": "eth2"}]


@pytest.fixture(params=["mlnx", "upstream"])
def root(request, tmp_path):
    tree.build(str(tmp_path), NICS, request.param)
    return str(tmp_path)


def call(root, tool, *argv):
    try:
        return 0, tools.TOOLS[tool](root, list(argv))
    except tools.ToolError as exc:
        return exc.rc, str(exc)


@pytest.mark.parametrize(
    "argv, rc, said",
    [
        (("dcb", "pfc", "set", "dev", "eth2", "prio-pfc", "8:on"), 1, "In PRIO:PFC mapping, PRIO is expected to be 0..7"),
        (("dcb", "app", "add", "dev", "eth2", "dscp-prio", "64:3"), 1, "In DSCP:PRIO mapping, DSCP is expected to be 0..63"),
        (("dcb", "app", "add", "dev", "eth2", "dscp-prio", "26:8"), 1, "In DSCP:PRIO mapping, PRIO is expected to be 0..7"),
        (("dcb", "pfc", "set", "dev", "eth9", "prio-pfc", "3:on"), 1, 'Cannot find device "eth9"'),
        (("dcb", "pfc", "set", "dev", "eth2", "prio-pfc", "3:yes"), 1, 'Invalid value of "yes" for PFC'),
        (("dcb", "pfc", "frobnicate", "dev", "eth2"), 1, 'Command "frobnicate" is unknown, try "dcb pfc help".'),
        (("dcb", "-x", "pfc", "show", "dev", "eth2"), 1, 'Option "-x" is unknown, try "dcb -help".'),
        (("dcb", "pfc", "show", "eth2"), 1, "Expected `dev DEV', not `eth2'"),
        (("ethtool", "-S", "eth9"), 71, "Cannot get stats strings information: No such device"),
        (("ethtool", "-A", "eth2", "rx", "maybe"), 1, "ethtool: bad command line argument(s)\nFor more information run ethtool -h"),
        (("ethtool", "-K", "eth2"), 1, "ethtool: bad command line argument(s)"),
    ],
)
def test_dcb_and_ethtool_refuse_like_the_real_tools(root, argv, rc, said):
    got_rc, got = call(root, *argv)
    assert got_rc == rc and got.startswith(said), got


def test_mlnx_qos_refusals(tmp_path):
    tree.build(str(tmp_path), NICS, "mlnx")
    root = str(tmp_path)
    assert call(root, "mlnx_qos", "-i", "eth2", "--pfx", "1")[1].endswith("mlnx_qos: error: no such option: --pfx")
    assert call(root, "mlnx_qos", "-i", "eth2", "--pfc", "0,0,0,1")[0] == 2
    assert call(root, "mlnx_qos", "-i", "eth2", "--trust", "dscp", "--dscp2prio", "set,26,3")[0] == 2
    assert "invalid choice: 'ip'" in call(root, "mlnx_qos", "-i", "eth2", "--trust", "ip")[1]
    assert call(root, "mlnx_qos", "-i", "eth2", "--dscp2prio", "set,64,3")[0] == 2
    assert call(root, "mlnx_qos", "-i", "eth9")[1] == 'Cannot find device "eth9"'
    assert call(root, "mlnx_qos", "--pfc", "0,0,0,1,0,0,0,0")[1].endswith("Interface name is required")
    # nothing of that was applied
    assert tree.load(root)["nics"]["eth2"]["pfc"] == [0] * 8 and tree.load(root)["nics"]["eth2"]["trust"] == "pcp"


def test_mlnx_qos_output_has_the_reference_shape(tmp_path):
    tree.build(str(tmp_path), NICS, "mlnx")
    root = str(tmp_path)
    out = call(root, "mlnx_qos", "-i", "eth2", "--trust", "dscp")[1]
    assert "Priority trust state: dscp" in out and "\tprio:3 dscp:31,30,29,28,27,26,25,24," in out
    assert call(root, "mlnx_qos", "-i", "eth2", "--dscp2prio", "flush")[0] == 0
    assert tree.load(root)["nics"]["eth2"]["trust"] == "pcp"  # flush reverts trust (reference a.1)


def test_mlnx_qos_is_absent_on_an_upstream_host(tmp_path):
    tree.build(str(tmp_path), NICS, "upstream")
    assert call(str(tmp_path), "mlnx_qos", "-i", "eth2")[0] == 127


def test_upstream_trust_follows_the_app_table(tmp_path):
    tree.build(str(tmp_path), NICS, "upstream")
    root = str(tmp_path)
    call(root, "dcb", "app", "add", "dev", "eth2", "dscp-prio", "26:3", "48:6")
    assert tree.load(root)["nics"]["eth2"]["trust"] == "dscp"
    assert call(root, "dcb", "app", "show", "dev", "eth2", "dscp-prio")[1] == "dscp-prio AF31:3 CS6:6\n"
    assert call(root, "dcb", "-N", "app", "show", "dev", "eth2", "dscp-prio")[1] == "dscp-prio 26:3 48:6\n"
    call(root, "dcb", "app", "flush", "dev", "eth2", "dscp-prio")
    assert tree.load(root)["nics"]["eth2"]["trust"] == "pcp"


def inventory(stack):
    device = {"kind": "host", "gpus": 8, "nics": [{"name": "mlx5_0", "netdev": "eth2", "speed": "400G"}]}
    return {"_meta": {"hostvars": {"gpu1": {"lossless_fabric_device": device, "lab_nic_stacks": {"gpu1": stack}},
                                   "leaf1": {"lossless_fabric_device": {"kind": "switch"}}}}}


def test_plugin_builds_a_tree_per_host_and_keeps_it_across_restarts(tmp_path):
    plugin = Hosts()
    ctx = launcher.Context(str(tmp_path), str(tmp_path), inventory("mlnx"))
    assert plugin.wanted(ctx)
    got = plugin.start(ctx)["hosts"]["gpu1"]
    root = pathlib.Path(got["lab_host_root"])
    assert (root / "sys/class/net/eth2/ecn/roce_np/enable/3").exists()
    assert (pathlib.Path(got["lab_host_bin"]) / "dcb").stat().st_mode & 0o111
    (root / "sys/class/net/eth2/mtu").write_text("9000\n")
    plugin.start(ctx)  # the host stayed up: its state too
    assert (root / "sys/class/net/eth2/mtu").read_text() == "9000\n"
    plugin.start(launcher.Context(str(tmp_path), str(tmp_path), inventory("upstream")))  # another stack: a new host
    assert not (root / "sys/class/net/eth2/ecn").exists() and (root / "sys/class/net/eth2/mtu").read_text() == "1500\n"


def test_plugin_not_wanted_without_roce_hosts(tmp_path):
    ctx = launcher.Context(str(tmp_path), str(tmp_path), {"_meta": {"hostvars": {"leaf1": {"lossless_fabric_device": {"kind": "switch"}}}}})
    assert not Hosts().wanted(ctx)


def test_tree_refuses_an_unknown_stack(tmp_path):
    with pytest.raises(ValueError, match="lab_nic_stack: 'ofed' is not one of mlnx, upstream, bnxt, ionic"):
        tree.build(str(tmp_path), NICS, "ofed")
