"""The policy pack's rules, each with a passing and a failing case."""

from __future__ import annotations

from pulumi_policy import PolicyCustomTimeouts, PolicyResourceOptions, ResourceValidationArgs

from policies import rules


def args_for(resource_type: str, props: dict) -> ResourceValidationArgs:
    opts = PolicyResourceOptions(False, [], None, [], PolicyCustomTimeouts(0, 0, 0), [])
    return ResourceValidationArgs(resource_type, props, "urn:x", "x", opts, None)


def violations(resource_type: str, props: dict) -> list[str]:
    found: list[str] = []
    rules.images_pinned(args_for(resource_type, props), lambda message, urn=None: found.append(message))
    return found


def deployment(*images: str) -> dict:
    containers = [{"name": f"c{i}", "image": image} for i, image in enumerate(images)]
    return {"spec": {"template": {"spec": {"containers": containers}}}}


def test_pinned_tags_and_digests_pass():
    props = deployment(
        "determinedai/determined-master:0.38.1", "postgres:17.6", "registry:5000/x@sha256:" + "a" * 64
    )
    assert violations("kubernetes:apps/v1:Deployment", props) == []


def test_latest_missing_tag_and_registry_port_fail():
    props = deployment("postgres:latest", "postgres", "registry.example.com:5000/determined-master")
    assert violations("kubernetes:apps/v1:StatefulSet", props) == [
        "container 'c0' uses image 'postgres:latest': pin a version tag or digest",
        "container 'c1' uses image 'postgres': pin a version tag or digest",
        "container 'c2' uses image 'registry.example.com:5000/determined-master': pin a version tag or digest",
    ]


def test_other_resource_types_are_ignored():
    assert violations("kubernetes:core/v1:Service", {"spec": {"ports": []}}) == []
