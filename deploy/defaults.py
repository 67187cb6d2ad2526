"""Fixed values the app uses: names, ports, sizes, priorities.

Kept apart from the logic so a reader can see every number in one place. Versions and
images are in `versions.py`; everything a user may change is in the config model.
"""

from __future__ import annotations

# --- master ---------------------------------------------------------------------------
MASTER_NAME = "determined-master"
MASTER_SERVICE_NAME = "determined-master-service"
MASTER_CONFIG_SECRET = "determined-master-config"
# On the config Secret: the Determined version its master.yaml is written for.
MASTER_VERSION_ANNOTATION = "determined.ai/master-version"
MASTER_CONFIG_DIR = "/etc/determined"
# tls.mode master: where the master (and the workspace Job) find the certificate Secret.
MASTER_TLS_DIR = "/etc/determined-tls"
MASTER_CONTAINER_PORT = 8081  # the master's `port` in master.yaml
MASTER_SERVICE_PORT = 8080  # what the Service exposes (the chart's masterPort)
MASTER_HEALTH_PATH = "/info"  # unauthenticated; what `det deploy` polls
# Migrations on a large database can take minutes before /info answers.
MASTER_STARTUP_SECONDS = 600

# The dockerconfigjson Secret made from registryCredentials (in every namespace pods run in).
REGISTRY_SECRET = "determined-registry"
# tls.mode none/ingress: where master.caBundle is mounted; the trust bundle tasks read.
CA_BUNDLE_CONFIG_MAP = "determined-ca-bundle"

# --- priority classes (cluster-scoped; names are what tasks and the chart use) --------
SYSTEM_PRIORITY_CLASS = "determined-system-priority"
SYSTEM_PRIORITY_VALUE = 1_000_000
MEDIUM_PRIORITY_CLASS = "determined-medium-priority"
MEDIUM_PRIORITY_VALUE = 50

# --- in-cluster database --------------------------------------------------------------
DB_NAME = "determined-db"
DB_SERVICE_NAME = "determined-db"
DB_SECRET_NAME = "determined-db"
DB_VOLUME_CLAIM = "determined-db-data"
DB_USER = "determined"
DB_DATABASE = "determined"
DB_PORT = 5432
DB_UID = 999  # the postgres user of the official image
DB_DATA_DIR = "/var/lib/postgresql/data"
DB_SOCKET_DIR = "/var/run/postgresql"  # the official image's unix socket directory
DB_SETTINGS = {"max_connections": "96", "shared_buffers": "512MB"}
DB_RESOURCES = {
    "requests": {"cpu": "500m", "memory": "1Gi"},
    "limits": {"memory": "2Gi"},
}

# --- previews ------------------------------------------------------------------------
# How a secret value appears wherever the project shows configuration without revealing it
# (the offline plan's master.yaml and every other plan file).
REDACTED = "[secret]"
# How a value the cloud computes appears there before it exists (a first preview).
NOT_KNOWN_YET = "[unknown until apply]"

# --- generated passwords -------------------------------------------------------------
PASSWORD_LENGTH = 24

# --- node pools -----------------------------------------------------------------------
# Label the project puts on the nodes of every node pool it creates (GKE/EKS); resource
# pools select their nodes by it.
NODE_POOL_LABEL = "determined.ai/node-pool"
# Container in task pods that runs the workload (Determined's fixed name).
TASK_CONTAINER = "determined-container"
# Kubernetes service account task pods run as where the platform grants them storage
# access through workload identity (one per task namespace).
TASK_SERVICE_ACCOUNT = "determined-task"
