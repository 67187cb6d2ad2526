"""Reaching the master (`tls`) over whole planned stacks: the Gateway and its routes per mode,
the load balancer per cloud and exposure, certificates, and the master serving TLS itself."""

from __future__ import annotations

import yaml
from planning import by_kind, of_type, one, plan_for, planned

from components.config import load_config


def releases(result):
    return {r["name"]: r["inputs"] for r in of_type(result, "helm.sh/v3:Release")}


def listeners(result):
    return {item["name"]: item for item in one(result, "Gateway", "determined")["spec"]["listeners"]}


def test_ingress_terminates_tls_at_the_gateway_and_routes_https_to_the_master():
    result = planned("tls-ingress-eks")
    gateway = one(result, "Gateway", "determined")
    assert gateway["spec"]["gatewayClassName"] == "determined"
    https = listeners(result)["https"]
    assert (https["port"], https["protocol"], https["hostname"]) == (443, "HTTPS", "det.example.org")
    assert https["tls"] == {
        "mode": "Terminate",
        "certificateRefs": [{"kind": "Secret", "name": "det-example-org-tls"}],
    }
    route = one(result, "HTTPRoute", "determined-master")
    assert route["spec"]["parentRefs"][0]["sectionName"] == "https"
    assert route["spec"]["rules"][0]["backendRefs"] == [{"name": "determined-master-service", "port": 8080}]
    assert "cert-manager.io/cluster-issuer" not in gateway["metadata"].get("annotations", {})
    assert "cert-manager" not in releases(result)


def test_no_tls_mode_routes_plain_http_to_the_master():
    for stack in ("tls-ingress-eks", "tls-ingress-gke", "tls-existing-class", "tls-master"):
        result = planned(stack)
        for route in by_kind(result, "HTTPRoute"):
            for rule in route["spec"]["rules"]:
                if route["spec"]["parentRefs"][0]["sectionName"] == "http":
                    assert "backendRefs" not in rule, stack
                    assert rule["filters"] == [
                        {"type": "RequestRedirect", "requestRedirect": {"scheme": "https", "statusCode": 301}}
                    ]


def test_cert_manager_issues_through_the_gateway_for_the_configured_email():
    result = planned("tls-master")  # public: HTTP-01 through the Gateway
    acme = one(result, "ClusterIssuer", "determined-letsencrypt")["spec"]["acme"]
    assert acme["email"] == "ops@mail.example.net"
    (solver,) = acme["solvers"]
    (parent,) = solver["http01"]["gatewayHTTPRoute"]["parentRefs"]
    assert (parent["name"], parent["namespace"], parent["sectionName"]) == (
        "determined",
        "determined",
        "http",
    )
    # Internal and fenced: DNS-01 with the configured provider.
    result = planned("tls-ingress-gke")
    acme = one(result, "ClusterIssuer", "determined-letsencrypt")["spec"]["acme"]
    assert acme["email"] == "ops@mail.example.com"
    assert acme["solvers"] == [{"dns01": {"cloudDNS": {"project": "plan-project"}}}]
    gateway = one(result, "Gateway", "determined")
    assert gateway["metadata"]["annotations"]["cert-manager.io/cluster-issuer"] == "determined-letsencrypt"
    values = releases(result)["cert-manager"]["values"]
    assert values["crds"] == {"enabled": True}
    assert values["config"]["gatewayAPI"] == {"enabled": True}
    # cert-manager starts after the Gateway API CRDs (Envoy Gateway's release) exist.
    (cert_release,) = [r for r in of_type(result, "helm.sh/v3:Release") if r["name"] == "cert-manager"]
    (gateway_release,) = [r for r in of_type(result, "helm.sh/v3:Release") if r["name"] == "envoy-gateway"]
    assert gateway_release["urn"] in cert_release["dependsOn"]


def test_the_load_balancer_is_fenced_and_internal_where_asked_per_cloud():
    gke = one(planned("tls-ingress-gke"), "EnvoyProxy", "determined")["spec"]["provider"]["kubernetes"][
        "envoyService"
    ]
    assert gke["loadBalancerSourceRanges"] == ["10.0.0.0/8"]
    assert gke["annotations"] == {"networking.gke.io/load-balancer-type": "Internal"}
    eks = one(planned("tls-ingress-eks"), "EnvoyProxy", "determined")["spec"]["provider"]["kubernetes"][
        "envoyService"
    ]
    assert eks["loadBalancerSourceRanges"] == ["203.0.113.0/24", "198.51.100.0/24"]
    assert eks["annotations"] == {"service.beta.kubernetes.io/aws-load-balancer-type": "nlb"}
    assert eks["type"] == "LoadBalancer"


def test_a_clusters_own_gateway_class_is_used_and_nothing_is_installed_for_the_edge():
    result = planned("tls-existing-class")
    assert one(result, "Gateway", "determined")["spec"]["gatewayClassName"] == "corp-gateway"
    assert "envoy-gateway" not in releases(result)
    assert not by_kind(result, "GatewayClass") and not by_kind(result, "EnvoyProxy")


def test_with_tls_off_the_master_stays_inside_the_cluster():
    result = planned("local")
    assert not by_kind(result, "Gateway") and not releases(result)
    assert one(result, "Service", "determined-master-service")["spec"]["type"] == "ClusterIP"


def test_tls_in_the_master_serves_https_from_the_mounted_certificate():
    result = planned("tls-master")
    config = yaml.safe_load(result.master_yaml)
    assert config["security"]["tls"] == {
        "cert": "/etc/determined-tls/tls.crt",
        "key": "/etc/determined-tls/tls.key",
    }
    pod = one(result, "Deployment", "determined-master")["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert container["ports"] == [{"name": "https", "containerPort": 8081}]
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        assert container[probe]["httpGet"]["scheme"] == "HTTPS"
    volume = next(v for v in pod["volumes"] if v["name"] == "tls")
    assert volume["secret"]["secretName"] == "determined-tls"
    tls = listeners(result)["tls"]
    assert (tls["protocol"], tls["tls"]) == ("TLS", {"mode": "Passthrough"})
    route = one(result, "TLSRoute", "determined-master")
    assert route["spec"]["rules"][0]["backendRefs"] == [{"name": "determined-master-service", "port": 8080}]
    certificate = one(result, "Certificate", "determined-master")
    assert certificate["spec"]["dnsNames"] == ["det.example.net"]  # the name tasks verify against
    assert certificate["spec"]["secretName"] == "determined-tls"
    service = one(result, "Service", "determined-master-service")
    assert service["spec"]["ports"][0]["targetPort"] == "https"
    # The workspace Job reaches the master by its Service and checks the certificate by host.
    (job,) = [
        j for j in by_kind(result, "Job") if j["metadata"]["name"].startswith("determined-bind-workspaces")
    ]
    env = {e["name"]: e.get("value") for e in job["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert env["DET_MASTER"].startswith("https://determined-master-service.")
    assert env["DET_MASTER_CERT_NAME"] == "det.example.net"


def test_gateway_settings_for_a_clusters_own_class_are_refused_where_they_cannot_apply():
    raw = yaml.safe_load(open("tests/fixtures/stacks/Pulumi.tls-existing-class.yaml"))["config"]  # noqa: SIM115
    raw = {key.split(":", 1)[1]: value for key, value in raw.items()}
    raw["tls"] = {**raw["tls"], "sourceRanges": ["10.0.0.0/8"], "exposure": "internal"}
    try:
        load_config(raw)
    except Exception as exc:  # ConfigError
        lines = [str(p) for p in exc.problems]
    assert [line.split(":")[1] for line in lines] == [
        "tls.certificate.dns01",
        "tls.sourceRanges",
        "tls.exposure",
    ]


def test_http_01_is_refused_where_lets_encrypt_cannot_reach_the_host():
    raw = yaml.safe_load(open("tests/fixtures/stacks/Pulumi.tls-ingress-gke.yaml"))["config"]  # noqa: SIM115
    raw = {key.split(":", 1)[1]: value for key, value in raw.items()}
    certificate = {"source": "certManager", "email": "ops@mail.example.com"}
    for tls, reason in (
        ({"exposure": "internal", "sourceRanges": []}, "required with exposure internal"),
        ({"exposure": "public"}, "required with sourceRanges"),
    ):
        try:
            load_config({**raw, "tls": {**raw["tls"], "certificate": certificate, **tls}})
        except Exception as exc:  # ConfigError
            (line,) = [str(p) for p in exc.problems]
        assert line.startswith(f"determined:tls.certificate.dns01: {reason}")
    bad = {**certificate, "dns01": {"route53": {}, "cloudflare": {}}}
    try:
        load_config({**raw, "tls": {**raw["tls"], "certificate": bad}})
    except Exception as exc:  # ConfigError
        (line,) = [str(p) for p in exc.problems]
    assert line.startswith("determined:tls.certificate.dns01: exactly one DNS provider")


def test_tasks_reach_a_tls_master_by_its_service_in_the_keys_each_version_reads():
    raw = yaml.safe_load(open("tests/fixtures/stacks/Pulumi.tls-master.yaml"))["config"]  # noqa: SIM115
    raw = {key.split(":", 1)[1]: value for key, value in raw.items()}
    service = "determined-master-service.determined.svc.cluster.local"
    for version, expected in (
        (
            "0.38.1",
            {
                "determined_master_host": service,
                "determined_master_port": 8080,
                "determined_master_scheme": "https",
            },
        ),
        (
            "0.36.0",
            {
                "determined_master_ip": service,
                "determined_master_port": 8080,
                "determined_master_scheme": "https",
            },
        ),
        ("0.30.0", {"determined_master_ip": service, "determined_master_port": 8080}),
        ("0.29.0", {}),
    ):
        # plan_for checks master.yaml against the master's key set of that version too.
        result = plan_for({**raw, "master": {"version": version}})
        manager = yaml.safe_load(result.master_yaml)["resource_manager"]
        assert {k: v for k, v in manager.items() if k.startswith("determined_master")} == expected, version


def test_a_master_that_ends_tls_with_an_issued_certificate_and_its_edge_wait_for_each_other_not():
    result = planned("tls-master")
    certificate = next(r for r in of_type(result, "cert-manager.io/v1:Certificate"))
    deployment = next(r for r in of_type(result, "apps/v1:Deployment"))
    # Its pod waits for the certificate's Secret by itself; `up` does not wait for the pod.
    assert certificate["urn"] not in deployment["dependsOn"]
    service = next(
        r for r in of_type(result, "core/v1:Service") if r["name"].endswith("determined-master-service")
    )
    for edge in [*of_type(result, "gateway.networking.k8s.io/v1:Gateway"), certificate]:
        assert service["urn"] not in edge["dependsOn"]
    # The first `up` ends before the certificate exists (DNS comes after): nothing waits on it.
    annotations = one(result, "Deployment", "determined-master")["metadata"]["annotations"]
    assert {k: v for k, v in annotations.items() if not k.startswith("checkov.io/")} == {
        "pulumi.com/skipAwait": "true",
        # A renewed certificate restarts it (components/addons/reloader.py).
        "secret.reloader.stakater.com/reload": "determined-tls",
    }
    (job,) = [j for j in by_kind(result, "Job") if "bind-workspaces" in j["metadata"]["name"]]
    assert job["metadata"]["annotations"]["pulumi.com/skipAwait"] == "true"
    assert job["metadata"]["annotations"]["pulumi.com/replaceUnready"] == "true"
    # Ingress mode: the master needs no certificate and is awaited as usual.
    ingress_master = one(planned("tls-ingress-eks"), "Deployment", "determined-master")["metadata"]
    assert "pulumi.com/skipAwait" not in (ingress_master.get("annotations") or {})
