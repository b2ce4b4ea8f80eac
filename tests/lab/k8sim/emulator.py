# SPDX-License-Identifier: GPL-3.0-or-later
"""The kmock 0.8 KubernetesEmulator subclass: the toolchain.md gap fixes
(list kind/apiVersion, core groupVersion, watch=True, server-set metadata)
plus a stricter apiserver (store.py) behind every resource URL, pod logs,
and the /_k8sim/ control API.

kmock provides the HTTP server, request parsing, the discovery documents
(/api, /apis, /apis/G, /apis/G/V from its bundled k3s resource list plus our
CRDs) and the Status error rendering; store.py provides the object semantics.
"""
from __future__ import annotations

import asyncio
import json
import logging
import time
from typing import Any

import aiohttp.web
import kmock
from kmock._internal import parsing, rendering

from . import auth, crds
from .store import ApiError, Res, Store

log = logging.getLogger("k8sim")

# --- gap 3 of toolchain.md: the python client sends watch=True (capital T) ---
_orig_guess_k8s = parsing.guess_k8s


def _guess_k8s(k8s, method, query):  # type: ignore[no-untyped-def]
    query = dict(query)
    if "watch" in query:
        query["watch"] = str(query["watch"]).lower()
    return _orig_guess_k8s(k8s, method, query)


parsing.guess_k8s = _guess_k8s


def _parse_path(path: str) -> parsing.ParsedPath:
    """kmock 0.8's parse_path raises on /api/v1/namespaces and reads
    /api/v1/namespaces/NAME as a namespace; this one knows the Namespace object."""
    parts = list(path.strip("/").split("/"))
    if len(parts) >= 2 and parts[0] == "apis":
        group, version, rest = parts[1], (parts[2] if len(parts) > 2 else None), parts[3:]
    elif len(parts) >= 1 and parts[0] == "api":
        group, version, rest = "", (parts[1] if len(parts) > 1 else None), parts[2:]
    else:
        return parsing.ParsedPath()
    namespace = None
    if len(rest) == 3 and rest[0] == "namespaces" and rest[2] in ("status", "finalize"):
        pass  # the Namespace object's own subresources
    elif len(rest) >= 3 and rest[0] == "namespaces":
        namespace, rest = rest[1], rest[2:]
    plural = rest[0] if rest else None
    name = rest[1] if len(rest) > 1 else None
    sub = "/".join(rest[2:]) or None
    return parsing.ParsedPath(group, version, plural, namespace, name, sub)


parsing.parse_path = _parse_path


def _truthy(value: Any) -> bool:
    return str(value).lower() in ("true", "1")


class K8sEmulator(kmock.KubernetesEmulator):
    """Set up with attach(sim) after construction (kmock classes are attrs classes)."""

    sim: Any = None
    store: Store

    # ------------------------------------------------------------------ setup
    def attach(self, sim: Any) -> None:
        self.sim = sim
        self.store = sim.store
        self.resources.load_bundled()
        for key, spec in crds.CRDS.items():
            self.resources[key] = kmock.ResourceInfo(
                kind=spec["kind"], singular=spec["singular"], namespaced=spec["namespaced"],
                verbs=crds.VERBS, shortnames=spec["shortnames"], subresources=spec["subresources"])
        for resource in self.resources:
            info = self.resources[resource]
            if not resource.plural or not info.kind:
                continue
            key = "%s/%s/%s" % (resource.group, resource.version, resource.plural)
            crd = crds.CRDS.get(key)
            schema = crd["schema"] if crd else None
            if key == "kubeflow.org/v2beta1/mpijobs" and sim.mpi_operator:
                schema = crds.mpijob_schema(sim.mpi_operator)  # the installed release's CRD
            self.store.add_resource(Res(
                group=resource.group or "", version=resource.version, plural=resource.plural, kind=info.kind,
                namespaced=bool(info.namespaced), subresources=set(info.subresources),
                schema=schema, singular=info.singular or ""))

    # --------------------------------------------------------- discovery fixes
    async def _serve_version(self, request: rendering.Request) -> rendering.Payload:
        doc = await super()._serve_version(request)
        if isinstance(doc, dict) and str(doc.get("groupVersion", "")).startswith("/"):
            doc["groupVersion"] = doc["groupVersion"].lstrip("/")  # gap 2: core is "v1", not "/v1"
        for entry in doc.get("resources", []) if isinstance(doc, dict) else []:
            entry["verbs"] = sorted(entry.get("verbs") or [])
            entry["shortNames"] = sorted(entry.get("shortNames") or [])
            if "/" in entry["name"]:  # subresources: no short names, their own verbs (as the apiserver lists them)
                sub = entry["name"].split("/", 1)[1]
                entry.update(shortNames=[], categories=[], singularName="",
                             verbs=["get"] if sub == "log" else ["get", "patch", "update"])
        return doc

    async def _serve_api(self, request: rendering.Request) -> rendering.Payload:
        port = request.url.port or 80
        return {"kind": "APIVersions", "versions": ["v1"],
                "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1:%d" % port}]}

    async def _serve_server_version(self, request: rendering.Request) -> rendering.Payload:
        major, minor = self.store.kube_version.split(".")[:2]
        return {"major": major, "minor": minor, "gitVersion": "v%s+k8sim" % self.store.kube_version,
                "gitCommit": "0000000000000000000000000000000000000000", "gitTreeState": "clean",
                "buildDate": "2024-01-01T00:00:00Z", "goVersion": "go1.22.0", "compiler": "gc",
                "platform": "linux/amd64"}

    # ---------------------------------------------------------------- routing
    async def _handle(self, request: rendering.Request) -> aiohttp.web.StreamResponse:
        path = request.url.path
        started = time.monotonic()
        try:
            if path.startswith("/_k8sim/") or path == "/_k8sim":
                return await self._control(request)
            # who is asking (401 for an unknown token once users are configured); discovery needs no more
            self._identity(request)
            if path in ("/api/", "/apis/", "/version/"):  # the apiserver serves these too (kmock 0.8: 404)
                serve = {"/api/": self._serve_api, "/apis/": self._serve_apis,
                         "/version/": self._serve_server_version}[path]
                return aiohttp.web.json_response(await serve(request))
            k8s = parsing.parse_path(path)
            if k8s.group is not None and k8s.plural:
                return await self._resource_request(request, k8s)
            return await super()._handle(request)
        except ApiError as exc:
            return aiohttp.web.json_response(exc.status(), status=exc.code)
        except kmock.KubernetesError as exc:  # kmock's discovery 404s, in the apiserver's words
            err = ApiError(exc.status, "NotFound" if exc.status == 404 else (exc.reason or "InternalError"),
                           "the server could not find the requested resource" if exc.status == 404 else str(exc.message), {})
            return aiohttp.web.json_response(err.status(), status=err.code)
        finally:
            log.info("%s %s %.1f ms", getattr(request.method, "value", request.method), request.url.path_qs, (time.monotonic() - started) * 1000)

    async def _resource_request(self, request: rendering.Request, k8s: parsing.ParsedPath) -> aiohttp.web.StreamResponse:
        store = self.store
        if k8s.group == "kubeflow.org" and not self.sim.mpi_operator:
            # no MPI Operator, no CRD: the apiserver does not serve the group
            raise ApiError(404, "NotFound", "the server could not find the requested resource", {})
        res = store.resource(k8s.group or "", k8s.version or "", k8s.plural or "")
        ns, name, sub = k8s.namespace, k8s.name, k8s.subresource
        params = dict(request.params.items())
        method = request.method.value if hasattr(request.method, "value") else str(request.method)
        method = method.upper()
        ident = self._identity(request)
        if ident is not None:
            # authorization comes before any lookup, as in the apiserver's handler chain (WithAuthorization):
            # a forbidden user learns nothing of what exists. For namespaces, the namespace is the object's name.
            ns_attr = name if (res.group == "" and res.plural == "namespaces" and name) else ns
            verb = auth.verb_of(method, name, params)
            resource = res.plural + ("/" + sub if sub else "")
            if not auth.allowed(store, ident, res.group, resource, verb, ns_attr, name):
                raise auth.forbidden(ident, res.group, res.plural, sub, verb, ns_attr, name)
        if sub and sub not in res.subresources:
            raise ApiError(404, "NotFound", "the server could not find the requested resource", {})
        if sub == "log":
            if method != "GET":
                raise ApiError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource", {})
            return await self._pod_log(ns, name or "", params)
        if sub not in (None, "status"):
            raise ApiError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource", {})
        warnings: list[str] = []
        status = 200
        if method == "GET" and (_truthy(params.get("watch"))):
            return await self._watch(request, res, ns, name, params)
        if method == "GET" and name is None:
            body = store.list(res, ns, params)
        elif method == "GET":
            body = store.get(res, ns, name)
        elif method == "POST" and name is None:
            body, warnings = store.create(res, ns, self._json(request), params)
            status = 201
        elif method == "PUT" and name:
            body, warnings = store.replace(res, ns, name, self._json(request), params, sub)
        elif method == "PATCH" and name:
            body, warnings, created = store.patch(res, ns, name, request.body, request.headers.get("Content-Type", ""),
                                                  params, sub)
            status = 201 if created else 200
        elif method == "DELETE" and name:
            options = request.data if isinstance(request.data, dict) else {}
            body, status = store.delete(res, ns, name, options, params)
        elif method == "DELETE":
            options = request.data if isinstance(request.data, dict) else {}
            body = store.delete_collection(res, ns, options, params)
        else:
            raise ApiError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource", {})
        self.sim.kick()
        headers = [("Warning", '299 - "%s"' % w.replace('"', '\\"')) for w in warnings]
        resp = aiohttp.web.json_response(body, status=status)
        for key, value in headers:
            resp.headers.add(key, value)
        return resp

    def _identity(self, request: rendering.Request) -> auth.Identity | None:
        """The caller, from its bearer token (None while no users are configured); 401 for an unknown token."""
        header = next((v for k, v in request.headers.items() if k.lower() == "authorization"), None)
        return self.sim.auth.identify(header)

    @staticmethod
    def _json(request: rendering.Request) -> Any:
        if request.data is None and request.body:
            try:
                return json.loads(request.body)
            except ValueError:
                raise ApiError(400, "BadRequest", "the body of the request was in an unknown format") from None
        if request.data is None:
            raise ApiError(400, "BadRequest", "the body of the request was in an unknown format")
        return request.data

    # -------------------------------------------------------------------- watch
    async def _watch(self, request: rendering.Request, res: Res, ns: str | None, name: str | None,
                     params: dict) -> aiohttp.web.StreamResponse:
        store = self.store
        fsel = params.get("fieldSelector", "")
        if name:
            fsel = ",".join(x for x in (fsel, "metadata.name=%s" % name) if x)
        # parse (and reject) selectors before the stream starts, as the apiserver does
        from .store import fields_match, labels_match, parse_field_selector, parse_label_selector  # pylint: disable=import-outside-toplevel
        lreqs = parse_label_selector(params.get("labelSelector", ""))
        freqs = parse_field_selector(res, fsel)
        store._check_scope(res, ns)  # pylint: disable=protected-access
        timeout = float(params.get("timeoutSeconds") or 1800)
        deadline = time.monotonic() + timeout
        queue: asyncio.Queue = asyncio.Queue()

        def matches(obj: dict) -> bool:
            if ns and res.namespaced and obj["metadata"].get("namespace") != ns:
                return False
            return labels_match(obj["metadata"].get("labels"), lreqs) and fields_match(obj, freqs)

        def listener(etype: str, eres: Res, obj: dict) -> None:
            if (eres.group, eres.plural) == (res.group, res.plural) and matches(obj):
                queue.put_nowait((etype, store._view(res, obj)))  # pylint: disable=protected-access

        rv = params.get("resourceVersion")
        initial: list[tuple[str, dict]] = []
        gone = False
        if rv in (None, "", "0"):
            initial = [("ADDED", store._view(res, o)) for o in store.select(res, ns) if matches(o)]  # pylint: disable=protected-access
        else:
            try:
                since = store.events_since(int(rv), res)
            except ValueError:
                raise ApiError(400, "BadRequest", 'invalid resource version "%s"' % rv) from None
            if since is None:
                gone = True
            else:
                initial = [(etype, store._view(res, obj)) for _rv, etype, obj in since if matches(obj)]  # pylint: disable=protected-access
        store.listeners.append(listener)
        resp = aiohttp.web.StreamResponse(status=200)
        resp.content_type = "application/json"
        resp.enable_chunked_encoding()
        try:
            await resp.prepare(request._raw_request)  # pylint: disable=protected-access
            if gone:
                err = ApiError(410, "Expired", "too old resource version: %s (%d)" % (rv, store.rv)).status()
                await resp.write(json.dumps({"type": "ERROR", "object": err}).encode() + b"\n")
                return resp
            for etype, obj in initial:
                await resp.write(json.dumps({"type": etype, "object": obj}).encode() + b"\n")
            while not self.sim.stopping.is_set():
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                try:
                    etype, obj = await asyncio.wait_for(queue.get(), timeout=min(remaining, 0.25))
                except TimeoutError:
                    continue
                await resp.write(json.dumps({"type": etype, "object": obj}).encode() + b"\n")
        except (ConnectionResetError, asyncio.CancelledError):
            pass  # the client went away; nothing to tell it
        finally:
            if listener in store.listeners:
                store.listeners.remove(listener)
        return resp

    # --------------------------------------------------------------------- logs
    async def _pod_log(self, ns: str | None, name: str, params: dict) -> aiohttp.web.StreamResponse:
        store = self.store
        pods = store.resource("", "v1", "pods")
        pod = store.get(pods, ns, name)
        containers = [c.get("name") for c in pod.get("spec", {}).get("containers", [])]
        container = params.get("container")
        if container is None:
            if len(containers) != 1:
                raise ApiError(400, "BadRequest", "a container name must be specified for pod %s, choose one of: [%s]"
                               % (name, " ".join(containers)))
            container = containers[0]
        elif container not in containers:
            raise ApiError(400, "BadRequest", "container %s is not valid for pod %s" % (container, name))
        phase = pod.get("status", {}).get("phase", "Pending")
        if phase == "Pending":
            raise ApiError(400, "BadRequest", 'container "%s" in pod "%s" is waiting to start: ContainerCreating'
                           % (container, name))
        data = self.sim.logs.get((ns, name, container), b"")
        if _truthy(params.get("follow")):
            # A follower attached while the container runs gets every line up to its exit, across the kubelet's
            # rotations (the CRI log reader reopens the rotated file). Here: wait for the end, then send it all.
            while phase == "Running" and not self.sim.stopping.is_set():
                await asyncio.sleep(0.02)
                pod = store.find(pods, ns, name) or {}
                phase = (pod.get("status") or {}).get("phase", "Gone")
            data = self.sim.logs.get((ns, name, container), b"")
        else:
            data = self.sim.rotated(data)
        if params.get("tailLines") is not None:
            try:
                n = int(params["tailLines"])
            except ValueError:
                raise ApiError(400, "BadRequest", "tailLines: invalid value") from None
            lines = data.splitlines(keepends=True)
            data = b"".join(lines[-n:]) if n > 0 else b""
        if params.get("limitBytes") is not None:
            data = data[:int(params["limitBytes"])]
        return aiohttp.web.Response(body=data, status=200, content_type="text/plain")

    # ------------------------------------------------------------------ control
    async def _control(self, request: rendering.Request) -> aiohttp.web.StreamResponse:
        parts = [p for p in request.url.path.split("/") if p][1:]
        method = str(request.method.value if hasattr(request.method, "value") else request.method).upper()
        body = request.data if isinstance(request.data, dict) else {}
        try:
            result = self.sim.control(method, parts, body)
        except KeyError as exc:
            return aiohttp.web.json_response({"error": "not found: %s" % exc}, status=404)
        except (ValueError, TypeError, OSError) as exc:
            return aiohttp.web.json_response({"error": str(exc)}, status=400)
        self.sim.kick()
        return aiohttp.web.json_response(result, status=200)
