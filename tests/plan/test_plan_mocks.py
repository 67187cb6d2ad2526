"""The mocks answer as the providers do: per type, what the provider computes, and in a
first preview only what is known before anything exists."""

from __future__ import annotations

import importlib
import re

import pulumi
import pytest
from conftest import pulumi_config, raw_config
from planning import plan_for, resource
from pulumi.runtime import MockCallArgs, MockResourceArgs

from plan import mocks, runner
from plan.errors import PlanFailure
from plan.mocks import INVOKES, RESOURCES, PlanMocks, Recorder, UnmodelledError
from plan.redaction import SECRET, UNKNOWN, is_secret

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

PASSWORD_RULE = re.compile(r"^(?=.*[A-Z])(?=.*[a-z])(?=.*[0-9]).{8,}$")


def new(typ: str, name: str, inputs: dict, preview: bool = False, custom=True, resource_id=None):
    recorder = Recorder()
    answer = PlanMocks(recorder, preview=preview).new_resource(
        MockResourceArgs(typ, name, inputs, custom=custom, resource_id=resource_id)
    )
    return answer, recorder


# --- resource types ------------------------------------------------------------------------


def test_random_password_result_is_generated_and_recorded():
    (ident, outputs), recorder = new(
        "random:index/randomPassword:RandomPassword", "db-password", {"length": 24, "special": False}
    )
    assert ident == "none"
    assert outputs["length"] == 24 and outputs["special"] is False
    assert len(outputs["result"]) == 24 and PASSWORD_RULE.match(outputs["result"])
    assert outputs["bcryptHash"].startswith("$2a$10$") and len(outputs["bcryptHash"]) == 60
    assert recorder.generated_secrets == {outputs["result"], outputs["bcryptHash"]}


def test_generated_passwords_differ_per_resource_and_repeat_per_run():
    first = new("random:index/randomPassword:RandomPassword", "a", {"length": 24})[0][1]["result"]
    again = new("random:index/randomPassword:RandomPassword", "a", {"length": 24})[0][1]["result"]
    other = new("random:index/randomPassword:RandomPassword", "b", {"length": 24})[0][1]["result"]
    assert first == again != other


def test_kubernetes_objects_get_what_the_api_server_sets():
    inputs = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "det"}}
    (ident, outputs), _ = new("kubernetes:core/v1:Namespace", "det", inputs)
    assert ident == "det"
    assert outputs["metadata"]["name"] == "det"
    assert set(outputs["metadata"]) >= {"uid", "resourceVersion", "creationTimestamp", "generation"}
    assert outputs["status"] == {"phase": "Active"}


@pytest.mark.parametrize("typ", ["aws:s3/bucket:Bucket", "aws:s3/bucketV2:BucketV2"])
def test_an_s3_buckets_id_is_its_name(typ):
    # As the AWS provider answers: the bucket's policy, ownership and encryption resources
    # take `bucket=bucket.id` and must name the bucket, not a made-up ID.
    (ident, _), _ = new(typ, "checkpoints", {"bucket": "team-checkpoints"})
    assert ident == "team-checkpoints"


def test_a_cluster_ip_service_gets_an_address_and_keeps_its_ports():
    spec = {"type": "ClusterIP", "ports": [{"name": "http", "port": 8080}]}
    inputs = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "m", "namespace": "det"},
        "spec": spec,
    }
    (ident, outputs), _ = new("kubernetes:core/v1:Service", "det/m", inputs)
    assert ident == "det/m"
    assert re.match(r"^10\.96\.\d+\.\d+$", outputs["spec"]["clusterIP"])
    assert outputs["spec"]["clusterIPs"] == [outputs["spec"]["clusterIP"]]
    assert outputs["spec"]["ports"] == spec["ports"]
    assert outputs["status"] == {"loadBalancer": {}}


def test_a_load_balancer_gets_an_ingress_address_and_node_ports():
    spec = {"type": "LoadBalancer", "ports": [{"name": "http", "port": 443}]}
    inputs = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "m"}, "spec": spec}
    (_, outputs), _ = new("kubernetes:core/v1:Service", "m", inputs)
    (ingress,) = outputs["status"]["loadBalancer"]["ingress"]
    assert re.match(r"^\d+\.\d+\.\d+\.\d+$", ingress["ip"])
    (port,) = outputs["spec"]["ports"]
    assert port["port"] == 443 and 30000 <= port["nodePort"] <= 32767


def test_workloads_report_their_replicas_ready():
    inputs = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "m"},
        "spec": {"replicas": 2},
    }
    (_, outputs), _ = new("kubernetes:apps/v1:Deployment", "m", inputs)
    assert outputs["status"]["readyReplicas"] == 2 and outputs["status"]["availableReplicas"] == 2


def test_a_kubernetes_kind_the_table_does_not_know_gets_its_inputs_and_server_metadata():
    inputs = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "b"}}
    (_, outputs), _ = new("kubernetes:core/v1:ConfigMap", "c", inputs)
    assert outputs["data"] == {"a": "b"}
    assert "status" not in outputs and "uid" in outputs["metadata"]


def test_a_kubernetes_object_without_a_name_is_auto_named():
    inputs = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}}
    (_, outputs), _ = new("kubernetes:core/v1:ConfigMap", "cm", inputs)
    assert re.match(r"^cm-[0-9a-f]{7}$", outputs["metadata"]["name"])


def test_providers_answer_with_their_inputs():
    (ident, outputs), _ = new("pulumi:providers:kubernetes", "k", {"context": "kind-det"})
    assert outputs == {"context": "kind-det"}
    assert re.match(r"^[0-9a-f-]{36}$", ident)


def test_components_have_no_provider_outputs():
    assert new("determined:components:Master", "master", {}, custom=False)[0] == ("", {})


@pytest.mark.parametrize(
    "typ", ["aws:ec2/flowLog:FlowLog", "gcp:compute/instance:Instance", "azure-native:x:Y"]
)
def test_a_cloud_resource_the_table_does_not_model_stops_the_plan(typ):
    with pytest.raises(UnmodelledError, match=re.escape(typ)):
        new(typ, "x", {})


def test_an_unknown_function_stops_the_plan():
    with pytest.raises(UnmodelledError, match="aws:index/getPartition:getPartition"):
        PlanMocks(Recorder()).call(MockCallArgs("aws:index/getPartition:getPartition", {}, ""))


@pytest.mark.parametrize(
    ("token", "where"),
    [
        ("aws:ec2/flowLog:FlowLog", "add it to plan/mocks/aws.py"),
        ("gcp:compute/instance:Instance", "add it to plan/mocks/gcp.py"),
        ("azure-native:x:Y", "add a module for provider azure-native to plan/mocks/"),
    ],
)
def test_an_unmodelled_type_names_the_module_its_model_goes_in(token, where):
    with pytest.raises(UnmodelledError, match=re.escape(f"({where})")):
        new(token, "x", {})


def test_each_provider_module_models_only_its_providers_tokens_and_none_twice():
    # One module per provider (plan/mocks/<provider>.py): where to look for a type's model.
    resources = [(p, t) for p, m in mocks.PROVIDERS.items() for t in getattr(m, "RESOURCES", {})]
    invokes = [(p, t) for p, m in mocks.PROVIDERS.items() for t in getattr(m, "INVOKES", {})]
    for package, token in resources + invokes:
        assert token.split(":", 1)[0] == package, token
    # The tables PlanMocks reads hold every module's entries, none shadowing another's.
    assert sorted(t for _, t in resources) == sorted(RESOURCES)
    assert sorted(t for _, t in invokes) == sorted(INVOKES)


# --- first preview -------------------------------------------------------------------------


def test_a_first_preview_knows_only_the_inputs():
    inputs = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "m"}, "spec": {"type": "ClusterIP"}}
    (ident, outputs), _ = new("kubernetes:core/v1:Service", "m", inputs, preview=True)
    assert (ident, outputs) == ("", inputs)
    (ident, outputs), recorder = new(
        "random:index/randomPassword:RandomPassword", "p", {"length": 24}, preview=True
    )
    assert (ident, outputs) == ("", {"length": 24})
    assert recorder.generated_secrets == set()


def test_auto_names_are_known_in_a_first_preview():
    (_, outputs), _ = new("gcp:storage/bucket:Bucket", "checkpoints", {"location": "US"}, preview=True)
    assert re.match(r"^checkpoints-[0-9a-f]{7}$", outputs["name"])
    assert "url" not in outputs


def test_a_read_resource_is_known_in_a_preview():
    inputs = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "kube-system"}}
    (ident, outputs), _ = new(
        "kubernetes:core/v1:Namespace", "ks", inputs, preview=True, custom=None, resource_id="kube-system"
    )
    assert ident == "kube-system" and outputs["status"] == {"phase": "Active"}


# --- the providers' own names --------------------------------------------------------------


def _output_names(cls: type) -> set[str]:
    return {
        value.fget._pulumi_name
        for value in vars(cls).values()
        if isinstance(value, property) and hasattr(value.fget, "_pulumi_name")
    }


def _sdk_class(token: str) -> type:
    import importlib

    package, module, name = token.split(":")
    sdk = {
        "random": "pulumi_random",
        "gcp": "pulumi_gcp",
        "aws": "pulumi_aws",
        "kubernetes": "pulumi_kubernetes",
    }
    if package == "random":
        return getattr(importlib.import_module(sdk[package]), name)
    if token == "kubernetes:helm.sh/v3:Release":
        return importlib.import_module("pulumi_kubernetes.helm.v3").Release
    return getattr(importlib.import_module(f"{sdk[package]}.{module.split('/')[0]}"), name)


REQUIRED = {"name": "n", "identifier": "i", "bucket": "b", "nodeGroupName": "g", "accountId": "sa"}


@pytest.mark.parametrize("token", sorted(RESOURCES))
def test_every_modelled_output_is_an_output_of_the_providers_sdk(token):
    (_, outputs), _ = new(token, "r", dict(REQUIRED))
    computed = set(outputs) - set(REQUIRED)
    cls = _sdk_class(token)
    assert computed <= _output_names(cls)
    if not computed:
        # Only types whose provider computes nothing but their ID model no output.
        module = importlib.import_module(cls.__module__)
        # The input class is <Name>Args, or <Name>InitArgs where a nested type takes that name.
        args = getattr(module, cls.__name__ + "InitArgs", None) or getattr(
            module, cls.__name__ + "Args", None
        )
        output_only = _output_names(cls) - (_output_names(args) if args else set())
        assert not output_only, f"{token} models none of {sorted(output_only)}"


@pytest.mark.parametrize("token", sorted(INVOKES))
def test_every_modelled_function_answers_with_the_sdks_result_fields(token):
    import importlib

    package, module, name = token.split(":")
    if package == "pulumi":
        # The engine's builtin provider answers it: readStackReference's fields
        # (pkg/resource/components/builtins.go of pulumi/pulumi).
        answer = PlanMocks(Recorder()).call(MockCallArgs(token, {"name": "o/p/s"}, ""))
        assert set(answer) == {"name", "outputs", "secretOutputNames"}
        return
    sdk = importlib.import_module({"gcp": "pulumi_gcp", "aws": "pulumi_aws"}[package])
    if module.split("/")[0] != "index":
        sdk = importlib.import_module(f"{sdk.__name__}.{module.split('/')[0]}")
    result_class = getattr(sdk, name[0].upper() + name[1:] + "Result")
    answer = PlanMocks(Recorder()).call(MockCallArgs(token, {}, ""))
    assert answer and set(answer) <= _output_names(result_class)


# --- through the SDKs ----------------------------------------------------------------------


def _cloud_program(original):
    """The program plus cloud resources and functions, exporting what a cluster module reads."""

    def main():
        import pulumi_aws as aws
        import pulumi_gcp as gcp

        det = original()
        gke = gcp.container.Cluster("gke", location="us-central1", initial_node_count=1)
        eks = aws.eks.Cluster(
            "eks", role_arn="arn:aws:iam::123456789012:role/eks", vpc_config={"subnet_ids": ["s-1"]}
        )
        bucket = gcp.storage.Bucket("ckpt", location="US")
        pulumi.export("gkeEndpoint", gke.endpoint)
        pulumi.export("gkeCa", gke.master_auth.cluster_ca_certificate)
        pulumi.export("eksIssuer", eks.identities[0].oidcs[0].issuer)
        pulumi.export("bucketName", bucket.name)
        pulumi.export("bucketUrl", bucket.url)
        pulumi.export("account", aws.get_caller_identity_output().account_id)
        pulumi.export("zones", aws.get_availability_zones_output().names)
        return det

    return main


@pytest.fixture
def cloud_program(monkeypatch):
    program = runner.program()

    monkeypatch.setattr(program, "main", _cloud_program(program.main))


def test_cloud_outputs_reach_the_program_after_apply(cloud_program):
    config = {**pulumi_config(raw_config()), "aws:region": "eu-west-1"}
    out = runner.plan(config, [], "cloud", policies=[]).outputs
    assert re.match(r"^\d+\.\d+\.\d+\.\d+$", out["gkeEndpoint"])
    assert out["gkeCa"] and out["account"] == mocks.AWS_ACCOUNT
    # The provider's region (from the stack's aws:region) shapes what it computes.
    assert re.match(r"^https://oidc\.eks\.eu-west-1\.amazonaws\.com/id/[0-9A-F]{32}$", out["eksIssuer"])
    assert out["zones"] == ["eu-west-1a", "eu-west-1b", "eu-west-1c"]
    assert out["bucketUrl"] == f"gs://{out['bucketName']}"


def test_cloud_outputs_are_unknown_in_a_first_preview(cloud_program):
    out = plan_for(raw_config(), stack="cloud", preview=True).outputs
    assert out["gkeEndpoint"] == out["eksIssuer"] == out["bucketUrl"] == UNKNOWN
    assert out["bucketName"].startswith("ckpt-")  # named by the provider's Check
    assert out["account"] == mocks.AWS_ACCOUNT  # functions run in previews too


def test_an_unknown_secret_export_stays_secret_in_a_preview():
    result = plan_for(raw_config(), preview=True)
    assert is_secret(result.recorder.stack_outputs["initialUserPassword"])
    assert result.outputs["initialUserPassword"] == SECRET


# --- nothing unknown after an apply --------------------------------------------------------


def _unknown_output() -> pulumi.Output:
    import asyncio

    loop = asyncio.get_event_loop()
    value, known = loop.create_future(), loop.create_future()
    value.set_result(None)
    known.set_result(False)
    return pulumi.Output(set(), value, known)


def test_an_unknown_export_fails_an_update_plan(monkeypatch):
    program = runner.program()

    original = program.main

    def main():
        det = original()
        pulumi.export("late", _unknown_output())
        return det

    monkeypatch.setattr(program, "main", main)
    with pytest.raises(PlanFailure, match="unknown after the simulated apply: stack export late"):
        plan_for(raw_config())
    assert plan_for(raw_config(), preview=True).outputs["late"] == UNKNOWN


def test_an_unknown_input_fails_an_update_plan(monkeypatch):
    import pulumi_kubernetes as k8s

    program = runner.program()

    original = program.main

    def main():
        det = original()
        k8s.core.v1.ConfigMap("late", metadata={"name": "late"}, data={"x": _unknown_output()})
        return det

    monkeypatch.setattr(program, "main", main)
    with pytest.raises(PlanFailure, match=r"kubernetes:core/v1:ConfigMap late: data\.x"):
        plan_for(raw_config())
    preview = plan_for(raw_config(), preview=True)
    assert resource(preview, "ConfigMap", "late")["inputs"]["data"] == {"x": UNKNOWN}
