"""Text values, CA bundles, node labels and cloud tags: what Kubernetes, the clouds and the
master refuse is refused at config time (issue 22), each fact with its source in the code
(components/config/syntax.py, components/cloud_limits.py, components/config/cluster.py, master.py)."""

from __future__ import annotations

import base64

import pytest
from conftest import EKS, GKE, ROOT, make_config, raw_config

from components import cloud_limits
from components.config import ConfigError, load_config, syntax
from plan import cloud_check

CA = (ROOT / "tests" / "data" / "test-ca.pem").read_text()
GKE_POOLS = GKE["nodePools"]
EKS_POOLS = EKS["nodePools"]


def problems(**sections) -> list[str]:
    base = {"gke": GKE, "eks": EKS}.get(sections.get("cloud", ""), {})
    with pytest.raises(ConfigError) as info:
        load_config(raw_config(**{**base, **sections}))
    return [str(p) for p in info.value.problems]


def cloud_config(**sections):
    return make_config(**{**{"gke": GKE, "eks": EKS}[sections["cloud"]], **sections})


# --- text -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "named"),
    [
        ("det\n", "a newline at the end"),
        ("a\tb", "a tab at character 2"),
        ("a\0b", "a NUL"),
        ("a\x1b[2J", "an escape"),
        ("a\x7f", "U+007F"),
        ("a\x85", "U+0085"),
        ("abc\u202e", "U+202E RIGHT-TO-LEFT OVERRIDE"),
        ("\u2066x", "U+2066 LEFT-TO-RIGHT ISOLATE"),
        ("x\u2069", "U+2069 POP DIRECTIONAL ISOLATE"),
        ("x\ud800", "a lone surrogate"),
    ],
)
def test_one_line_text_refuses_controls_bidi_and_surrogates(value, named):
    message = syntax.text_problem(value)
    assert message and named in message, message


@pytest.mark.parametrize("value", ["", "det", "Déterminé 训练 ✓", "a b", "אבג", "\u200d"])
def test_ordinary_text_in_any_script_is_accepted(value):
    assert syntax.text_problem(value) is None


def test_multiline_text_takes_newlines_and_tabs_but_not_other_controls():
    assert syntax.text_problem("line 1\r\n\tline 2\n", multiline=True) is None
    assert "a NUL" in syntax.text_problem("line\0", multiline=True)
    assert "U+202E" in syntax.text_problem("line\n\u202e", multiline=True)


def test_a_message_never_repeats_the_value():
    # Passwords and keys go through the same check.
    message = syntax.text_problem("Secret-Value-9\n")
    assert "Secret-Value-9" not in message


@pytest.mark.parametrize(
    ("sections", "line"),
    [
        (
            {"master": {"initialUserPassword": "Abcdefgh1\n"}},
            "determined:master.initialUserPassword: must be one line of text without control characters; "
            "it holds a newline at the end",
        ),
        (
            {"cluster": {"name": "det", "context": "kind-det\n"}},
            "determined:cluster.context: must be one line",
        ),
        (
            {"master": {"proxy": {"httpsProxy": "http://p.example.com:3128", "noProxy": "a.example.com\n"}}},
            "determined:master.proxy.noProxy: must be one line",
        ),
        (
            {"master": {"defaultTaskUser": {"uid": 1, "gid": 1, "user": "det\n", "group": "det"}}},
            "determined:master.defaultTaskUser.user: 'det\\n' is not a Linux user or group name",
        ),
        (
            {"master": {"defaultTaskUser": {"uid": 1, "gid": 1, "user": "det", "group": "a:b"}}},
            "determined:master.defaultTaskUser.group: 'a:b' is not a Linux user or group name",
        ),
        (
            {"master": {"env": {"A": "x\0"}}},
            "determined:master.env.A: must be text (newlines allowed) without control characters",
        ),
        (
            {"master": {"retention": {"schedule": "0 3 * * *\n"}}},
            "determined:master.retention.schedule: '0 3 * * *\\n' is not a cron schedule",
        ),
        (
            {"master": {"webhooks": {"baseUrl": "https://det.example.com\u202e/x"}}},
            "determined:master.webhooks.baseUrl: 'https://det.example.com\\u202e/x' is not an http:// or "
            "https:// URL",
        ),
        (
            {"checkpointStorage": {"type": "s3", "bucket": "ckpt", "accessKey": "AKIA\n", "secretKey": "s"}},
            "determined:checkpointStorage.accessKey: must be one line",
        ),
        (
            {"checkpointStorage": {"type": "s3", "bucket": "ckpt", "prefix": "a\u202eb"}},
            "determined:checkpointStorage.prefix: must be one line",
        ),
        (
            {
                "resourcePools": [
                    {"name": "a100", "nodePool": "a100", "namespace": "det-a100", "description": "A\u202e"},
                    {"name": "aux", "nodePool": "system", "namespace": "det-aux"},
                ]
            },
            "determined:resourcePools[0].description: must be one line of text without control characters; it "
            "holds a bidirectional control (U+202E RIGHT-TO-LEFT OVERRIDE) at the end",
        ),
    ],
)
def test_text_the_readme_says_is_refused_is_refused_at_its_key(sections, line):
    found = problems(**sections)
    assert any(p.startswith(line) for p in found), found


def test_multi_line_values_keep_their_newlines():
    cfg = make_config(master={"env": {"SCRIPT": "a\nb"}, "caBundle": CA})
    assert cfg.master.env["SCRIPT"] == "a\nb"
    assert cfg.master.ca_bundle == CA


# --- CA bundle ------------------------------------------------------------------------------


def _pem(der: bytes, label: str = "CERTIFICATE") -> str:
    text = base64.b64encode(der).decode()
    lines = [text[i : i + 64] for i in range(0, len(text), 64)]
    return f"-----BEGIN {label}-----\n" + "\n".join(lines) + f"\n-----END {label}-----\n"


DER = base64.b64decode("".join(CA.splitlines()[1:-1]))


@pytest.mark.parametrize(
    "value",
    [CA, CA + CA, "# Issuer: CN=Determined test CA\n" + CA, "subject=CN = test\n\n" + CA + "\n"],
    ids=["one", "two", "comment", "openssl text"],
)
def test_real_certificates_are_accepted(value):
    assert syntax.pem_certificates_problem(value) is None


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (_pem(DER[:-10]), "certificate 1 does not parse as an X.509 certificate"),
        (_pem(DER + b"\0\0"), "certificate 1 does not parse as an X.509 certificate"),
        # Two certificates in one block: Go's x509.ParseCertificate (the master) refuses trailing data.
        (_pem(DER + DER), "certificate 1 does not parse as an X.509 certificate"),
        # A well-formed DER SEQUENCE that is not a certificate: SEQUENCE { INTEGER 1 }.
        (_pem(b"\x30\x03\x02\x01\x01"), "certificate 1 does not parse as an X.509 certificate"),
        (CA + _pem(b"not a certificate"), "certificate 2 does not parse as an X.509 certificate"),
        (_pem(DER, "X509 CRL"), "block 1 is a 'X509 CRL' block"),
        (_pem(DER, "TRUSTED CERTIFICATE"), "block 1 is a 'TRUSTED CERTIFICATE' block"),
        ("-----BEGIN CERTIFICATE-----\n!!!\n-----END CERTIFICATE-----\n", "certificate 1 is not base64 text"),
        (CA + "-----BEGIN CERTIFICATE-----\nMIIB\n", "holds a BEGIN or END line without its pair"),
        (
            "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CRL-----\n",
            "begins as 'CERTIFICATE' and ends as 'CRL'",
        ),
        ("just text", "must be CA certificates in PEM form"),
        (CA.replace("\n", "\n\0", 1), "holds a NUL"),
        (CA + _pem(b"Planted-Key-1", "RSA PRIVATE KEY"), "holds a private key"),
    ],
)
def test_what_is_not_an_x509_certificate_is_refused(value, message):
    found = syntax.pem_certificates_problem(value)
    assert found and message in found, found
    assert "Planted-Key-1" not in found


def test_a_ca_bundle_that_is_not_a_certificate_is_refused_at_its_key():
    assert problems(master={"caBundle": _pem(DER[:100])}) == [
        "determined:master.caBundle: certificate 1 does not parse as an X.509 certificate (truncated, or "
        "another kind)"
    ]


# --- node labels ----------------------------------------------------------------------------


def test_the_kubelet_label_rule_is_its_source_s():
    # KUBELET_SOURCE: keys under kubernetes.io/k8s.io are refused but the listed ones and
    # those of the kubelet.kubernetes.io and node.kubernetes.io namespaces.
    assert cloud_limits.kubelet_refuses("node-role.kubernetes.io/gpu")
    assert cloud_limits.kubelet_refuses("k8s.io/team")
    assert cloud_limits.kubelet_refuses("example.k8s.io/team")
    assert not cloud_limits.kubelet_refuses("kubernetes.io/arch")
    assert not cloud_limits.kubelet_refuses("node.kubernetes.io/lifecycle")
    assert not cloud_limits.kubelet_refuses("x.kubelet.kubernetes.io/y")
    assert not cloud_limits.kubelet_refuses("example.com/kubernetes.io")
    assert not cloud_limits.kubelet_refuses("team")
    assert not cloud_limits.kubelet_refuses("notkubernetes.io/x")


@pytest.mark.parametrize(
    ("cloud", "key", "domain"),
    [
        ("gke", "node-role.kubernetes.io/gpu", "kubernetes.io"),
        ("gke", "node.kubernetes.io/lifecycle", "kubernetes.io"),
        ("gke", "k8s.io/team", "k8s.io"),
        ("gke", "cloud.google.com/gke-nodepool", "cloud.google.com"),
        ("gke", "x.cloud.google.com/y", "cloud.google.com"),
        ("eks", "eks.amazonaws.com/nodegroup", "eks.amazonaws.com"),
        ("eks", "kubernetes.io/hostname", "kubernetes.io"),
        ("eks", "k8s.io/team", "k8s.io"),
    ],
)
def test_node_labels_a_cloud_keeps_are_refused_at_their_key(cloud, key, domain):
    pools = GKE_POOLS if cloud == "gke" else EKS_POOLS
    extra = {"cluster": {"name": "det", "region": "us-central1", "project": "p"}} if cloud == "gke" else {}
    labelled = [{**pools[0], "labels": {key: "x", "team": "ml"}}, pools[1]]
    found = problems(cloud=cloud, nodePools=labelled, **extra)
    expected = f"determined:nodePools[0].labels.{key}: {cloud.upper()} refuses node labels under {domain}"
    assert any(p.startswith(expected) for p in found), found
    assert not any("labels.team" in p for p in found)


@pytest.mark.parametrize(
    ("cloud", "key"),
    [("gke", "eks.amazonaws.com/x"), ("eks", "cloud.google.com/x"), ("gke", "k8s.amazonaws.com/x")],
)
def test_another_clouds_domain_is_not_refused(cloud, key):
    assert cloud_limits.node_label_key_problem(key, cloud) is None


def test_an_existing_clusters_pools_may_select_by_kubernetes_labels():
    # Described, not created: their labels are the nodes' own.
    cfg = make_config(
        nodePools=[
            {"name": "system", "nodeSelector": {"kubernetes.io/os": "linux", "pool": "system"}},
            {
                "name": "a100",
                "gpu": {"type": "nvidia-tesla-a100", "count": 4},
                "labels": {"node-role.kubernetes.io/gpu": ""},
            },
        ]
    )
    assert cfg.node_pools[1].labels == {"node-role.kubernetes.io/gpu": ""}


@pytest.mark.parametrize(
    ("kind", "inputs"),
    [
        ("gcp:container/nodePool:NodePool", {"nodeConfig": {"labels": {"cloud.google.com/x": "y"}}}),
        ("aws:eks/nodeGroup:NodeGroup", {"labels": {"eks.amazonaws.com/x": "y"}}),
    ],
)
def test_the_plan_checks_node_labels_with_the_same_rule(kind, inputs):
    found = cloud_check.problems([{"type": kind, "name": "pool", "inputs": inputs}])
    assert any("refuses node labels under" in line for line in found), found


# --- cloud tags -----------------------------------------------------------------------------

GKE_CLUSTER = {"name": "det", "region": "us-central1", "project": "my-project"}
EKS_CLUSTER = {"name": "det", "region": "us-east-1"}


def test_every_bad_google_label_is_its_own_line():
    found = problems(
        cloud="gke",
        nodePools=GKE_POOLS,
        cluster={**GKE_CLUSTER, "tags": {"Team": "ml", "cost": "R&D", "owner": "Ops", "ok": "fine"}},
    )
    assert sorted(p.split(":")[1] for p in found) == [
        "cluster.tags.Team",
        "cluster.tags.cost",
        "cluster.tags.owner",
    ], found


def test_google_label_count_and_syntax_come_from_cloud_limits(monkeypatch):
    tags = {f"l{i}": "x" for i in range(cloud_limits.GCP_MAX_LABELS)}
    cloud_config(cloud="gke", cluster={**GKE_CLUSTER, "tags": tags})
    found = problems(
        cloud="gke", nodePools=GKE_POOLS, cluster={**GKE_CLUSTER, "tags": {**tags, "one": "more"}}
    )
    assert found == [
        "determined:cluster.tags: 65 tags; Google Cloud takes at most 64 labels on a resource (the cluster, "
        "node pools, bucket and database carry these)"
    ]
    # One table: the config reads cloud_limits, which the plan's own check reads too.
    monkeypatch.setattr(cloud_limits, "GCP_MAX_LABELS", 1)
    assert (
        "2 tags"
        in problems(cloud="gke", nodePools=GKE_POOLS, cluster={**GKE_CLUSTER, "tags": {"a": "", "b": ""}})[0]
    )


@pytest.mark.parametrize("key", ["aws:owner", "AWS:owner", "Aws:Owner"])
def test_the_aws_prefix_is_refused_in_any_case(key):
    found = problems(cloud="eks", nodePools=EKS_POOLS, cluster={**EKS_CLUSTER, "tags": {key: "x"}})
    assert found == [
        f"determined:cluster.tags: key '{key}': the 'aws:' prefix (in any case) is AWS's own; AWS refuses tags "
        "that start with it"
    ]


def test_every_bad_aws_tag_is_its_own_line_with_the_limits_of_cloud_limits():
    tags = {
        "aws:a": "x",
        "k" * (cloud_limits.AWS_TAG_KEY_MAX + 1): "x",
        "team": "v" * (cloud_limits.AWS_TAG_VALUE_MAX + 1),
        "ok": "v" * cloud_limits.AWS_TAG_VALUE_MAX,
        "empty": "",
    }
    found = problems(cloud="eks", nodePools=EKS_POOLS, cluster={**EKS_CLUSTER, "tags": tags})
    # An empty value is a tag AWS takes (values are 0-256 characters): attack 22 case 089.
    assert len(found) == 3, found
    assert not any("tags.empty" in line for line in found), found
    assert (
        "determined:cluster.tags.team: AWS tag values take at most 256 characters; this one has 257" in found
    )


def test_more_aws_tags_than_a_resource_takes_are_refused():
    tags = {f"t{i}": "x" for i in range(cloud_limits.AWS_MAX_TAGS + 1)}
    found = problems(cloud="eks", nodePools=EKS_POOLS, cluster={**EKS_CLUSTER, "tags": tags})
    assert found == [
        "determined:cluster.tags: 51 tags; AWS takes at most 50 on a resource (the cluster, node groups, bucket "
        "and database carry these)"
    ]


def test_a_tag_key_a_path_cannot_show_is_named_in_the_message():
    found = problems(cloud="eks", nodePools=EKS_POOLS, cluster={**EKS_CLUSTER, "tags": {"a\nb": "x"}})
    assert len(found) == 1 and found[0].startswith("determined:cluster.tags: key 'a\\nb': "), found
    assert "\n" not in found[0]


# --- GKE network names ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("network", "line"),
    [
        (
            {"name": "Shared", "subnetwork": "s"},
            "determined:cluster.network.name: 'Shared' is not a network name or path",
        ),
        (
            {"name": "n", "subnetwork": "projects/p/regions/us-central1/subnetworks/-x"},
            "determined:cluster.network.subnetwork: 'projects/p/regions/us-central1/subnetworks/-x' is not a "
            "subnetwork name or path",
        ),
        (
            {"name": "n", "subnetwork": "s", "podsRange": "pods_1", "servicesRange": "svc"},
            "determined:cluster.network.podsRange: 'pods_1' is not a Compute Engine name",
        ),
    ],
)
def test_network_names_compute_engine_refuses_are_refused(network, line):
    found = problems(cloud="gke", nodePools=GKE_POOLS, cluster={**GKE_CLUSTER, "network": network})
    assert any(p.startswith(line) for p in found), found


def test_network_names_and_paths_are_accepted():
    network = {
        "name": "projects/host-1/global/networks/shared-vpc",
        "subnetwork": "projects/host-1/regions/us-central1/subnetworks/gke-nodes",
        "podsRange": "gke-pods",
        "servicesRange": "gke-services",
    }
    cfg = cloud_config(cloud="gke", cluster={**GKE_CLUSTER, "network": network})
    assert cfg.cluster.network.pods_range == "gke-pods"
