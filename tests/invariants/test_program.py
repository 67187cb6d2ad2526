"""The whole program under Pulumi mocks: what `pulumi up` would register."""

from __future__ import annotations

import json

import pytest
import yaml
from conftest import BASE, pulumi_config, raw_config
from planning import by_kind, one, plan_for, planned, resource, stack_files, stack_name

from components.config import ConfigError, StackConfig, load_config
from components.versions import INITIAL_PASSWORD_SINCE
from plan import runner, stackfile, standins
from plan.mocks import Recorder
from plan.redaction import SECRET, UNKNOWN, is_secret


@pytest.fixture(scope="module")
def local():
    config, secret_keys = stackfile.load_stack_file(stackfile.stack_path("local"))
    return runner.plan(config, secret_keys, "local", policies=[])


@pytest.fixture(scope="module")
def base():
    return plan_for(raw_config())


def test_local_stack_creates_every_object_of_the_deployment(local):
    names = {(m["kind"], m["metadata"].get("namespace"), m["metadata"]["name"]) for m in local.manifests}
    assert names == {
        ("Namespace", None, "determined"),
        # 0.35+: tasks of workspaces bound to no namespace, and checkpoint GC.
        ("Namespace", None, "determined-tasks"),
        ("Namespace", None, "det-gpu"),
        ("Namespace", None, "det-aux"),
        ("ResourceQuota", "det-gpu", "determined-gpu"),
        ("PriorityClass", None, "determined-system-priority"),
        ("PriorityClass", None, "determined-medium-priority"),
        ("ServiceAccount", "determined", "determined-master"),
        ("ClusterRole", None, "determined-master-determined"),
        ("ClusterRoleBinding", None, "determined-master-determined"),
        *(
            (kind, ns, "determined-master")
            for kind in ("Role", "RoleBinding")
            for ns in ("determined", "determined-tasks", "det-gpu", "det-aux")
        ),
        ("Secret", "determined", "determined-master-config"),
        ("Deployment", "determined", "determined-master"),
        ("PodDisruptionBudget", "determined", "determined-master"),
        ("Service", "determined", "determined-master-service"),
        ("Secret", "determined", "determined-db"),
        ("PersistentVolumeClaim", "determined", "determined-db-data"),
        ("StatefulSet", "determined", "determined-db"),
        ("Service", "determined", "determined-db"),
        # 0.35+: the Job that binds each pool's workspace to its namespace.
        ("ConfigMap", "determined", "determined-bind-workspaces"),
        ("Secret", "determined", "determined-bind-workspaces"),
        (
            "Job",
            "determined",
            next(
                j["metadata"]["name"] for j in by_kind(local, "Job") if "workspaces" in j["metadata"]["name"]
            ),
        ),
        # Database backups (sharedFs checkpoints: to a claim): daily; no dump before the master
        # on a first install (a new database has no records).
        ("ServiceAccount", "determined", "determined-db-backup"),
        ("PersistentVolumeClaim", "determined", "determined-db-backups"),
        ("CronJob", "determined", "determined-db-backup"),
        # Network fencing: a default deny and what each kind of pod may do; tasks per namespace.
        *(
            ("NetworkPolicy", "determined", name)
            for name in (
                "determined-default-deny",
                "determined-master",
                "determined-database",
                "determined-database-clients",
                "determined-bind-workspaces",
            )
        ),
        *(("NetworkPolicy", ns, "determined-tasks") for ns in ("determined-tasks", "det-gpu", "det-aux")),
    }


def test_every_kubernetes_object_goes_through_the_configured_cluster_provider(local):
    provider = resource(local, "pulumi:providers:kubernetes", "existing-cluster")
    assert provider["inputs"]["context"] == "kind-det"
    k8s = [reg for reg in local.recorder.resources if reg.type.startswith("kubernetes:")]
    assert k8s and all(reg.provider and reg.provider.startswith(provider["urn"]) for reg in k8s)


def without_aliases(registered: dict) -> dict:
    """A resource's options but the aliases that keep the URNs of deployed stacks (the
    Determined component's old type: components/determined/determined.py OLD_TYPE)."""
    return {k: v for k, v in registered["options"].items() if k != "aliases"}


def test_database_volume_and_its_namespace_survive_destroy(base):
    claim = resource(base, "PersistentVolumeClaim", "determined/determined-db-data")
    assert claim["options"] == {"retainOnDelete": True, "ignoreChanges": ["spec.storageClassName"]}
    # Deleting the namespace would delete the claim with it.
    assert without_aliases(resource(base, "core/v1:Namespace", "determined")) == {"retainOnDelete": True}
    for name in ("determined-system-priority", "determined-medium-priority"):
        assert without_aliases(resource(base, "PriorityClass", name)) == {"retainOnDelete": True}


def test_allow_data_deletion_in_dev_lets_destroy_delete_the_volume():
    result = plan_for(raw_config(allowDataDeletion=True))
    assert resource(result, "PersistentVolumeClaim", "determined/determined-db-data")["options"] == {}
    assert without_aliases(resource(result, "core/v1:Namespace", "determined")) == {}


def test_external_database_creates_no_database_objects():
    raw = raw_config(
        database={"mode": "external", "host": "db.internal", "user": "det", "password": "Ext-Db-Pass-9"},
        # Dumps go to the bucket (with sharedFs they would go to a claim in the namespace).
        checkpointStorage={"type": "s3", "bucket": "ckpts"},
    )
    result = plan_for(raw)
    kinds = {(m["kind"], m["metadata"]["name"]) for m in result.manifests}
    assert ("StatefulSet", "determined-db") not in kinds
    assert ("PersistentVolumeClaim", "determined-db-data") not in kinds
    assert not any(r["type"].startswith("random:") and r["name"] == "db-password" for r in result.resources)
    master_yaml = yaml.safe_load(result.master_yaml)
    assert master_yaml["db"]["host"] == "db.internal"
    assert master_yaml["db"]["password"] == "[secret]"
    # Without an in-cluster database the namespace holds no data and is not retained.
    assert without_aliases(resource(result, "core/v1:Namespace", "determined")) == {}


def test_master_config_is_a_secret_and_master_yaml_is_written(base):
    reg = next(r for r in base.recorder.resources if r.name == "determined/determined-master-config")
    assert is_secret(reg.inputs["stringData"])
    assert one(base, "Secret", "determined-master-config")["stringData"] == {"master.yaml": "[secret]"}
    assert yaml.safe_load(base.master_yaml)["resource_manager"]["type"] == "kubernetes"
    # The only ConfigMap holds the workspace-binding script: no configuration, no secret.
    assert [c["metadata"]["name"] for c in by_kind(base, "ConfigMap")] == ["determined-bind-workspaces"]


def test_generated_initial_password_is_exported_as_a_secret(base):
    assert is_secret(base.recorder.stack_outputs["initialUserPassword"])
    assert base.outputs["initialUserPassword"] == "[secret]"


def test_configured_initial_password_is_not_exported():
    result = plan_for(raw_config(master={"initialUserPassword": "Configured-Pass-1"}))
    assert "initialUserPassword" not in result.recorder.stack_outputs
    assert not any(r["name"] == "initial-user-password" for r in result.resources)


def test_a_config_change_rolls_the_master_pod(base):
    def checksum(result):
        return one(result, "Deployment", "determined-master")["spec"]["template"]["metadata"]["annotations"][
            "checksum/config"
        ]

    changed = plan_for(raw_config(master={"telemetry": True}))
    assert len(checksum(base)) == 64
    assert checksum(base) != checksum(changed)


def test_objects_wait_for_what_they_need(base, local):
    deployment = resource(base, "Deployment", "determined/determined-master")
    config_secret = resource(base, "core/v1:Secret", "determined/determined-master-config")
    binding = resource(base, "ClusterRoleBinding", "determined-master-determined")
    assert {config_secret["urn"], binding["urn"]} <= set(deployment["dependsOn"])
    sts = resource(base, "StatefulSet", "determined/determined-db")
    claim = resource(base, "PersistentVolumeClaim", "determined/determined-db-data")
    assert claim["urn"] in sts["dependsOn"]
    quota = resource(local, "ResourceQuota", "det-gpu/determined-gpu")
    assert resource(local, "core/v1:Namespace", "det-gpu")["urn"] in quota["dependsOn"]


def test_config_error_registers_nothing():
    recorder = Recorder()
    raw = raw_config(resourcePools=[{"name": "x", "nodePool": "h100"}, BASE["resourcePools"][1]])
    with pytest.raises(ConfigError) as info:
        runner.run_program(pulumi_config(raw), [], "test", recorder)
    assert [str(p) for p in info.value.problems] == [
        "determined:resourcePools[0].nodePool: no node pool named 'h100' (node pools: system, a100)"
    ]
    assert recorder.resources == []


def test_in_cluster_database_can_reuse_a_known_password():
    # For reattaching a kept volume whose database was initialised with that password.
    # The program runs with the plan's stand-in for it, never the value itself.
    result = plan_for(raw_config(database={"password": "Kept-Db-Pass-3"}))
    assert not any(r["type"].startswith("random:") and r["name"] == "db-password" for r in result.resources)
    reg = next(
        r
        for r in result.recorder.resources
        if r.name == "determined/determined-db" and r.type.endswith("Secret")
    )
    assert is_secret(reg.inputs["stringData"])
    stand_in = result.stand_ins[("database", "password")]
    assert reg.inputs["stringData"]["value"] == {"POSTGRES_PASSWORD": stand_in}
    assert one(result, "Secret", "determined-db")["stringData"] == {"POSTGRES_PASSWORD": "[secret]"}


def test_provider_uses_the_configured_kubeconfig_path(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    result = plan_for(raw_config(cluster={"name": "x", "kubeconfig": "~/kube/config", "context": "ctx"}))
    inputs = resource(result, "pulumi:providers:kubernetes", "existing-cluster")["inputs"]
    assert inputs["kubeconfig"] == f"{tmp_path}/kube/config"
    assert inputs["context"] == "ctx"


def test_provider_falls_back_to_the_kubernetes_context_setting():
    config = {**pulumi_config(raw_config()), "kubernetes:context": "from-provider-config"}
    result = runner.plan(config, [], "test", policies=[])
    inputs = resource(result, "pulumi:providers:kubernetes", "existing-cluster")["inputs"]
    assert inputs["context"] == "from-provider-config"
    assert "kubeconfig" not in inputs  # the provider's own default (KUBECONFIG, ~/.kube/config)


# --- every stack, as an update and as a first preview ---------------------------------------

STACK_FILES = list(stack_files())


def _config_of(path) -> StackConfig:
    config, _ = stackfile.load_stack_file(path)
    return load_config(standins.decode(config))


def _walk(value, path=""):
    """(path, scalar) for every scalar of a plain value."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _walk(item, f"{path}.{key}" if path else key)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _walk(item, f"{path}[{index}]")
    else:
        yield path, value


def _written(result) -> str:
    return json.dumps([result.resources, result.manifests, result.outputs]) + (result.master_yaml or "")


def _generates_passwords(cfg: StackConfig) -> bool:
    db_password = getattr(cfg.database, "password", None)
    return (
        cfg.master.initial_user_password is None
        or cfg.master.webhooks.signing_key is None
        or (cfg.database.mode == "inCluster" and db_password is None)
        # Grafana's admin and the master's metrics user.
        or cfg.observed
    )


@pytest.fixture(scope="module", params=STACK_FILES, ids=stack_name)
def every_stack(request):
    """(config, update plan, first-preview plan) of a stack file."""
    path = request.param
    name = stack_name(path)
    return _config_of(path), planned(name), planned(name, preview=True)


def test_every_stack_plans_and_nothing_is_unknown_after_apply(every_stack):
    _, update, _ = every_stack
    assert update.resources and update.manifests and update.master_yaml
    assert all(not reg.unknowns for reg in update.recorder.resources)
    assert not update.recorder.stack_output_unknowns
    assert UNKNOWN not in _written(update)


def test_every_stack_previews_with_the_generated_values_unknown(every_stack):
    cfg, update, preview = every_stack
    # A preview registers the same resources as the update.
    assert [r["urn"] for r in preview.resources] == [r["urn"] for r in update.resources]
    # The master's config checksum is keyed with a generated key: unknown until apply.
    checksum = one(preview, "Deployment", "determined-master")["spec"]["template"]["metadata"]["annotations"][
        "checksum/config"
    ]
    assert checksum == UNKNOWN
    if _generates_passwords(cfg):
        assert UNKNOWN in _written(preview)
    else:
        # Nothing else is computed by a provider: the preview shows what the update shows.
        def known(result):
            return [r for r in result.resources if not r["type"].endswith("Deployment")]

        assert known(preview) == known(update)


def test_no_stand_in_or_generated_secret_reaches_a_plan_of_any_stack(every_stack):
    _, update, preview = every_stack
    for result in (update, preview):
        text = _written(result)
        leaked = [secret for secret in result.secrets if secret in text]
        assert leaked == []


def test_every_stack_exports_what_a_user_needs_next(every_stack):
    cfg, update, preview = every_stack
    ns = cfg.namespace
    for result in (update, preview):
        out = result.outputs
        assert out["namespace"] == ns
        exposed = cfg.tls.mode != "none"
        internal = f"http://determined-master-service.{ns}.svc.cluster.local:8080"
        assert out["masterUrl"] == (f"https://{cfg.tls.host}" if exposed else internal)
        assert ("dnsTarget" in out) == exposed
        assert out["portForward"] == f"kubectl -n {ns} port-forward svc/determined-master-service 8080:8080"
        assert out["resourcePools"] == {rp.name: rp.namespace_name for rp in cfg.resource_pools}
        # Generated only when none is configured, and exported to masters that can set it.
        if cfg.master.initial_user_password is None and cfg.master.version_tuple >= INITIAL_PASSWORD_SINCE:
            assert is_secret(result.recorder.stack_outputs["initialUserPassword"])
            assert out["initialUserPassword"] == SECRET
        else:
            assert "initialUserPassword" not in out
        # Observability: where Grafana is, how to reach it, and its admin password (secret).
        grafana_keys = {"grafanaUrl", "grafanaPortForward", "grafanaAdminPassword"}
        if cfg.observed:
            monitoring = f"{ns}-monitoring"
            expected = (
                f"https://{cfg.tls.host}/grafana/"
                if cfg.tls.mode == "ingress"
                else f"http://grafana.{monitoring}.svc:80"
            )
            assert out["grafanaUrl"] == expected
            assert out["grafanaPortForward"] == f"kubectl -n {monitoring} port-forward svc/grafana 3000:80"
            assert is_secret(result.recorder.stack_outputs["grafanaAdminPassword"])
        else:
            assert not grafana_keys & set(out)
    # After an apply every export is known, and nothing was read from a missing output.
    for path, value in _walk(update.outputs):
        assert value is not None and value != UNKNOWN, path
        assert "None" not in str(value), path


def test_config_a_shell_carries_for_real_runs_is_ignored(monkeypatch):
    monkeypatch.setenv("PULUMI_CONFIG", '{"kubernetes:context": "from-env"}')
    monkeypatch.setenv("PULUMI_CONFIG_KUBERNETES_CONTEXT", "from-env-var")
    result = runner.plan(pulumi_config(raw_config()), [], "test", policies=[])
    assert "context" not in resource(result, "pulumi:providers:kubernetes", "existing-cluster")["inputs"]
