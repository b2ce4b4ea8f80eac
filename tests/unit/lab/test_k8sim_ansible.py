# SPDX-License-Identifier: GPL-3.0-or-later
"""k8sim through kubernetes.core (k8s, k8s_info, k8s_log) run by ansible-playbook:
idempotent apply, RDMA resources, an MPIJob waited to Succeeded with its
replayed log, a failing job, a 422 for an invalid MPIJob, state: absent."""
from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tests" / "lab"))

from k8sim.client import K8sSim  # noqa: E402

PLAYBOOK = ROOT / ".venv" / "bin" / "ansible-playbook"
CORE = ROOT / ".deps" / "collections" / "ansible_collections" / "kubernetes" / "core"
pytestmark = pytest.mark.skipif(not PLAYBOOK.exists() or not CORE.exists(),
                                reason="needs ansible-playbook and kubernetes.core in .deps")

REPLAY = ROOT / "tests" / "data" / "nccl-corpus" / "deepops_k8s_sriov_roce_2node.txt"

PLAY = r"""
- hosts: localhost
  gather_facts: false
  module_defaults:
    group/kubernetes.core.k8s:
      kubeconfig: "{{ kubeconfig }}"
  vars:
    rdma_cm:
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: rdma-devices, namespace: kube-system}
      data:
        config.json: '{"configList": [{"resourceName": "rdma_shared_device_a", "rdmaHcaMax": 63, "selectors": {"ifNames": ["eth2"]}}]}'
    rdma_ds:
      apiVersion: apps/v1
      kind: DaemonSet
      metadata: {name: rdma-shared-dp-ds, namespace: kube-system}
      spec:
        selector: {matchLabels: {name: rdma-shared-dp-ds}}
        template:
          metadata: {labels: {name: rdma-shared-dp-ds}}
          spec:
            hostNetwork: true
            nodeSelector: {nvidia.com/gpu.present: "true"}
            containers:
              - name: k8s-rdma-shared-dp-ds
                image: ghcr.io/mellanox/k8s-rdma-shared-dev-plugin:v1.5.3
                securityContext: {privileged: true}
                volumeMounts: [{name: config, mountPath: /k8s-rdma-shared-dev-plugin}]
            volumes:
              - name: config
                configMap: {name: rdma-devices, items: [{key: config.json, path: config.json}]}
    worker: &worker
      replicas: 2
      template:
        spec:
          containers:
            - name: worker
              image: ghcr.io/coreweave/nccl-tests:12.2.2
              resources:
                limits: {nvidia.com/gpu: 8, rdma/rdma_shared_device_a: 1}
    launcher: &launcher
      replicas: 1
      template:
        spec:
          containers:
            - name: launcher
              image: ghcr.io/coreweave/nccl-tests:12.2.2
              command: [mpirun, -np, "16", all_reduce_perf, -b, "8", -e, 8G, -f, "2", -g, "1"]
  tasks:
    - name: plugin config and DaemonSet
      kubernetes.core.k8s: {state: present, definition: "{{ [rdma_cm, rdma_ds] }}"}
      register: first
    - name: again (must not change)
      kubernetes.core.k8s: {state: present, definition: "{{ [rdma_cm, rdma_ds] }}"}
      register: second
    - name: wait for the DaemonSet to be ready
      kubernetes.core.k8s_info:
        kind: DaemonSet
        namespace: kube-system
        name: rdma-shared-dp-ds
        wait: true
        wait_timeout: 20
        wait_sleep: 1
    - name: nodes with the RDMA resource
      kubernetes.core.k8s_info: {kind: Node, label_selectors: ["nvidia.com/gpu.present=true"]}
      register: nodes
      until: nodes.resources | map(attribute='status.allocatable') | selectattr('rdma/rdma_shared_device_a', 'defined') | list | length == 2
      retries: 40
      delay: 0.25
    - name: benchmark job
      kubernetes.core.k8s:
        state: present
        wait: true
        wait_timeout: 30
        wait_sleep: 1
        wait_condition: {type: Succeeded, status: "True"}
        definition:
          apiVersion: kubeflow.org/v2beta1
          kind: MPIJob
          metadata: {name: nccl, namespace: default}
          spec:
            slotsPerWorker: 8
            # with the default cleanPodPolicy None the finished job's workers keep their GPUs,
            # as with the real operator, and the next job could not be scheduled
            runPolicy: {cleanPodPolicy: Running}
            mpiReplicaSpecs: {Launcher: *launcher, Worker: *worker}
      register: job
    - name: launcher log
      kubernetes.core.k8s_log:
        namespace: default
        label_selectors: [training.kubeflow.org/job-name=nccl, training.kubeflow.org/job-role=launcher]
      register: launcher_log
    - name: a job told to fail
      kubernetes.core.k8s:
        state: present
        wait: true
        wait_timeout: 30
        wait_sleep: 1
        wait_condition: {type: Failed, status: "True"}
        definition:
          apiVersion: kubeflow.org/v2beta1
          kind: MPIJob
          metadata: {name: broken, namespace: default}
          spec: {runPolicy: {cleanPodPolicy: Running}, mpiReplicaSpecs: {Launcher: *launcher, Worker: *worker}}
      register: failed_job
    - name: an invalid MPIJob
      kubernetes.core.k8s:
        state: present
        definition:
          apiVersion: kubeflow.org/v2beta1
          kind: MPIJob
          metadata: {name: invalid, namespace: default}
          spec: {slotsPerWorker: 8}
      register: invalid
      ignore_errors: true
    - name: remove the plugin
      kubernetes.core.k8s: {state: absent, definition: "{{ [rdma_ds, rdma_cm] }}", wait: true, wait_timeout: 20}
      register: removed
    - name: gone
      kubernetes.core.k8s_info: {kind: DaemonSet, namespace: kube-system, name: rdma-shared-dp-ds}
      register: after
    - name: remove again (nothing to do)
      kubernetes.core.k8s: {state: absent, definition: "{{ rdma_ds }}"}
      register: removed_again
    - name: results for the test
      ansible.builtin.copy:
        dest: "{{ out }}"
        content: "{{ {'first': first.changed, 'second': second.changed, 'nodes': nodes.resources | map(attribute='metadata.name') | list,
                     'job': job.result.status.conditions | map(attribute='type') | list, 'log': launcher_log.log,
                     'failed': failed_job.result.status.conditions | selectattr('status', 'eq', 'True') | map(attribute='type') | list,
                     'invalid': invalid, 'removed': removed.changed, 'after': after.resources,
                     'removed_again': removed_again.changed} | to_json }}"
"""


def test_kubernetes_core_against_k8sim(tmp_path):
    nodes = [{"name": n, "gpus": 8, "nics": [{"name": "mlx5_0", "netdev": "eth2"}]} for n in ("gpu1", "gpu2")]
    with K8sSim({"time_scale": 0.02, "delays": {"run_seconds": 10}, "nodes": nodes}, str(tmp_path / "sim")) as sim:
        if REPLAY.exists():
            sim.set_replay(str(REPLAY))
            expected = REPLAY.read_text()
        else:
            expected = "# Avg bus bandwidth    : 42.0\n"
            sim.set_replay(text=expected)
        sim.set_replay(text="# job that fails\n", job="default/broken")
        sim.next_mpijob("succeed")
        sim.next_mpijob("fail")
        play = tmp_path / "play.yml"
        play.write_text(PLAY)
        out = tmp_path / "out.json"
        env = dict(os.environ, ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"), ANSIBLE_HOME=str(tmp_path / "ah"),
                   HOME=str(tmp_path), ANSIBLE_LOCAL_TEMP=str(tmp_path / "tmp"))
        proc = subprocess.run(
            [str(PLAYBOOK), "-i", "localhost,", "-c", "local", str(play),
             "-e", "ansible_python_interpreter=%s" % (ROOT / ".venv" / "bin" / "python"),
             "-e", "kubeconfig=%s" % sim.kubeconfig, "-e", "out=%s" % out],
            cwd=str(ROOT), env=env, capture_output=True, text=True, timeout=120, check=False)
        assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    got = json.loads(out.read_text())
    assert got["first"] is True and got["second"] is False
    assert sorted(got["nodes"]) == ["gpu1", "gpu2"]
    assert got["job"] == ["Created", "Running", "Succeeded"]
    # k8s_log returns the log text; byte-for-byte against the replayed file
    assert got["log"] == expected
    assert "Failed" in got["failed"]
    assert got["invalid"]["failed"] is True
    assert "422" in got["invalid"]["msg"] or "422" in json.dumps(got["invalid"])
    assert "spec.mpiReplicaSpecs: Required value" in json.dumps(got["invalid"])
    assert got["removed"] is True and got["after"] == [] and got["removed_again"] is False
