"""An HTTP(S) proxy for the master and tasks (master.proxy), as environment variables.

Both spellings are set: Go (the master) reads the upper-case ones, many Python and shell
tools only the lower-case ones. Cluster-internal traffic never goes through the proxy:
Service names, the cluster domain, loopback and, where the stack knows it, the service
network (the Kubernetes API's address) are always in NO_PROXY. On an existing cluster (or
an existing GKE network) the service network is not known here: add it to noProxy.
"""

from __future__ import annotations

from typing import Any

from components.determined.args import DeterminedArgs

ALWAYS_DIRECT = [".svc", ".cluster.local", "localhost", "127.0.0.1"]
# EKS picks its service network from these two when none is given (the VPC's range decides).
EKS_SERVICE_CIDRS = ["10.100.0.0/16", "172.20.0.0/16"]


def no_proxy(cfg: DeterminedArgs) -> str:
    direct = list(ALWAYS_DIRECT)
    direct += cfg.service_cidrs
    assert cfg.master.proxy is not None
    direct += [part.strip() for part in cfg.master.proxy.no_proxy.split(",") if part.strip()]
    return ",".join(dict.fromkeys(direct))


def env(cfg: DeterminedArgs) -> list[dict[str, Any]]:
    """Container env for the proxy settings; none without a proxy."""
    proxy = cfg.master.proxy
    if proxy is None:
        return []
    values = {"HTTP_PROXY": proxy.http_proxy, "HTTPS_PROXY": proxy.https_proxy, "NO_PROXY": no_proxy(cfg)}
    out = []
    for name, value in values.items():
        if value:
            out += [{"name": name, "value": value}, {"name": name.lower(), "value": value}]
    return out
