"""Workspaces bound to the pools' namespaces (0.35+): the mapping, the Job that applies it,
and the Job's script run against a fake master that answers like the real one."""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import re
import shutil
import socket
import ssl
import subprocess
import sys
import threading
import urllib.parse
from pathlib import Path

import pytest
from conftest import BASE, make_config
from fake_http import serve

from components import constants
from components.determined import master, workspaces
from components.kube import validation

PASSWORD = "s3cret-Adm1n-pw"
TOKEN = "tok-9f8e7d6c5b4a"

# Three node pools: CPU, 4 A100 GPUs, 1 T4 GPU.
NODE_POOLS = [
    *BASE["nodePools"],
    {"name": "t4", "gpu": {"type": "nvidia-tesla-t4", "count": 1}, "nodeSelector": {"pool": "t4"}},
]
# a100 and aux are the master's default compute and aux pools (first GPU, first CPU pool);
# the team's two pools share one workspace and one namespace.
POOLS = [
    {"name": "a100", "nodePool": "a100", "namespace": "det-a100"},
    {"name": "aux", "nodePool": "system", "namespace": "det-aux"},
    {"name": "team-gpu", "nodePool": "t4", "namespace": "det-team", "workspace": "team"},
    {"name": "team-cpu", "nodePool": "system", "namespace": "det-team", "workspace": "team"},
]


def config(**overrides):
    return make_config(**{"nodePools": NODE_POOLS, "resourcePools": POOLS, **overrides})


def test_mapping_has_one_entry_per_pool_with_its_workspace_namespace_and_role():
    assert workspaces.mapping(config()) == [
        {"workspace": "a100", "namespace": "det-a100", "pool": "a100", "role": "compute"},
        {"workspace": "aux", "namespace": "det-aux", "pool": "aux", "role": "aux"},
        {"workspace": "team", "namespace": "det-team", "pool": "team-gpu", "role": "compute"},
        {"workspace": "team", "namespace": "det-team", "pool": "team-cpu", "role": "aux"},
    ]


def test_mapping_of_the_base_config_defaults_workspaces_and_namespaces():
    assert workspaces.mapping(make_config()) == [
        {"workspace": "a100", "namespace": "det-a100", "pool": "a100", "role": "compute"},
        {"workspace": "aux", "namespace": "det-aux", "pool": "aux", "role": "aux"},
    ]
    pools = [{"name": "a100", "nodePool": "a100"}, {"name": "cpu", "nodePool": "system"}]
    assert workspaces.mapping(make_config(resourcePools=pools)) == [
        {"workspace": "a100", "namespace": "det-a100", "pool": "a100", "role": "compute"},
        {"workspace": "cpu", "namespace": "det-cpu", "pool": "cpu", "role": "aux"},
    ]


@pytest.mark.parametrize(("version", "expected"), [("0.34.0", False), ("0.35.0", True), ("0.38.1", True)])
def test_needed_from_0_35(version, expected):
    assert workspaces.needed(make_config(master={"version": version})) is expected


def test_needed_for_the_default_version():
    assert workspaces.needed(make_config())


def test_hash_follows_the_mapping_and_nothing_else():
    entries = workspaces.mapping(config())
    digest = workspaces.mapping_hash(entries)
    assert re.fullmatch(r"[0-9a-f]{10}", digest)
    assert workspaces.mapping_hash(json.loads(json.dumps(entries))) == digest
    # Key order inside an entry is not part of the mapping.
    assert workspaces.mapping_hash([dict(reversed(list(e.items()))) for e in entries]) == digest
    # A config change that leaves the mapping alone leaves the hash alone.
    assert workspaces.mapping_hash(workspaces.mapping(config(master={"cpu": "4"}))) == digest
    changed = [dict(entries[0], namespace="det-other"), *entries[1:]]
    assert workspaces.mapping_hash(changed) != digest
    assert workspaces.mapping_hash([dict(entries[0], role="aux"), *entries[1:]]) != digest
    assert workspaces.mapping_hash(entries[:-1]) != digest
    assert workspaces.mapping_hash(list(reversed(entries))) != digest
    pools = [dict(POOLS[0], workspace="research"), *POOLS[1:]]
    assert workspaces.mapping_hash(workspaces.mapping(config(resourcePools=pools))) != digest


def job_for(cfg):
    return workspaces.job(cfg, "bind-pw", "pw", workspaces.mapping_hash(workspaces.mapping(cfg)))


def test_objects_validate_strictly_against_the_kubernetes_schema():
    cfg = config()
    for obj in (job_for(cfg), workspaces.script_config_map(cfg), workspaces.password_secret(cfg, PASSWORD)):
        assert list(validation.problems(obj)) == [], obj["kind"]


def test_the_schema_check_does_catch_a_broken_job():
    broken = job_for(config())
    broken["spec"]["template"]["spec"]["containers"][0]["securityContext"]["runAsNonroot"] = True
    assert list(validation.problems(broken)) != []


def container_of(job):
    (container,) = job["spec"]["template"]["spec"]["containers"]
    return container


def test_job_env_carries_exactly_the_mapping_and_the_password_only_as_a_file():
    cfg = config()
    job = job_for(cfg)
    env = {e["name"]: e for e in container_of(job)["env"]}
    assert set(env) == {
        "DET_MASTER",
        "DET_USER",
        "DET_PASSWORD_FILE",
        "DET_MAPPING",
        "DET_DEFAULT_NAMESPACE",
        "DET_TASK_NAMESPACES",
        "DET_TIMEOUT_SECONDS",
    }
    assert json.loads(env["DET_MAPPING"]["value"]) == workspaces.mapping(cfg)
    # What it moves workspaces back to, and the namespaces the master has a Role in.
    assert env["DET_DEFAULT_NAMESPACE"]["value"] == "determined-tasks" == cfg.default_task_namespace
    assert json.loads(env["DET_TASK_NAMESPACES"]["value"]) == cfg.task_namespaces
    assert cfg.task_namespaces == ["determined-tasks", "det-a100", "det-aux", "det-team"]
    assert env["DET_MASTER"]["value"] == master.internal_url(cfg)
    assert env["DET_USER"]["value"] == "admin"
    # The file is the Secret's key, mounted read-only.
    pod = job["spec"]["template"]["spec"]
    mounts = {m["name"]: m for m in container_of(job)["volumeMounts"]}
    volume = next(v for v in pod["volumes"] if v.get("secret"))
    assert volume["secret"]["secretName"] == "bind-pw"
    (item,) = volume["secret"]["items"]
    assert item["key"] == "pw"
    assert mounts[volume["name"]]["readOnly"] is True
    assert env["DET_PASSWORD_FILE"]["value"] == f"{mounts[volume['name']]['mountPath']}/{item['path']}"
    assert int(env["DET_TIMEOUT_SECONDS"]["value"]) >= constants.MASTER_STARTUP_SECONDS
    assert PASSWORD not in json.dumps(job)


def test_job_is_named_by_the_hash_and_runs_the_mounted_script_confined():
    cfg = config()
    digest = workspaces.mapping_hash(workspaces.mapping(cfg))
    job = job_for(cfg)
    settings = json.dumps(workspaces.namespaces(cfg), sort_keys=True, separators=(",", ":"))
    run = hashlib.sha256(workspaces.SCRIPT_FILE.read_bytes() + settings.encode()).hexdigest()[:6]
    assert job["metadata"]["name"] == f"determined-bind-workspaces-{digest}-{run}"
    assert job["metadata"]["namespace"] == cfg.namespace
    assert job["metadata"]["annotations"][workspaces.HASH_ANNOTATION] == digest
    assert job["spec"]["template"]["metadata"]["annotations"][workspaces.HASH_ANNOTATION] == digest
    spec = job["spec"]
    assert 1 <= spec["backoffLimit"] <= 10
    assert 0 < spec["activeDeadlineSeconds"] <= 3600
    assert spec["activeDeadlineSeconds"] > workspaces.WAIT_SECONDS
    assert "ttlSecondsAfterFinished" not in spec
    pod = spec["template"]["spec"]
    assert pod["restartPolicy"] in ("Never", "OnFailure")
    assert pod["priorityClassName"] == constants.SYSTEM_PRIORITY_CLASS
    assert pod["automountServiceAccountToken"] is False
    assert "serviceAccountName" not in pod
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["runAsUser"] == 65534
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    container = container_of(job)
    assert re.fullmatch(r"python:3\.13\.\d+-slim@sha256:[0-9a-f]{64}", container["image"])
    assert container["securityContext"] == {
        "runAsNonRoot": True,
        "runAsUser": 65534,
        "runAsGroup": 65534,
        "allowPrivilegeEscalation": False,
        "readOnlyRootFilesystem": True,
        "capabilities": {"drop": ["ALL"]},
        "seccompProfile": {"type": "RuntimeDefault"},
    }
    assert container["resources"]["limits"]["memory"]
    assert container["resources"]["requests"]["cpu"]
    assert all(m["readOnly"] is True for m in container["volumeMounts"])
    (mount,) = [m for m in container["volumeMounts"] if m["name"] == "script"]
    (volume,) = [v for v in pod["volumes"] if v["name"] == mount["name"]]
    assert volume["configMap"]["name"] == workspaces.script_config_map(cfg)["metadata"]["name"]
    assert container["command"][-1] == f"{mount['mountPath']}/{workspaces.SCRIPT_NAME}"


def test_config_map_holds_the_script_and_the_secret_the_password():
    cfg = config()
    cm = workspaces.script_config_map(cfg)
    assert cm["metadata"]["namespace"] == cfg.namespace
    assert cm["data"] == {workspaces.SCRIPT_NAME: workspaces.SCRIPT_FILE.read_text()}
    secret = workspaces.password_secret(cfg, PASSWORD)
    assert secret["metadata"]["namespace"] == cfg.namespace
    assert secret["stringData"] == {workspaces.PASSWORD_KEY: PASSWORD}
    assert secret["metadata"]["name"] == workspaces.PASSWORD_SECRET


def test_script_compiles():
    compile(workspaces.script_text(), str(workspaces.SCRIPT_FILE), "exec")


# --- the script against a fake master ---------------------------------------------------


def load_script():
    spec = importlib.util.spec_from_file_location("bind_workspaces_under_test", workspaces.SCRIPT_FILE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_script_uses_only_the_standard_library():
    imported = set(re.findall(r"^(?:import|from) (\w+)", workspaces.script_text(), re.M))
    assert imported <= {
        "__future__",
        "hashlib",
        "http",
        "json",
        "os",
        "socket",
        "ssl",
        "sys",
        "time",
        "urllib",
    }


class FakeMaster:
    """The master's REST API as the Go handlers of 0.35-0.38 answer it (api_workspace.go,
    api_resourcepool.go, db/postgres_rp_workspace_bindings.go at v0.38.1): state in memory,
    every request recorded. `reconfigure` is the master restarting with another master.yaml
    (its database, the bindings, stays); `start_namespaces` what it lists when it starts."""

    def __init__(self, pools, default_compute, default_aux, namespaces, default_namespace, cluster="default"):
        self.namespaces = set(namespaces)  # the cluster's namespaces
        self.cluster = cluster
        self.reconfigure(pools, default_compute, default_aux, default_namespace)
        self.workspaces = {1: {"id": 1, "name": "Uncategorized", "archived": False, "immutable": True}}
        self.ns_bindings: dict[int, str] = {}  # workspace_namespace_bindings (the default is never stored)
        self.rp_bindings: list[tuple[str, int]] = []  # rp_workspace_bindings rows (pool_name, workspace_id)
        self.calls: list[tuple[str, str, object]] = []
        self.info_failures = 0
        self.lock = threading.Lock()

    def reconfigure(self, pools, default_compute, default_aux, default_namespace):
        self.pools = list(pools)
        self.default_compute = default_compute
        self.default_aux = default_aux
        self.default_namespace = default_namespace

    def start_namespaces(self):
        """The namespaces the master lists pods, Jobs and events in when it starts: every
        bound one and the default (GetAllNamespacesForRM, jobs.go:156-168 at v0.38.1)."""
        return set(self.ns_bindings.values()) | {self.default_namespace}

    # -- helpers
    def ws_json(self, ws):
        return {"defaultComputePool": "", "defaultAuxPool": "", **ws}

    def bound_to(self, pool):
        return [wid for p, wid in self.rp_bindings if p == pool]

    def available(self, wid):
        """ReadRPsAvailableToWorkspace: its bound pools (also ones no longer configured) and
        every configured pool bound to no workspace."""
        own = [p for p, w in self.rp_bindings if w == wid]
        unbound = [p for p in self.pools if not self.bound_to(p)]
        return list(dict.fromkeys(own + unbound))

    def handle(self, method, path, query, body, auth):
        self.calls.append((method, path, body))
        if path == "/info" and method == "GET":
            if self.info_failures > 0:
                self.info_failures -= 1
                return 503, {"message": "starting"}
            return 200, {"version": "0.38.1", "clusterName": "det-test"}
        if path == "/api/v1/auth/login" and method == "POST":
            if body == {"username": "admin", "password": PASSWORD}:
                return 200, {"token": TOKEN, "user": {"username": "admin", "admin": True}}
            return 401, {"error": {"code": 16, "reason": "Unauthenticated", "error": "invalid credentials"}}
        if auth != f"Bearer {TOKEN}":
            return 401, {"error": {"code": 16, "reason": "Unauthenticated", "error": "invalid credentials"}}
        if path == "/api/v1/resource-pools" and method == "GET":
            pools = [
                {
                    "name": p,
                    "defaultComputePool": p == self.default_compute,
                    "defaultAuxPool": p == self.default_aux,
                }
                for p in self.pools
            ]
            return 200, {"resourcePools": pools}
        if path == "/api/v1/workspaces" and method == "GET":
            name = query.get("name", [""])[0]
            found = [
                self.ws_json(w)
                for w in self.workspaces.values()
                if not name or w["name"].lower() == name.lower()
            ]
            return 200, {"workspaces": found, "pagination": {}}
        if path == "/api/v1/workspaces" and method == "POST":
            if any(w["name"].lower() == body["name"].lower() for w in self.workspaces.values()):
                return 409, {"error": {"code": 6, "reason": "AlreadyExists", "error": "avoid names equal"}}
            wid = max(self.workspaces) + 1
            self.workspaces[wid] = {"id": wid, "name": body["name"], "archived": False, "immutable": False}
            return 200, {"workspace": self.ws_json(self.workspaces[wid]), "namespaceBindings": {}}
        m = re.fullmatch(r"/api/v1/workspaces/(\d+)/list-namespace-bindings", path)
        if m and method == "GET":
            wid = int(m[1])
            ns = self.ns_bindings.get(wid, self.default_namespace)
            binding = {"workspaceId": wid, "namespace": ns, "clusterName": self.cluster}
            return 200, {"namespaceBindings": {self.cluster: binding}}
        m = re.fullmatch(r"/api/v1/workspaces/(\d+)/namespace-bindings", path)
        if m and method == "POST":
            wid = int(m[1])
            (key, meta), *rest = body["clusterNamespaceMeta"].items()
            assert not rest and body["workspaceId"] == wid
            if key not in ("", self.cluster):
                return 400, {"error": {"code": 3, "error": f"no resource manager with cluster name {key}"}}
            if meta["namespace"] not in self.namespaces:
                return 500, {"error": {"code": 13, "error": "error verifying Kubernetes namespace"}}
            if meta["namespace"] == self.default_namespace:
                # Not stored: binding the default namespace deletes the stored binding.
                self.ns_bindings.pop(wid, None)
            else:
                self.ns_bindings[wid] = meta["namespace"]
            return 200, {"namespaceBindings": {}}
        m = re.fullmatch(r"/api/v1/workspaces/(\d+)/available-resource-pools", path)
        if m and method == "GET":
            assert query.get("limit") == ["-1"]
            return 200, {"resourcePools": self.available(int(m[1])), "pagination": {}}
        m = re.fullmatch(r"/api/v1/resource-pools/([^/]+)/workspace-bindings", path)
        if m and method == "GET":
            pool = urllib.parse.unquote(m[1])
            if pool not in self.pools:
                return 500, {"error": {"code": 13, "error": f"pool with name {pool} doesn't exist"}}
            assert query.get("limit") == ["-1"]
            return 200, {"workspaceIds": self.bound_to(pool), "pagination": {}}
        if m and method == "POST":
            pool = urllib.parse.unquote(m[1])
            assert body["resourcePoolName"] == pool
            if pool in (self.default_compute, self.default_aux):
                return 500, {"error": {"code": 13, "error": f"default resource pool {pool} cannot be bound"}}
            if pool not in self.pools:
                return 500, {"error": {"code": 13, "error": f"pool with name {pool} doesn't exist"}}
            if set(body["workspaceIds"]) & set(self.bound_to(pool)):
                return 500, {"error": {"code": 13, "error": "duplicate key value violates unique constraint"}}
            self.rp_bindings += [(pool, wid) for wid in body["workspaceIds"]]
            return 200, {}
        if m and method == "DELETE":
            pool = urllib.parse.unquote(m[1])
            assert body["resourcePoolName"] == pool
            # No check of the pool against the config; each workspace needs some binding.
            for wid in body["workspaceIds"]:
                if not any(w == wid for _, w in self.rp_bindings):
                    return 500, {
                        "error": {"code": 13, "error": f"workspace with id {wid} binding doesn't exist"}
                    }
            self.rp_bindings = [
                (p, w) for p, w in self.rp_bindings if not (p == pool and w in body["workspaceIds"])
            ]
            return 200, {}
        m = re.fullmatch(r"/api/v1/workspaces/(\d+)", path)
        if m and method == "PATCH":
            ws = self.workspaces[int(m[1])]
            if ws["archived"] or ws["immutable"]:
                return 500, {
                    "error": {"code": 2, "error": "workspace is archived and cannot add new projects"}
                }
            for key, field in (
                ("defaultComputeResourcePool", "defaultComputePool"),
                ("defaultAuxResourcePool", "defaultAuxPool"),
            ):
                if key in body:
                    if body[key] not in [*self.available(ws["id"]), ""]:
                        return 400, {"error": {"code": 9, "error": "unable to bind a resource pool"}}
                    ws[field] = body[key]
            return 200, {"workspace": self.ws_json(ws)}
        return 404, {"error": {"code": 5, "error": "not found"}}


def fake_for(cfg):
    """A fake master started with `cfg`'s pools, in a cluster that has its namespaces."""
    return FakeMaster(
        [rp.name for rp in cfg.resource_pools],
        cfg.compute_pool,
        cfg.aux_pool,
        set(cfg.pod_namespaces),
        cfg.default_task_namespace,
    )


def restart(fake, cfg):
    """The master restarted with `cfg`'s master.yaml, and the Job of `cfg` to run next."""
    fake.reconfigure(
        [rp.name for rp in cfg.resource_pools], cfg.compute_pool, cfg.aux_pool, cfg.default_task_namespace
    )
    fake.namespaces |= set(cfg.pod_namespaces)
    fake.cfg = cfg
    fake.mapping = workspaces.mapping(cfg)


@pytest.fixture
def fake_master():
    cfg = config()
    fake = fake_for(cfg)

    def handle(method, path, query, body, auth, _content_type):
        with fake.lock:
            return fake.handle(method, path, query, body, auth)

    with serve(handle) as url:
        fake.url = url
        fake.cfg = cfg
        fake.mapping = workspaces.mapping(cfg)
        yield fake


@pytest.fixture
def script(monkeypatch):
    module = load_script()
    now = [0.0]
    module.sleeps = []

    def fake_sleep(seconds):
        module.sleeps.append(seconds)
        now[0] += seconds

    monkeypatch.setattr(module, "sleep", fake_sleep)
    monkeypatch.setattr(module, "clock", lambda: now[0])
    return module


def env_for(fake, **overrides):
    env = {
        "DET_MASTER": fake.url,
        "DET_USER": "admin",
        "DET_PASSWORD": PASSWORD,
        "DET_MAPPING": json.dumps(fake.mapping),
        "DET_DEFAULT_NAMESPACE": workspaces.namespaces(fake.cfg)["default"],
        "DET_TASK_NAMESPACES": json.dumps(workspaces.namespaces(fake.cfg)["tasks"]),
        "DET_TIMEOUT_SECONDS": "60",
        "DET_RETRIES": "3",
    }
    env.update(overrides)
    return env


def run(script, fake, capsys, **overrides):
    fake.calls.clear()
    code = script.main(env_for(fake, **overrides))
    out, err = capsys.readouterr()
    assert PASSWORD not in out + err
    assert TOKEN not in out + err
    return code, out, err


def changes(fake):
    return [(method, path, body) for method, path, body in fake.calls if method != "GET"]


def test_script_creates_binds_and_sets_defaults_on_a_fresh_master(script, fake_master, capsys):
    code, out, err = run(script, fake_master, capsys)
    assert (code, err) == (0, "")
    ws = {w["name"]: w["id"] for w in fake_master.workspaces.values()}
    a100, aux, team = ws["a100"], ws["aux"], ws["team"]
    assert changes(fake_master) == [
        ("POST", "/api/v1/auth/login", {"username": "admin", "password": PASSWORD}),
        ("POST", "/api/v1/workspaces", {"name": "a100"}),
        (
            "POST",
            f"/api/v1/workspaces/{a100}/namespace-bindings",
            {"workspaceId": a100, "clusterNamespaceMeta": {"": {"namespace": "det-a100"}}},
        ),
        ("PATCH", f"/api/v1/workspaces/{a100}", {"defaultComputeResourcePool": "a100"}),
        ("POST", "/api/v1/workspaces", {"name": "aux"}),
        (
            "POST",
            f"/api/v1/workspaces/{aux}/namespace-bindings",
            {"workspaceId": aux, "clusterNamespaceMeta": {"": {"namespace": "det-aux"}}},
        ),
        ("PATCH", f"/api/v1/workspaces/{aux}", {"defaultAuxResourcePool": "aux"}),
        ("POST", "/api/v1/workspaces", {"name": "team"}),
        (
            "POST",
            f"/api/v1/workspaces/{team}/namespace-bindings",
            {"workspaceId": team, "clusterNamespaceMeta": {"": {"namespace": "det-team"}}},
        ),
        (
            "POST",
            "/api/v1/resource-pools/team-gpu/workspace-bindings",
            {"resourcePoolName": "team-gpu", "workspaceIds": [team]},
        ),
        (
            "POST",
            "/api/v1/resource-pools/team-cpu/workspace-bindings",
            {"resourcePoolName": "team-cpu", "workspaceIds": [team]},
        ),
        (
            "PATCH",
            f"/api/v1/workspaces/{team}",
            {"defaultComputeResourcePool": "team-gpu", "defaultAuxResourcePool": "team-cpu"},
        ),
    ]
    assert fake_master.ns_bindings == {a100: "det-a100", aux: "det-aux", team: "det-team"}
    # The master's default pools stay open to every workspace; the others are bound.
    assert fake_master.rp_bindings == [("team-gpu", team), ("team-cpu", team)]
    assert fake_master.workspaces[team]["defaultComputePool"] == "team-gpu"
    assert fake_master.workspaces[team]["defaultAuxPool"] == "team-cpu"
    assert "workspace 'a100': created" in out
    assert "workspace 'team': bound to namespace det-team" in out
    assert "workspace 'team': pool 'team-gpu' bound" in out
    assert f"mapping {workspaces.mapping_hash(fake_master.mapping)}:" in out


def test_script_changes_nothing_on_a_second_run(script, fake_master, capsys):
    assert run(script, fake_master, capsys)[0] == 0
    before = (dict(fake_master.ns_bindings), list(fake_master.rp_bindings), len(fake_master.workspaces))
    code, out, err = run(script, fake_master, capsys)
    assert (code, err) == (0, "")
    assert changes(fake_master) == [
        ("POST", "/api/v1/auth/login", {"username": "admin", "password": PASSWORD})
    ]
    after = (dict(fake_master.ns_bindings), list(fake_master.rp_bindings), len(fake_master.workspaces))
    assert after == before
    assert "workspace 'team': namespace det-team unchanged" in out
    assert "workspace 'team': pool 'team-gpu' binding unchanged" in out
    assert "workspace 'a100': default compute pool 'a100' unchanged" in out
    assert "created" not in out


def test_script_moves_a_workspace_bound_elsewhere_and_keeps_what_is_right(script, fake_master, capsys):
    fake_master.workspaces[7] = {"id": 7, "name": "Team", "archived": False, "immutable": False}
    fake_master.ns_bindings[7] = "det-old"
    fake_master.rp_bindings.append(("team-gpu", 7))
    fake_master.workspaces[7]["defaultComputePool"] = "team-gpu"
    code, out, err = run(script, fake_master, capsys)
    assert (code, err) == (0, "")
    team_calls = [c for c in changes(fake_master) if "/7" in c[1] or "team" in c[1]]
    assert team_calls == [
        (
            "POST",
            "/api/v1/workspaces/7/namespace-bindings",
            {"workspaceId": 7, "clusterNamespaceMeta": {"": {"namespace": "det-team"}}},
        ),
        (
            "POST",
            "/api/v1/resource-pools/team-cpu/workspace-bindings",
            {"resourcePoolName": "team-cpu", "workspaceIds": [7]},
        ),
        ("PATCH", "/api/v1/workspaces/7", {"defaultAuxResourcePool": "team-cpu"}),
    ]
    # Found by name without regard to case, as the master compares names: not created again.
    assert ("POST", "/api/v1/workspaces", {"name": "team"}) not in fake_master.calls
    assert "workspace 'team': bound to namespace det-team (was det-old)" in out


def test_script_waits_for_the_master_with_backoff(script, fake_master, capsys):
    fake_master.info_failures = 4
    code, out, err = run(script, fake_master, capsys)
    assert (code, err) == (0, "")
    assert script.sleeps[:4] == [1, 2, 4, 8]
    assert out.count("waiting for the master") == 4


def test_script_gives_up_on_a_master_that_never_answers(script, fake_master, capsys):
    fake_master.info_failures = 200  # far more than 100 s of backoff allows
    code, _, err = run(script, fake_master, capsys, DET_TIMEOUT_SECONDS="100")
    assert code == 1
    assert "did not answer /info in time" in err
    assert sum(script.sleeps) <= 100 + 1e-6
    assert not changes(fake_master)


def test_script_stops_on_a_refused_login_without_showing_the_password(script, fake_master, capsys):
    code, out, err = run(script, fake_master, capsys, DET_PASSWORD="wrong-" + PASSWORD)
    assert code == 1
    assert "POST /api/v1/auth/login: HTTP 401: invalid credentials" in err
    assert "wrong-" not in out + err
    assert [c[0] for c in changes(fake_master)] == ["POST"]  # the login, nothing after it


def test_script_reads_the_password_from_the_file_the_job_mounts(script, fake_master, capsys, tmp_path):
    # What the Job gives it: DET_PASSWORD_FILE only (the Secret's key as a file).
    path = tmp_path / "password"
    path.write_text(PASSWORD)
    code, _, err = run(script, fake_master, capsys, DET_PASSWORD="", DET_PASSWORD_FILE=str(path))
    assert (code, err) == (0, "")
    path.write_text("wrong-" + PASSWORD)
    code, out, err = run(script, fake_master, capsys, DET_PASSWORD="", DET_PASSWORD_FILE=str(path))
    assert code == 1 and "HTTP 401" in err and "wrong-" not in out + err
    code, _, err = run(script, fake_master, capsys, DET_PASSWORD="", DET_PASSWORD_FILE=str(tmp_path / "none"))
    assert code == 1 and "DET_PASSWORD_FILE" in err


def test_script_retries_5xx_a_bounded_number_of_times_then_fails(script, fake_master, capsys):
    fake_master.namespaces.discard("det-team")
    code, out, err = run(script, fake_master, capsys)
    assert code == 1
    assert "error verifying Kubernetes namespace" in err
    posts = [c for c in fake_master.calls if c[1].endswith("/namespace-bindings") and c[0] == "POST"]
    assert len([c for c in posts if c[2]["clusterNamespaceMeta"][""]["namespace"] == "det-team"]) == 3
    assert out.count("retry ") == 2


def test_script_stops_on_a_4xx_it_cannot_handle(script, fake_master, capsys):
    code, out, err = run(script, fake_master, capsys, DET_CLUSTER_NAME="elsewhere")
    assert code == 1
    assert "HTTP 400" in err and "no resource manager with cluster name elsewhere" in err
    assert "retry" not in out


def test_script_waits_for_pools_the_master_does_not_know_yet_then_fails(script, fake_master, capsys):
    fake_master.pools.remove("team-cpu")
    code, out, err = run(script, fake_master, capsys, DET_TIMEOUT_SECONDS="30")
    assert code == 1
    assert "no resource pool named 'team-cpu'" in err
    assert "waiting for the master to know pool 'team-cpu'" in out
    assert not [c for c in changes(fake_master) if c[1] != "/api/v1/auth/login"]


@pytest.mark.parametrize(
    ("mapping", "message"),
    [
        ("not json", "DET_MAPPING is not JSON"),
        ('{"workspace": "a"}', "must be a JSON list"),
        ('[{"workspace": "a", "namespace": "n", "pool": "p"}]', "exactly the keys"),
        ('[{"workspace": "a", "namespace": "n", "pool": "p", "role": "gpu"}]', "role must be"),
        (
            '[{"workspace": "a", "namespace": "n1", "pool": "p", "role": "aux"},'
            ' {"workspace": "a", "namespace": "n2", "pool": "q", "role": "aux"}]',
            "two namespaces",
        ),
    ],
)
def test_script_refuses_a_bad_mapping_before_calling_the_master(
    script, fake_master, capsys, mapping, message
):
    code, _, err = run(script, fake_master, capsys, DET_MAPPING=mapping)
    assert code == 1 and message in err
    assert fake_master.calls == []


def test_script_hash_is_the_jobs_hash(script):
    entries = workspaces.mapping(config())
    assert script.mapping_hash(entries) == workspaces.mapping_hash(entries)


# --- bindings the config no longer makes ---------------------------------------------------
#
# The master lists pods, Jobs and events in every namespace a workspace is bound to (and the
# default one) when it starts, and does not start when a list is refused (jobs.go:156-168,
# 240, 487-489 at v0.38.1): a namespace the stack deletes, with the master's Role in it, must
# have no workspace bound to it by then. The stack gives the master a Role in its task
# namespaces only (components/determined/master.py), so those are the namespaces it may start with.


def removed_team_config():
    """config() with the team's two pools and their namespace det-team removed."""
    return config(resourcePools=POOLS[:2])


def test_removing_a_pool_moves_its_workspace_back_and_keeps_the_master_starting(script, fake_master, capsys):
    assert run(script, fake_master, capsys)[0] == 0
    team = next(w["id"] for w in fake_master.workspaces.values() if w["name"] == "team")
    assert "det-team" in fake_master.start_namespaces()
    new = removed_team_config()
    restart(fake_master, new)
    # The master restarted with the new config still lists det-team: the stack deletes it
    # (and the Role there) only after this Job (tests/determined/test_pool_removal.py).
    code, out, err = run(script, fake_master, capsys)
    assert (code, err) == (0, "")
    assert changes(fake_master) == [
        ("POST", "/api/v1/auth/login", {"username": "admin", "password": PASSWORD}),
        (
            "POST",
            f"/api/v1/workspaces/{team}/namespace-bindings",
            {"workspaceId": team, "clusterNamespaceMeta": {"": {"namespace": "determined-tasks"}}},
        ),
        (
            "DELETE",
            "/api/v1/resource-pools/team-gpu/workspace-bindings",
            {"resourcePoolName": "team-gpu", "workspaceIds": [team]},
        ),
        (
            "DELETE",
            "/api/v1/resource-pools/team-cpu/workspace-bindings",
            {"resourcePoolName": "team-cpu", "workspaceIds": [team]},
        ),
        (
            "PATCH",
            f"/api/v1/workspaces/{team}",
            {"defaultComputeResourcePool": "", "defaultAuxResourcePool": ""},
        ),
    ]
    # Every namespace the master lists when it next starts keeps its Role.
    assert fake_master.start_namespaces() <= set(new.task_namespaces)
    assert team not in fake_master.ns_bindings
    assert fake_master.rp_bindings == []
    assert fake_master.workspaces[team]["defaultComputePool"] == ""
    assert "workspace 'team': moved back to the default namespace determined-tasks (was det-team" in out
    assert "workspace 'team': pool 'team-gpu' unbound (the master has no such pool)" in out
    # The workspace (and whatever it holds) stays.
    assert fake_master.workspaces[team]["name"] == "team"
    # A second run finds nothing to do.
    assert run(script, fake_master, capsys)[0] == 0
    assert changes(fake_master) == [
        ("POST", "/api/v1/auth/login", {"username": "admin", "password": PASSWORD})
    ]


def test_a_workspace_bound_by_hand_outside_the_stack_goes_back_inside_it_stays(script, fake_master, capsys):
    fake_master.namespaces |= {"ml-sandbox"}
    fake_master.workspaces[7] = {"id": 7, "name": "sandbox", "archived": False, "immutable": False}
    fake_master.ns_bindings[7] = "ml-sandbox"
    # Archived workspaces' bindings count when the master starts too.
    fake_master.workspaces[8] = {"id": 8, "name": "old", "archived": True, "immutable": False}
    fake_master.ns_bindings[8] = "det-gone"
    fake_master.workspaces[9] = {"id": 9, "name": "guest", "archived": False, "immutable": False}
    fake_master.ns_bindings[9] = "det-a100"
    code, out, err = run(script, fake_master, capsys)
    assert (code, err) == (0, "")
    assert fake_master.ns_bindings[9] == "det-a100"  # a stack namespace: the master has its Role there
    assert 7 not in fake_master.ns_bindings and 8 not in fake_master.ns_bindings
    assert fake_master.start_namespaces() <= set(fake_master.cfg.task_namespaces)
    assert "workspace 'sandbox': moved back to the default namespace determined-tasks (was ml-sandbox" in out


def test_a_pool_given_to_another_workspace_leaves_the_old_one(script, fake_master, capsys):
    assert run(script, fake_master, capsys)[0] == 0
    team = next(w["id"] for w in fake_master.workspaces.values() if w["name"] == "team")
    moved = [POOLS[0], POOLS[1], dict(POOLS[2], workspace="vision", namespace="det-vision"), POOLS[3]]
    restart(fake_master, config(resourcePools=moved))
    code, out, err = run(script, fake_master, capsys)
    assert (code, err) == (0, "")
    vision = next(w["id"] for w in fake_master.workspaces.values() if w["name"] == "vision")
    assert fake_master.bound_to("team-gpu") == [vision]
    assert fake_master.bound_to("team-cpu") == [team]
    # team's default compute pool was team-gpu, which it can no longer use.
    assert fake_master.workspaces[team]["defaultComputePool"] == ""
    assert fake_master.workspaces[team]["defaultAuxPool"] == "team-cpu"
    assert fake_master.workspaces[vision]["defaultComputePool"] == "team-gpu"
    assert fake_master.ns_bindings[team] == "det-team" and fake_master.ns_bindings[vision] == "det-vision"
    assert "workspace 'team': pool 'team-gpu' unbound (the stack binds it to 'vision')" in out


def test_a_pool_that_became_a_default_pool_is_opened_to_every_workspace(script, fake_master, capsys):
    assert run(script, fake_master, capsys)[0] == 0
    team = next(w["id"] for w in fake_master.workspaces.values() if w["name"] == "team")
    # The master refuses to bind its default pools, but a binding made before stays in its
    # database and would keep the pool from every other workspace.
    restart(fake_master, config(defaultComputePool="team-gpu"))
    code, out, err = run(script, fake_master, capsys)
    assert (code, err) == (0, "")
    assert fake_master.bound_to("team-gpu") == []
    assert fake_master.bound_to("team-cpu") == [team]
    assert "team-gpu" in fake_master.available(1)  # Uncategorized may use it
    assert "the master's default pools stay open to every workspace" in out


@pytest.mark.parametrize(
    ("default", "namespaces", "message"),
    [
        ("", '["determined-tasks", "det-a100", "det-aux", "det-team"]', "DET_DEFAULT_NAMESPACE is not set"),
        ("determined-tasks", "nope", "DET_TASK_NAMESPACES is not JSON"),
        ("determined-tasks", '{"a": 1}', "must be a JSON list"),
        ("determined-tasks", '["det-a100", "det-aux", "det-team"]', "lacks determined-tasks"),
        ("determined-tasks", '["determined-tasks", "det-a100", "det-aux"]', "lacks det-team"),
    ],
)
def test_script_refuses_namespaces_that_would_move_mapped_workspaces(
    script, fake_master, capsys, default, namespaces, message
):
    code, _, err = run(
        script, fake_master, capsys, DET_DEFAULT_NAMESPACE=default, DET_TASK_NAMESPACES=namespaces
    )
    assert code == 1 and message in err
    assert fake_master.calls == []


def run_as_job(env: dict[str, str]) -> subprocess.CompletedProcess:
    """The script as a process, the Job's way (python3 -I -B <script>), settings from `env`."""
    _, *flags, _ = container_of(job_for(config()))["command"]
    command = [sys.executable, *flags, str(workspaces.SCRIPT_FILE)]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)


def test_script_runs_as_the_job_runs_it(fake_master):
    python, *_ = container_of(job_for(config()))["command"]
    assert python == "python3"
    done = run_as_job(env_for(fake_master))
    assert (done.returncode, done.stderr) == (0, "")
    assert PASSWORD not in done.stdout and TOKEN not in done.stdout
    assert done.stdout.splitlines()[-1] == "done"
    assert {w["name"] for w in fake_master.workspaces.values()} == {"Uncategorized", "a100", "aux", "team"}


def openssl(*args: str, cwd) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def make_private_ca_chain(directory) -> dict[str, str]:
    """Real certificates: a private root CA, an intermediate it signs, and a leaf for
    det.example.com the intermediate signs. Returns file paths: the key, the leaf's chain
    without the root (what a private CA's issuer often hands out) and with it."""
    if not shutil.which("openssl"):
        pytest.skip("openssl is needed to make the test certificates")
    d = directory
    ca_ext = "basicConstraints=critical,CA:true\nkeyUsage=critical,keyCertSign,cRLSign\n"
    (d / "ca.ext").write_text(ca_ext)
    leaf_ext = (
        "basicConstraints=critical,CA:false\nkeyUsage=critical,digitalSignature,keyEncipherment\n"
        "extendedKeyUsage=serverAuth\nsubjectAltName=DNS:det.example.com\n"
    )
    (d / "leaf.ext").write_text(leaf_ext)
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=Test Private Root",
            "-addext", "basicConstraints=critical,CA:true", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
            "-keyout", "root.key", "-out", "root.crt", cwd=d)  # fmt: skip
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=Test Intermediate",
            "-keyout", "int.key", "-out", "int.csr", cwd=d)  # fmt: skip
    openssl("x509", "-req", "-in", "int.csr", "-CA", "root.crt", "-CAkey", "root.key", "-CAcreateserial",
            "-days", "2", "-extfile", "ca.ext", "-out", "int.crt", cwd=d)  # fmt: skip
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=det.example.com",
            "-keyout", "tls.key", "-out", "leaf.csr", cwd=d)  # fmt: skip
    openssl("x509", "-req", "-in", "leaf.csr", "-CA", "int.crt", "-CAkey", "int.key", "-CAcreateserial",
            "-days", "2", "-extfile", "leaf.ext", "-out", "leaf.crt", cwd=d)  # fmt: skip
    leaf, intermediate, root = ((d / f).read_text() for f in ("leaf.crt", "int.crt", "root.crt"))
    (d / "without-root.crt").write_text(leaf + intermediate)
    (d / "with-root.crt").write_text(leaf + intermediate + root)
    return {
        "key": str(d / "tls.key"),
        "without_root": str(d / "without-root.crt"),
        "with_root": str(d / "with-root.crt"),
    }


def make_self_signed(directory) -> dict[str, str]:
    if not shutil.which("openssl"):
        pytest.skip("openssl is needed to make the test certificate")
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=det.example.com",
            "-addext", "subjectAltName=DNS:det.example.com", "-keyout", "tls.key", "-out", "tls.crt",
            cwd=directory)  # fmt: skip
    return {"key": str(directory / "tls.key"), "chain": str(directory / "tls.crt")}


@contextlib.contextmanager
def tls_front(fake, chain: str, key: str):
    """The fake master behind TLS (as the master serves it: the whole chain file of its
    Secret's tls.crt), on another port, relaying to the plain fake. Yields the https URL."""
    port = int(fake.url.rsplit(":", 1)[1])
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(chain, key)
    listener = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def relay(conn):
        # Both ways until the plain side closes (urllib asks for Connection: close).
        with (
            context.wrap_socket(conn, server_side=True) as tls,
            socket.create_connection(("127.0.0.1", port)) as up,
        ):

            def upstream():
                with contextlib.suppress(OSError):
                    while chunk := tls.recv(65536):
                        up.sendall(chunk)

            threading.Thread(target=upstream, daemon=True).start()
            while chunk := up.recv(65536):
                tls.sendall(chunk)

    def serve():
        listener.settimeout(0.1)
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            threading.Thread(target=lambda c=conn: _quietly(relay, c), daemon=True).start()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"https://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        stop.set()
        thread.join()
        listener.close()


def _quietly(fn, *args):
    with contextlib.suppress(OSError, ssl.SSLError):
        fn(*args)


def tls_env(fake, url: str, cert_file: str, name: str = "det.example.com") -> dict[str, str]:
    """The Job's environment for a master ending TLS: its chain (the Secret's tls.crt, what
    the Job mounts) and the name the certificate is checked against."""
    return {**env_for(fake), "DET_MASTER": url, "DET_MASTER_CERT_FILE": cert_file, "DET_MASTER_CERT_NAME": name,
            "DET_TIMEOUT_SECONDS": "5", "DET_RETRIES": "2"}  # fmt: skip


def task_verifies(url: str, cert_file: str, name: str = "det.example.com") -> bool:
    """Whether a Determined task would accept the master: the harness trusts certifi's CAs
    plus the chain the master hands it, through requests/urllib3 (an SSLContext of its own
    loading that one bundle: no partial chains), checking DET_MASTER_CERT_NAME
    (harness/determined/common/api/certs.py:47-51, _session.py:272 at v0.38.1). The system
    bundle stands in for certifi's (both Mozilla's roots)."""
    bundle = Path(cert_file).with_suffix(".task-bundle")
    system = ssl.get_default_verify_paths().cafile or "/etc/ssl/certs/ca-certificates.crt"
    bundle.write_text(Path(system).read_text() + "\n" + Path(cert_file).read_text())
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.load_verify_locations(cafile=str(bundle))
    host, port = urllib.parse.urlsplit(url).hostname, urllib.parse.urlsplit(url).port
    try:
        with (
            socket.create_connection((host, port), timeout=10) as sock,
            context.wrap_socket(sock, server_hostname=name),
        ):
            return True
    except ssl.SSLCertVerificationError:
        return False


def test_script_trusts_the_masters_certificate_by_its_host_name(fake_master, tmp_path):
    cert = make_self_signed(tmp_path)
    with tls_front(fake_master, cert["chain"], cert["key"]) as url:
        done = run_as_job(tls_env(fake_master, url, cert["chain"]))
    assert (done.returncode, done.stderr) == (0, ""), done.stdout
    assert done.stdout.splitlines()[-1] == "done"


def test_script_refuses_a_certificate_for_another_name(fake_master, tmp_path):
    cert = make_self_signed(tmp_path)
    with tls_front(fake_master, cert["chain"], cert["key"]) as url:
        done = run_as_job(tls_env(fake_master, url, cert["chain"], name="other.example.com"))
    assert done.returncode != 0
    assert PASSWORD not in done.stdout + done.stderr


def test_a_private_ca_chain_without_its_root_fails_in_the_job_as_in_tasks(fake_master, tmp_path):
    # The master serves (and hands tasks) its Secret's tls.crt: leaf and intermediate only.
    certs = make_private_ca_chain(tmp_path)
    with tls_front(fake_master, certs["without_root"], certs["key"]) as url:
        assert not task_verifies(url, certs["without_root"])
        done = run_as_job(tls_env(fake_master, url, certs["without_root"]))
    assert done.returncode == 1, done.stdout
    assert "does not verify as Determined's tasks verify it" in done.stderr
    assert "retry" not in done.stdout  # no waiting out the timeout on a certificate
    assert not [c for c in fake_master.calls if c[1] != "/info"]


def test_a_private_ca_chain_with_its_root_passes_in_the_job_as_in_tasks(fake_master, tmp_path):
    certs = make_private_ca_chain(tmp_path)
    with tls_front(fake_master, certs["with_root"], certs["key"]) as url:
        assert task_verifies(url, certs["with_root"])
        done = run_as_job(tls_env(fake_master, url, certs["with_root"]))
    assert (done.returncode, done.stderr) == (0, ""), done.stdout


def test_the_job_turns_partial_chains_off_where_python_turns_them_on(
    script, fake_master, tmp_path, monkeypatch
):
    # Python 3.13 (the Job's image) sets VERIFY_X509_PARTIAL_CHAIN and VERIFY_X509_STRICT in
    # create_default_context (python/cpython gh-107361); the tests may run an older Python.
    made = ssl.create_default_context

    def like_3_13(*args, **kwargs):
        context = made(*args, **kwargs)
        context.verify_flags |= ssl.VERIFY_X509_PARTIAL_CHAIN | ssl.VERIFY_X509_STRICT
        return context

    monkeypatch.setattr(script.ssl, "create_default_context", like_3_13)
    context = script.tls_context(None)
    assert not context.verify_flags & (ssl.VERIFY_X509_PARTIAL_CHAIN | ssl.VERIFY_X509_STRICT)
    # What the flag would let through: the intermediate accepted as an anchor.
    certs = make_private_ca_chain(tmp_path)
    with tls_front(fake_master, certs["without_root"], certs["key"]) as url:
        env = tls_env(fake_master, url, certs["without_root"])
        assert script.main(env) == 1
        monkeypatch.setattr(script, "tls_context", lambda cert_file: _partial(made, cert_file))
        assert script.main(env) == 0


def _partial(made, cert_file):
    context = made()
    context.load_verify_locations(cafile=cert_file)
    context.verify_flags |= ssl.VERIFY_X509_PARTIAL_CHAIN
    return context
