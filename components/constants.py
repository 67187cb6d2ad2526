"""Fixed values the app uses: names, ports, sizes, priorities.

Kept apart from the logic so a reader can see every number in one place. A leaf module: the
config's checks and the policy pack read the same values (the add-ons' namespaces, the parts'
component names), one copy for all. Versions and images are in `versions.py`; everything a
user may change is in the config model.
"""

from __future__ import annotations

# --- master ---------------------------------------------------------------------------
MASTER_NAME = "determined-master"
MASTER_SERVICE_NAME = "determined-master-service"
MASTER_CONFIG_SECRET = "determined-master-config"
# The file of master.yaml inside that Secret (mounted at MASTER_CONFIG_DIR).
MASTER_YAML = "master.yaml"
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

# `app.kubernetes.io/name` of the parts' objects: the master, the in-cluster database, the
# workspace Job (the policy pack tells workloads apart by them).
MASTER_COMPONENT = "master"
DB_COMPONENT = "database"
WORKSPACES_COMPONENT = "bind-workspaces"
# The Secret of the workspace Job's admin password (in the master's namespace).
WORKSPACES_PASSWORD_SECRET = "determined-bind-workspaces"

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

# --- database backups -------------------------------------------------------------------
# Components (`app.kubernetes.io/name` of their pods; NetworkPolicies select them): the
# dump Jobs (scheduled and before an upgrade), the restore Job, the Helm chart migration Job.
BACKUP_COMPONENT = "database-backup"
RESTORE_COMPONENT = "database-restore"
MIGRATION_COMPONENT = "database-migration"
# In the Determined namespace: the account the dump and restore Jobs run as (bound to the
# checkpoint store's cloud identity like the master's), the Secret of what they need besides
# the in-cluster database's own Secret (an external or managed server's password, the
# checkpoint store's keys, an external server's CA certificate), the claim dumps go to with
# sharedFs/directory checkpoints, the CronJob.
BACKUP_SERVICE_ACCOUNT = "determined-db-backup"
BACKUP_SECRET = "determined-db-backup"
BACKUP_CLAIM = "determined-db-backups"
BACKUP_CRONJOB = "determined-db-backup"
# The Job before an upgrade: <prefix>-<master version with dashes> (determined-db-backup-0-38-1).
PRE_UPGRADE_JOB_PREFIX = "determined-db-backup"
# The restore Job: <prefix>-<hash of the dump's name> (another dump, another Job).
RESTORE_JOB_PREFIX = "determined-db-restore"
# In the Helm chart's namespace: the migration Job and the Secret of the new database's password.
MIGRATION_JOB = "determined-db-migration"
MIGRATION_SECRET = "determined-db-migration"
# Where dumps go in a bucket or container: below the checkpoint prefix.
BACKUP_PREFIX = "determined-db-backups"
# The object (or file) beside the dumps naming the master version the last upgrade dump was
# taken for: the next one's name says which version it upgrades from.
BACKUP_VERSION_MARKER = "master-version"
BACKUP_TIME_ZONE = "Etc/UTC"  # CronJob schedules; dump names are UTC too
# The Jobs' user: PostgreSQL's clients and rclone run as any user; one of their own, high
# enough to be no node user's. The migration runs as the chart's postgres user (999), the
# owner of the files it copies (never changed: the chart's volume is read-only to it).
BACKUP_UID = 10999
MIGRATION_UID = 999
# Where the Jobs' containers find the database password (and an external server's CA
# certificate), and the checkpoint store's keys (one file per rclone variable): files of
# their Secrets, never environment values.
DB_CREDENTIALS_DIR = "/etc/determined-db-credentials"
STORAGE_CREDENTIALS_DIR = "/etc/determined-storage-credentials"
# CPU limits too: dumps share the system node with the master and the database, which a
# compressing pg_dump must not starve.
BACKUP_RESOURCES = {
    "requests": {"cpu": "100m", "memory": "256Mi"},
    "limits": {"cpu": "1", "memory": "1Gi"},
}
# The temporary PostgreSQL 10 server of the migration (on a copy of the chart's data).
MIGRATION_SERVER_RESOURCES = {
    "requests": {"cpu": "500m", "memory": "1Gi"},
    "limits": {"cpu": "2", "memory": "2Gi"},
}
# A dump, upload or restore of a large database takes time; no Job runs longer than this
# (Pulumi waits as long for the ones it awaits).
BACKUP_DEADLINE_SECONDS = 6 * 3600
BACKUP_BACKOFF_LIMIT = 2
BACKUP_HISTORY = 3  # finished Jobs of the CronJob kept, successful and failed each
BACKUP_STARTING_DEADLINE_SECONDS = 3600  # a missed run still starts within the hour
# How long a restore waits for the master's sessions to end (it is being scaled to 0).
RESTORE_WAIT_SECONDS = 600
# Determined's Helm chart (helm/charts/determined): its database claim and Service names,
# and where PGDATA lies on the claim.
HELM_CHART_CLAIM_PREFIX = "determined-db-pvc-"
HELM_CHART_SERVICE_PREFIX = "determined-db-service-"
HELM_CHART_DATA_DIR = "pgdata"

# --- add-ons ----------------------------------------------------------------------------
# Where the project's add-ons run. The config refuses them as namespaces of the stack's own
# (they are the add-ons' whether or not a stack turns them on), and the policy pack knows
# the add-ons' workloads by them.
CERT_MANAGER_NAMESPACE = "cert-manager"
ENVOY_GATEWAY_NAMESPACE = "envoy-gateway-system"
GPU_OPERATOR_NAMESPACE = "gpu-operator"
KUEUE_NAMESPACE = "kueue-system"
# Reloader's Release; its namespace is `<watched namespace>-reloader` (addons/reloader.py).
RELOADER_RELEASE = "reloader"
# Observability's namespace is `<Determined namespace>-monitoring` (config/namespaces.py).
MONITORING_SUFFIX = "monitoring"
# The Jobs that keep Prometheus' token for the master fresh (observability/master_metrics.py).
METRICS_TOKEN_COMPONENT = "metrics-token"
# The tag key the EKS EFA security group carries (its value: the cluster's name): Karpenter's
# node classes select the group by it, and the policy pack's efa-security-group-self-only finds
# it by it (policies/exposure.py).
EFA_SECURITY_GROUP_TAG = "determined.ai/efa"
# The DaemonSets that pull task images onto node pools (determined/image_pre_pull.py).
IMAGE_PRE_PULL_COMPONENT = "image-pre-pull"

# GKE's NVIDIA driver installer DaemonSet (addons/gke_driver_installer.py).
GKE_DRIVER_INSTALLER_NAMESPACE = "kube-system"
GKE_DRIVER_INSTALLER_NAME = "nvidia-driver-installer"
# Google's node agents for the GPU fabrics (components/cluster/gke/fabric.py NODE_AGENTS), in
# the same namespace: upstream DaemonSets the project pins, not workloads it writes.
GKE_FABRIC_NODE_AGENTS = ("nccl-tcpxo-installer", "device-injector", "nccl-rdma-installer")
# Annotations of the Envoy proxy's Service that make its load balancer internal: GKE's
# passthrough Network Load Balancer, and the in-tree AWS cloud provider's legacy one.
GKE_LB_TYPE = "networking.gke.io/load-balancer-type"
AWS_LB_INTERNAL = "service.beta.kubernetes.io/aws-load-balancer-internal"

# The TCPXO receive-datapath daemon the task pods of a `fabric: tcpxo` pool run as a native
# sidecar (components/determined/fabric.py, with sources), pinned with the installer it is
# coupled to; it needs NET_ADMIN, which the policy pack allows this container alone.
TCPXO_DAEMON = "tcpxo-daemon"
TCPXO_DAEMON_IMAGE = "us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpxo/tcpgpudmarxd-dev:v1.0.21"
TCPXO_DAEMON_CAPABILITIES = ("NET_ADMIN", "NET_BIND_SERVICE")
