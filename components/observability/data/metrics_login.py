#!/usr/bin/env python3
"""Keep a Determined token in a Kubernetes Secret for Prometheus to scrape the master with.

Runs inside the cluster as a Kubernetes Job and CronJob (components/observability/
master_metrics.py builds them), with the standard library only. The master serves its
Prometheus endpoints (/debug/prom/metrics, /prom/det-state-metrics; master.yaml
observability.enable_prometheus) only to a logged-in user: every path outside its
unauthenticated list needs a session token (Authorization: Bearer), and a session lasts 7
days (master/internal/user/service.go:51-70, postgres_users.go:23-25 at v0.38.1). So:

1. wait for the master (/info), as bind_workspaces.py does;
2. log in as the metrics user (DET_USER, not an admin). Refused (no such user yet, another
   password, deactivated): log in as the admin, create the user (or, if it exists, give it
   the password, make it active and not an admin), end the admin's session, log in again;
3. read the token Secret (DET_STORE_NAMESPACE/DET_STORE_NAME) through the API server,
   patch it: `token` the new token, `previous-token` the one it replaces (Prometheus may still
   use it until its configuration reloads) and, for a master ending TLS itself, `ca.crt`
   (what Prometheus trusts the master by: the public CAs and the master's chain, what this
   script and Determined's tasks trust);
4. end the session of the token two runs old (it has left the Secret), so the master keeps
   at most a few sessions of this user (it never deletes expired ones).

Nothing secret is printed: passwords, tokens and the service account token are only sent,
and every message is scrubbed of them before it is written.

Environment:
  DET_MASTER              master URL (http or https)
  DET_MASTER_CERT_FILE    optional (https): the master's certificate chain, trusted beside the
                          public CAs (bind_workspaces.py's docstring: as tasks verify it)
  DET_MASTER_CERT_NAME    optional (https): the host name the certificate is checked against
  DET_USER                the metrics user (default "prometheus")
  DET_PASSWORD_FILE       a file holding its password
  DET_ADMIN_USER          an admin (default "admin")
  DET_ADMIN_PASSWORD_FILE a file holding the admin's password; read only when the metrics
                          user's login is refused
  DET_STORE_NAMESPACE    the token Secret's namespace (default: the pod's own)
  DET_STORE_NAME         the token Secret (it must exist: the deployment creates it empty)
  DET_PUBLIC_CA_FILE      optional: the public CA bundle written into ca.crt (default: the
                          one OpenSSL uses, /etc/ssl/certs/ca-certificates.crt on Debian)
  DET_TIMEOUT_SECONDS     how long to wait for the master (default 600)
  DET_RETRIES             attempts per call on HTTP 5xx / connection errors (default 8)
  KUBERNETES_API          optional: the API server's URL (default from KUBERNETES_SERVICE_HOST
                          and _PORT, which the kubelet sets even with enableServiceLinks false:
                          kubernetes/kubernetes pkg/kubelet/kubelet_pods.go, getServiceEnvVarMap)
  KUBERNETES_SA_DIR       optional: the service account's token, ca.crt and namespace
                          (default /var/run/secrets/kubernetes.io/serviceaccount)

Exit codes: 0 done; 1 bad settings (a variable, a file); 2 the master did not answer in time
or failed; 3 refused credentials (the metrics user's, then the admin's); 4 the Kubernetes API
refused or failed (the Secret missing, no right to it); 5 the master's certificate does not
verify.

Master REST API used (proto/src/determined/api/v1/api.proto, user.proto, auth.proto and
master/internal/api_user.go, api_auth.go at tags 0.26.0 and v0.38.1: the same routes and
bodies in both; JSON is protojson, lowerCamelCase):

  GET   /info                           unauthenticated; {"version": ...}
  POST  /api/v1/auth/login              {"username", "password", "isHashed": false} -> {"token",
                                        "user"}; a wrong password, an unknown or (0.38) remote
                                        user: 401 (Unauthenticated "invalid credentials"); an
                                        inactive user: 403 ("user is not active")
                                        (api_auth.go:28-72 at v0.38.1, 42-82 at 0.26.0)
  POST  /api/v1/auth/logout             ends the session of the token sent (api_auth.go:85-103)
  GET   /api/v1/users/{name}/by-username {"user": {"id", "username", "admin", "active",
                                        "remote", ...}}; 404 when there is none
  POST  /api/v1/users                   {"user": {"username", "admin", "active"}, "password",
                                        "isHashed": false}; admins only. `active` is stored as
                                        sent (api_user.go:288-293 at v0.38.1): false unless
                                        sent. A duplicate name: 400 "user already exists".
  PATCH /api/v1/users/{id}              body: the PatchUser message, {"password", "isHashed",
                                        "active", "admin", "remote"}; a new password ends every
                                        session of the user (postgres_users.go:137-143 at
                                        v0.38.1)
"""

from __future__ import annotations

import base64
import http.client
import json
import os
import ssl
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

REQUEST_TIMEOUT_SECONDS = 30
MAX_BACKOFF_SECONDS = 30
SA_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"
# The token Secret's keys (master_metrics.py names the same).
TOKEN_KEY = "token"
PREVIOUS_KEY = "previous-token"
CA_KEY = "ca.crt"
FIELD_MANAGER = "determined-metrics-token"
DEBIAN_CA_BUNDLE = "/etc/ssl/certs/ca-certificates.crt"

EXIT_OK = 0
EXIT_SETTINGS = 1
EXIT_MASTER = 2
EXIT_CREDENTIALS = 3
EXIT_KUBERNETES = 4
EXIT_TLS = 5

# Looked up at call time, so that tests can run the waits on a fake clock.
sleep = time.sleep
clock = time.monotonic

# Every secret this run knows: scrubbed from whatever it writes.
_SECRETS: set[str] = set()


def secret(value: str) -> str:
    """`value`, remembered as something never to print."""
    if value:
        _SECRETS.add(value)
    return value


def scrub(text: str) -> str:
    for value in sorted(_SECRETS, key=len, reverse=True):
        text = text.replace(value, "***")
    return text


def log(message: str) -> None:
    print(scrub(message), flush=True)


class Fatal(Exception):
    """A problem retrying does not fix: the message says what to do, `code` the exit code."""

    def __init__(self, message: str, code: int):
        self.code = code
        super().__init__(message)


class ApiError(Fatal):
    def __init__(self, what: str, method: str, path: str, status: int | None, message: str, code: int):
        self.status = status
        self.message = message
        where = f"HTTP {status}" if status is not None else "no answer"
        super().__init__(f"{what}: {method} {path}: {where}: {message}", code)


def _error_message(raw: bytes) -> str:
    try:
        body = json.loads(raw.decode("utf-8", "replace"))
    except ValueError:
        return raw.decode("utf-8", "replace").strip()[:300] or "(empty answer)"
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
    """What Determined's tasks trust: the public CAs and the certificates of `cert_file`,
    full chains only (bind_workspaces.py: Python 3.13 turns partial chains on, python/cpython
    gh-107361; this turns them off again)."""
    context = ssl.create_default_context()
    context.verify_flags &= ~(ssl.VERIFY_X509_PARTIAL_CHAIN | ssl.VERIFY_X509_STRICT)
    if cert_file:
        try:
            context.load_verify_locations(cafile=cert_file)
        except (OSError, ssl.SSLError) as exc:
            raise Fatal(
                f"DET_MASTER_CERT_FILE {cert_file} holds no usable certificate: {exc}", EXIT_SETTINGS
            ) from None
    return context


def https_opener(context: ssl.SSLContext, cert_name: str | None) -> urllib.request.OpenerDirector:
    """An opener whose certificate check is against `cert_name` rather than the host dialled
    (the master's certificate names its public host, not its Service)."""

    class NamedConnection(http.client.HTTPSConnection):
        def connect(self) -> None:
            http.client.HTTPConnection.connect(self)
            self.sock = context.wrap_socket(self.sock, server_hostname=cert_name or self.host)

    class Handler(urllib.request.HTTPSHandler):
        def https_open(self, req):
            return self.do_open(NamedConnection, req)

    return urllib.request.build_opener(Handler(context=context))


class Http:
    """JSON over HTTP(S) with bounded retries on 5xx, 429 and lost connections. Tokens go
    in headers only; bodies and headers are never printed."""

    def __init__(self, what: str, base_url: str, retries: int, opener, code: int):
        self.what = what  # "the master" / "the Kubernetes API": named in errors
        self.base_url = base_url.rstrip("/")
        self.retries = max(1, retries)
        self._open = opener.open if opener is not None else urllib.request.urlopen
        self.code = code

    def _once(self, method, path, body, query, token, content_type):
        url = self.base_url + path
        if query:
            url += "?" + urllib.parse.urlencode(query)
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(url, data=data, method=method)
        request.add_header("Accept", "application/json")
        if data is not None:
            request.add_header("Content-Type", content_type)
        if token:
            request.add_header("Authorization", "Bearer " + token)
        with self._open(request, timeout=REQUEST_TIMEOUT_SECONDS) as response:
            raw = response.read()
        return json.loads(raw) if raw.strip() else {}

    def call(
        self,
        method: str,
        path: str,
        body=None,
        query=None,
        token: str | None = None,
        retries: int | None = None,
        content_type: str = "application/json",
    ) -> dict:
        attempts = self.retries if retries is None else max(1, retries)
        for attempt in range(1, attempts + 1):
            try:
                return self._once(method, path, body, query, token, content_type)
            except urllib.error.HTTPError as exc:
                status, message = exc.code, _error_message(exc.read() or b"")
                if status < 500 and status != 429:
                    raise ApiError(self.what, method, path, status, message, self.code) from None
            except (urllib.error.URLError, ConnectionError, TimeoutError) as exc:
                reason = getattr(exc, "reason", exc)
                if isinstance(reason, ssl.SSLCertVerificationError):
                    raise Fatal(
                        f"{self.what}: {method} {path}: the certificate does not verify "
                        f"({reason.verify_message}): the master's chain (its Secret's tls.crt) must end "
                        "at a public CA or carry its private root CA, and name the host",
                        EXIT_TLS,
                    ) from None
                status, message = None, f"{type(exc).__name__}: {reason}"[:300]
            except ValueError:
                status, message = None, "the answer is not JSON"
            if attempt == attempts:
                raise ApiError(self.what, method, path, status, message, self.code)
            delay = min(2 ** (attempt - 1), MAX_BACKOFF_SECONDS)
            where = f"HTTP {status}" if status is not None else "no answer"
            retry = f"retry {attempt}/{attempts - 1} in {delay}s"
            log(f"{self.what}: {method} {path}: {where} ({message}); {retry}")
            sleep(delay)
        raise AssertionError("unreachable")


# --- settings ---------------------------------------------------------------------------


def _int_env(env: dict, name: str, default: int) -> int:
    value = env.get(name) or str(default)
    try:
        return int(value)
    except ValueError:
        raise Fatal(f"{name} must be a whole number", EXIT_SETTINGS) from None


def read_file(name: str, path: str) -> str:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError as exc:
        raise Fatal(f"{name} {path} cannot be read: {exc.strerror}", EXIT_SETTINGS) from None


def password_from(env: dict, name: str) -> str | None:
    """The password in the file `env[name]` names (the whole file, as a Secret key holds it)."""
    path = env.get(name)
    if not path:
        return None
    password = secret(read_file(name, path))
    if not password:
        raise Fatal(f"{name} {path} is empty", EXIT_SETTINGS)
    return password


def kubernetes_api(env: dict) -> str:
    if env.get("KUBERNETES_API"):
        return env["KUBERNETES_API"]
    host, port = env.get("KUBERNETES_SERVICE_HOST"), env.get("KUBERNETES_SERVICE_PORT") or "443"
    if not host:
        return "https://kubernetes.default.svc"
    return f"https://[{host}]:{port}" if ":" in host else f"https://{host}:{port}"


def settings(env: dict) -> dict:
    master = env.get("DET_MASTER")
    if not master:
        raise Fatal("DET_MASTER is not set", EXIT_SETTINGS)
    password = password_from(env, "DET_PASSWORD_FILE")
    if password is None:
        raise Fatal("DET_PASSWORD_FILE is not set (the metrics user's password)", EXIT_SETTINGS)
    sa_dir = env.get("KUBERNETES_SA_DIR") or SA_DIR
    namespace = (
        env.get("DET_STORE_NAMESPACE") or read_file("the pod's namespace", f"{sa_dir}/namespace").strip()
    )
    if not env.get("DET_STORE_NAME"):
        raise Fatal("DET_STORE_NAME is not set (the token Secret)", EXIT_SETTINGS)
    return {
        "master": master,
        "cert_file": env.get("DET_MASTER_CERT_FILE") or None,
        "cert_name": env.get("DET_MASTER_CERT_NAME") or None,
        "user": env.get("DET_USER") or "prometheus",
        "password": password,
        "admin": env.get("DET_ADMIN_USER") or "admin",
        # Read only when needed: a CronJob run whose user logs in never opens it.
        "admin_password_file": env.get("DET_ADMIN_PASSWORD_FILE") or None,
        "namespace": namespace,
        "secret": env["DET_STORE_NAME"],
        "public_ca_file": env.get("DET_PUBLIC_CA_FILE") or None,
        "timeout": _int_env(env, "DET_TIMEOUT_SECONDS", 600),
        "retries": _int_env(env, "DET_RETRIES", 8),
        "api": kubernetes_api(env),
        "sa_dir": sa_dir,
    }


# --- the master ---------------------------------------------------------------------------


def master_client(conf: dict) -> Http:
    opener = None
    if conf["master"].startswith("https:"):
        opener = https_opener(tls_context(conf["cert_file"]), conf["cert_name"])
    return Http("the master", conf["master"], conf["retries"], opener, EXIT_MASTER)


def wait_for_master(master: Http, deadline: float) -> dict:
    """/info until it answers, with backoff, until the deadline."""
    attempt = 0
    while True:
        attempt += 1
        try:
            return master.call("GET", "/info", retries=1)
        except ApiError as exc:
            if exc.status is not None and exc.status < 500 and exc.status != 429:
                raise
            left = deadline - clock()
            if left <= 0:
                raise Fatal(
                    f"the master at {master.base_url} did not answer /info in time ({exc.message})",
                    EXIT_MASTER,
                ) from None
            delay = min(2 ** min(attempt - 1, 5), MAX_BACKOFF_SECONDS, max(left, 0.1))
            log(f"waiting for the master ({exc.message}); next try in {delay:g}s")
            sleep(delay)


def login(master: Http, user: str, password: str) -> str:
    body = {"username": user, "password": password, "isHashed": False}
    token = master.call("POST", "/api/v1/auth/login", body).get("token")
    if not token:
        raise Fatal("POST /api/v1/auth/login: the answer has no token", EXIT_MASTER)
    return secret(token)


def logout(master: Http, token: str, whose: str) -> None:
    """Ends a session; a token already expired or ended is no error."""
    try:
        master.call("POST", "/api/v1/auth/logout", token=token, retries=2)
    except ApiError as exc:
        log(f"{whose}: its old session was not ended ({exc.message}); it expires by itself")
    else:
        log(f"{whose}: an old session ended")


def refused(exc: ApiError) -> bool:
    # 401: unknown user or wrong password; 403: the user is not active (api_auth.go).
    return exc.status in (401, 403)


def find_user(master: Http, admin_token: str, name: str) -> dict | None:
    path = f"/api/v1/users/{urllib.parse.quote(name, safe='')}/by-username"
    try:
        return master.call("GET", path, token=admin_token).get("user") or None
    except ApiError as exc:
        if exc.status != 404:
            raise
        return None


def provision(master: Http, conf: dict) -> None:
    """As the admin: the metrics user made to exist, active, not an admin, with its password."""
    if not conf["admin_password_file"]:
        raise Fatal(
            f"the master refused {conf['user']!r}'s login and there is no admin password to set the user up "
            "with (DET_ADMIN_PASSWORD_FILE): run `pulumi up` again",
            EXIT_CREDENTIALS,
        )
    admin_password = password_from(
        {"DET_ADMIN_PASSWORD_FILE": conf["admin_password_file"]}, "DET_ADMIN_PASSWORD_FILE"
    )
    try:
        admin_token = login(master, conf["admin"], admin_password)
    except ApiError as exc:
        if not refused(exc):
            raise
        raise Fatal(
            f"the master refused {conf['user']!r}'s login and the admin {conf['admin']!r}'s too "
            f"({exc.message}): is the admin password Secret the master's current one?",
            EXIT_CREDENTIALS,
        ) from None
    log(f"logged in as the admin {conf['admin']!r}")
    name = conf["user"]
    found = find_user(master, admin_token, name)
    if not found:
        body = {
            "user": {"username": name, "admin": False, "active": True},
            "password": conf["password"],
            "isHashed": False,
        }
        try:
            master.call("POST", "/api/v1/users", body, token=admin_token, retries=1)
        except ApiError as exc:
            # Made meanwhile (another run): 400 "user already exists" (api_user.go:315 at
            # 0.26.0, :352 at v0.38.1); 409 (AlreadyExists) too, should a version answer so.
            found = find_user(master, admin_token, name) if exc.status in (400, 409) else None
            if not found:
                raise
        else:
            log(f"user {name!r}: created")
    if found:
        # Someone else's password, deactivated, made an admin or remote (SSO): made ours again.
        patch = {"password": conf["password"], "isHashed": False, "active": True, "admin": False}
        if found.get("remote"):
            patch["remote"] = False
        master.call("PATCH", f"/api/v1/users/{found['id']}", patch, token=admin_token)
        changes = ["password set"]
        if not found.get("active", True):
            changes.append("reactivated")
        if found.get("admin"):
            changes.append("no longer an admin")
        log(f"user {name!r}: exists (id {found['id']}): {', '.join(changes)}")
    logout(master, admin_token, f"the admin {conf['admin']!r}")


def fresh_token(master: Http, conf: dict) -> str:
    """A new session of the metrics user, setting the user up first if the master refuses it."""
    try:
        token = login(master, conf["user"], conf["password"])
    except ApiError as exc:
        if not refused(exc):
            raise
        log(f"the master refused {conf['user']!r}'s login ({exc.message}): setting the user up as the admin")
        provision(master, conf)
        try:
            token = login(master, conf["user"], conf["password"])
        except ApiError as again:
            if not refused(again):
                raise
            raise Fatal(
                f"the master refused {conf['user']!r}'s login right after setting it up ({again.message})",
                EXIT_CREDENTIALS,
            ) from None
    log(f"logged in as {conf['user']!r}")
    return token


# --- the Kubernetes API -------------------------------------------------------------------


def kubernetes_client(conf: dict) -> tuple[Http, str]:
    """A client of the API server as the pod's service account, and its token."""
    token = secret(read_file("the service account token", f"{conf['sa_dir']}/token").strip())
    opener = None
    if conf["api"].startswith("https:"):
        try:
            context = ssl.create_default_context(cafile=f"{conf['sa_dir']}/ca.crt")
        except (OSError, ssl.SSLError) as exc:
            raise Fatal(f"the service account's ca.crt cannot be used: {exc}", EXIT_SETTINGS) from None
        opener = urllib.request.build_opener(urllib.request.HTTPSHandler(context=context))
    return Http("the Kubernetes API", conf["api"], conf["retries"], opener, EXIT_KUBERNETES), token


def secret_path(conf: dict) -> str:
    ns, name = (urllib.parse.quote(conf[k], safe="") for k in ("namespace", "secret"))
    return f"/api/v1/namespaces/{ns}/secrets/{name}"


def decoded(data: dict, key: str) -> str | None:
    value = (data or {}).get(key)
    if not value:
        return None
    try:
        return secret(base64.b64decode(value).decode())
    except (ValueError, UnicodeDecodeError):
        return None


def read_tokens(kube: Http, sa_token: str, conf: dict) -> tuple[str | None, str | None]:
    """(token, previous-token) the Secret holds now."""
    where = f"Secret {conf['namespace']}/{conf['secret']}"
    try:
        found = kube.call("GET", secret_path(conf), token=sa_token)
    except ApiError as exc:
        if exc.status == 404:
            raise Fatal(f"{where} does not exist (`pulumi up` creates it)", EXIT_KUBERNETES) from None
        if exc.status in (401, 403):
            raise Fatal(
                f"{where}: the service account may not read it ({exc.message})", EXIT_KUBERNETES
            ) from None
        raise
    data = found.get("data") or {}
    return decoded(data, TOKEN_KEY), decoded(data, PREVIOUS_KEY)


def ca_bundle(conf: dict) -> str | None:
    """ca.crt for a master ending TLS: the public CAs and its chain (None: plain HTTP)."""
    if not conf["master"].startswith("https:"):
        return None
    parts = []
    public = conf["public_ca_file"] or ssl.get_default_verify_paths().cafile or DEBIAN_CA_BUNDLE
    if os.path.isfile(public):
        parts.append(read_file("the public CA bundle", public))
    else:
        log(f"no public CA bundle at {public}: ca.crt holds the master's chain only")
    if conf["cert_file"]:
        parts.append(read_file("DET_MASTER_CERT_FILE", conf["cert_file"]))
    return "\n".join(part.strip() + "\n" for part in parts) or None


def store(kube: Http, sa_token: str, conf: dict, token: str, previous: str | None, ca: str | None) -> None:
    """One merge patch of the Secret's data (a key set to null is removed)."""

    def b64(text: str | None):
        return base64.b64encode(text.encode()).decode() if text is not None else None

    data = {TOKEN_KEY: b64(token), PREVIOUS_KEY: b64(previous), CA_KEY: b64(ca)}
    where = f"Secret {conf['namespace']}/{conf['secret']}"
    try:
        kube.call(
            "PATCH",
            secret_path(conf),
            {"data": data},
            query={"fieldManager": FIELD_MANAGER},
            token=sa_token,
            content_type="application/merge-patch+json",
        )
    except ApiError as exc:
        if exc.status in (401, 403, 404):
            raise Fatal(f"{where}: the token could not be stored ({exc.message})", EXIT_KUBERNETES) from None
        raise
    log(f"{where}: token stored" + (" with the master's CA bundle" if ca else ""))


def main(env: dict | None = None) -> int:
    env = dict(os.environ if env is None else env)
    try:
        conf = settings(env)
        deadline = clock() + conf["timeout"]
        master = master_client(conf)
        kube, sa_token = kubernetes_client(conf)
        log(f"refreshing the token of {conf['user']!r} for master {master.base_url}")
        # The Secret first: a missing Secret or right fails before any session is made.
        current, older = read_tokens(kube, sa_token, conf)
        info = wait_for_master(master, deadline)
        log(f"master answers (version {info.get('version', 'unknown')})")
        token = fresh_token(master, conf)
        store(kube, sa_token, conf, token, current, ca_bundle(conf))
        if older and older not in (token, current):
            logout(master, older, f"user {conf['user']!r}")
    except Fatal as exc:
        print(f"error: {scrub(str(exc))}", file=sys.stderr, flush=True)
        return exc.code
    log("done")
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
