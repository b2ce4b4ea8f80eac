# SPDX-License-Identifier: GPL-3.0-or-later
# PRIVATE: not a public API of lossless.fabric; may change without notice.
"""Launching what ``_nccl_launch.render`` built, and collecting the logs.

* ``KubernetesRunner``: one MPIJob per launch through the official
  ``kubernetes`` client (imported inside the functions that need it): create,
  wait for Succeeded/Failed, read the launcher pod's log, delete (unless kept).
* ``CommandRunner``: mpirun or srun through a ``run_command(argv, env)``
  callable (the module passes AnsibleModule.run_command), bounded by coreutils
  ``timeout``.

Both return one launch dict per run: name, log, rc, status
(succeeded|failed|timeout), duration_s, plus ``message`` when it did not
succeed.  No Ansible import here.
"""
from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

from ansible_collections.lossless.fabric.plugins.module_utils._nccl import _launch as L

TIMEOUT_RC = 124    # coreutils timeout: the command timed out
KILLED_RC = 137     # timeout --kill-after: still alive after SIGTERM, killed


class LaunchError(RuntimeError):
    """The launcher itself failed (API error, cannot clean up); the message says what and where."""


def _api_text(exc: Any) -> str:
    """An ApiException as 'code Reason: message' (the apiserver's Status message when there is one)."""
    import json  # pylint: disable=import-outside-toplevel

    message = getattr(exc, "body", None) or ""
    try:
        body = json.loads(message)
        message = body.get("message") or message
    except (TypeError, ValueError):
        pass
    return "%s %s: %s" % (getattr(exc, "status", "?"), getattr(exc, "reason", "") or "", str(message).strip())


def condition(job: dict, ctype: str) -> dict | None:
    for cond in ((job or {}).get("status") or {}).get("conditions") or []:
        if cond.get("type") == ctype and cond.get("status") == "True":
            return cond
    return None


def outcome_message(launch: dict, job_kind: str = "MPIJob") -> str:
    """One failed or timed-out launch in words: which job, why, and the end of its log."""
    head = "%s %s %s" % (job_kind, launch["name"], {"failed": "failed", "timeout": "timed out"}.get(launch["status"], launch["status"]))
    if launch.get("message"):
        head += ": " + launch["message"]
    tail = L.log_tail(launch.get("log") or "")
    return head + ("\nlast lines of the launcher log:\n" + tail if tail else "\n(the launcher printed nothing)")


class KubernetesRunner:
    """MPIJobs in one namespace; ``auth`` mirrors kubernetes.core (kubeconfig, context, host, api_key, ...)."""

    def __init__(self, spec: dict, auth: dict, poll_interval: float = 5.0, cleanup_timeout: float = 300.0,
                 sleep: Callable[[float], None] = time.sleep, clock: Callable[[], float] = time.monotonic,
                 follow: bool = True) -> None:
        self.spec = spec
        self.ns = spec["kubernetes"]["namespace"]
        self.auth = auth
        self.poll = poll_interval
        self.cleanup_timeout = cleanup_timeout
        self.sleep = sleep
        self.clock = clock
        self.core: Any = None
        self.custom: Any = None
        self.created_namespace = False
        self.follow = follow
        self.warnings: list[str] = []

    # ------------------------------------------------------------ connection
    def connect(self) -> None:
        try:
            from kubernetes import client, config  # pylint: disable=import-outside-toplevel
            from kubernetes.config.config_exception import ConfigException  # pylint: disable=import-outside-toplevel
        except ImportError as exc:
            raise LaunchError("launcher kubernetes needs the Python package kubernetes on the managed host: %s" % exc) from None
        cfg = client.Configuration()
        try:
            if self.auth.get("host"):
                cfg.host = self.auth["host"]
                if self.auth.get("api_key"):
                    cfg.api_key = {"authorization": "Bearer " + self.auth["api_key"]}
            else:
                config.load_kube_config(config_file=self.auth.get("kubeconfig"), context=self.auth.get("context"),
                                        client_configuration=cfg)
        except (ConfigException, OSError, TypeError, ValueError) as exc:
            raise LaunchError("kubernetes.kubeconfig %s: %s" % (self.auth.get("kubeconfig") or "(default ~/.kube/config)", exc)) from None
        if self.auth.get("validate_certs") is not None:
            cfg.verify_ssl = bool(self.auth["validate_certs"])
        if self.auth.get("ca_cert"):
            cfg.ssl_ca_cert = self.auth["ca_cert"]
        api = client.ApiClient(cfg)
        self.core = client.CoreV1Api(api)
        self.custom = client.CustomObjectsApi(api)

    def _call(self, what: str, func: Callable, *args: Any, **kwargs: Any) -> Any:
        from kubernetes.client.rest import ApiException  # pylint: disable=import-outside-toplevel
        from urllib3.exceptions import HTTPError  # pylint: disable=import-outside-toplevel

        try:
            return func(*args, **kwargs)
        except ApiException as exc:
            raise LaunchError("kubernetes: %s: %s" % (what, _api_text(exc))) from None
        except HTTPError as exc:
            raise LaunchError("kubernetes: %s: %s" % (what, exc)) from None

    def _exists(self, what: str, func: Callable, *args: Any) -> dict | None:
        from kubernetes.client.rest import ApiException  # pylint: disable=import-outside-toplevel

        try:
            return func(*args)
        except ApiException as exc:
            if exc.status == 404:
                return None
            raise LaunchError("kubernetes: %s: %s" % (what, _api_text(exc))) from None

    # ------------------------------------------------------------ namespace
    def ensure_namespace(self, manifest: dict) -> bool:
        """Create the namespace when it is missing; True when this run created it.

        The namespace is never deleted: another run (a second site.yml, a user's job) may use it at the same time,
        and deleting it would delete that run's MPIJob. Each run deletes only its own MPIJobs.
        """
        if self._exists("read namespace %s" % self.ns, self.core.read_namespace, self.ns) is not None:
            return False
        from kubernetes.client.rest import ApiException  # pylint: disable=import-outside-toplevel

        try:
            self.core.create_namespace(manifest)
        except ApiException as exc:
            if exc.status == 409:  # another run created it a moment ago
                return False
            raise LaunchError("kubernetes: create namespace %s: %s" % (self.ns, _api_text(exc))) from None
        self.created_namespace = True
        return True

    # ------------------------------------------------------------ preflight
    def preflight(self, manifest: dict) -> None:
        """Fail at once, before any launch, when the MPI Operator is absent or too old, or when too few nodes can
        ever hold a worker (the RDMA resource or the GPUs not allocatable) - instead of waiting out every timeout."""
        self._check_operator(manifest)
        self._check_allocatable()

    def _check_operator(self, manifest: dict) -> None:
        from kubernetes import client  # pylint: disable=import-outside-toplevel
        from kubernetes.client.rest import ApiException  # pylint: disable=import-outside-toplevel

        ext = client.ApiextensionsV1Api(self.core.api_client)
        try:
            crd = ext.read_custom_resource_definition(L.MPIJOB_CRD)
        except ApiException as exc:
            if exc.status == 404:
                raise LaunchError("kubernetes: the MPI Operator is not installed: no CustomResourceDefinition %s "
                                  "(install kubeflow/mpi-operator %s or later, deploy/v2beta1/mpi-operator.yaml)"
                                  % (L.MPIJOB_CRD, L.MPI_OPERATOR_MIN)) from None
            if exc.status == 403:  # reading CRDs is cluster-scoped; a namespace-only user cannot: the launch will tell
                self.warnings.append("kubernetes: cannot read CustomResourceDefinition %s (%s); MPI Operator version not checked"
                                     % (L.MPIJOB_CRD, _api_text(exc)))
                return
            raise LaunchError("kubernetes: read CustomResourceDefinition %s: %s" % (L.MPIJOB_CRD, _api_text(exc))) from None
        crd = self.core.api_client.sanitize_for_serialization(crd)
        missing = L.operator_missing_fields(crd, manifest)
        if missing:
            raise LaunchError("kubernetes: the MPI Operator is too old for this MPIJob: CustomResourceDefinition %s "
                              "v2beta1 has no %s (%s); upgrade kubeflow/mpi-operator" % (
                                  L.MPIJOB_CRD, ", ".join("spec." + f for f in missing),
                                  ", ".join("spec.%s since %s" % (f, L.MPIJOB_FIELDS.get(f, "-")) for f in missing)))

    def _check_allocatable(self) -> None:
        from kubernetes.client.rest import ApiException  # pylint: disable=import-outside-toplevel

        spec, k = self.spec, self.spec["kubernetes"]
        selector = ",".join("%s=%s" % kv for kv in sorted(k["node_selector"].items()))
        try:
            nodes = self.core.list_node(label_selector=selector).items if selector else self.core.list_node().items
        except ApiException as exc:
            if exc.status == 403:  # listing nodes is cluster-scoped: skip the check, the scheduler will say it
                self.warnings.append("kubernetes: cannot list nodes (%s); RDMA resource not checked before the launch" % _api_text(exc))
                return
            raise LaunchError("kubernetes: list nodes: %s" % _api_text(exc)) from None
        wanted = {"nvidia.com/gpu": spec["gpus_per_node"]}
        if k["rdma_resource_count"]:
            wanted[k["rdma_resource"]] = k["rdma_resource_count"]
        fit, short = [], []
        for node in nodes:
            name = node.metadata.name
            if spec["hosts"] and name not in spec["hosts"]:
                continue
            alloc = (node.status.allocatable if node.status else None) or {}
            lacking = ["%s %s (needs %d)" % (res, alloc.get(res, "none"), count) for res, count in sorted(wanted.items())
                       if _quantity(alloc.get(res)) < count]
            if node.spec is not None and node.spec.unschedulable:
                lacking.append("unschedulable (cordoned)")
            (short if lacking else fit).append("%s: %s" % (name, ", ".join(lacking)) if lacking else name)
        seen = {node.metadata.name for node in nodes}
        short.extend("%s: not a node of the cluster%s" % (host, " (with those labels)" if selector else "")
                     for host in spec["hosts"] if host not in seen)
        if len(fit) < spec["nodes"]:
            where = ("of hosts %s" % ", ".join(spec["hosts"])) if spec["hosts"] else \
                ("with labels %s" % selector if selector else "in the cluster")
            raise LaunchError("kubernetes: %d worker(s) need %s allocatable, but only %d of %d node(s) %s have it%s; "
                              "is the RDMA device plugin (role k8s_rdma) running there?" % (
                                  spec["nodes"], " and ".join("%s %d" % kv for kv in sorted(wanted.items())), len(fit),
                                  len(fit) + len(short), where, (" - " + "; ".join(short)) if short else ""))

    # ------------------------------------------------------------ one launch
    def _get_job(self, name: str) -> dict | None:
        group, version, plural = L.MPIJOB_API
        return self._exists("read MPIJob %s/%s" % (self.ns, name), self.custom.get_namespaced_custom_object,
                            group, version, self.ns, plural, name)

    def _wait(self, name: str, timeout: float, followed: dict) -> tuple[str, dict | None]:
        deadline = self.clock() + timeout
        while True:
            job = self._get_job(name)
            if job is None:
                return "failed", {"reason": "NotFound", "message": "the MPIJob disappeared while it ran"}
            for ctype, status in (("Succeeded", "succeeded"), ("Failed", "failed")):
                cond = condition(job, ctype)
                if cond is not None:
                    return status, cond
            if self.clock() >= deadline:
                return "timeout", None
            if self.follow and "tried" not in followed:
                pod = self._launcher_pod(name)
                if pod is not None and pod.status is not None and pod.status.phase == "Running":
                    followed["tried"] = pod.metadata.name  # one attempt: a failed stream falls back to the plain read
                    text = self._follow(pod, deadline)
                    if text is not None:
                        followed["log"] = text
                    continue  # the launcher ended (or the stream broke): read the condition at once
            self.sleep(min(self.poll, max(0.0, deadline - self.clock())))

    def _follow(self, pod: Any, deadline: float) -> str | None:
        """The launcher's log streamed from its start to its exit (follow=true).

        A plain read returns the kubelet's current log file only: with NCCL_DEBUG=INFO from every rank a long log
        has rotated (containerLogMaxSize, 10 MiB by default) and its head - the NET/IB and GPUDirect lines - is gone.
        A follower attached while the container runs receives every line; None when the stream fails.
        """
        from kubernetes.client.rest import ApiException  # pylint: disable=import-outside-toplevel
        from urllib3.exceptions import HTTPError  # pylint: disable=import-outside-toplevel

        remaining = max(1.0, deadline - self.clock())
        try:
            resp = self.core.read_namespaced_pod_log(pod.metadata.name, self.ns, container="launcher", follow=True,
                                                     _preload_content=False, _request_timeout=remaining)
            chunks = []
            for chunk in resp.stream(65536):
                chunks.append(chunk)
            resp.release_conn()
        except (ApiException, HTTPError, OSError) as exc:
            self.warnings.append("launcher pod %s: following the log failed (%s); read it at the end instead"
                                 % (pod.metadata.name, _api_text(exc) if isinstance(exc, ApiException) else exc))
            return None
        return b"".join(chunks).decode("utf-8", errors="replace")

    def _launcher_pod(self, name: str) -> dict | None:
        pods = self._call("list launcher pods of %s" % name, self.core.list_namespaced_pod, self.ns,
                          label_selector=L.launcher_selector(name))
        items = sorted(pods.items, key=lambda p: p.metadata.creation_timestamp or 0)
        return items[-1] if items else None

    def _log(self, pod: Any) -> str:
        from kubernetes.client.rest import ApiException  # pylint: disable=import-outside-toplevel

        try:
            return self.core.read_namespaced_pod_log(pod.metadata.name, self.ns, container="launcher")
        except ApiException as exc:
            # a pod that never started has no log; the failure message says so
            self.warnings.append("launcher pod %s: no log: %s" % (pod.metadata.name, _api_text(exc)))
            return ""

    @staticmethod
    def _exit_code(pod: Any) -> int | None:
        for cs in (pod.status.container_statuses or []) if pod is not None and pod.status else []:
            term = cs.state.terminated if cs.state else None
            if term is not None and cs.name == "launcher":
                return term.exit_code
        return None

    def _events(self, name: str) -> list[str]:
        """Warning events of the MPIJob (the operator reports validation errors only there)."""
        try:
            events = self.core.list_namespaced_event(self.ns, field_selector="involvedObject.name=%s" % name)
        except Exception:  # pylint: disable=broad-except  # events are a hint for the message, never the failure
            return []
        return ["%s: %s" % (e.reason, e.message) for e in events.items if e.type == "Warning"]

    def launch(self, name: str, manifest: dict, timeout: float, keep: bool) -> dict:
        start = self.clock()
        group, version, plural = L.MPIJOB_API
        self._call("create MPIJob %s/%s" % (self.ns, name), self.custom.create_namespaced_custom_object,
                   group, version, self.ns, plural, manifest)
        launch: dict[str, Any] = {"name": name, "namespace": self.ns}
        followed: dict[str, str] = {}
        try:
            status, cond = self._wait(name, timeout, followed)
            pod = self._launcher_pod(name)
            log = followed.get("log")
            if log is None or (pod is not None and not log):
                log = self._log(pod) if pod is not None else ""
            launch.update(status=status, log=log, rc=self._exit_code(pod),
                          launcher_pod=pod.metadata.name if pod is not None else None)
            if status != "succeeded":
                launch["message"] = self._why(name, status, cond, pod, timeout)
        finally:
            launch["duration_s"] = round(self.clock() - start, 3)
            if not keep:
                self.delete_job(name)
        return launch

    def _why(self, name: str, status: str, cond: dict | None, pod: Any, timeout: float) -> str:
        parts = []
        if cond is not None:
            ctype = "Failed" if status == "failed" else "Succeeded"
            parts.append("condition %s reason %s: %s" % (ctype, cond.get("reason") or "-", cond.get("message") or "-"))
        if status == "timeout":
            parts.append("no Succeeded or Failed condition within %ss" % timeout)
            job = self._get_job(name) or {}
            conds = ", ".join("%s=%s" % (c.get("type"), c.get("status")) for c in (job.get("status") or {}).get("conditions") or [])
            parts.append("conditions: %s" % (conds or "none (the operator has not accepted the job)"))
        if pod is None:
            parts.append("no launcher pod (label %s)" % L.launcher_selector(name))
        elif status == "timeout":
            parts.append("launcher pod %s is %s" % (pod.metadata.name, pod.status.phase if pod.status else "?"))
        if status == "timeout":
            parts.extend(self._unscheduled(name))
        parts.extend("event %s" % e for e in self._events(name))
        return "; ".join(parts)

    def _unscheduled(self, name: str) -> list[str]:
        """Why pods of the job wait: the scheduler's message (missing GPUs or RDMA resource, node selector)."""
        pods = self._call("list pods of %s" % name, self.core.list_namespaced_pod, self.ns,
                          label_selector="%s=%s" % (L.JOB_NAME_LABEL, name))
        out = []
        for pod in pods.items:
            for cond in (pod.status.conditions or []) if pod.status else []:
                if cond.type == "PodScheduled" and cond.status == "False":
                    out.append("pod %s is %s: %s" % (pod.metadata.name, pod.status.phase, cond.message or cond.reason))
        return out

    def delete_job(self, name: str) -> None:
        """Delete the MPIJob and wait until it and its pods are gone, so the next launch gets the GPUs."""
        from kubernetes import client  # pylint: disable=import-outside-toplevel
        from kubernetes.client.rest import ApiException  # pylint: disable=import-outside-toplevel

        group, version, plural = L.MPIJOB_API
        try:
            self.custom.delete_namespaced_custom_object(group, version, self.ns, plural, name,
                                                        body=client.V1DeleteOptions(propagation_policy="Foreground"))
        except ApiException as exc:
            if exc.status != 404:  # already gone: still make sure no pod is left
                raise LaunchError("kubernetes: delete MPIJob %s/%s: %s" % (self.ns, name, _api_text(exc))) from None

        def left() -> bool:
            if self._get_job(name) is not None:
                return True
            pods = self._call("list pods of %s" % name, self.core.list_namespaced_pod, self.ns,
                              label_selector="%s=%s" % (L.JOB_NAME_LABEL, name))
            return bool(pods.items)

        if not self._wait_gone(left):
            raise LaunchError("kubernetes: MPIJob %s/%s or its pods still exist %ss after the delete" % (self.ns, name, self.cleanup_timeout))

    def _wait_gone(self, still_there: Callable[[], Any]) -> bool:
        deadline = self.clock() + self.cleanup_timeout
        while still_there():
            if self.clock() >= deadline:
                return False
            self.sleep(min(self.poll, 1.0))
        return True

    # ------------------------------------------------------------ a module run

    def run(self, rendered: dict, timeout: float, keep: bool, fail_on_error: bool, launches: list) -> dict:
        """Connect, check, create the namespace when missing, then each repeat in turn; appends to ``launches``.

        Returns {"namespace_created": bool}. A failed launch stops the repeats when ``fail_on_error``.
        Raises LaunchError (the launches so far stay in ``launches``).
        """
        self.connect()
        self.preflight(rendered["manifests"][1])
        # A tenant's namespace exists (onboarding made it), and its credentials may neither read nor create namespaces.
        created = False if self.spec.get("tenant") else self.ensure_namespace(rendered["manifests"][0])
        for name, manifest in zip(rendered["names"], rendered["manifests"][1:]):
            launches.append(self.launch(name, manifest, timeout, keep))
            if launches[-1]["status"] != "succeeded" and fail_on_error:
                break
        return {"namespace_created": created}


def _quantity(value: Any) -> float:
    """A Kubernetes quantity of countable resources ("8", "1k", "63") as a number; 0 when absent or unreadable."""
    if value is None:
        return 0
    text = str(value)
    mult = {"k": 1e3, "M": 1e6, "G": 1e9, "Ki": 1024, "Mi": 1024 ** 2, "Gi": 1024 ** 3}
    for suffix in sorted(mult, key=len, reverse=True):
        if text.endswith(suffix):
            try:
                return float(text[:-len(suffix)]) * mult[suffix]
            except ValueError:
                return 0
    try:
        return float(text)
    except ValueError:
        return 0


class CommandRunner:
    """mpirun or srun on this host, one after the other, each bounded by coreutils ``timeout``."""

    def __init__(self, run_command: Callable[..., tuple[int, str, str]], timeout_bin: str,
                 clock: Callable[[], float] = time.monotonic, kill_after: int = 30) -> None:
        self.run_command = run_command
        self.timeout_bin = timeout_bin
        self.clock = clock
        self.kill_after = kill_after

    def run(self, commands: list[dict], timeout: int, fail_on_error: bool, launches: list) -> None:
        """Each repeat in turn, appended to ``launches``; a failed one stops the rest when ``fail_on_error``."""
        for command in commands:
            launches.append(self.launch(command, timeout))
            if launches[-1]["status"] != "succeeded" and fail_on_error:
                break

    def launch(self, command: dict, timeout: int) -> dict:
        argv = [self.timeout_bin, "--kill-after=%d" % self.kill_after, str(timeout)] + command["argv"]
        start = self.clock()
        env = dict(command["env"])
        if "-x" in command["argv"]:
            # mpirun -x LD_LIBRARY_PATH exports the launcher's value: make sure there is one (empty is fine)
            env.setdefault("LD_LIBRARY_PATH", os.environ.get("LD_LIBRARY_PATH", ""))
        rc, out, err = self.run_command(argv, env)
        log = (out or "") + (err or "")
        launch: dict[str, Any] = {"name": command["name"], "log": log, "rc": rc, "duration_s": round(self.clock() - start, 3)}
        if rc in (TIMEOUT_RC, KILLED_RC):
            launch["status"] = "timeout"
            launch["rc"] = None
            launch["message"] = "%s did not finish within %ss (stopped by timeout, rc %d)" % (command["argv"][0], timeout, rc)
        elif rc != 0:
            launch["status"] = "failed"
            launch["message"] = "%s exited with rc %d" % (command["argv"][0], rc)
        else:
            launch["status"] = "succeeded"
        return launch
