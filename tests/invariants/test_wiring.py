"""How the objects of every stack (stacks/ and fixtures) fit together: Services reach pods,
the master reaches its database and its config, tasks reach the master, and the exports
point at what was deployed."""

from __future__ import annotations

import shlex

import pytest
import stack_plans
import yaml
from stack_plans import containers, labels_match, master_workload, mounted_files, secret_keys, workloads

from components.observability import grafana
from plan.redaction import unwrap

# Where the master reads its configuration (master/cmd/determined-master: defaultConfigPath).
MASTER_CONFIG_PATH = "/etc/determined/master.yaml"


@pytest.fixture(scope="module", params=stack_plans.NAMES)
def stack(request):
    return stack_plans.plan(request.param)


def selected_pods(stack, service):
    ns = service["metadata"]["namespace"]
    return [
        (obj, template)
        for obj, template in workloads(stack)
        if obj["metadata"].get("namespace") == ns
        and labels_match(service["spec"].get("selector") or {}, template["metadata"].get("labels") or {})
    ]


def targets(template, port):
    """Whether a Service port's targetPort (a name or a number; default: the port) is a
    container port of the pod."""
    target = port.get("targetPort", port["port"])
    ports = [p for c in containers(template) for p in c.get("ports", [])]
    if isinstance(target, str):
        return any(p.get("name") == target for p in ports)
    return any(p["containerPort"] == target for p in ports)


def env_of(container):
    return {e["name"]: e for e in container.get("env", [])}


# --- Services and workloads ---------------------------------------------------------------------


def test_every_service_selects_pods_and_targets_their_ports(stack):
    for svc in stack.manifests("Service"):
        name = f"{stack.name}: Service {svc['metadata']['name']}"
        pods = selected_pods(stack, svc)
        assert pods, f"{name} selects no pods of any workload in its namespace"
        for port in svc["spec"]["ports"]:
            for obj, template in pods:
                assert targets(template, port), (
                    f"{name} port {port.get('name', port['port'])} targets {port.get('targetPort')!r}, "
                    f"not a container port of {obj['kind']} {obj['metadata']['name']}"
                )


def test_workload_templates_carry_their_selectors_labels(stack):
    for obj, template in workloads(stack):
        selector = obj["spec"].get("selector")
        if selector is None:
            continue
        assert labels_match(selector, template["metadata"].get("labels") or {}), (
            f"{stack.name}: {obj['kind']} {obj['metadata']['name']}: template labels do not match its selector"
        )


def test_statefulsets_name_their_governing_service(stack):
    for sts in stack.manifests("StatefulSet"):
        stack.one("Service", sts["spec"]["serviceName"], sts["metadata"]["namespace"])


def test_every_secret_key_reference_names_an_existing_key(stack):
    for obj, template in workloads(stack):
        ns = obj["metadata"]["namespace"]
        for container in containers(template):
            refs = [
                e["valueFrom"]["secretKeyRef"]
                for e in container.get("env", [])
                if "secretKeyRef" in e.get("valueFrom", {})
            ]
            for ref in refs:
                if ref.get("optional"):
                    continue
                secret = stack.one("Secret", ref["name"], ns)
                assert ref["key"] in secret_keys(secret), (
                    f"{stack.name}: {obj['metadata']['name']}/{container['name']} reads key {ref['key']!r} "
                    f"that Secret {ref['name']} does not have ({sorted(secret_keys(secret))})"
                )
            for source in container.get("envFrom", []):
                if "secretRef" in source and not source["secretRef"].get("optional"):
                    stack.one("Secret", source["secretRef"]["name"], ns)


# --- the master and its database -------------------------------------------------------------------


def database_config(stack):
    """The database section as configured, with the contract's defaults."""
    db = dict(stack.raw.get("database") or {})
    db.setdefault("mode", "inCluster")
    return db


def test_master_connects_to_the_database_that_is_deployed(stack):
    db = stack.master["db"]
    master_ns = master_namespace(stack)
    configured = database_config(stack)
    if configured["mode"] == "external":
        # db.port: a string in the master's struct; an int is cast (see master_yaml_schema).
        assert (db["host"], str(db["port"]), db["user"], db["name"]) == (
            configured["host"],
            str(configured.get("port", 5432)),
            configured["user"],
            configured.get("name", "determined"),
        )
        assert db.get("ssl_mode") == configured.get("sslMode")
        assert ("ssl_root_cert" in db) == bool(configured.get("sslRootCert"))
        assert not any("postgres" in c.get("image", "") for _, t in servers(stack) for c in containers(t))
        return
    if configured["mode"] == "managed" and stack.raw["cloud"] == "gke":
        instance, database, user = cloud_sql(stack)
        address = stack.result.recorder.outputs[(instance.type, instance.name)]["privateIpAddress"]
        assert db["host"] == address, f"{stack.name}: db.host is not the Cloud SQL instance's private IP"
        assert (database.inputs["name"], user.inputs["name"]) == (db["name"], db["user"])
        assert database.inputs["instance"] == user.inputs["instance"] == instance.inputs["name"]
        # The instance accepts TLS only, and the master insists on it.
        assert instance.inputs["settings"]["ipConfiguration"]["sslMode"] == "ENCRYPTED_ONLY"
        assert (str(db["port"]), db["ssl_mode"]) == ("5432", "require")
        assert not any("postgres" in c.get("image", "") for _, t in servers(stack) for c in containers(t))
        return
    if configured["mode"] == "managed":  # eks: RDS
        (instance,) = stack.registrations("rds/instance:Instance")
        address = stack.result.recorder.outputs[(instance.type, instance.name)]["address"]
        assert db["host"] == address, f"{stack.name}: db.host is not the RDS instance's address"
        inputs = instance.inputs
        assert (inputs["dbName"], inputs["username"], str(inputs["port"])) == (
            db["name"],
            db["user"],
            db["port"],
        )
        # The parameter group forces TLS, and the master insists on it.
        (group,) = stack.registrations("rds/parameterGroup:ParameterGroup")
        assert inputs["parameterGroupName"] == group.inputs["name"]
        assert {"name": "rds.force_ssl", "value": "1"} in group.inputs["parameters"]
        assert db["ssl_mode"] == "require"
        assert not any("postgres" in c.get("image", "") for _, t in servers(stack) for c in containers(t))
        return

    # In the cluster: the host is the database Service (short name: the master's namespace).
    name, _, rest = db["host"].partition(".")
    ns, _, suffix = rest.partition(".")
    assert suffix in ("", "svc", "svc.cluster.local"), db["host"]
    svc = stack.one("Service", name, ns or master_ns)
    ports = [p for p in svc["spec"]["ports"] if str(p["port"]) == str(db["port"])]
    assert ports, f"{stack.name}: Service {name} does not expose db.port {db['port']}"
    pods = selected_pods(stack, svc)
    assert pods, f"{stack.name}: Service {name} selects no database pods"
    for _, template in pods:
        assert targets(template, ports[0])
        (postgres,) = [
            c
            for c in template["spec"]["containers"]
            if any(targets({"spec": {"containers": [c]}}, p) for p in ports)
        ]
        env = env_of(postgres)
        assert env["POSTGRES_USER"].get("value") == db["user"], f"{stack.name}: POSTGRES_USER is not db.user"
        # The image creates POSTGRES_DB (default: the user's name) on first start.
        created = env.get("POSTGRES_DB", env["POSTGRES_USER"]).get("value")
        assert created == db["name"], f"{stack.name}: the database created is not db.name"
        assert password_source(template, postgres), (
            f"{stack.name}: the database's password is not from a Secret"
        )


def password_source(template, container):
    """(Secret name, key) the official image takes its password from: POSTGRES_PASSWORD from a
    Secret's key, or POSTGRES_PASSWORD_FILE naming a file of a mounted Secret; else None."""
    env = env_of(container)
    if "POSTGRES_PASSWORD" in env:
        ref = env["POSTGRES_PASSWORD"].get("valueFrom", {}).get("secretKeyRef")
        return (ref["name"], ref["key"]) if ref else None
    path = env.get("POSTGRES_PASSWORD_FILE", {}).get("value")
    if not path:
        return None
    directory, _, file_name = path.rpartition("/")
    volumes = {v["name"]: v for v in template["spec"].get("volumes", [])}
    for mount in container.get("volumeMounts", []):
        source = volumes[mount["name"]].get("secret")
        if mount["mountPath"] == directory and source:
            paths = {item["path"]: item["key"] for item in source.get("items", [])}
            return source["secretName"], paths.get(file_name, file_name) if paths else file_name
    return None


def servers(stack):
    """Workloads that serve (not the Jobs that dump the database with a PostgreSQL client)."""
    return [(obj, t) for obj, t in workloads(stack) if obj["kind"] not in ("Job", "CronJob")]


def cloud_sql(stack):
    """The Cloud SQL instance, database and user the stack creates (one of each)."""
    (instance,) = stack.registrations("sql/databaseInstance:DatabaseInstance")
    (database,) = stack.registrations("sql/database:Database")
    (user,) = stack.registrations("sql/user:User")
    return instance, database, user


def test_master_logs_in_with_the_password_the_database_was_initialised_with(stack):
    if database_config(stack)["mode"] == "external":
        return
    # Compared on the unredacted registrations; values are never printed.
    master_yaml = unwrap(master_config_registration(stack).inputs["stringData"])["master.yaml"]
    db_password = yaml.safe_load(master_yaml)["db"]["password"]
    if database_config(stack)["mode"] == "managed":
        if stack.raw["cloud"] == "gke":
            _, _, user = cloud_sql(stack)
            password = user.inputs["password"]
        else:
            (instance,) = stack.registrations("rds/instance:Instance")
            password = instance.inputs["password"]
        assert unwrap(password) == db_password, (
            f"{stack.name}: master.yaml's db.password is not the database's"
        )
        return
    (name, key), *_ = [
        source
        for obj, t in servers(stack)
        for c in containers(t)
        if (source := password_source(t, c)) is not None
    ]
    (secret,) = [r for r in stack.registrations("core/v1:Secret") if r.inputs["metadata"]["name"] == name]
    assert unwrap(secret.inputs["stringData"])[key] == db_password, (
        f"{stack.name}: master.yaml's db.password is not the database Secret's {key}"
    )


def master_namespace(stack):
    obj, _, _ = master_workload(stack)
    return obj["metadata"]["namespace"]


def master_config_registration(stack):
    obj, template, container = master_workload(stack)
    _, name, _ = mounted_files(stack, obj["metadata"]["namespace"], template, container)[MASTER_CONFIG_PATH]
    (reg,) = [
        r
        for r in stack.registrations("core/v1:Secret")
        if r.inputs["metadata"]["name"] == name
        and r.inputs["metadata"]["namespace"] == obj["metadata"]["namespace"]
    ]
    return reg


def test_master_reads_its_config_from_the_config_secret(stack):
    obj, template, container = master_workload(stack)
    ns = obj["metadata"]["namespace"]
    args = [*container.get("command", []), *container.get("args", [])]
    assert not any(a.startswith("--config-file") for a in args), (
        "the master reads /etc/determined/master.yaml"
    )
    files = mounted_files(stack, ns, template, container)
    assert MASTER_CONFIG_PATH in files, f"{stack.name}: nothing mounts {MASTER_CONFIG_PATH}"
    kind, name, key = files[MASTER_CONFIG_PATH]
    assert (kind, key) == ("Secret", "master.yaml"), f"{stack.name}: master.yaml comes from {kind} {name}"
    # Every other file master.yaml names is mounted too.
    for path in (
        stack.master["db"].get("ssl_root_cert"),
        stack.master.get("security", {}).get("tls", {}).get("cert"),
        stack.master.get("security", {}).get("tls", {}).get("key"),
    ):
        if path:
            assert path in files, f"{stack.name}: master.yaml names {path}, which no volume provides"


def test_master_listens_where_its_service_and_tasks_expect(stack):
    obj, _, container = master_workload(stack)
    port = stack.master["port"]
    assert any(p["containerPort"] == port for p in container.get("ports", [])), (
        f"{stack.name}: master.yaml port {port} is not a container port of the master"
    )
    rm = stack.master["resource_manager"]
    # The master looks its Service up in its namespace and hands tasks the Service's *first*
    # port (kubernetesrm: getMasterHostAndPort).
    assert service_namespace(stack) == obj["metadata"]["namespace"]
    svc = stack.one("Service", rm["master_service_name"], service_namespace(stack))
    assert any(o is obj for o, _ in selected_pods(stack, svc)), (
        "master_service_name does not select the master"
    )
    first = svc["spec"]["ports"][0]
    target = first.get("targetPort", first["port"])
    named = {p.get("name"): p["containerPort"] for p in container["ports"]}
    assert (named.get(target) if isinstance(target, str) else target) == port, (
        f"{stack.name}: the master Service's first port does not reach master.yaml port {port}"
    )


# --- exports ---------------------------------------------------------------------------------------


def service_namespace(stack) -> str:
    """Where the master looks its own Service up: the namespace DET_RELEASE_NAMESPACE names
    (0.35+; from the downward API, its pod's own), else the resource manager's
    (getInitialNamespace, kubernetesrm/jobs.go:2533-2539 at v0.38.1; jobs.go:370 at 0.34.0)."""
    obj, _, container = master_workload(stack)
    env = {e["name"]: e for e in container.get("env", [])}
    release = env.get("DET_RELEASE_NAMESPACE")
    if release is not None:
        assert release["valueFrom"]["fieldRef"]["fieldPath"] == "metadata.namespace"
        return obj["metadata"]["namespace"]
    rm = stack.master["resource_manager"]
    return rm.get("default_namespace", rm.get("namespace"))


def master_service(stack):
    return stack.one(
        "Service", stack.master["resource_manager"]["master_service_name"], service_namespace(stack)
    )


def test_master_url_is_the_master_service_or_its_https_host(stack):
    svc = master_service(stack)
    meta = svc["metadata"]
    tls = stack.raw.get("tls") or {}
    if tls.get("mode", "none") != "none":
        # Exposed: the URL is the host, and a route of the Gateway leads to this Service.
        assert stack.result.outputs["masterUrl"] == f"https://{tls['host']}"
        # Grafana's route (observability: components/observability/grafana.py) is its own.
        routes = [
            m
            for m in stack.result.manifests
            if m["kind"] in ("HTTPRoute", "TLSRoute") and m["metadata"]["name"] != grafana.ROUTE
        ]
        backends = [
            (b["name"], b["port"])
            for r in routes
            for rule in r["spec"]["rules"]
            for b in rule.get("backendRefs", [])
        ]
        assert backends == [(meta["name"], svc["spec"]["ports"][0]["port"])]
        return
    expected = (
        f"http://{meta['name']}.{meta['namespace']}.svc.cluster.local:{svc['spec']['ports'][0]['port']}"
    )
    assert stack.result.outputs["masterUrl"] == expected


def test_port_forward_names_the_master_service(stack):
    svc = master_service(stack)
    words = shlex.split(stack.result.outputs["portForward"])
    assert words[:2] == ["kubectl", "-n"] or "-n" in words
    assert words[words.index("-n") + 1] == svc["metadata"]["namespace"]
    assert "port-forward" in words
    assert f"svc/{svc['metadata']['name']}" in words
    (mapping,) = [w for w in words if ":" in w]
    local, remote = mapping.split(":")
    assert local.isdigit()
    assert int(remote) in [p["port"] for p in svc["spec"]["ports"]]
    assert int(remote) == svc["spec"]["ports"][0]["port"]
    assert stack.result.outputs["namespace"] == svc["metadata"]["namespace"]
