#!/usr/bin/python
# Copyright: lossless.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
# Thin glue: argv, parser and the server/client processes are plugins/module_utils/_hosts/_perftest.py.

from __future__ import annotations

DOCUMENTATION = r"""
module: nic_bandwidth
short_description: Host-side RDMA bandwidth of each NIC of a GPU host - perftest ib_write_bw loopback
version_added: 0.1.0
description:
  - Runs on the GPU host. For each NIC of O(nics) starts an C(ib_write_bw) server on that NIC in the background,
    runs the client with the same options to C(localhost) (perftest's own C(run_perftest_loopback)), reads the
    client's report and stops the server on every path (after a grace period it is killed and reaped).
  - The bandwidth is the C(BW average) of the report in Gb/s (C(--report_gbits) is always passed). It measures
    the host side of a NIC - its PCIe path, the NIC itself, with O(use_cuda) the GPU's memory (GPUDirect RDMA).
    Whether a loopback reaches the cable and the switch port is not established; treat a good loopback as
    saying nothing about the link (docs/hosts.md, "NIC bandwidth (ib_write_bw)").
  - A run that failed is reported with perftest's own words (its stderr) in RV(nics) C(error); output in a form
    the module does not know is an error naming ib_write_bw and the form expected, never a silent success.
  - The task never reports a change. A NIC below O(min_gbps) or with an error has C(ok=false) and is listed in
    RV(failed_nics); the task itself fails only on bad options or when C(ib_write_bw) is not installed.
extends_documentation_fragment:
  - lossless.fabric._attributes
  - lossless.fabric._attributes.posix
attributes:
  check_mode:
    support: full
    details:
      - Runs nothing; returns, per NIC, the server and client command lines a real run would use.
  diff_mode:
    support: none
  idempotent:
    support: full
    details:
      - Never changes the host; the measured numbers differ from run to run.
options:
  nics:
    description:
      - The NICs to measure, each an RDMA device name (V(mlx5_0)) or a mapping with C(name) (other keys are ignored,
        so the host's plan NICs can be passed as they are). NIC number i in this list uses TCP port O(base_port) + i.
    type: list
    elements: raw
    required: true
  size:
    description: Message size in bytes (C(-s)); perftest accepts 1 to 2147483647.
    type: int
    default: 8388608
  duration:
    description: Seconds to run each test (C(-D)); without it perftest runs its default number of iterations. Excludes O(iterations).
    type: int
  iterations:
    description: Number of exchanges (C(-n)), 5 to 4294967296. Excludes O(duration).
    type: int
  gid_index:
    description: The GID index for RoCE (C(-x)), 0 to 64; without it perftest picks one.
    type: int
  qps:
    description: Number of queue pairs (C(-q)), 1 to 16384.
    type: int
  use_cuda:
    description:
      - "GPU index per NIC (C(--use_cuda=<gpu>)) where GPUDirect RDMA is to be measured, for example V({mlx5_0: 0, mlx5_1: 1})."
      - Needs a perftest built with CUDA and GPUDirect RDMA (nvidia_peermem, or DMA-BUF which this module does not request).
    type: dict
  min_gbps:
    description: A floor in Gb/s; a NIC whose average is below it has C(ok=false). Without it only errors set C(ok=false).
    type: float
  base_port:
    description: TCP port of the first NIC's server (C(-p)); perftest's default is 18515.
    type: int
    default: 18515
  parallel:
    description:
      - Run all NICs at once (distinct ports) instead of one after another.
      - At once, NICs that share a PCIe switch or a CPU slow each other.
    type: bool
    default: false
  timeout:
    description:
      - Seconds allowed per NIC for server start, client run and result.
      - Past it the NIC has an error and its processes are stopped.
    type: int
    default: 120
  server_wait:
    description:
      - Seconds between starting the server and starting the client (perftest's C(run_perftest_loopback) sleeps 1).
      - A client that finds no listener yet is retried after as long again, at most three times.
    type: float
    default: 1.0
  bin_dir:
    description: Lab and test option only - a directory searched for C(ib_write_bw) before C(PATH).
    type: path
notes:
  - Run it with nothing else using the NICs; a loopback shares the NIC with any other traffic.
  - The server and client run as the module's user; perftest needs access to C(/dev/infiniband) and enough locked memory.
seealso:
  - module: lossless.fabric.host_links
  - module: lossless.fabric.nccl_benchmark
author:
  - lossless.fabric contributors (@lossless-fabric)
"""

EXAMPLES = r"""
- name: Loopback bandwidth of every RDMA NIC of the host (the plan's NICs passed as they are)
  lossless.fabric.nic_bandwidth:
    nics:
      - {name: mlx5_0, netdev: eth2, rail: 0}
      - {name: mlx5_1, netdev: eth3, rail: 1}
    gid_index: 3
    min_gbps: 360
  register: nic_bw

- name: GPUDirect RDMA per NIC, all NICs at once, 5 seconds each
  lossless.fabric.nic_bandwidth:
    nics: [mlx5_0, mlx5_1]
    use_cuda: {mlx5_0: 0, mlx5_1: 1}
    duration: 5
    parallel: true
"""

RETURN = r"""
nics:
  description: Per NIC name, the result of its loopback.
  returned: always
  type: dict
  sample:
    mlx5_0:
      ok: true
      gbps: 388.0
      peak_gbps: 388.0
      link_type: Ethernet
      mtu: 4096
      gid_index: 3
      port: 18515
      gpu: null
      server_rc: 0
      client_rc: 0
      server: exited
      argv:
        server: [/usr/bin/ib_write_bw, -d, mlx5_0, -s, "8388608", -x, "3", -p, "18515", -F, --report_gbits]
        client: [/usr/bin/ib_write_bw, -d, mlx5_0, -s, "8388608", -x, "3", -p, "18515", -F, --report_gbits, localhost]
  contains:
    ok:
      description: The run succeeded and, with O(min_gbps), reached it. Null in check mode.
      type: bool
    gbps:
      description: C(BW average) of the client's report in Gb/s (the last row, the largest size); null when it failed or in check mode.
      type: float
    peak_gbps:
      description: C(BW peak) in Gb/s; null where perftest did not measure it (duration mode, more than 20000 iterations).
      type: float
    error:
      description: What went wrong, with perftest's own words; present only on failure.
      type: str
    argv:
      description: The server and client command lines.
      type: dict
    server:
      description: How the server ended - V(exited) by itself, or V(killed) by the module.
      type: str
failed_nics:
  description: The NICs with C(ok=false) (the task itself does not fail for them).
  returned: always
  type: list
  elements: str
"""

from ansible.module_utils.basic import AnsibleModule  # noqa: E402

from ansible_collections.lossless.fabric.plugins.module_utils._hosts import _perftest  # noqa: E402

ARGUMENT_SPEC = {
    "nics": {"type": "list", "elements": "raw", "required": True},
    "size": {"type": "int", "default": _perftest.DEFAULT_SIZE},
    "duration": {"type": "int"},
    "iterations": {"type": "int"},
    "gid_index": {"type": "int"},
    "qps": {"type": "int"},
    "use_cuda": {"type": "dict"},
    "min_gbps": {"type": "float"},
    "base_port": {"type": "int", "default": _perftest.DEFAULT_PORT},
    "parallel": {"type": "bool", "default": False},
    "timeout": {"type": "int", "default": 120},
    "server_wait": {"type": "float", "default": 1.0},
    "bin_dir": {"type": "path"},
}


def main() -> None:
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True, mutually_exclusive=[("duration", "iterations")])
    params = module.params
    bin_dir = params.get("bin_dir")
    binary = _perftest.find_binary(bin_dir, module.get_bin_path)
    try:
        planned = _perftest.plan(params, binary or _perftest.TOOL)
    except _perftest.PerftestError as exc:
        module.fail_json(msg=str(exc), changed=False)
    if module.check_mode:
        nics = {nic: {"ok": None, "gbps": None, "peak_gbps": None, "port": p["port"], "gpu": p["gpu"],
                      "argv": {"server": p["server"], "client": p["client"]}} for nic, p in planned.items()}
        module.exit_json(changed=False, nics=nics, failed_nics=[])
    if binary is None:
        module.fail_json(msg="%s: not installed on this host (perftest package; bin_dir=%s)" % (_perftest.TOOL, bin_dir), changed=False)
    nics = _perftest.run_plan(planned, params)
    module.exit_json(changed=False, nics=nics, failed_nics=[nic for nic, r in nics.items() if not r["ok"]])


if __name__ == "__main__":
    main()
