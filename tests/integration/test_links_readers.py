# SPDX-License-Identifier: GPL-3.0-or-later
"""The host and InfiniBand cabling readers in their labs, with a fault cabled in (lab_cabling_faults):
host_links on the hostsim GPU hosts of inventories/lab (lldpctl shim, sysfs), ib_links on the subnet
manager of inventories/lab-ib (real ibnetdiscover on ibsim). Each reports what the cables are, not the intent."""

from __future__ import annotations

import json
import os
import re
import shutil
import sys

import pytest
import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from labrun import BIN, GENERATED, ROOT, copy_lab_inventory, launcher, run  # noqa: E402  # pylint: disable=import-error,wrong-import-position

HOST_PLAY = """
- name: What the GPU hosts' NICs see
  hosts: gpu_hosts
  gather_facts: false
  tasks:
    - name: Read
      lossless.fabric.host_links:
        nics: "{{ lossless_fabric_device.nics }}"
        lldp: lldpd
        root: "{{ lab_host_root }}"
        bin_dir: "{{ lab_host_bin }}"
      register: links
    - name: Show
      ansible.builtin.debug:
        msg: "RESULT {{ inventory_hostname }} {{ links | to_json }}"
"""

IB_PLAY = """
- name: The InfiniBand fabric's links
  hosts: subnet_managers
  gather_facts: false
  tasks:
    - name: Read
      lossless.fabric.ib_links:
        diag_bin: "{{ lab_ib_diag_bin }}"
      register: links
    - name: Show
      ansible.builtin.debug:
        msg: "RESULT {{ inventory_hostname }} {{ links | to_json }}"
"""


def results(out) -> dict:
    """{host: the registered result} from the debug lines ('"msg": "RESULT <host> <json>"')."""
    found = {}
    for line in out.stdout.splitlines():
        match = re.match(r'^\s*"msg": ("RESULT .*")$', line)
        if match:
            _tag, host, body = json.loads(match.group(1)).split(" ", 2)
            found[host] = json.loads(body)
    return found


def add_faults(inventory: str, faults: list) -> None:
    path = os.path.join(inventory, "group_vars", "all", "zz_lab_cabling_faults.yml")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        yaml.safe_dump({"lab_cabling_faults": faults}, handle)


def test_host_links_sees_the_swapped_cables(tmp_path):
    inventory = copy_lab_inventory(tmp_path / "lab")
    add_faults(inventory, [{"swap": ["leaf1:swp1", "leaf1:swp2"]}])
    play = tmp_path / "host_links.yml"
    play.write_text(HOST_PLAY)
    out = run([*launcher(inventory, tmp_path / "run", tmp_path / "report"), os.path.join(BIN, "ansible-playbook"), "-i", inventory, str(play)])
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    got = results(out)
    gpu1 = got["gpu1"]["ends"]
    # leaf1 swp1 was cabled to gpu1 mlx5_0; the swap puts gpu2's cable there
    assert gpu1["mlx5_0"]["neighbors"][0]["system"] == "leaf1" and gpu1["mlx5_0"]["neighbors"][0]["port"] == "swp2"
    assert got["gpu2"]["ends"]["mlx5_0"]["neighbors"][0]["port"] == "swp1"
    assert gpu1["mlx5_1"]["neighbors"][0]["system"] == "leaf2" and gpu1["mlx5_1"]["oper"] == "up"
    assert got["gpu1"]["lldp_source"] == "lldpd" and got["gpu1"]["changed"] is False


@pytest.mark.skipif(shutil.which("ibsim") is None or shutil.which("opensm") is None,
                    reason="needs ibsim-utils and opensm (apt-get install ibsim-utils opensm infiniband-diags)")
def test_ib_links_sees_the_cabled_fabric(tmp_path):
    inventory = str(tmp_path / "lab-ib")
    shutil.copytree(os.path.join(ROOT, "inventories", "lab-ib"), inventory, ignore=shutil.ignore_patterns(GENERATED))
    add_faults(inventory, [{"swap": ["gpu1:mlx5_0", "gpu2:mlx5_0"]}, {"downgrade": "gpu4:mlx5_1", "speed": "100G"}])
    play = tmp_path / "ib_links.yml"
    play.write_text(IB_PLAY)
    out = run([*launcher(inventory, tmp_path / "run", tmp_path / "report"), os.path.join(BIN, "ansible-playbook"), "-i", inventory, str(play)])
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    devices = results(out)["ufm1"]["devices"]
    assert devices["gpu1"]["mlx5_0"]["neighbors"][0]["system"] == "leaf1" and devices["gpu1"]["mlx5_0"]["neighbors"][0]["port"] == "2"
    assert devices["leaf1"]["1"]["neighbors"][0]["system"] == "gpu2"
    assert devices["gpu4"]["mlx5_1"]["speed"] == "100G" and devices["gpu3"]["mlx5_1"]["speed"] == "200G"
    assert {"spine1", "spine2", "leaf1", "leaf2", "leaf3", "leaf4", "ufm1"} <= set(devices)
