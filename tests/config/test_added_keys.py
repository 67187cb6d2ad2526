"""Keys added with the cloud, resource-pool and TLS work: a bad value of each is refused with
its key path and what is allowed (the README's configuration reference lists them all)."""

from __future__ import annotations

import pytest
from conftest import GKE, raw_config

from components.config import ConfigError, load_config

POOLS = raw_config()["resourcePools"]
TLS = {"mode": "ingress", "host": "det.example.com", "certificate": {"source": "secret", "secretName": "x"}}

CASES = [
    (
        {**GKE, "cluster": {**GKE["cluster"], "privateNodes": "yes"}},
        "determined:cluster.privateNodes: must be true or false, not a string",
    ),
    (
        {**GKE, "nodePools": [GKE["nodePools"][0], {**GKE["nodePools"][1], "imageType": "ubuntu"}]},
        "determined:nodePools[1].imageType: must be one of 'COS_CONTAINERD' or 'UBUNTU_CONTAINERD' (got 'ubuntu')",
    ),
    (
        {**GKE, "nodePools": [GKE["nodePools"][0], {**GKE["nodePools"][1], "diskSizeGb": 5}]},
        "determined:nodePools[1].diskSizeGb: must be at least 10",
    ),
    (
        {**GKE, "database": {"mode": "managed", "tier": "db-custom-2-8192", "highAvailability": "true"}},
        "determined:database.highAvailability: must be true or false, not a string",
    ),
    (
        raw_config(resourcePools=[{**POOLS[0], "quota": {"limits": {"cpu": "abc"}}}, POOLS[1]]),
        "determined:resourcePools[0].quota.limits.cpu: 'abc' is not a Kubernetes quantity",
    ),
    (
        raw_config(kueue={"podsReadyTimeoutSeconds": 5}),
        "determined:kueue.podsReadyTimeoutSeconds: must be at least 30",
    ),
    (
        raw_config(kueue={"cohort": "Bad_Name"}),
        "determined:kueue.cohort: 'Bad_Name' is not a valid DNS label",
    ),
    (
        raw_config(adoptPriorityClasses="yes"),
        "determined:adoptPriorityClasses: must be true or false, not a string",
    ),
    (
        raw_config(tls={**TLS, "gatewayClassName": "Bad Class"}),
        "determined:tls.gatewayClassName: 'Bad Class' is not a valid Kubernetes name",
    ),
    (
        raw_config(resourcePools=[{**POOLS[0], "workspace": ""}, POOLS[1]]),
        "determined:resourcePools[0].workspace:",
    ),
]


@pytest.mark.parametrize(("raw", "expected"), [c for c in CASES], ids=[c[1].split(":")[1] for c in CASES])
def test_a_bad_value_of_an_added_key_is_refused_with_its_path(raw, expected):
    with pytest.raises(ConfigError) as info:
        load_config(raw)
    lines = [str(p) for p in info.value.problems]
    assert any(line.startswith(expected) for line in lines), lines
