# SPDX-License-Identifier: GPL-3.0-or-later
"""hostsim's cables: sysfs link state and the lldpctl shim follow <run_dir>/wiring.json, re-read on
every call, and speak lldpd's own JSON forms (json_writer.c), which host_links' parser reads."""

from __future__ import annotations

import json
import os
import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tests" / "lab"))

import wiring  # noqa: E402  # pylint: disable=wrong-import-position
from hostsim import tools  # noqa: E402  # pylint: disable=wrong-import-position
from hostsim.plugin import make_host  # noqa: E402  # pylint: disable=wrong-import-position

from ansible_collections.lossless.fabric.plugins.module_utils._hosts import _links as _host_links  # noqa: E402

HOSTVARS = {
    "leaf1": {"lossless_fabric_device": {"kind": "switch", "platform": "nvue", "ports": {
        "swp1": {"speed": "400G", "peer": {"host": "gpu1", "nic": "mlx5_0"}},
        "swp2": {"speed": "400G", "peer": {"host": "gpu1", "nic": "mlx5_1"}}}}},
    "gpu1": {"lossless_fabric_device": {"kind": "host", "nics": [
        {"name": "mlx5_0", "netdev": "eth2", "speed": "400G"}, {"name": "mlx5_1", "netdev": "eth3", "speed": "400G"}]}},
}


@pytest.fixture
def lab(tmp_path):
    run_dir = str(tmp_path)
    wiring.write(run_dir, wiring.build(HOSTVARS))
    made = make_host(os.path.join(run_dir, "hosts", "gpu1"), [{"name": "mlx5_0", "netdev": "eth2"}, {"name": "mlx5_1", "netdev": "eth3"}],
                     "upstream", sys.executable, host="gpu1", wiring_file=os.path.join(run_dir, "wiring.json"))
    return run_dir, made["lab_host_root"]


def sysfs(root, netdev, name):
    return pathlib.Path(root, "sys/class/net", netdev, name).read_text().strip()


def test_sysfs_follows_the_wiring_at_start(lab):
    _run_dir, root = lab
    assert sysfs(root, "eth2", "operstate") == "up" and sysfs(root, "eth2", "speed") == "400000"
    assert sysfs(root, "eth2", "address") == wiring.mac("gpu1", "mlx5_0")


def test_lldpctl_json_forms(lab):
    _run_dir, root = lab
    both = json.loads(tools.lldpctl(root, ["-f", "json"]))
    # several interfaces: a list of one-key objects; a named chassis: {SysName: {...}} (lldpd json_writer.c)
    assert [list(e) for e in both["lldp"]["interface"]] == [["eth2"], ["eth3"]]
    eth2 = both["lldp"]["interface"][0]["eth2"]
    assert list(eth2["chassis"]) == ["leaf1"] and eth2["port"]["id"] == {"type": "ifname", "value": "swp1"}
    one = json.loads(tools.lldpctl(root, ["-f", "json", "eth3"]))
    assert list(one["lldp"]["interface"]) == ["eth3"]  # one interface: an object
    zero = json.loads(tools.lldpctl(root, ["-f", "json0", "eth3"]))
    assert zero["lldp"][0]["interface"][0]["name"] == "eth3"
    assert _host_links.parse_lldpctl_json(tools.lldpctl(root, ["-f", "json0"])) == _host_links.parse_lldpctl_json(tools.lldpctl(root, ["-fjson"]))


def test_json_cleanup_is_lldpds():
    # The lldpd test suite's own pair (tests/integration/test_lldpcli.py): json0 -> json.
    here = pathlib.Path(__file__).resolve().parents[1] / "plugins" / "module_utils" / "fixtures" / "host_links"
    json0 = json.loads((here / "lldpctl_json0_lldpd_test.json").read_text())
    assert tools.json_cleanup(json0) == json.loads((here / "lldpctl_json_lldpd_test.json").read_text())


def test_refault_is_seen_on_the_next_call_without_restart(lab):
    run_dir, root = lab
    wiring.refault(run_dir, [{"swap": ["leaf1:swp1", "leaf1:swp2"]}])
    heard = _host_links.parse_lldpctl_json(tools.lldpctl(root, ["-f", "json", "eth2", "eth3"]))
    assert heard["eth2"][0]["port"] == "swp2" and heard["eth3"][0]["port"] == "swp1"
    wiring.refault(run_dir, [{"unplug": "leaf1:swp2"}, {"downgrade": "leaf1:swp1", "speed": "200G"}])
    heard = _host_links.parse_lldpctl_json(tools.lldpctl(root, ["-f", "json"]))
    assert "eth3" not in heard and heard["eth2"][0]["system"] == "leaf1"
    assert sysfs(root, "eth3", "operstate") == "down" and sysfs(root, "eth3", "speed") == "-1"
    assert sysfs(root, "eth2", "speed") == "200000"


def test_no_neighbour_and_refusals(lab):
    run_dir, root = lab
    wiring.refault(run_dir, [{"unplug": "leaf1:swp1"}, {"unplug": "leaf1:swp2"}])
    assert json.loads(tools.lldpctl(root, ["-f", "json"])) == {"lldp": {}}
    assert json.loads(tools.lldpctl(root, ["-f", "json0"])) == {"lldp": [{}]}
    with pytest.raises(tools.ToolError, match="invalid option"):
        tools.lldpctl(root, ["-x"])
    with pytest.raises(tools.ToolError, match="keyvalue is not simulated"):
        tools.lldpctl(root, ["-f", "keyvalue"])


def test_host_links_against_the_shim(lab):
    run_dir, root = lab
    wiring.refault(run_dir, [{"downgrade": "leaf1:swp2", "speed": "100G"}])

    def read(rel):
        path = os.path.join(root, rel.lstrip("/"))
        return open(path, encoding="utf-8").read() if os.path.exists(path) else None

    def read_dir(rel):
        path = os.path.join(root, rel.lstrip("/"))
        return sorted(os.listdir(path)) if os.path.isdir(path) else []

    def run(argv):
        try:
            return 0, tools.TOOLS[argv[0]](root, argv[1:]), ""
        except tools.ToolError as exc:
            return exc.rc, "", str(exc)

    result = _host_links.run_host_links({"nics": [{"name": "mlx5_0", "netdev": "eth2"}, {"name": "mlx5_1", "netdev": "eth3"}], "lldp": "lldpd"},
                                        read, read_dir, run, lambda name: name)
    ends = result["ends"]
    assert ends["mlx5_1"]["speed"] == "100G" and ends["mlx5_0"]["speed"] == "400G"
    assert ends["mlx5_0"]["neighbors"][0]["system"] == "leaf1" and ends["mlx5_0"]["neighbors"][0]["port"] == "swp1"
    assert ends["mlx5_0"]["self"] == {"netdev": "eth2", "mac": wiring.mac("gpu1", "mlx5_0")}
