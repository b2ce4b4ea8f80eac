# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""The launch options M(lossless.fabric.nccl_benchmark) and M(lossless.fabric.nccl_localize) share.

Their argument spec is ``_nccl_jobs.LAUNCH_ARGUMENT_SPEC`` (the fragment + spec pair of STYLE.md point 9).
"""

from __future__ import annotations


class ModuleDocFragment:
    """How nccl-tests is launched: launcher, binary, iterations, environment and the launcher settings."""

    DOCUMENTATION = r"""
options:
  launcher:
    description:
      - How the ranks are started - a Kubeflow MPIJob (V(kubernetes)), Open MPI C(mpirun) on the managed host
        (V(mpirun)) or Slurm C(srun --mpi=pmix) on the managed host (V(slurm)).
    type: str
    choices: [kubernetes, mpirun, slurm]
    default: kubernetes
  binary:
    description:
      - The nccl-tests binary - C(all_reduce_perf), C(all_gather_perf), C(alltoall_perf), C(broadcast_perf),
        C(reduce_perf), C(reduce_scatter_perf), C(alltoallv_perf), C(scatter_perf), C(gather_perf), C(sendrecv_perf)
        or C(hypercube_perf), optionally with the C(_mpi) suffix NGC images use. It must be built with C(MPI=1).
    type: str
    default: all_reduce_perf
  binary_dir:
    description:
      - Directory of O(binary) in the image or on the nodes (for example C(/opt/nccl_tests/build)); without it the
        binary is looked up in C(PATH).
    type: str
  step_factor:
    description: Multiplicative size step (C(-f)), at least 2.
    type: int
    default: 2
  iterations:
    description: Timed iterations per size (C(-n)).
    type: int
    default: 20
  warmup_iterations:
    description: Warm-up iterations (C(-w)).
    type: int
    default: 5
  algo:
    description:
      - Pin C(NCCL_ALGO), for example V(Ring) - fabric acceptance wants the ring, because tree and NVLS results can
        exceed the network's line rate.
    type: str
  gdr_level:
    description:
      - C(NCCL_NET_GDR_LEVEL) - the largest GPU-to-NIC distance at which GPUDirect RDMA is used. Too low a level turns
        GPUDirect off.
      - Unset by default - NCCL chooses from the topology; set it (or C(NCCL_NET_GDR_LEVEL) in O(nccl_env)) only when
        the plan asks for a level.
    type: str
    choices: [LOC, PIX, PXB, PHB, SYS]
  debug_subsys:
    description:
      - C(NCCL_DEBUG_SUBSYS) with C(NCCL_DEBUG=INFO). V(INIT,NET) keeps the lines that prove the transport and
        GPUDirect RDMA (C(NET/IB ... RoCE), C(GPU Direct RDMA), C(Channel ... via NET/IB/.../GDRDMA)) and drops the
        other subsystems' lines, so that every rank prints less. An empty string leaves NCCL's own default set.
    type: str
    default: INIT,NET
  nccl_env:
    description:
      - The NCCL variables the fabric plan derives, normally C(fabric_plan_result.nccl_env) (C(NCCL_IB_HCA),
        C(NCCL_IB_TC) or C(NCCL_IB_SL), C(NCCL_IB_GID_INDEX)).
    type: dict
    default: {}
  env:
    description: More environment for every rank; wins over O(nccl_env) and the defaults.
    type: dict
    default: {}
  timeout:
    description: Seconds one launch may take, from its creation to its end, before it counts as hung.
    type: int
    default: 1800
  poll_interval:
    description: Seconds between status reads of a running MPIJob.
    type: float
    default: 5
  keep:
    description:
      - Leave each MPIJob (and a namespace this module created), or the mpirun hostfile, in place for inspection.
    type: bool
    default: false
  labels:
    description:
      - Labels for the MPIJob and its pods, for example C(lossless.fabric/phase=pre) during a change window.
    type: dict
    default: {}
  kubernetes:
    description: Settings of O(launcher=kubernetes); the connection options mirror kubernetes.core's.
    type: dict
    default: {}
    suboptions:
      kubeconfig:
        description:
          - Path of the kubeconfig file (the inventory's C(lossless_fabric_kubeconfig)). Default
            C(K8S_AUTH_KUBECONFIG), then C(~/.kube/config).
        type: path
      context:
        description: The kubeconfig context to use.
        type: str
      host:
        description: API server URL, instead of a kubeconfig.
        type: str
      api_key:
        description: Bearer token for O(kubernetes.host).
        type: str
      validate_certs:
        description: Verify the API server's certificate.
        type: bool
      ca_cert:
        description: CA certificate file of the API server.
        type: path
      namespace:
        description: The benchmark's own namespace.
        type: str
        default: nccl-benchmark
      image:
        description: Container image with Open MPI and the MPI build of nccl-tests. Required for V(kubernetes).
        type: str
      image_pull_policy:
        description: The containers' C(imagePullPolicy) - V(Always), V(IfNotPresent) or V(Never).
        type: str
      rdma_resource:
        description: The RDMA extended resource every worker requests (the RDMA shared device plugin's resource).
        type: str
        default: rdma/rdma_shared_device_a
      rdma_resource_count:
        description: How many of O(kubernetes.rdma_resource) a worker requests (V(0) requests none).
        type: int
        default: 1
      host_network:
        description: Run the workers in the host network namespace (uses the host's RoCE GIDs).
        type: bool
        default: false
      networks:
        description: Multus C(k8s.v1.cni.cncf.io/networks) annotation of the workers (the RDMA secondary network).
        type: str
      node_selector:
        description: C(nodeSelector) of the workers.
        type: dict
      shm_size_limit:
        description: C(sizeLimit) of the memory-backed C(/dev/shm), for example V(16Gi); none when unset.
        type: str
      service_account:
        description: Service account of the pods.
        type: str
      worker_command:
        description: Command of the worker containers (for example C(/usr/sbin/sshd -De)) when the image does not start sshd.
        type: list
        elements: str
      start_sshd:
        description:
          - Run C(<sshd_path> -De [-p ssh_port] [-f sshd_config]) as the workers' command, for images whose entrypoint
            does not start sshd. Conflicts with O(kubernetes.worker_command).
        type: bool
        default: false
      sshd_path:
        description: The sshd program in the image, for O(kubernetes.start_sshd).
        type: str
        default: /usr/sbin/sshd
      sshd_config:
        description: An sshd configuration file in the image (C(sshd -f)), for example a non-root user's.
        type: str
      ssh_port:
        description:
          - Port of the workers' sshd; mpirun's ssh gets it with C(--mca plm_rsh_args "-p <port>").
          - Required, and not V(22), with O(kubernetes.host_network) - the node's own sshd listens on 22. Needs
            O(kubernetes.start_sshd) or a O(kubernetes.worker_command) that starts sshd on that port.
        type: int
      run_as_user:
        description:
          - C(runAsUser) of the pods, for images with a non-root user (C(runAsNonRoot) is set with it). Needs
            O(kubernetes.ssh_auth_mount_path).
          - Unset (the image's user, normally root) or V(0) - the launcher gets C(OMPI_ALLOW_RUN_AS_ROOT=1) and
            C(OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1), without which mpirun refuses to start as root.
        type: int
      ssh_auth_mount_path:
        description:
          - The MPIJob's C(sshAuthMountPath) - where the operator mounts the SSH keys (the operator's default is
            C(/root/.ssh)); for a non-root user its C(~/.ssh), for example C(/home/mpiuser/.ssh).
        type: str
      ib_hca:
        description:
          - C(NCCL_IB_HCA) for the pods, instead of the plan's (which names the host's devices). With SR-IOV a pod sees
            its virtual functions under other C(mlx5_N) names - give those, or an empty string to let NCCL use every
            HCA the pod sees (the device plugin gave it only its own).
        type: str
      cleanup_timeout:
        description: Seconds to wait for a deleted MPIJob, its pods and the namespace to be gone.
        type: int
        default: 300
  mpirun:
    description: Settings of C(mpirun), used by O(launcher=mpirun) and in the MPIJob launcher's command.
    type: dict
    default: {}
    suboptions:
      path:
        description: The C(mpirun) program on the managed host (a name looked up in C(PATH), or a path).
        type: str
        default: mpirun
      args:
        description: More C(mpirun) arguments before the binary, for example C(--allow-run-as-root) or C(--tag-output).
        type: list
        elements: str
        default: []
      hostfile_dir:
        description: Directory on the managed host for the hostfile; default the module's temporary directory.
        type: str
      if_include:
        description:
          - Interfaces or CIDRs for Open MPI's TCP traffic and out-of-band channel (C(btl_tcp_if_include),
            C(oob_tcp_if_include)). Default - the names in C(NCCL_SOCKET_IFNAME) of the plan (C(^...) excludes).
        type: list
        elements: str
  slurm:
    description: Settings of O(launcher=slurm).
    type: dict
    default: {}
    suboptions:
      path:
        description: The C(srun) program on the managed host.
        type: str
        default: srun
      partition:
        description: C(--partition).
        type: str
      account:
        description: C(--account).
        type: str
      container_image:
        description: C(--container-image) (Pyxis), for example C(nvcr.io#nvidia/pytorch:24.05-py3).
        type: str
      args:
        description: More C(srun) options before the binary.
        type: list
        elements: str
        default: []
"""
