"""The master's metrics: the token refresher's objects, Prometheus' scrape of the master, and
the refresher's script run against a fake master and a fake Kubernetes API server."""

from __future__ import annotations

import base64
import contextlib
import importlib.util
import itertools
import json
import re
import shutil
import ssl
import subprocess
import sys
import urllib.parse

import pytest
from conftest import make_config
from crds import crd_problems
from fake_http import serve

from components import constants
from components.determined import master
from components.kube import pod_security, validation
from components.observability import layout, master_metrics

USER_PASSWORD = "Metr1cs-pw-7f3a9c"
ADMIN_PASSWORD = "Adm1n-pw-b0c4e2"
OTHER_PASSWORD = "someone-elses-pw-55"
SA_TOKEN = "sa-token-0d9e8f7a6b"

TLS_MASTER = {
    "mode": "master",
    "host": "det.example.com",
    "certificate": {"source": "secret", "secretName": "det-tls"},
}


def config(**overrides):
    return make_config(**{"observability": {"enabled": True}, **overrides})


def objects(cfg):
    return master_metrics.objects(cfg, USER_PASSWORD, ADMIN_PASSWORD)


def by_kind(cfg):
    return {(obj["kind"], obj["metadata"]["name"]): obj for obj in objects(cfg)}


# --- the objects ------------------------------------------------------------------------


@pytest.mark.parametrize("tls", [None, TLS_MASTER])
def test_objects_validate_strictly(tls):
    cfg = config(tls=tls) if tls else config()
    for obj in objects(cfg):
        if obj["apiVersion"].startswith("monitoring.coreos.com/"):
            assert crd_problems(obj) == [], obj["kind"]
        else:
            assert list(validation.problems(obj)) == [], (obj["kind"], obj["metadata"]["name"])


def test_the_schema_checks_do_catch_broken_objects():
    cfg = config(tls=TLS_MASTER)
    monitor = master_metrics.service_monitor(cfg)
    monitor["spec"]["endpoints"][0]["tlsConfig"]["serverNmae"] = "det.example.com"
    assert crd_problems(monitor) != []
    cron = master_metrics.cron_job(cfg)
    cron["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]["securityContext"][
        "runAsNonroot"
    ] = 1
    assert list(validation.problems(cron)) != []


def test_needed_with_observability_only():
    assert master_metrics.needed(config())
    assert not master_metrics.needed(make_config(observability={"enabled": False}))
    # The master's endpoints asked for alone: no Prometheus of the stack's to scrape them.
    assert not master_metrics.needed(
        make_config(observability={"enabled": False}, master={"observability": {"enablePrometheus": True}})
    )


def test_the_jobs_run_beside_the_master_and_the_scrape_beside_prometheus():
    cfg = config()
    monitoring = layout.namespace(cfg.namespace)
    assert monitoring == f"{cfg.namespace}-monitoring"
    where = {(kind, name): obj["metadata"]["namespace"] for (kind, name), obj in by_kind(cfg).items()}
    assert where == {
        ("ConfigMap", master_metrics.SCRIPT_CONFIG_MAP): cfg.namespace,
        ("Secret", master_metrics.METRICS_PASSWORD_SECRET): cfg.namespace,
        ("Secret", master_metrics.ADMIN_PASSWORD_SECRET): cfg.namespace,
        ("ServiceAccount", master_metrics.SERVICE_ACCOUNT): cfg.namespace,
        ("Job", master_metrics.job_name(cfg)): cfg.namespace,
        ("CronJob", master_metrics.CRON_JOB): cfg.namespace,
        # The operator reads a ServiceMonitor's Secrets in its own namespace only.
        ("Secret", master_metrics.TOKEN_SECRET): monitoring,
        ("Role", master_metrics.ROLE): monitoring,
        ("RoleBinding", master_metrics.ROLE): monitoring,
        ("ServiceMonitor", layout.MASTER_JOB): monitoring,
    }


def test_the_refresher_may_read_and_patch_the_token_secret_only():
    cfg = config()
    objs = by_kind(cfg)
    (rule,) = objs["Role", master_metrics.ROLE]["rules"]
    assert rule == {
        "apiGroups": [""],
        "resources": ["secrets"],
        "resourceNames": [master_metrics.TOKEN_SECRET],
        "verbs": ["get", "patch"],
    }
    binding = objs["RoleBinding", master_metrics.ROLE]
    assert binding["roleRef"]["name"] == master_metrics.ROLE
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": master_metrics.SERVICE_ACCOUNT, "namespace": cfg.namespace}
    ]
    # Created without data: the script writes it, and no `up` holds a value to write back.
    token = objs["Secret", master_metrics.TOKEN_SECRET]
    assert "data" not in token and "stringData" not in token


def test_passwords_are_secrets_and_reach_the_script_as_files_only():
    cfg = config()
    objs = by_kind(cfg)
    assert objs["Secret", master_metrics.METRICS_PASSWORD_SECRET]["stringData"] == {"password": USER_PASSWORD}
    assert objs["Secret", master_metrics.ADMIN_PASSWORD_SECRET]["stringData"] == {"password": ADMIN_PASSWORD}
    for workload in (master_metrics.job(cfg), master_metrics.cron_job(cfg)):
        text = json.dumps(workload)
        assert USER_PASSWORD not in text and ADMIN_PASSWORD not in text
        pod = pod_of(workload)
        (container,) = pod["containers"]
        env = {e["name"]: e["value"] for e in container["env"]}
        mounts = {m["name"]: m for m in container["volumeMounts"]}
        volumes = {v["name"]: v for v in pod["volumes"]}
        for variable, secret in (
            ("DET_PASSWORD_FILE", master_metrics.METRICS_PASSWORD_SECRET),
            ("DET_ADMIN_PASSWORD_FILE", master_metrics.ADMIN_PASSWORD_SECRET),
        ):
            (volume,) = [v for v in volumes.values() if v.get("secret", {}).get("secretName") == secret]
            (item,) = volume["secret"]["items"]
            assert item["key"] == master_metrics.PASSWORD_KEY
            assert env[variable] == f"{mounts[volume['name']]['mountPath']}/{item['path']}"
        assert all(m["readOnly"] for m in mounts.values())
        assert env["DET_USER"] == "prometheus" and env["DET_ADMIN_USER"] == "admin"
        assert env["DET_STORE_NAME"] == master_metrics.TOKEN_SECRET
        assert env["DET_STORE_NAMESPACE"] == layout.namespace(cfg.namespace)
        assert env["DET_MASTER"] == master.internal_url(cfg)
        assert not any(name.endswith("PASSWORD") or name.endswith("TOKEN") for name in env)


def pod_of(workload):
    spec = workload["spec"]
    return (spec["jobTemplate"]["spec"] if workload["kind"] == "CronJob" else spec)["template"]["spec"]


@pytest.mark.parametrize("kind", ["Job", "CronJob"])
def test_the_refresher_runs_the_mounted_script_confined_on_the_masters_pool(kind):
    cfg = config()
    workload = master_metrics.job(cfg) if kind == "Job" else master_metrics.cron_job(cfg)
    pod = pod_of(workload)
    assert pod_security.restricted_problems({"kind": "Pod", "spec": pod}) == []
    assert pod["restartPolicy"] == "Never"
    assert pod["nodeSelector"] == {"pool": "system"}
    assert pod["serviceAccountName"] == master_metrics.SERVICE_ACCOUNT
    assert pod["automountServiceAccountToken"] is True
    assert pod["priorityClassName"] == constants.SYSTEM_PRIORITY_CLASS
    (container,) = pod["containers"]
    assert re.fullmatch(r"python:3\.13\.\d+-slim@sha256:[0-9a-f]{64}", container["image"])
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    assert container["resources"]["limits"]["memory"] and container["resources"]["requests"]["cpu"]
    (mount,) = [m for m in container["volumeMounts"] if m["name"] == "script"]
    (volume,) = [v for v in pod["volumes"] if v["name"] == "script"]
    assert volume["configMap"]["name"] == master_metrics.SCRIPT_CONFIG_MAP
    assert container["command"] == [
        "python3",
        "-I",
        "-B",
        f"{mount['mountPath']}/{master_metrics.SCRIPT_NAME}",
    ]
    assert workload["metadata"]["labels"]["app.kubernetes.io/name"] == master_metrics.COMPONENT
    labels = (
        workload["spec"]["jobTemplate"]["spec"]["template"]
        if kind == "CronJob"
        else workload["spec"]["template"]
    )["metadata"]["labels"]
    # The NetworkPolicy peer selects exactly these pods.
    peer = master_metrics.peer(cfg)
    assert peer["podSelector"]["matchLabels"].items() <= labels.items()
    assert peer["namespaceSelector"]["matchLabels"] == {"kubernetes.io/metadata.name": cfg.namespace}


def test_config_map_holds_the_script():
    cm = master_metrics.script_config_map(config())
    assert cm["data"] == {master_metrics.SCRIPT_NAME: master_metrics.SCRIPT_FILE.read_text()}


def test_cron_job_refreshes_well_inside_the_tokens_life_one_run_at_a_time():
    spec = master_metrics.cron_job(config())["spec"]
    minute, hours, *rest = spec["schedule"].split()
    assert rest == ["*", "*", "*"] and minute.isdigit()
    every = int(hours.removeprefix("*/"))
    # Even a few failed runs in a row leave days before the 7-day token expires.
    assert 1 <= every <= 12 and 4 * every < master_metrics.TOKEN_LIFETIME_HOURS / 2
    assert spec["concurrencyPolicy"] == "Forbid"
    assert spec["successfulJobsHistoryLimit"] >= 1 and spec["failedJobsHistoryLimit"] >= 1
    assert 0 < spec["startingDeadlineSeconds"] <= every * 3600
    job = spec["jobTemplate"]["spec"]
    assert job["activeDeadlineSeconds"] < every * 3600
    assert 1 <= job["backoffLimit"] <= 6


def test_job_at_up_is_named_by_its_script_and_settings_and_kept_once_done():
    cfg = config()
    job = master_metrics.job(cfg)
    name = job["metadata"]["name"]
    assert re.fullmatch(r"determined-metrics-token-[0-9a-f]{10}", name)
    assert master_metrics.job(config(master={"cpu": "4"}))["metadata"]["name"] == name
    assert master_metrics.job(config(tls=TLS_MASTER))["metadata"]["name"] != name
    assert "ttlSecondsAfterFinished" not in job["spec"]  # a deleted Job would run again at `up`
    assert job["metadata"]["annotations"]["pulumi.com/replaceUnready"] == "true"
    assert master.SKIP_AWAIT not in job["metadata"]["annotations"]
    assert job["spec"]["activeDeadlineSeconds"] > master_metrics.UP_WAIT_SECONDS
    env = {e["name"]: e["value"] for e in pod_of(job)["containers"][0]["env"]}
    assert int(env["DET_TIMEOUT_SECONDS"]) >= constants.MASTER_STARTUP_SECONDS


def test_job_does_not_hold_up_a_first_up_whose_master_waits_for_its_certificate():
    issued = {"mode": "master", "host": "det.example.com", "certificate": {"email": "a@b.io"}}
    cfg = config(tls=issued)
    assert master.waits_for_certificate(cfg)
    assert master_metrics.job(cfg, {})["metadata"]["annotations"][master.SKIP_AWAIT] == "true"
    assert master.SKIP_AWAIT not in master_metrics.job(cfg, {"some": "output"})["metadata"]["annotations"]


def test_scrape_of_the_master_over_http():
    cfg = config()
    monitor = master_metrics.service_monitor(cfg)
    assert monitor["metadata"]["labels"].items() >= layout.SELECTOR_LABELS.items()
    svc = master.service(cfg)
    assert monitor["spec"]["selector"]["matchLabels"].items() <= svc["metadata"]["labels"].items()
    assert monitor["spec"]["namespaceSelector"] == {"matchNames": [cfg.namespace]}
    (endpoint,) = monitor["spec"]["endpoints"]
    assert endpoint["port"] == svc["spec"]["ports"][0]["name"] == "http"
    assert endpoint["path"] == "/debug/prom/metrics"
    assert endpoint["scheme"] == "http" and "tlsConfig" not in endpoint
    assert endpoint["authorization"] == {
        "type": "Bearer",
        "credentials": {"name": master_metrics.TOKEN_SECRET, "key": master_metrics.TOKEN_KEY},
    }
    assert {"action": "replace", "targetLabel": "job", "replacement": layout.MASTER_JOB} in endpoint[
        "relabelings"
    ]


def test_scrape_of_a_master_ending_tls_checks_its_certificate_by_its_host():
    cfg = config(tls=TLS_MASTER)
    (endpoint,) = master_metrics.service_monitor(cfg)["spec"]["endpoints"]
    assert endpoint["port"] == master.service(cfg)["spec"]["ports"][0]["name"] == "https"
    assert endpoint["scheme"] == "https"
    assert endpoint["tlsConfig"] == {
        "ca": {"secret": {"name": master_metrics.TOKEN_SECRET, "key": master_metrics.CA_KEY}},
        "serverName": "det.example.com",
    }
    # The refresher mounts the master's chain, never its key.
    pod = pod_of(master_metrics.cron_job(cfg))
    (tls,) = [v for v in pod["volumes"] if v["name"] == "tls"]
    assert tls["secret"] == {"secretName": "det-tls", "items": [{"key": "tls.crt", "path": "tls.crt"}]}
    env = {e["name"]: e["value"] for e in pod["containers"][0]["env"]}
    assert env["DET_MASTER"].startswith("https://")
    assert env["DET_MASTER_CERT_FILE"] == f"{constants.MASTER_TLS_DIR}/tls.crt"
    assert env["DET_MASTER_CERT_NAME"] == "det.example.com"


def test_the_script_and_the_builders_name_the_same_secret_keys(script):
    assert (script.TOKEN_KEY, script.PREVIOUS_KEY, script.CA_KEY) == (
        master_metrics.TOKEN_KEY,
        master_metrics.PREVIOUS_TOKEN_KEY,
        master_metrics.CA_KEY,
    )


def test_script_uses_only_the_standard_library():
    imported = set(re.findall(r"^(?:import|from) (\w+)", master_metrics.script_text(), re.M))
    assert imported <= {"__future__", "base64", "http", "json", "os", "ssl", "sys", "time", "urllib"}
    assert all(name in sys.stdlib_module_names for name in imported)


# --- the script against a fake master and a fake API server ----------------------------


class FakeMaster:
    """The master's user and session API as api_auth.go / api_user.go answer it (0.26.0 to
    v0.38.1): state in memory, every request recorded."""

    def __init__(self):
        self.users = {
            "admin": {
                "id": 1,
                "username": "admin",
                "password": ADMIN_PASSWORD,
                "admin": True,
                "active": True,
            },
            "determined": {"id": 2, "username": "determined", "password": "", "admin": False, "active": True},
        }
        self.sessions: dict[str, str] = {}  # token -> username
        self.calls: list[tuple[str, str, object]] = []
        self.info_failures = 0
        self.made_meanwhile = False  # another run makes the user right after a lookup misses it
        self.counter = itertools.count(1)

    def user_by_id(self, uid):
        return next((u for u in self.users.values() if u["id"] == uid), None)

    def public(self, user):
        return {k: v for k, v in user.items() if k != "password"}

    def handle(self, method, path, body, auth):
        self.calls.append((method, path, body))
        bearer = auth.removeprefix("Bearer ") if auth and auth.startswith("Bearer ") else None
        who = self.users.get(self.sessions.get(bearer, ""))
        unauthenticated = (
            401,
            {"error": {"code": 16, "reason": "Unauthenticated", "error": "invalid credentials"}},
        )
        if path == "/info" and method == "GET":
            if self.info_failures > 0:
                self.info_failures -= 1
                return 503, {"message": "starting"}
            return 200, {"version": "0.38.1"}
        if path == "/api/v1/auth/login" and method == "POST":
            assert body.get("isHashed") is False
            user = self.users.get(body["username"])
            if user is None or user.get("remote") or user["password"] != body["password"]:
                return unauthenticated
            if not user["active"]:
                return 403, {"error": {"code": 7, "error": "user is not active"}}
            token = f"v2.public.tok-{user['username']}-{next(self.counter)}-a1b2c3d4"
            self.sessions[token] = user["username"]
            return 200, {"token": token, "user": self.public(user)}
        if who is None:
            return unauthenticated
        if path == "/api/v1/auth/logout" and method == "POST":
            del self.sessions[bearer]
            return 200, {}
        m = re.fullmatch(r"/api/v1/users/([^/]+)/by-username", path)
        if m and method == "GET":
            name = urllib.parse.unquote(m[1])
            user = self.users.get(name)
            if user is None:
                if self.made_meanwhile:
                    self.made_meanwhile = False
                    uid = max(u["id"] for u in self.users.values()) + 1
                    self.users[name] = {"id": uid, "username": name, "password": OTHER_PASSWORD}
                    self.users[name] |= {"admin": False, "active": True}
                return 404, {"error": {"code": 5, "error": "user not found"}}
            return 200, {"user": self.public(user)}
        if path == "/api/v1/users" and method == "POST":
            if not who["admin"]:
                return 403, {"error": {"code": 7, "error": "only admin privileged users can create users"}}
            name = body["user"]["username"]
            if name in self.users:
                return 400, {"error": {"code": 3, "error": "user already exists"}}
            uid = max(u["id"] for u in self.users.values()) + 1
            # `active` and `admin` as sent (false when not sent: api_user.go:288-293 at v0.38.1).
            self.users[name] = {
                "id": uid,
                "username": name,
                "password": body["password"],
                "admin": body["user"].get("admin", False),
                "active": body["user"].get("active", False),
            }
            return 200, {"user": self.public(self.users[name])}
        m = re.fullmatch(r"/api/v1/users/(\d+)", path)
        if m and method == "PATCH":
            if not who["admin"]:
                return 403, {"error": {"code": 7, "error": "permission denied"}}
            user = self.user_by_id(int(m[1]))
            for key in ("active", "admin", "remote"):
                if key in body:
                    user[key] = body[key]
            if "password" in body:
                assert body.get("isHashed") is False
                user["password"] = body["password"]
                # A new password ends the user's sessions (postgres_users.go:137-143).
                self.sessions = {t: u for t, u in self.sessions.items() if u != user["username"]}
            return 200, {"user": self.public(user)}
        return 404, {"error": {"code": 5, "error": "not found"}}

    def changes(self):
        return [(m, p) for m, p, _ in self.calls if p != "/info"]


class FakeKube:
    """The API server's Secret endpoints for one service account allowed get and patch of one
    Secret (the Role): merge patches, a null value removes a key."""

    def __init__(self, namespace, name):
        self.path = f"/api/v1/namespaces/{namespace}/secrets/{name}"
        self.secret = {"metadata": {"name": name, "namespace": namespace}, "type": "Opaque"}
        self.exists = True
        self.calls: list[tuple[str, str, object]] = []

    def handle(self, method, path, query, body, auth, content_type):
        self.calls.append((method, path, body))
        if auth != f"Bearer {SA_TOKEN}":
            return 401, {"kind": "Status", "message": "Unauthorized", "code": 401}
        if path != self.path:
            return 403, {"kind": "Status", "message": "secrets is forbidden", "code": 403}
        if not self.exists:
            return 404, {"kind": "Status", "message": "secrets not found", "code": 404}
        if method == "GET":
            return 200, self.secret
        if method == "PATCH":
            assert content_type == "application/merge-patch+json"
            assert query.get("fieldManager") == ["determined-metrics-token"]
            data = self.secret.setdefault("data", {})
            for key, value in body["data"].items():
                if value is None:
                    data.pop(key, None)
                else:
                    base64.b64decode(value, validate=True)
                    data[key] = value
            return 200, self.secret
        return 405, {"kind": "Status", "message": "method not allowed", "code": 405}

    def value(self, key):
        raw = self.secret.get("data", {}).get(key)
        return base64.b64decode(raw).decode() if raw is not None else None


class Cluster:
    """A fake master and a fake API server, with the files the pod would have mounted."""

    def __init__(self, tmp_path, master_tls=None):
        self.cfg = config()
        self.master = FakeMaster()
        self.kube = FakeKube(layout.namespace(self.cfg.namespace), master_metrics.TOKEN_SECRET)
        self.dir = tmp_path
        for name, text in (("user", USER_PASSWORD), ("admin", ADMIN_PASSWORD)):
            (tmp_path / name).write_text(text)
        sa = tmp_path / "sa"
        sa.mkdir()
        (sa / "token").write_text(SA_TOKEN + "\n")
        (sa / "namespace").write_text(self.cfg.namespace)
        self._stack = contextlib.ExitStack()
        self.master_url = self._stack.enter_context(
            serve(lambda m, p, q, b, a, c: self.master.handle(m, p, b, a), master_tls)
        )
        self.kube_url = self._stack.enter_context(serve(self.kube.handle))

    def close(self):
        self._stack.close()

    def env(self, **overrides):
        built = {e["name"]: e["value"] for e in master_metrics.env(self.cfg, 60)}
        env = {
            **built,
            "DET_MASTER": self.master_url,
            "DET_PASSWORD_FILE": str(self.dir / "user"),
            "DET_ADMIN_PASSWORD_FILE": str(self.dir / "admin"),
            "DET_RETRIES": "3",
            "KUBERNETES_API": self.kube_url,
            "KUBERNETES_SA_DIR": str(self.dir / "sa"),
        }
        env.update(overrides)
        return env


@pytest.fixture
def cluster(tmp_path):
    made = Cluster(tmp_path)
    yield made
    made.close()


@pytest.fixture
def script(monkeypatch):
    spec = importlib.util.spec_from_file_location("refresh_token_under_test", master_metrics.SCRIPT_FILE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    now = [0.0]
    module.sleeps = []

    def fake_sleep(seconds):
        module.sleeps.append(seconds)
        now[0] += seconds

    monkeypatch.setattr(module, "sleep", fake_sleep)
    monkeypatch.setattr(module, "clock", lambda: now[0])
    return module


def run(script, cluster, capsys, **overrides):
    code = script.main(cluster.env(**overrides))
    out, err = capsys.readouterr()
    return code, out, err


def assert_nothing_secret(cluster, *texts, tokens=()):
    for text in texts:
        for value in (USER_PASSWORD, ADMIN_PASSWORD, SA_TOKEN, *cluster.master.sessions, *tokens):
            assert value not in text
        assert "v2.public.tok-" not in text


def test_fresh_master_the_user_is_made_and_its_token_stored(script, cluster, capsys):
    code, out, err = run(script, cluster, capsys)
    assert (code, err) == (0, ""), out
    users = cluster.master.users
    assert users["prometheus"]["admin"] is False and users["prometheus"]["active"] is True
    assert users["prometheus"]["password"] == USER_PASSWORD
    (create,) = [b for m, p, b in cluster.master.calls if (m, p) == ("POST", "/api/v1/users")]
    assert create == {
        "user": {"username": "prometheus", "admin": False, "active": True},
        "password": USER_PASSWORD,
        "isHashed": False,
    }
    token = cluster.kube.value("token")
    assert cluster.master.sessions[token] == "prometheus"
    # The admin's session is ended; the metrics user's is the only one left.
    assert set(cluster.master.sessions.values()) == {"prometheus"}
    assert cluster.kube.value("previous-token") is None and cluster.kube.value("ca.crt") is None
    assert "user 'prometheus': created" in out and out.splitlines()[-1] == "done"
    assert_nothing_secret(cluster, out, err)


def test_second_run_only_logs_in_and_the_third_ends_the_first_session(script, cluster, capsys):
    assert run(script, cluster, capsys)[0] == 0
    first = cluster.kube.value("token")
    cluster.master.calls.clear()
    code, out, err = run(script, cluster, capsys)
    assert (code, err) == (0, "")
    second = cluster.kube.value("token")
    assert second != first and cluster.kube.value("previous-token") == first
    assert cluster.master.changes() == [("POST", "/api/v1/auth/login")]
    assert (cluster.master.calls[-1][2] or {}).get("username") == "prometheus"
    # Prometheus may still use the first token until it reloads: it stays valid a run longer.
    assert first in cluster.master.sessions
    code, out, err = run(script, cluster, capsys)
    assert (code, err) == (0, "")
    assert cluster.kube.value("previous-token") == second
    assert first not in cluster.master.sessions
    assert set(cluster.master.sessions) == {second, cluster.kube.value("token")}
    assert_nothing_secret(cluster, out, err, tokens=(first, second))


def test_wrong_admin_password_fails_saying_so_and_prints_nothing_secret(script, cluster, capsys, tmp_path):
    (tmp_path / "admin").write_text("not-the-admin-pw")
    code, out, err = run(script, cluster, capsys)
    assert code == script.EXIT_CREDENTIALS == 3
    assert "refused 'prometheus''s login and the admin 'admin''s too" in err
    assert "prometheus" not in cluster.master.users
    assert "token" not in cluster.kube.secret.get("data", {})
    assert "not-the-admin-pw" not in out + err
    assert_nothing_secret(cluster, out, err)


def test_the_admin_password_is_not_read_when_the_user_logs_in(script, cluster, capsys, tmp_path):
    assert run(script, cluster, capsys)[0] == 0
    (tmp_path / "admin").unlink()
    cluster.master.calls.clear()
    code, _, err = run(script, cluster, capsys)
    assert (code, err) == (0, "")
    logins = [b["username"] for _, p, b in cluster.master.calls if p == "/api/v1/auth/login"]
    assert logins == ["prometheus"]


def test_a_changed_user_password_needs_the_admin_password(script, cluster, capsys, tmp_path):
    assert run(script, cluster, capsys)[0] == 0
    (tmp_path / "user").write_text(OTHER_PASSWORD)  # the stack's password changed
    code, out, err = run(script, cluster, capsys, DET_ADMIN_PASSWORD_FILE="")
    assert code == script.EXIT_CREDENTIALS and "no admin password" in err
    code, out, err = run(script, cluster, capsys)
    assert (code, err) == (0, "")
    assert cluster.master.users["prometheus"]["password"] == OTHER_PASSWORD
    assert OTHER_PASSWORD not in out + err
    assert_nothing_secret(cluster, out, err)


def test_an_existing_user_with_another_password_deactivated_and_admin_is_made_ours(script, cluster, capsys):
    cluster.master.users["prometheus"] = {
        "id": 7,
        "username": "prometheus",
        "password": OTHER_PASSWORD,
        "admin": True,
        "active": False,
    }
    code, out, err = run(script, cluster, capsys)
    assert (code, err) == (0, ""), out
    user = cluster.master.users["prometheus"]
    assert (user["password"], user["active"], user["admin"]) == (USER_PASSWORD, True, False)
    assert not [c for c in cluster.master.calls if c[:2] == ("POST", "/api/v1/users")]
    assert "user 'prometheus': exists (id 7): password set, reactivated, no longer an admin" in out
    assert cluster.master.sessions[cluster.kube.value("token")] == "prometheus"
    assert OTHER_PASSWORD not in out + err
    assert_nothing_secret(cluster, out, err)


def test_a_user_made_by_another_run_meanwhile_is_taken_over(script, cluster, capsys):
    cluster.master.made_meanwhile = True
    code, out, err = run(script, cluster, capsys)
    assert (code, err) == (0, ""), out
    assert cluster.master.users["prometheus"]["password"] == USER_PASSWORD
    assert "user 'prometheus': exists" in out
    assert cluster.master.sessions[cluster.kube.value("token")] == "prometheus"


def test_master_not_up_yet_is_waited_for(script, cluster, capsys):
    cluster.master.info_failures = 4
    code, out, err = run(script, cluster, capsys)
    assert (code, err) == (0, "")
    assert len(script.sleeps) == 4 and sum(script.sleeps) < 60
    assert out.count("waiting for the master") == 4
    assert cluster.master.sessions[cluster.kube.value("token")] == "prometheus"


def test_master_that_never_comes_up_fails_in_time(script, cluster, capsys):
    cluster.master.info_failures = 10**6
    code, _, err = run(script, cluster, capsys, DET_TIMEOUT_SECONDS="20")
    assert code == script.EXIT_MASTER == 2
    assert "did not answer /info in time" in err
    assert sum(script.sleeps) <= 21


def test_a_missing_secret_fails_before_any_session_is_made(script, cluster, capsys):
    cluster.kube.exists = False
    code, _, err = run(script, cluster, capsys)
    assert code == script.EXIT_KUBERNETES == 4
    assert (
        f"Secret {layout.namespace(cluster.cfg.namespace)}/{master_metrics.TOKEN_SECRET} does not exist"
        in err
    )
    assert cluster.master.changes() == [] and cluster.master.sessions == {}


def test_no_right_to_the_secret_is_an_error_of_its_own(script, cluster, capsys):
    code, out, err = run(script, cluster, capsys, DET_STORE_NAME="another")
    assert code == 4 and "may not read it" in err
    assert_nothing_secret(cluster, out, err)


@pytest.mark.parametrize("missing", ["DET_MASTER", "DET_PASSWORD_FILE", "DET_STORE_NAME"])
def test_missing_settings_are_named(script, cluster, capsys, missing):
    code, _, err = run(script, cluster, capsys, **{missing: ""})
    assert code == script.EXIT_SETTINGS == 1 and missing in err
    assert cluster.master.calls == [] and cluster.kube.calls == []


def test_a_missing_certificate_file_is_a_settings_error(script, cluster, capsys, tmp_path):
    code, _, err = run(
        script, cluster, capsys, DET_MASTER="https://127.0.0.1:1", DET_MASTER_CERT_FILE=str(tmp_path / "x")
    )
    assert code == script.EXIT_SETTINGS and "DET_MASTER_CERT_FILE" in err


def test_script_runs_as_the_job_runs_it(cluster):
    _, *flags, _ = pod_of(master_metrics.cron_job(cluster.cfg))["containers"][0]["command"]
    command = [sys.executable, *flags, str(master_metrics.SCRIPT_FILE)]
    for _ in range(2):
        done = subprocess.run(command, env=cluster.env(), capture_output=True, text=True, timeout=60)
        assert (done.returncode, done.stderr) == (0, ""), done.stdout
        assert done.stdout.splitlines()[-1] == "done"
        assert_nothing_secret(cluster, done.stdout, done.stderr)
    assert cluster.master.sessions[cluster.kube.value("token")] == "prometheus"


def test_a_master_ending_tls_is_verified_by_its_host_and_its_chain_stored_for_prometheus(
    script, tmp_path, capsys
):
    if not shutil.which("openssl"):
        pytest.skip("openssl is needed to make the test certificate")
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=det.example.com",
         "-addext", "subjectAltName=DNS:det.example.com", "-keyout", "tls.key", "-out", "tls.crt"],
        cwd=tmp_path, check=True, capture_output=True,
    )  # fmt: skip
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(tmp_path / "tls.crt", tmp_path / "tls.key")
    (tmp_path / "public.pem").write_text("# the public CAs\n")
    tls = Cluster(tmp_path, master_tls=context)
    try:
        assert tls.master_url.startswith("https://")
        env = dict(
            DET_MASTER_CERT_FILE=str(tmp_path / "tls.crt"),
            DET_MASTER_CERT_NAME="det.example.com",
            DET_PUBLIC_CA_FILE=str(tmp_path / "public.pem"),
        )
        code, out, err = run(script, tls, capsys, **env)
        assert (code, err) == (0, ""), out
        chain = (tmp_path / "tls.crt").read_text()
        assert tls.kube.value("ca.crt") == "# the public CAs\n\n" + chain.strip() + "\n"
        assert "with the master's CA bundle" in out
        # Another name than the certificate's: refused, before anything is sent.
        before = len(tls.master.calls)
        code, out, err = run(script, tls, capsys, **{**env, "DET_MASTER_CERT_NAME": "other.example.com"})
        assert code == script.EXIT_TLS == 5 and "does not verify" in err
        assert len(tls.master.calls) == before
        assert_nothing_secret(tls, out, err)
    finally:
        tls.close()
