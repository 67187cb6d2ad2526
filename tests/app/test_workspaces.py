"""Workspaces bound to the pools' namespaces (0.35+): the mapping, the Job that applies it,
and the Job's script run against a fake master that answers like the real one."""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import re
import subprocess
import sys
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from conftest import BASE, make_config

from deploy import defaults
from deploy.app import master, workspaces
from deploy.kube import validation

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
    assert set(env) == {"DET_MASTER", "DET_USER", "DET_PASSWORD_FILE", "DET_MAPPING", "DET_TIMEOUT_SECONDS"}
    assert json.loads(env["DET_MAPPING"]["value"]) == workspaces.mapping(cfg)
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
    assert int(env["DET_TIMEOUT_SECONDS"]["value"]) >= defaults.MASTER_STARTUP_SECONDS
    assert PASSWORD not in json.dumps(job)


def test_job_is_named_by_the_hash_and_runs_the_mounted_script_confined():
    cfg = config()
    digest = workspaces.mapping_hash(workspaces.mapping(cfg))
    job = job_for(cfg)
    script = hashlib.sha256(workspaces.SCRIPT_FILE.read_bytes()).hexdigest()[:6]
    assert job["metadata"]["name"] == f"determined-bind-workspaces-{digest}-{script}"
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
    assert pod["priorityClassName"] == defaults.SYSTEM_PRIORITY_CLASS
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
    api_resourcepool.go): state in memory, every request recorded."""

    def __init__(self, pools, default_compute, default_aux, namespaces, cluster="default"):
        self.pools = list(pools)
        self.default_compute = default_compute
        self.default_aux = default_aux
        self.namespaces = set(namespaces)
        self.cluster = cluster
        self.default_namespace = "determined"
        self.workspaces = {1: {"id": 1, "name": "Uncategorized", "archived": False, "immutable": True}}
        self.ns_bindings: dict[int, str] = {}
        self.rp_bindings: dict[str, list[int]] = {}
        self.calls: list[tuple[str, str, object]] = []
        self.info_failures = 0
        self.lock = threading.Lock()

    # -- helpers
    def ws_json(self, ws):
        return {"defaultComputePool": "", "defaultAuxPool": "", **ws}

    def available(self, wid):
        bound_elsewhere = {p for p, ids in self.rp_bindings.items() if ids and wid not in ids}
        return {p for p in self.pools if p not in bound_elsewhere} | {""}

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
            found = [self.ws_json(w) for w in self.workspaces.values() if w["name"].lower() == name.lower()]
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
            self.ns_bindings[wid] = meta["namespace"]
            return 200, {"namespaceBindings": {}}
        m = re.fullmatch(r"/api/v1/resource-pools/([^/]+)/workspace-bindings", path)
        if m and method == "GET":
            pool = urllib.parse.unquote(m[1])
            if pool not in self.pools:
                return 500, {"error": {"code": 13, "error": f"pool with name {pool} doesn't exist"}}
            assert query.get("limit") == ["-1"]
            return 200, {"workspaceIds": list(self.rp_bindings.get(pool, [])), "pagination": {}}
        if m and method == "POST":
            pool = urllib.parse.unquote(m[1])
            assert body["resourcePoolName"] == pool
            if pool in (self.default_compute, self.default_aux):
                return 500, {"error": {"code": 13, "error": f"default resource pool {pool} cannot be bound"}}
            ids = self.rp_bindings.setdefault(pool, [])
            if set(body["workspaceIds"]) & set(ids):
                return 500, {"error": {"code": 13, "error": "duplicate key value violates unique constraint"}}
            ids.extend(body["workspaceIds"])
            return 200, {}
        m = re.fullmatch(r"/api/v1/workspaces/(\d+)", path)
        if m and method == "PATCH":
            ws = self.workspaces[int(m[1])]
            for key, field in (
                ("defaultComputeResourcePool", "defaultComputePool"),
                ("defaultAuxResourcePool", "defaultAuxPool"),
            ):
                if key in body:
                    if body[key] not in self.available(ws["id"]):
                        return 400, {"error": {"code": 9, "error": "unable to bind a resource pool"}}
                    ws[field] = body[key]
            return 200, {"workspace": self.ws_json(ws)}
        return 404, {"error": {"code": 5, "error": "not found"}}


@pytest.fixture
def fake_master():
    cfg = config()
    fake = FakeMaster(
        [rp.name for rp in cfg.resource_pools],
        cfg.compute_pool,
        cfg.aux_pool,
        {rp.namespace_name for rp in cfg.resource_pools} | {cfg.namespace},
    )

    class Handler(BaseHTTPRequestHandler):
        def _serve(self):
            url = urllib.parse.urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            body = json.loads(raw) if raw else None
            with fake.lock:
                status, answer = fake.handle(
                    self.command,
                    url.path,
                    urllib.parse.parse_qs(url.query),
                    body,
                    self.headers.get("Authorization"),
                )
            data = json.dumps(answer).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _serve

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    fake.url = f"http://127.0.0.1:{server.server_address[1]}"
    fake.mapping = workspaces.mapping(cfg)
    yield fake
    server.shutdown()
    server.server_close()


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
    assert not [c for c in fake.calls if c[0] == "DELETE"]
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
    assert fake_master.rp_bindings == {"team-gpu": [team], "team-cpu": [team]}
    assert fake_master.workspaces[team]["defaultComputePool"] == "team-gpu"
    assert fake_master.workspaces[team]["defaultAuxPool"] == "team-cpu"
    assert "workspace 'a100': created" in out
    assert "workspace 'team': bound to namespace det-team" in out
    assert "workspace 'team': pool 'team-gpu' bound" in out
    assert f"mapping {workspaces.mapping_hash(fake_master.mapping)}:" in out


def test_script_changes_nothing_on_a_second_run(script, fake_master, capsys):
    assert run(script, fake_master, capsys)[0] == 0
    before = (dict(fake_master.ns_bindings), json.dumps(fake_master.rp_bindings), len(fake_master.workspaces))
    code, out, err = run(script, fake_master, capsys)
    assert (code, err) == (0, "")
    assert changes(fake_master) == [
        ("POST", "/api/v1/auth/login", {"username": "admin", "password": PASSWORD})
    ]
    after = (dict(fake_master.ns_bindings), json.dumps(fake_master.rp_bindings), len(fake_master.workspaces))
    assert after == before
    assert "workspace 'team': namespace det-team unchanged" in out
    assert "workspace 'team': pool 'team-gpu' binding unchanged" in out
    assert "workspace 'a100': default compute pool 'a100' unchanged" in out
    assert "created" not in out


def test_script_moves_a_workspace_bound_elsewhere_and_keeps_what_is_right(script, fake_master, capsys):
    fake_master.workspaces[7] = {"id": 7, "name": "Team", "archived": False, "immutable": False}
    fake_master.ns_bindings[7] = "det-old"
    fake_master.rp_bindings["team-gpu"] = [7]
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


@pytest.fixture
def tls_master(fake_master, tmp_path):
    """The fake master behind TLS, with a certificate for det.example.com (not the address dialled)."""
    import shutil
    import ssl
    import subprocess as sp

    if not shutil.which("openssl"):
        pytest.skip("openssl is needed to make the test certificate")
    cert, key = tmp_path / "tls.crt", tmp_path / "tls.key"
    sp.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=det.example.com",
         "-addext", "subjectAltName=DNS:det.example.com", "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True,
    )  # fmt: skip
    port = int(fake_master.url.rsplit(":", 1)[1])
    # A TLS front on another port, relaying to the plain fake (the master's listener is all-TLS).
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    import socket

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
    yield fake_master, f"https://127.0.0.1:{listener.getsockname()[1]}", str(cert)
    stop.set()
    thread.join()
    listener.close()


def _quietly(fn, *args):
    with contextlib.suppress(OSError):
        fn(*args)


def test_script_trusts_the_masters_certificate_by_its_host_name(tls_master):
    fake, url, cert = tls_master
    env = {
        **env_for(fake),
        "DET_MASTER": url,
        "DET_MASTER_CERT_FILE": cert,
        "DET_MASTER_CERT_NAME": "det.example.com",
    }
    done = run_as_job(env)
    assert (done.returncode, done.stderr) == (0, ""), done.stdout
    assert done.stdout.splitlines()[-1] == "done"


def test_script_refuses_a_certificate_for_another_name(tls_master):
    fake, url, cert = tls_master
    env = {**env_for(fake), "DET_MASTER": url, "DET_MASTER_CERT_FILE": cert, "DET_MASTER_CERT_NAME": "other.example.com",
           "DET_TIMEOUT_SECONDS": "2", "DET_RETRIES": "1"}  # fmt: skip
    done = run_as_job(env)
    assert done.returncode != 0
    assert PASSWORD not in done.stdout + done.stderr
