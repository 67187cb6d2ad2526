#!/usr/bin/env python3
"""Bind Determined workspaces to Kubernetes namespaces and resource pools (masters 0.35+).

Runs inside the cluster as a Kubernetes Job (components/determined/workspaces.py builds it), with the
standard library only. For each workspace of DET_MAPPING: find it by name or create it, bind
it to its namespace, bind its pools to it, and make its pools its default compute / aux
pools. Then it makes the master's other bindings agree with the stack (`reconcile`):

- a workspace bound to a namespace that is none of DET_TASK_NAMESPACES (a pool or namespace
  removed from the config, or bound by hand elsewhere) is moved back to DET_DEFAULT_NAMESPACE.
  The master lists pods, Jobs and events in every bound namespace when it starts and does not
  start when one is refused (its Role deleted with the namespace): this runs before the stack
  deletes a namespace;
- a pool of the mapping is bound to its mapped workspace only (none for the master's default
  pools, which stay open to every workspace); other workspaces lose the binding;
- a binding to a pool the master no longer has is removed, and a workspace default naming a
  pool the workspace can no longer use is cleared (else each of its tasks that names no pool
  fails to start).

Every step first reads what the master has and changes only what differs, so a second run
changes nothing. It never deletes or archives a workspace.

Environment:
  DET_MASTER           master URL, e.g. http://determined-master-service.determined.svc.cluster.local:8080
  DET_MASTER_CERT_FILE optional (https): the master's certificate chain, trusted beside the public CAs
  DET_MASTER_CERT_NAME optional (https): the host name the certificate is checked against
  DET_USER             an admin user (default "admin")
  DET_PASSWORD_FILE    a file holding its password (never printed), or
  DET_PASSWORD         the password itself
  DET_MAPPING          JSON list of {"workspace", "namespace", "pool", "role": "compute"|"aux"}
  DET_DEFAULT_NAMESPACE the master's default_namespace (where unbound workspaces' tasks run)
  DET_TASK_NAMESPACES  JSON list of the namespaces the stack gives the master a Role in (the
                       default one and every namespace of the mapping among them)
  DET_TIMEOUT_SECONDS  how long to wait for the master (/info) and for its pools (default 600)
  DET_RETRIES          attempts per call on HTTP 5xx / connection errors (default 8)
  DET_CLUSTER_NAME     cluster key of the namespace binding (default "": the single cluster)

TLS (https): verified as Determined's tasks verify the master, no looser. The master hands a
task every certificate of its own chain (GetCertPEM, master/internal/config/config.go:760 at
v0.38.1) and its leaf's first DNS name to check it against (MakeTLSConfig,
master/pkg/model/logging_config.go:145); the task trusts the public CAs (certifi) plus that
chain, with OpenSSL's default path building (harness/determined/common/api/certs.py:47-51,
_session.py:272 at v0.38.1: requests with verify=<that bundle>). So the chain must end at a
CA the task trusts: a public one, or a private root that the chain itself carries.
Partial chains (a non-root certificate of the bundle accepted as the anchor) are off: Python
3.13 turns them on in create_default_context (python/cpython gh-107361), this script turns
them off again, and the strict RFC 5280 checks that came with it (tasks do not make them).

Master REST API used (read from proto/src/determined/api/v1/*.proto and the handlers in
master/internal/api_workspace.go and api_resourcepool.go at tags 0.35.0 and v0.38.1; the
routes and bodies below are the same in 0.35.0, 0.35.1, 0.36.0, 0.37.0, 0.38.0 and 0.38.1).
JSON is protojson: lowerCamelCase out, either spelling in; errors come back as
{"error": {"code": <grpc code>, "reason": "...", "error": "<message>"}} with the HTTP status
of the gRPC code (plain Go errors become 500).

  GET   /info                                     unauthenticated; {"version": ...}
  POST  /api/v1/auth/login                        {"username", "password"} -> {"token", "user"};
                                                  later calls send "Authorization: Bearer <token>"
  GET   /api/v1/resource-pools                    {"resourcePools": [{"name", "defaultComputePool",
                                                  "defaultAuxPool", ...}]} (limit 0 = no limit)
  GET   /api/v1/workspaces?name=N                 {"workspaces": [...]}; the filter is SQL
                                                  `name ILIKE N` (case-insensitive, and '_'/'%'
                                                  are wildcards), so results are compared here
  POST  /api/v1/workspaces                        {"name"} -> {"workspace": {"id", ...}}; it would
                                                  also take "clusterNamespaceMeta",
                                                  "defaultComputePool", "defaultAuxPool" (the
                                                  latter unchecked at creation); names are unique
                                                  case-insensitively (409 AlreadyExists)
  GET   /api/v1/workspaces/{id}/list-namespace-bindings
                                                  {"namespaceBindings": {<cluster>: {"workspaceId",
                                                  "namespace", "clusterName",
                                                  "autoCreateNamespace"}}}: one entry per resource
                                                  manager (the default namespace when unbound),
                                                  plus "<cluster>(stale)" entries for bindings of
                                                  clusters no longer configured
  POST  /api/v1/workspaces/{id}/namespace-bindings
                                                  {"workspaceId": id, "clusterNamespaceMeta":
                                                  {<cluster>: {"namespace": NS}}}. With one
                                                  resource manager the cluster key may be "": the
                                                  master substitutes its only cluster's name
                                                  (validateRequestClusterName). NS must exist
                                                  (the master GETs the Namespace; if not: HTTP 500
                                                  "error verifying Kubernetes namespace"). Setting
                                                  the same namespace again is a no-op; another
                                                  replaces the binding; the default namespace is
                                                  not stored. "autoCreateNamespace" /
                                                  "autoCreateNamespaceAllClusters" and resource
                                                  quotas exist in both versions but need an
                                                  Enterprise licence; not used here.
  GET   /api/v1/resource-pools/{pool}/workspace-bindings?limit=-1
                                                  {"workspaceIds": [...]} (limit -1 = all; 500 if
                                                  the master has no such pool)
  POST  /api/v1/resource-pools/{pool}/workspace-bindings
                                                  {"resourcePoolName": pool, "workspaceIds": [id]}
                                                  (or "workspaceNames"). Not idempotent: binding
                                                  twice is a 500 (duplicate key of
                                                  rp_workspace_bindings), so bindings are read
                                                  first. The master's default compute and aux
                                                  pools cannot be bound (500 "default resource
                                                  pool X cannot be bound to any workspace"): they
                                                  stay open to every workspace, and are skipped.
                                                  A bound pool is open only to its workspaces.
  GET   /api/v1/workspaces                        every workspace (archived ones too; no limit)
  POST  .../namespace-bindings with the default namespace
                                                  deletes the stored binding: the workspace runs
                                                  in the default namespace again
                                                  (api_workspace.go:975 at v0.38.1, :956 at 0.35.0)
  DELETE /api/v1/resource-pools/{pool}/workspace-bindings
                                                  {"resourcePoolName": pool, "workspaceIds": [id]}:
                                                  removes the binding, also of a pool the master
                                                  no longer has (no check against its config:
                                                  db/postgres_rp_workspace_bindings.go:63-93 at
                                                  v0.38.1; an error when the workspace has no
                                                  binding at all, line 85)
  GET   /api/v1/workspaces/{id}/available-resource-pools?limit=-1
                                                  {"resourcePools": [...]}: the pools bound to the
                                                  workspace, also ones the master no longer has,
                                                  plus every unbound pool (ReadRPsAvailableToWorkspace,
                                                  db/postgres_rp_workspace_bindings.go:212-250;
                                                  limit -1: all, db/bunutils/paginate.go:36)
  PATCH /api/v1/workspaces/{id}                   body is the PatchWorkspace message:
                                                  {"defaultComputeResourcePool": P} and/or
                                                  {"defaultAuxResourcePool": P}; the deprecated
                                                  "defaultComputePool"/"defaultAuxPool" fields are
                                                  ignored by PatchWorkspace. P must be bound to the
                                                  workspace or unbound (else 400
                                                  FailedPrecondition); "" clears it (line 740 at
                                                  v0.38.1). Refused for archived and immutable
                                                  workspaces (line 679), which run no new tasks.

Version notes: every call above exists with these bodies from 0.35.0 on (pool bindings and
the PatchWorkspace default-pool fields since 0.25; namespace bindings since 0.35.0). PATCH
with "clusterNamespaceMeta" is not used: in 0.35.x and 0.36.x the master reads it only when
the same request also sets "checkpointStorageConfig" (fixed in 0.37.0). Workspace objects
gained "autoCreatedNamespace" in 0.38; not read here. So one code path serves 0.35 to 0.38.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import os
import ssl
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

ROLES = ("compute", "aux")
STALE_SUFFIX = "(stale)"
REQUEST_TIMEOUT_SECONDS = 30
MAX_BACKOFF_SECONDS = 30

# Looked up at call time, so that tests can run the waits on a fake clock.
sleep = time.sleep
clock = time.monotonic


class Fatal(Exception):
    """A problem this script cannot fix by retrying: the message says what to do."""


class ApiError(Fatal):
    def __init__(self, method: str, path: str, status: int | None, message: str):
        self.status = status
        self.message = message
        where = f"HTTP {status}" if status is not None else "no answer"
        super().__init__(f"{method} {path}: {where}: {message}")


def log(message: str) -> None:
    print(message, flush=True)


def mapping_hash(mapping: list[dict]) -> str:
    """sha256 of the canonical JSON of the mapping, first 10 hex digits (the Job's name
    carries the same, computed by components/determined/workspaces.py)."""
    canonical = json.dumps(mapping, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:10]


def _error_message(raw: bytes) -> str:
    try:
        body = json.loads(raw.decode("utf-8", "replace"))
    except ValueError:
        text = raw.decode("utf-8", "replace").strip()
        return text[:300] or "(empty answer)"
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict):
            return str(error.get("error") or error.get("message") or error.get("reason") or error)[:300]
        if isinstance(error, str):
            return error[:300]
        if "message" in body:
            return str(body["message"])[:300]
    return str(body)[:300]


def tls_context(cert_file: str | None) -> ssl.SSLContext:
    """What Determined's tasks trust (module docstring): the public CAs and the
    certificates of `cert_file` (the master's chain), with full chains only."""
    context = ssl.create_default_context()
    context.verify_flags &= ~(ssl.VERIFY_X509_PARTIAL_CHAIN | ssl.VERIFY_X509_STRICT)
    if cert_file:
        context.load_verify_locations(cafile=cert_file)
    return context


def https_opener(cert_file: str | None, cert_name: str | None) -> urllib.request.OpenerDirector:
    """An opener for a master that ends TLS itself: its certificate (the chain in
    `cert_file`) is trusted beside the public CAs, and checked against `cert_name` (the
    certificate's host) rather than the Service name dialled, as Determined's tasks do."""
    context = tls_context(cert_file)

    class NamedConnection(http.client.HTTPSConnection):
        def connect(self) -> None:
            http.client.HTTPConnection.connect(self)
            self.sock = context.wrap_socket(self.sock, server_hostname=cert_name or self.host)

    class Handler(urllib.request.HTTPSHandler):
        def https_open(self, req):
            return self.do_open(NamedConnection, req)

    return urllib.request.build_opener(Handler(context=context))


class Client:
    """The master's REST API: JSON in and out, bounded retries on 5xx and lost connections.
    The token is kept here and never printed; request bodies are never printed either."""

    def __init__(
        self, base_url: str, retries: int = 8, cert_file: str | None = None, cert_name: str | None = None
    ):
        self.base_url = base_url.rstrip("/")
        self.retries = max(1, retries)
        self._token: str | None = None
        https = self.base_url.startswith("https:")
        self._open = https_opener(cert_file, cert_name).open if https else urllib.request.urlopen

    def _once(self, method: str, path: str, body, query) -> dict:
        url = self.base_url + path
        if query:
            url += "?" + urllib.parse.urlencode(query)
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(url, data=data, method=method)
        request.add_header("Accept", "application/json")
        if data is not None:
            request.add_header("Content-Type", "application/json")
        if self._token:
            request.add_header("Authorization", "Bearer " + self._token)
        with self._open(request, timeout=REQUEST_TIMEOUT_SECONDS) as response:
            raw = response.read()
        return json.loads(raw) if raw.strip() else {}

    def call(self, method: str, path: str, body=None, query=None, retries: int | None = None) -> dict:
        attempts = self.retries if retries is None else max(1, retries)
        for attempt in range(1, attempts + 1):
            try:
                return self._once(method, path, body, query)
            except urllib.error.HTTPError as exc:
                status, message = exc.code, _error_message(exc.read() or b"")
                if status < 500 and status != 429:
                    raise ApiError(method, path, status, message) from None
            except (urllib.error.URLError, ConnectionError, TimeoutError) as exc:
                reason = getattr(exc, "reason", exc)
                if isinstance(reason, ssl.SSLCertVerificationError):
                    # Not a passing state: tasks would refuse the master the same way.
                    raise Fatal(
                        f"{method} {path}: the master's certificate does not verify as Determined's "
                        f"tasks verify it ({reason.verify_message}): its chain (the Secret's tls.crt) "
                        "must end at a public CA or carry its private root CA, and name the host"
                    ) from None
                status, message = None, f"{type(exc).__name__}: {reason}"[:300]
            except ValueError:
                status, message = None, "the answer is not JSON"
            if attempt == attempts:
                raise ApiError(method, path, status, message)
            delay = min(2 ** (attempt - 1), MAX_BACKOFF_SECONDS)
            where = f"HTTP {status}" if status is not None else "no answer"
            log(f"{method} {path}: {where} ({message}); retry {attempt}/{attempts - 1} in {delay}s")
            sleep(delay)
        raise AssertionError("unreachable")

    def login(self, user: str, password: str) -> None:
        answer = self.call("POST", "/api/v1/auth/login", {"username": user, "password": password})
        token = answer.get("token")
        if not token:
            raise Fatal("POST /api/v1/auth/login: the answer has no token")
        self._token = token


# --- settings ---------------------------------------------------------------------------


def parse_mapping(text: str | None) -> list[dict]:
    if not text:
        raise Fatal("DET_MAPPING is not set")
    try:
        mapping = json.loads(text)
    except ValueError as exc:
        raise Fatal(f"DET_MAPPING is not JSON: {exc}") from None
    if not isinstance(mapping, list):
        raise Fatal("DET_MAPPING must be a JSON list")
    seen_pools: set[str] = set()
    namespace_of: dict[str, str] = {}
    for i, entry in enumerate(mapping):
        if not isinstance(entry, dict) or set(entry) != {"workspace", "namespace", "pool", "role"}:
            raise Fatal(f"DET_MAPPING[{i}] must have exactly the keys workspace, namespace, pool, role")
        for key in ("workspace", "namespace", "pool"):
            if not isinstance(entry[key], str) or not entry[key]:
                raise Fatal(f"DET_MAPPING[{i}].{key} must be a non-empty string")
        if entry["role"] not in ROLES:
            raise Fatal(f"DET_MAPPING[{i}].role must be 'compute' or 'aux'")
        if entry["pool"] in seen_pools:
            raise Fatal(f"DET_MAPPING: pool {entry['pool']!r} appears twice")
        seen_pools.add(entry["pool"])
        known = namespace_of.setdefault(entry["workspace"], entry["namespace"])
        if known != entry["namespace"]:
            raise Fatal(
                f"DET_MAPPING: workspace {entry['workspace']!r} is given two namespaces "
                f"({known!r} and {entry['namespace']!r}); a workspace runs its tasks in one"
            )
    return mapping


def _int_env(env: dict, name: str, default: int) -> int:
    value = env.get(name) or str(default)
    try:
        return int(value)
    except ValueError:
        raise Fatal(f"{name} must be a whole number") from None


def _password(env: dict) -> str:
    path = env.get("DET_PASSWORD_FILE")
    if path:
        try:
            with open(path, encoding="utf-8") as f:
                password = f.read()
        except OSError as exc:
            raise Fatal(f"DET_PASSWORD_FILE {path} cannot be read: {exc.strerror}") from None
    else:
        password = env.get("DET_PASSWORD") or ""
    if not password:
        raise Fatal("neither DET_PASSWORD_FILE nor DET_PASSWORD gives a password")
    return password


def parse_namespaces(default: str | None, text: str | None, mapping: list[dict]) -> list[str]:
    """The stack's task namespaces (DET_TASK_NAMESPACES), checked to hold the default one
    and every namespace of the mapping: a binding elsewhere is moved back."""
    if not default:
        raise Fatal("DET_DEFAULT_NAMESPACE is not set")
    try:
        namespaces = json.loads(text or "")
    except ValueError as exc:
        raise Fatal(f"DET_TASK_NAMESPACES is not JSON: {exc}") from None
    if not isinstance(namespaces, list) or not all(isinstance(ns, str) and ns for ns in namespaces):
        raise Fatal("DET_TASK_NAMESPACES must be a JSON list of namespace names")
    missing = [ns for ns in [default, *(e["namespace"] for e in mapping)] if ns not in namespaces]
    if missing:
        raise Fatal(f"DET_TASK_NAMESPACES lacks {', '.join(sorted(set(missing)))}")
    return namespaces


def settings(env: dict) -> dict:
    master = env.get("DET_MASTER")
    if not master:
        raise Fatal("DET_MASTER is not set")
    mapping = parse_mapping(env.get("DET_MAPPING"))
    default = env.get("DET_DEFAULT_NAMESPACE")
    return {
        "master": master,
        "user": env.get("DET_USER") or "admin",
        "password": _password(env),
        "mapping": mapping,
        "default_namespace": default,
        "namespaces": parse_namespaces(default, env.get("DET_TASK_NAMESPACES"), mapping),
        "timeout": _int_env(env, "DET_TIMEOUT_SECONDS", 600),
        "retries": _int_env(env, "DET_RETRIES", 8),
        "cluster": env.get("DET_CLUSTER_NAME", ""),
        "cert_file": env.get("DET_MASTER_CERT_FILE") or None,
        "cert_name": env.get("DET_MASTER_CERT_NAME") or None,
    }


# --- steps -------------------------------------------------------------------------------


def wait_for_master(client: Client, deadline: float) -> dict:
    """/info until it answers, with backoff, until the deadline."""
    attempt = 0
    while True:
        attempt += 1
        try:
            return client.call("GET", "/info", retries=1)
        except ApiError as exc:
            if exc.status is not None and exc.status < 500 and exc.status != 429:
                raise
            left = deadline - clock()
            if left <= 0:
                raise Fatal(f"the master at {client.base_url} did not answer /info in time ({exc})") from None
            delay = min(2 ** min(attempt - 1, 5), MAX_BACKOFF_SECONDS, max(left, 0.1))
            log(f"waiting for the master ({exc.message}); next try in {delay:g}s")
            sleep(delay)


def wait_for_pools(client: Client, names: list[str], deadline: float) -> dict[str, dict]:
    """The master's resource pools by name, once every pool of the mapping is among them
    (a master still rolling out its new config may not know a new pool yet)."""
    attempt = 0
    while True:
        attempt += 1
        answer = client.call("GET", "/api/v1/resource-pools", query={"limit": 0})
        pools = {p.get("name"): p for p in answer.get("resourcePools") or []}
        missing = [name for name in names if name not in pools]
        if not missing:
            return pools
        left = deadline - clock()
        if left <= 0:
            raise Fatal(
                f"the master has no resource pool named {', '.join(map(repr, missing))} "
                f"(it has: {', '.join(map(repr, sorted(pools))) or 'none'}); is its config current?"
            )
        delay = min(2 ** min(attempt - 1, 5), MAX_BACKOFF_SECONDS, max(left, 0.1))
        log(f"waiting for the master to know pool {', '.join(map(repr, missing))}; next try in {delay:g}s")
        sleep(delay)


def find_workspace(client: Client, name: str) -> dict | None:
    answer = client.call("GET", "/api/v1/workspaces", query={"name": name})
    found = answer.get("workspaces") or []
    for ws in found:
        if ws.get("name") == name:
            return ws
    # Names are unique without regard to case: another spelling is the same workspace.
    for ws in found:
        if str(ws.get("name", "")).lower() == name.lower():
            return ws
    return None


def ensure_workspace(client: Client, name: str) -> dict:
    ws = find_workspace(client, name)
    if ws is None:
        try:
            ws = client.call("POST", "/api/v1/workspaces", {"name": name}).get("workspace")
        except ApiError as exc:
            if exc.status != 409:
                raise
            ws = find_workspace(client, name)  # created meanwhile
            if ws is None:
                raise
            log(f"workspace {name!r}: exists (id {ws['id']})")
        else:
            if not ws or "id" not in ws:
                raise Fatal(f"workspace {name!r}: the master's answer to its creation has no id")
            log(f"workspace {name!r}: created (id {ws['id']})")
    else:
        spelled = f" (as {ws['name']!r})" if ws.get("name") != name else ""
        log(f"workspace {name!r}: exists{spelled} (id {ws['id']})")
    if ws.get("archived"):
        raise Fatal(
            f"workspace {name!r} (id {ws['id']}) is archived: unarchive it, or map the pools to another"
        )
    return ws


def current_namespace(bindings: dict, cluster: str, name: str) -> str | None:
    if cluster:
        binding = bindings.get(cluster)
        return binding.get("namespace") if binding else None
    live = [b for key, b in bindings.items() if not key.endswith(STALE_SUFFIX)]
    if len(live) > 1:
        raise Fatal(
            f"workspace {name!r}: the master has several clusters ({', '.join(sorted(bindings))}); "
            "set DET_CLUSTER_NAME"
        )
    return live[0].get("namespace") if live else None


def ensure_namespace(client: Client, ws: dict, name: str, namespace: str, cluster: str) -> None:
    wid = ws["id"]
    answer = client.call("GET", f"/api/v1/workspaces/{wid}/list-namespace-bindings")
    current = current_namespace(answer.get("namespaceBindings") or {}, cluster, name)
    if current == namespace:
        log(f"workspace {name!r}: namespace {namespace} unchanged")
        return
    body = {"workspaceId": wid, "clusterNamespaceMeta": {cluster: {"namespace": namespace}}}
    client.call("POST", f"/api/v1/workspaces/{wid}/namespace-bindings", body)
    was = f" (was {current})" if current else ""
    log(f"workspace {name!r}: bound to namespace {namespace}{was}")


def ensure_pool_binding(client: Client, ws: dict, name: str, pool: str, pool_info: dict) -> None:
    if pool_info.get("defaultComputePool") or pool_info.get("defaultAuxPool"):
        which = "compute" if pool_info.get("defaultComputePool") else "aux"
        log(
            f"workspace {name!r}: pool {pool!r} is the master's default {which} pool, which "
            "the master keeps open to every workspace (not bound)"
        )
        return
    wid = ws["id"]
    path = pool_path(pool)
    bound = client.call("GET", path, query={"limit": -1}).get("workspaceIds") or []
    if wid in bound:
        log(f"workspace {name!r}: pool {pool!r} binding unchanged")
        return
    try:
        client.call("POST", path, {"resourcePoolName": pool, "workspaceIds": [wid]}, retries=2)
    except ApiError as exc:
        # Bound meanwhile (the master answers a duplicate binding with a 500).
        again = client.call("GET", path, query={"limit": -1}).get("workspaceIds") or []
        if wid not in again:
            raise Fatal(f"workspace {name!r}: binding pool {pool!r} failed: {exc}") from None
    log(f"workspace {name!r}: pool {pool!r} bound")


def ensure_defaults(client: Client, ws: dict, name: str, compute: str | None, aux: str | None) -> None:
    patch = {}
    changes = []
    for pool, key, field, role in (
        (compute, "defaultComputeResourcePool", "defaultComputePool", "compute"),
        (aux, "defaultAuxResourcePool", "defaultAuxPool", "aux"),
    ):
        if pool is None:
            continue
        if ws.get(field) == pool:
            log(f"workspace {name!r}: default {role} pool {pool!r} unchanged")
        else:
            patch[key] = pool
            changes.append(
                f"default {role} pool {pool!r}" + (f" (was {ws[field]!r})" if ws.get(field) else "")
            )
    if patch:
        client.call("PATCH", f"/api/v1/workspaces/{ws['id']}", patch)
        log(f"workspace {name!r}: {', '.join(changes)} set")


def move_back(client: Client, ws: dict, namespaces: list[str], default: str, cluster: str) -> None:
    """A workspace bound to a namespace the stack does not have goes back to the default one
    (binding the default namespace deletes the stored binding)."""
    wid, name = ws["id"], ws.get("name", "")
    answer = client.call("GET", f"/api/v1/workspaces/{wid}/list-namespace-bindings")
    current = current_namespace(answer.get("namespaceBindings") or {}, cluster, name)
    if current is None or current in namespaces:
        return
    body = {"workspaceId": wid, "clusterNamespaceMeta": {cluster: {"namespace": default}}}
    client.call("POST", f"/api/v1/workspaces/{wid}/namespace-bindings", body)
    log(
        f"workspace {name!r}: moved back to the default namespace {default} (was {current}, "
        "which the stack does not have)"
    )


def pool_path(pool: str) -> str:
    return f"/api/v1/resource-pools/{urllib.parse.quote(pool, safe='')}/workspace-bindings"


def unbind(client: Client, pool: str, wid: int, name: str, why: str) -> None:
    body = {"resourcePoolName": pool, "workspaceIds": [wid]}
    client.call("DELETE", pool_path(pool), body)
    log(f"workspace {name!r}: pool {pool!r} unbound ({why})")


def reconcile(
    client: Client,
    mapping: list[dict],
    pools: dict[str, dict],
    namespaces: list[str],
    default: str,
    cluster: str,
) -> None:
    """The master's other bindings made to agree with the stack (module docstring)."""
    everyone = client.call("GET", "/api/v1/workspaces").get("workspaces") or []
    names = {ws["id"]: ws.get("name", "") for ws in everyone}
    mapped = {e["workspace"].lower() for e in mapping}
    for ws in everyone:
        if ws.get("name", "").lower() not in mapped:
            move_back(client, ws, namespaces, default, cluster)
    ids = {ws.get("name", "").lower(): ws["id"] for ws in everyone}
    for entry in mapping:
        pool, info = entry["pool"], pools[entry["pool"]]
        if info.get("defaultComputePool") or info.get("defaultAuxPool"):
            keep, why = None, "the master's default pools stay open to every workspace"
        else:
            keep, why = ids.get(entry["workspace"].lower()), f"the stack binds it to {entry['workspace']!r}"
        bound = client.call("GET", pool_path(pool), query={"limit": -1}).get("workspaceIds") or []
        for wid in bound:
            if wid != keep:
                unbind(client, pool, wid, names.get(wid, str(wid)), why)
    for ws in everyone:
        wid, name = ws["id"], ws.get("name", "")
        path = f"/api/v1/workspaces/{wid}/available-resource-pools"
        available = client.call("GET", path, query={"limit": -1}).get("resourcePools") or []
        for pool in available:
            if pool not in pools:
                unbind(client, pool, wid, name, "the master has no such pool")
        usable = {pool for pool in available if pool in pools}
        if ws.get("archived") or ws.get("immutable"):
            continue  # they run no new tasks, and the master refuses to change them
        patch = {}
        for field, key, role in (
            ("defaultComputePool", "defaultComputeResourcePool", "compute"),
            ("defaultAuxPool", "defaultAuxResourcePool", "aux"),
        ):
            pool = ws.get(field)
            if pool and pool not in usable:
                patch[key] = ""
                log(f"workspace {name!r}: default {role} pool {pool!r} cleared (not usable by it any more)")
        if patch:
            client.call("PATCH", f"/api/v1/workspaces/{wid}", patch)


def apply(
    client: Client,
    mapping: list[dict],
    cluster: str,
    deadline: float,
    namespaces: list[str],
    default: str,
) -> None:
    pools = wait_for_pools(client, [entry["pool"] for entry in mapping], deadline)
    workspaces: dict[str, list[dict]] = {}
    for entry in mapping:
        workspaces.setdefault(entry["workspace"], []).append(entry)
    for name, entries in workspaces.items():
        ws = ensure_workspace(client, name)
        ensure_namespace(client, ws, name, entries[0]["namespace"], cluster)
        for entry in entries:
            ensure_pool_binding(client, ws, name, entry["pool"], pools[entry["pool"]])
        # The first pool of each role becomes the workspace's default for that role.
        first = {role: next((e["pool"] for e in entries if e["role"] == role), None) for role in ROLES}
        ensure_defaults(client, ws, name, first["compute"], first["aux"])
    reconcile(client, mapping, pools, namespaces, default, cluster)


def main(env: dict | None = None) -> int:
    env = dict(os.environ if env is None else env)
    try:
        conf = settings(env)
        deadline = clock() + conf["timeout"]
        client = Client(conf["master"], conf["retries"], conf["cert_file"], conf["cert_name"])
        mapping = conf["mapping"]
        log(f"mapping {mapping_hash(mapping)}: {len(mapping)} pool(s) for master {client.base_url}")
        info = wait_for_master(client, deadline)
        log(f"master answers (version {info.get('version', 'unknown')})")
        client.login(conf["user"], conf["password"])
        log(f"logged in as {conf['user']!r}")
        apply(client, mapping, conf["cluster"], deadline, conf["namespaces"], conf["default_namespace"])
    except Fatal as exc:
        print(f"error: {exc}", file=sys.stderr, flush=True)
        return 1
    log("done")
    return 0


if __name__ == "__main__":
    sys.exit(main())
