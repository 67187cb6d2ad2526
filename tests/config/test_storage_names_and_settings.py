"""What S3, GCS, Azure, Gateway API and PostgreSQL take or
refuse of bucket names, container names, a TLS host and database parameter names, and the
key a too-big master configuration is refused at (tests/fixtures/bad-config/storage-and-settings.yaml
runs the same through the CLI)."""

from __future__ import annotations

import json

import pytest
from conftest import EKS, GKE, ROOT, make_config, raw_config
from crds import crd_problems

import stack_args
from components import names
from components.config import ConfigError, load_config
from components.config import tls as tls_config
from components.config.database import SSL_WITHOUT_CERTIFICATE
from components.determined import database as app_database
from components.determined import tls as tls_app
from components.kube import api_rules


def problems(raw) -> list[tuple[str, str]]:
    try:
        load_config(raw)
    except ConfigError as exc:
        return [(p.path, p.message) for p in exc.problems]
    return []


# --- checkpoint storage names -----------------------------------------------------------------


def s3(bucket: str) -> dict:
    return {**raw_config(**EKS), "checkpointStorage": {"type": "s3", "bucket": bucket}}


@pytest.mark.parametrize("prefix", names.S3_RESERVED_PREFIXES)
def test_s3_refuses_its_reserved_prefixes(prefix):
    (found,) = problems(s3(f"{prefix}ckpts"))
    assert found[0] == "checkpointStorage.bucket"
    assert f"has the prefix {prefix!r}" in found[1]


@pytest.mark.parametrize("suffix", names.S3_RESERVED_SUFFIXES)
def test_s3_refuses_its_reserved_suffixes(suffix):
    (found,) = problems(s3(f"ckpts{suffix}"))
    assert found[0] == "checkpointStorage.bucket"
    assert f"has the suffix {suffix!r}" in found[1]


def test_s3_reserves_exactly_what_its_naming_rules_list():
    # https://docs.aws.amazon.com/AmazonS3/latest/userguide/bucketnamingrules.html (read 2026-11)
    assert set(names.S3_RESERVED_PREFIXES) == {"xn--", "sthree-", "amzn-s3-demo-"}
    assert set(names.S3_RESERVED_SUFFIXES) == {"-s3alias", "--ol-s3", ".mrap", "--x-s3", "--table-s3"}


@pytest.mark.parametrize(
    "bucket", ["amzn-s3-ckpts", "ckpts-x-s3", "x-s3.ckpts", "ckpts-mrap", "demo-amzn-s3"]
)
def test_s3_takes_names_merely_near_a_reserved_one(bucket):
    assert problems(s3(bucket)) == []


def gcs(bucket: str) -> dict:
    return {**raw_config(**GKE), "checkpointStorage": {"type": "gcs", "bucket": bucket}}


@pytest.mark.parametrize(
    ("bucket", "takes"),
    [
        ("abc", True),
        ("ab", False),
        ("a" * 63, True),
        ("a" * 64, False),  # no dot: 63 at most
        (".".join(["a" * 30, "b" * 30, "c" * 30, "d" * 8]), True),  # 98 characters with dots
        (".".join(["a" * 63, "b" * 63, "c" * 63, "d" * 30]), True),  # 222
        (".".join(["a" * 63, "b" * 63, "c" * 63, "d" * 31]), False),  # 223
        ("a" * 64 + ".io", False),  # a part over 63
        ("ckpts.example.com", True),
        ("ckpts.", False),
        ("_ckpts.example.com", False),
    ],
)
def test_gcs_bucket_lengths_are_googles(bucket, takes):
    found = problems(gcs(bucket))
    assert (found == []) is takes, found
    assert all(path == "checkpointStorage.bucket" for path, _ in found)


def azure(container: str) -> dict:
    return raw_config(
        checkpointStorage={
            "type": "azure",
            "container": container,
            "connectionString": "DefaultEndpointsProtocol=https;AccountName=det;AccountKey=k",
        }
    )


@pytest.mark.parametrize(
    ("container", "takes"),
    [("c", False), ("ck", False), ("ckp", True), ("c" * 63, True), ("c" * 64, False), ("a-b", True)],
)
def test_azure_container_names_are_3_to_63_characters(container, takes):
    found = problems(azure(container))
    assert (found == []) is takes, found
    assert all(path == "checkpointStorage.container" for path, _ in found)


# --- the TLS host -----------------------------------------------------------------------------------


def test_the_host_pattern_is_gateway_apis_hostname():
    for kind in ("Gateway", "HTTPRoute", "TLSRoute"):
        text = (ROOT / f"tests/data/crd-schemas/gateway.networking.k8s.io_v1_{kind}.json").read_text()
        assert json.dumps(f"^{tls_config.GATEWAY_HOSTNAME.pattern}$") in text, kind
        assert '"maxLength": 253' in text


@pytest.mark.parametrize("mode", ["master", "ingress"])
def test_a_single_label_host_with_a_certificate_of_ones_own_is_taken(mode):
    tls = {"mode": mode, "host": "determined", "certificate": {"source": "secret", "secretName": "det-tls"}}
    cfg = make_config(tls=tls)
    objects = tls_app.objects(stack_args.determined_args(cfg), "eg", None)
    assert objects
    for obj in objects:
        assert crd_problems(obj) == [], obj["kind"]


@pytest.mark.parametrize("host", ["determined", "det"])
def test_a_single_label_host_is_refused_for_lets_encrypt(host):
    tls = {"mode": "master", "host": host, "certificate": {"email": "ops@mail.example.com"}}
    assert problems(raw_config(tls=tls)) == [
        (
            "tls.host",
            "is a single label, not a public domain name: Let's Encrypt issues certificates for public names "
            "only; use a public name, or certificate source secret with a certificate of your own CA",
        )
    ]


@pytest.mark.parametrize("host", ["Determined", "det_master", "-det", "a" * 64])
def test_a_single_label_still_follows_the_hostname_rules(host):
    tls = {"mode": "master", "host": host, "certificate": {"source": "secret", "secretName": "det-tls"}}
    assert [path for path, _ in problems(raw_config(tls=tls))] == ["tls.host"]


# --- database parameter names -------------------------------------------------------------------


def database(parameters: dict) -> dict:
    return raw_config(database={"mode": "inCluster", "parameters": parameters})


def test_a_parameter_name_in_any_case_is_taken_and_rendered_in_lower_case():
    cfg = make_config(**database({"Work_Mem": "64MB", "Max_Connections": "120"}))
    args = app_database.statefulset(cfg)["spec"]["template"]["spec"]["containers"][0]["args"]
    # The default max_connections is replaced, not followed by a second spelling of it.
    assert args == ["-c", "max_connections=120", "-c", "shared_buffers=512MB", "-c", "work_mem=64MB"]


def test_a_custom_setting_in_any_case_is_known_once_its_library_loads():
    raw = database({"Shared_Preload_Libraries": "auto_explain", "Auto_Explain.Log_Min_Duration": "250ms"})
    assert problems(raw) == []


def test_a_setting_given_twice_in_two_cases_is_refused_at_the_second():
    assert problems(database({"work_mem": "64MB", "WORK_MEM": "128MB"})) == [
        (
            "database.parameters.WORK_MEM",
            "'work_mem' is the same setting (names are case-insensitive); give it once",
        )
    ]


@pytest.mark.parametrize("name", ["Port", "LISTEN_ADDRESSES", "Data_Directory"])
def test_a_setting_the_project_owns_is_refused_in_any_case(name):
    (found,) = problems(database({name: "x"}))
    assert found[0] == "database.parameters"
    assert f"{name.lower()} cannot be set here" in found[1]


@pytest.mark.parametrize("value", ["on", "true", "yes", "1", True, "ON"])
def test_ssl_on_is_refused(value):
    assert problems(database({"ssl": value})) == [("database.parameters.ssl", SSL_WITHOUT_CERTIFICATE)]


@pytest.mark.parametrize("value", ["off", "false", False, "0"])
def test_ssl_off_is_taken(value):
    assert problems(database({"SSL": value})) == []


# --- the master's configuration Secret --------------------------------------------------------------


def pools(count: int, description: str | None = None) -> dict:
    raw = raw_config()
    extra = [{"name": f"p{i}", "nodePool": "system", "namespace": f"det-p{i}"} for i in range(count)]
    raw["resourcePools"] = [*raw["resourcePools"], *extra]
    if description:
        raw["resourcePools"][1]["description"] = description
    return raw


def test_too_many_pools_are_refused_at_resource_pools_with_their_number():
    raw = pools(300)
    raw["resourcePools"][1]["description"] = "TensorBoards, notebooks and other CPU tasks, " * 2
    (found,) = problems(raw)
    assert found[0] == "resourcePools"
    assert found[1].startswith("302 resource pools make the master's configuration about ")
    assert f"holds at most {api_rules.MAX_DATA_BYTES} (1 MiB): use fewer pools" in found[1]


def test_a_value_that_alone_overflows_is_still_named_among_many_pools():
    (found,) = problems(pools(100, description="d" * 2**20))
    assert found[0] == "resourcePools[1].description"


def test_a_pool_count_that_fits_is_taken():
    assert problems(pools(100)) == []
