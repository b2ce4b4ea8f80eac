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

import time
from collections.abc import Callable
from typing import Any

from ansible_collections.lossless.fabric.plugins.module_utils import _nccl_launch as L

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
                 sleep: Callable[[float], None] = time.sleep, clock: Callable[[], float] = time.monotonic) -> None:
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
        """Create the namespace when it is missing; True when we created it (then we delete it at the end)."""
        if self._exists("read namespace %s" % self.ns, self.core.read_namespace, self.ns) is not None:
            return False
        self._call("create namespace %s" % self.ns, self.core.create_namespace, manifest)
        self.created_namespace = True
        return True

    def delete_namespace(self) -> None:
        if not self.created_namespace:
            return
        self._call("delete namespace %s" % self.ns, self.core.delete_namespace, self.ns)
        if not self._wait_gone(lambda: self._exists("read namespace %s" % self.ns, self.core.read_namespace, self.ns)):
            self.warnings.append("namespace %s is still terminating after %ss" % (self.ns, self.cleanup_timeout))

    # ------------------------------------------------------------ one launch
    def _get_job(self, name: str) -> dict | None:
        group, version, plural = L.MPIJOB_API
        return self._exists("read MPIJob %s/%s" % (self.ns, name), self.custom.get_namespaced_custom_object,
                            group, version, self.ns, plural, name)

    def _wait(self, name: str, timeout: float) -> tuple[str, dict | None]:
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
            self.sleep(min(self.poll, max(0.0, deadline - self.clock())))

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
        try:
            status, cond = self._wait(name, timeout)
            pod = self._launcher_pod(name)
            launch.update(status=status, log=self._log(pod) if pod is not None else "", rc=self._exit_code(pod),
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


class CommandRunner:
    """mpirun or srun on this host, one after the other, each bounded by coreutils ``timeout``."""

    def __init__(self, run_command: Callable[..., tuple[int, str, str]], timeout_bin: str,
                 clock: Callable[[], float] = time.monotonic, kill_after: int = 30) -> None:
        self.run_command = run_command
        self.timeout_bin = timeout_bin
        self.clock = clock
        self.kill_after = kill_after

    def launch(self, command: dict, timeout: int) -> dict:
        argv = [self.timeout_bin, "--kill-after=%d" % self.kill_after, str(timeout)] + command["argv"]
        start = self.clock()
        rc, out, err = self.run_command(argv, command["env"])
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
