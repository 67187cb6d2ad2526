"""What the Kubernetes API server refuses beyond its OpenAPI schema: its own validation code.

The JSON schema (components.kube.validation) knows types and enums; the API server then runs
Go validation that the schema does not carry: label keys and values, annotation size, names
per kind, env var names, toleration rules, requests against limits, Secret and ConfigMap
size. Each rule here is that code written again as a pure function, with its source.

Rules return (path inside the object, message). A message names the rule and quotes the
value only where the value is a name or key (never a Secret's data or an annotation value).

Sources (read 2026-11-25):
- APIMACHINERY: k8s.io/apimachinery at tag v0.34.0 (the staging copy shipped with
  Kubernetes v1.34.0), https://github.com/kubernetes/apimachinery, path:line as given.
- CORE: kubernetes/kubernetes pkg/apis/core/validation/validation.go, the function named
  (https://github.com/kubernetes/kubernetes/blob/master/pkg/apis/core/validation/validation.go;
  read from the search index's snapshot 000f260 of the master branch after v1.34, whose
  functions below are as in v1.34: the whole repository could not be fetched here, so lines
  are not given).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from decimal import Decimal, InvalidOperation
from typing import Any

Path = tuple[str | int, ...]
Found = list[tuple[Path, str]]

APIMACHINERY = "k8s.io/apimachinery v0.34.0"
CORE = "kubernetes pkg/apis/core/validation/validation.go"

# --- names and keys (apimachinery pkg/util/validation/validation.go) ------------------------

# Source: APIMACHINERY pkg/util/validation/validation.go:29-33 (qualifiedNameFmt, 63).
_QUALIFIED_NAME = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
QUALIFIED_NAME_MAX = 63
# Source: APIMACHINERY pkg/util/validation/validation.go:154-158 (labelValueFmt, 63).
LABEL_VALUE_MAX = 63
# Source: APIMACHINERY pkg/util/validation/validation.go:176-212 (DNS-1123 label 63,
# subdomain 253) and :243-247 (DNS-1035 label: starts with a letter, 63).
_DNS1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_DNS1035_LABEL = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")
DNS_LABEL_MAX = 63
DNS_SUBDOMAIN_MAX = 253
# Source: APIMACHINERY pkg/util/validation/validation.go:398 (envVarNameFmt), used unless
# RelaxedEnvironmentVariableValidation is on, and :418 IsRelaxedEnvVarName (printable ASCII
# but '='). The gate: alpha 1.30, beta (on by default, may be turned off) 1.32, GA 1.34
# (https://www.kubernetes.dev/resources/keps/4369/, read 2026-11-25). '=' is refused by both.
_ENV_NAME = re.compile(r"[-._a-zA-Z][-._a-zA-Z0-9]*")
RELAXED_ENV_NAMES_SINCE = (1, 34)
# Source: APIMACHINERY pkg/util/validation/validation.go:436-450 (configMapKeyFmt, 253, not
# '.', '..' or starting '..').
_CONFIG_KEY = re.compile(r"[-._a-zA-Z0-9]+")
# Source: APIMACHINERY pkg/util/validation/validation.go:326-338 (UID/GID 0..2^31-1).
MAX_ID = 2**31 - 1


def _full(pattern: re.Pattern[str], value: str) -> bool:
    return pattern.fullmatch(value) is not None


def quoted(value: str) -> str:
    """A name as a message repeats it: quoted, escapes visible, cut when long."""
    return repr(value) if len(value) <= 80 else f"{value[:80]!r}... ({len(value)} characters)"


def _size(value: str) -> int:
    # Go's len(): bytes of the UTF-8 text.
    return len(value.encode("utf-8", "surrogatepass"))


def qualified_name_problem(value: str) -> str | None:
    """IsQualifiedName (validation.go:41): an optional DNS-subdomain prefix and '/', then a
    name of at most 63 alphanumerics, '-', '_', '.', alphanumeric at both ends. The message
    follows the value it judges ("label key 'x' <message>")."""
    parts = value.split("/")
    if len(parts) > 2:
        return "is invalid (at most one '/': an optional DNS subdomain prefix, then the name)"
    if len(parts) == 2:
        prefix = parts[0]
        if not prefix or len(prefix) > DNS_SUBDOMAIN_MAX or not _full(_DNS1123_SUBDOMAIN, prefix):
            return f"has an invalid prefix {quoted(prefix)} (a DNS subdomain such as example.com)"
    name = parts[-1]
    if not name or _size(name) > QUALIFIED_NAME_MAX or not _full(_QUALIFIED_NAME, name):
        return (
            "is invalid (name part: letters, digits, '-', '_', '.', starting and ending with a letter or "
            "digit, at most 63 characters)"
        )
    return None


def label_key_problem(key: str) -> str | None:
    """ValidateLabelName (meta/v1/validation/validation.go:104): a qualified name."""
    problem = qualified_name_problem(key)
    return f"label key {quoted(key)} {problem}" if problem else None


def label_value_problem(key: str, value: str) -> str | None:
    """IsValidLabelValue (validation.go:165): empty, or at most 63 letters, digits, '-', '_',
    '.' starting and ending with a letter or digit."""
    if value == "":
        return None
    if _size(value) > LABEL_VALUE_MAX or not _full(_QUALIFIED_NAME, value):
        return (
            f"label value {quoted(value)} for {quoted(key)} is invalid (letters, digits, '-', '_', '.', "
            "starting and ending with a letter or digit, at most 63 characters)"
        )
    return None


def labels_problems(labels: Any) -> list[str]:
    """ValidateLabels (meta/v1/validation/validation.go:113): every key and value."""
    if not isinstance(labels, dict):
        return []
    found = []
    for key, value in labels.items():
        if not isinstance(key, str) or not isinstance(value, str):
            continue  # the schema reports it
        found += [p for p in (label_key_problem(key), label_value_problem(key, value)) if p]
    return found


# Source: APIMACHINERY pkg/api/validation/objectmeta.go:36 (TotalAnnotationSizeLimitB) and
# :58-67 (the sum of the lengths of every key and value).
ANNOTATIONS_MAX_BYTES = 256 * 1024


def annotation_key_problem(key: str) -> str | None:
    """ValidateAnnotations (objectmeta.go:44): a qualified name, case aside."""
    problem = qualified_name_problem(key.lower())
    return f"annotation key {quoted(key)} {problem}" if problem else None


def annotations_size(annotations: dict[str, Any]) -> int:
    return sum(_size(str(k)) + _size(str(v)) for k, v in annotations.items())


def annotations_problems(annotations: Any) -> list[str]:
    if not isinstance(annotations, dict):
        return []
    found = [p for key in annotations if isinstance(key, str) and (p := annotation_key_problem(key))]
    size = annotations_size(annotations)
    if size > ANNOTATIONS_MAX_BYTES:
        found.append(
            f"annotations total {size} bytes (keys and values); Kubernetes takes at most "
            f"{ANNOTATIONS_MAX_BYTES} (256 KiB)"
        )
    return found


def dns_label_problem(value: str) -> str | None:
    """IsDNS1123Label (validation.go:188)."""
    if len(value) > DNS_LABEL_MAX or not _full(_DNS1123_LABEL, value):
        return (
            f"{quoted(value)} is not a DNS-1123 label (at most 63 lower-case letters, digits and '-', "
            "starting and ending with a letter or digit)"
        )
    return None


def dns1035_label_problem(value: str) -> str | None:
    """IsDNS1035Label (validation.go:253)."""
    if len(value) > DNS_LABEL_MAX or not _full(_DNS1035_LABEL, value):
        return (
            f"{quoted(value)} is not a DNS-1035 label (at most 63 lower-case letters, digits and '-', "
            "starting with a letter and ending with a letter or digit)"
        )
    return None


def dns_subdomain_problem(value: str) -> str | None:
    """IsDNS1123Subdomain (validation.go:219)."""
    if len(value) > DNS_SUBDOMAIN_MAX or not _full(_DNS1123_SUBDOMAIN, value):
        return (
            f"{quoted(value)} is not a DNS-1123 subdomain (at most 253 lower-case letters, digits, "
            "'-' and '.', each dot-separated part starting and ending with a letter or digit)"
        )
    return None


def path_segment_problem(value: str) -> str | None:
    """IsValidPathSegmentName (pkg/api/validation/path/name.go:31): not '.' or '..', no '/'
    or '%'."""
    if value in (".", ".."):
        return f"{quoted(value)} may not be a name"
    if "/" in value or "%" in value:
        return f"{quoted(value)} may not contain '/' or '%'"
    return None


def _longest(limit: int, why: str) -> Callable[[str], str | None]:
    def problem(value: str) -> str | None:
        return f"{quoted(value)} is longer than {limit} characters ({why})" if len(value) > limit else None

    return problem


def _both(*rules: Callable[[str], str | None]) -> Callable[[str], str | None]:
    def problem(value: str) -> str | None:
        return next((p for rule in rules if (p := rule(value))), None)

    return problem


# metadata.name per kind: which ValidateNameFunc the kind's validation passes to
# ValidateObjectMeta. Source: CORE (ValidateNamespaceName -> NameIsDNSLabel, generic.go:63;
# ValidateServiceName -> NameIsDNS1035Label; Secret, ConfigMap, ServiceAccount, LimitRange,
# ResourceQuota, PersistentVolume(Claim), PriorityClass, StorageClass -> NameIsDNSSubdomain),
# kubernetes pkg/apis/rbac/validation (ValidateRBACName -> path segment names), and
# apiextensions-apiserver (custom resources -> NameIsDNSSubdomain). Job and CronJob: their names
# become label values and Job names of their pods' controllers: "the name must be no longer
# than 63 characters" (https://kubernetes.io/docs/concepts/workloads/controllers/job/) and "no
# longer than 52 characters" (https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/),
# both read 2026-11-25.
_RBAC = ("Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding")
NAME_RULES: dict[str, Callable[[str], str | None]] = {
    "Namespace": dns_label_problem,
    "Service": dns1035_label_problem,
    **dict.fromkeys(_RBAC, path_segment_problem),
    "Job": _both(dns_subdomain_problem, _longest(63, "its pods carry it as a label value")),
    "CronJob": _both(dns_subdomain_problem, _longest(52, "the CronJob controller appends 11 characters")),
}


def name_problem(kind: str, name: str) -> str | None:
    """metadata.name against its kind's rule (a DNS subdomain unless NAME_RULES says else)."""
    return NAME_RULES.get(kind, dns_subdomain_problem)(name)


# Kinds without a namespace among those the project renders.
CLUSTER_SCOPED = {
    "Namespace",
    "ClusterRole",
    "ClusterRoleBinding",
    "PriorityClass",
    "StorageClass",
    "PersistentVolume",
    "ClusterIssuer",
    "GatewayClass",
    "ClusterQueue",
    "ResourceFlavor",
    "CustomResourceDefinition",
    "MutatingWebhookConfiguration",
    "ValidatingWebhookConfiguration",
}


def metadata_problems(kind: str, metadata: Any, template: bool = False) -> Found:
    """ValidateObjectMetaAccessor (objectmeta.go:155): name per kind, namespace, labels,
    annotations. `template`: a pod template's metadata (no name or namespace of its own)."""
    if not isinstance(metadata, dict):
        return []
    found: Found = []
    name, namespace = metadata.get("name"), metadata.get("namespace")
    if not template and isinstance(name, str) and (problem := name_problem(kind, name)):
        found.append((("metadata", "name"), f"{problem} (the name of a {kind})"))
    if (
        not template
        and isinstance(namespace, str)
        and namespace
        and (problem := dns_label_problem(namespace))
    ):
        found.append((("metadata", "namespace"), problem))
    found += [(("metadata", "labels"), p) for p in labels_problems(metadata.get("labels"))]
    found += [(("metadata", "annotations"), p) for p in annotations_problems(metadata.get("annotations"))]
    return found


# --- containers -------------------------------------------------------------------------------


def env_name_problem(name: str, relaxed: bool = False) -> str | None:
    """ValidateEnv (CORE): IsEnvVarName (validation.go:407) or, with relaxed names, any
    printable ASCII but '=' (IsRelaxedEnvVarName, :418)."""
    if relaxed:
        if not name or "=" in name or any(not (32 <= ord(c) < 127) for c in name):
            return f"env name {quoted(name)} is invalid (printable ASCII characters other than '=')"
        return None
    if not _full(_ENV_NAME, name) or name == "." or name == ".." or name.startswith(".."):
        return (
            f"env name {quoted(name)} is invalid (letters, digits, '_', '-' and '.', not starting with "
            "a digit or '..'; never '=')"
        )
    return None


# Source: CORE validateEnvVarValueFrom: the four sources of valueFrom.
ENV_VALUE_SOURCES = ("fieldRef", "resourceFieldRef", "configMapKeyRef", "secretKeyRef")


def env_value_from_problems(env: Any) -> Found:
    """validateEnvVarValueFrom (CORE): valueFrom names exactly one source, and then `value`
    is empty."""
    value_from = _mapping(env).get("valueFrom")
    if not isinstance(value_from, dict):
        return []
    sources = [key for key in ENV_VALUE_SOURCES if value_from.get(key) is not None]
    value = _mapping(env).get("value")
    if not sources:
        return [(("valueFrom",), f"must name one of {', '.join(ENV_VALUE_SOURCES)}")]
    if isinstance(value, str) and value:
        return [(("valueFrom",), "may not be set when `value` is not empty (set one of them)")]
    if len(sources) > 1:
        return [(("valueFrom",), f"names {' and '.join(sources)}; Kubernetes takes one source")]
    return []


def port_name_problem(name: str) -> str | None:
    """IsValidPortName (validation.go:351): at most 15 of a-z, 0-9 and '-', a letter in it, no
    '--', no '-' at either end."""
    if (
        len(name) > 15
        or not re.fullmatch(r"[-a-z0-9]+", name)
        or not re.search(r"[a-z]", name)
        or "--" in name
        or name.startswith("-")
        or name.endswith("-")
    ):
        return (
            f"port name {quoted(name)} is invalid (at most 15 lower-case letters, digits and '-', with a "
            "letter, no '--', not starting or ending with '-')"
        )
    return None


def config_key_problem(key: str) -> str | None:
    """IsConfigMapKey (validation.go:441): Secret and ConfigMap keys."""
    if (
        len(key) > DNS_SUBDOMAIN_MAX
        or not _full(_CONFIG_KEY, key)
        or key in (".", "..")
        or key.startswith("..")
    ):
        return (
            f"key {quoted(key)} is invalid (at most 253 letters, digits, '-', '_' and '.', not '.', '..' "
            "or starting with '..')"
        )
    return None


# Resource names and amounts. Source: CORE validateResourceRequirements,
# validateContainerResourceName, ValidateResourceQuantityValue, and kubernetes
# pkg/apis/core/helper/helpers.go (IsStandardContainerResourceName: cpu, memory,
# ephemeral-storage, hugepages-<size>; IsOvercommitAllowed: unprefixed or kubernetes.io/
# names but hugepages; IsIntegerResourceName: extended resources count whole units).
_STANDARD_CONTAINER_RESOURCES = {"cpu", "memory", "ephemeral-storage"}


def _native(name: str) -> bool:
    return "/" not in name or name.startswith("kubernetes.io/")


def _hugepages(name: str) -> bool:
    return name.startswith("hugepages-")


def _overcommit_allowed(name: str) -> bool:
    return _native(name) and not _hugepages(name)


# Kubernetes resource.Quantity: a decimal number with an optional binary (Ki..Ei),
# decimal (m, k, M..E) or exponent suffix.
_QUANTITY = re.compile(
    r"(?P<number>[0-9]+(\.[0-9]*)?|\.[0-9]+)(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|m|k|M|G|T|P|E|[eE][-+]?[0-9]+)?"
)


def quantity_value(value: str) -> Decimal:
    """The numeric value of a quantity in base units ('500m' -> 0.5, '1Ki' -> 1024); one
    parser for the project (the config's checks read it too)."""
    match = _QUANTITY.fullmatch(value)
    if not match:
        raise ValueError(value)
    number = Decimal(match["number"])
    suffix = match["suffix"] or ""
    binary = {"Ki": 1, "Mi": 2, "Gi": 3, "Ti": 4, "Pi": 5, "Ei": 6}
    decimal = {"m": -1, "": 0, "k": 1, "M": 2, "G": 3, "T": 4, "P": 5, "E": 6}
    if suffix in binary:
        return number * Decimal(1024) ** binary[suffix]
    if suffix in decimal:
        return number * Decimal(1000) ** decimal[suffix]
    try:
        return number * Decimal(10) ** int(suffix[1:])
    except (ValueError, InvalidOperation):
        raise ValueError(value) from None


def quantity(value: Any) -> Decimal | None:
    """A quantity's value, or None when it is not one (the schema check reports that)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return Decimal(str(value))
    try:
        return quantity_value(value) if isinstance(value, str) else None
    except ValueError:
        return None


def signed_quantity(value: Any) -> Decimal | None:
    """A quantity that may carry a sign, as resource.ParseQuantity reads one ("-5Gi")."""
    if isinstance(value, str) and value[:1] in ("-", "+"):
        amount = quantity(value[1:])
        return -amount if amount is not None and value[0] == "-" else amount
    return quantity(value)


def resources_problems(resources: Any) -> Found:
    """validateResourceRequirements (CORE): names, whole units of extended resources,
    requests <= limits (== for resources that cannot be overcommitted)."""
    if not isinstance(resources, dict):
        return []
    found: Found = []
    sections = {
        s: resources.get(s) if isinstance(resources.get(s), dict) else {} for s in ("limits", "requests")
    }
    for section, amounts in sections.items():
        for name, amount in amounts.items():
            where = ("resources", section)
            if "/" not in name and name not in _STANDARD_CONTAINER_RESOURCES and not _hugepages(name):
                found.append(
                    (
                        where,
                        f"{quoted(name)} is not a container resource (cpu, memory, "
                        "ephemeral-storage, hugepages-<size>, or a prefixed name such as nvidia.com/gpu)",
                    )
                )
                continue
            if "/" in name and (problem := qualified_name_problem(name)):
                found.append((where, f"resource name {quoted(name)} {problem}"))
                continue
            value = quantity(amount)
            if value is None:
                continue
            if value < 0:
                found.append((where, f"{name} must not be negative"))
            elif not _native(name) and value != value.to_integral_value():
                found.append((where, f"{name} must be a whole number (an extended resource counts devices)"))
    limits, requests = sections["limits"], sections["requests"]
    for name, amount in requests.items():
        request = quantity(amount)
        if request is None:
            continue
        if name not in limits:
            if not _overcommit_allowed(name):
                found.append(
                    (
                        ("resources", "limits"),
                        f"{name} needs a limit equal to its request (Kubernetes does not overcommit it)",
                    )
                )
            continue
        limit = quantity(limits[name])
        if limit is None:
            continue
        if not _overcommit_allowed(name) and request != limit:
            found.append(
                (
                    ("resources", "requests"),
                    f"{name} request must equal its limit (Kubernetes does not overcommit it)",
                )
            )
        elif request > limit:
            found.append((("resources", "requests"), f"{name} request is above its limit"))
    return found


# Source: CORE validateContainerOnlyForPod: a Pod's container image "must not have leading or
# trailing whitespace" (strings.TrimSpace; a pod template is spared, for backward
# compatibility). What Go's unicode.IsSpace calls space: '\t', '\n', '\v', '\f', '\r', ' ',
# U+0085, U+00A0 and the other Unicode White_Space characters
# (https://pkg.go.dev/unicode#IsSpace, read 2026-11-25).
GO_SPACE = (
    "\t\n\v\f\r \x85\xa0\u1680" + "".join(map(chr, range(0x2000, 0x200B))) + "\u2028\u2029\u202f\u205f\u3000"
)
# Source: CORE validateInitContainerRestartPolicy (Always, a sidecar), and validateContainers:
# a regular container's restartPolicy "may not be set for non-init containers".
INIT_RESTART_POLICIES = ("Always",)

# Source: CORE validEnvDownwardAPIFieldPathExpressions, validateObjectFieldSelector (a
# subscripted metadata.labels['k'] or metadata.annotations['k'] takes a qualified name) and
# pkg/apis/core/pods ConvertDownwardAPIFieldLabel (apiVersion v1 only; defaulted to v1).
ENV_FIELD_PATHS = (
    "metadata.name",
    "metadata.namespace",
    "metadata.uid",
    "spec.nodeName",
    "spec.serviceAccountName",
    "status.hostIP",
    "status.hostIPs",
    "status.podIP",
    "status.podIPs",
)
_SUBSCRIPTED = re.compile(r"(metadata\.(?:labels|annotations))\['(.*)'\]", re.DOTALL)


def field_ref_problem(field_ref: dict[str, Any]) -> str | None:
    """validateObjectFieldSelector (CORE) for an env var's valueFrom.fieldRef."""
    version, path = field_ref.get("apiVersion"), field_ref.get("fieldPath")
    if isinstance(version, str) and version not in ("", "v1"):
        return f"apiVersion {quoted(version)} is not supported (v1)"
    if not isinstance(path, str) or not path:
        return None  # the schema requires it
    if match := _SUBSCRIPTED.fullmatch(path):
        which, key = match.groups()
        problem = qualified_name_problem(key.lower() if which.endswith("annotations") else key)
        return f"{quoted(path)}: the key {problem}" if problem else None
    if path not in ENV_FIELD_PATHS:
        return (
            f"{quoted(path)} is not supported (one of {', '.join(ENV_FIELD_PATHS)}, or "
            "metadata.labels['<key>'] / metadata.annotations['<key>'])"
        )
    return None


def sub_path_problems(mount: Any) -> Found:
    """ValidateVolumeMounts (CORE): subPath and subPathExpr are relative paths without a '..'
    element (validateLocalDescendingPath), and not both set."""
    mount = _mapping(mount)
    found: Found = []
    for key in ("subPath", "subPathExpr"):
        value = mount.get(key)
        if not isinstance(value, str) or not value:
            continue
        if value.startswith("/"):
            found.append(((key,), f"{quoted(value)} must be a relative path"))
        if ".." in value.split("/"):
            found.append(((key,), f"{quoted(value)} must not contain '..'"))
    if mount.get("subPath") and mount.get("subPathExpr"):
        found.append((("subPathExpr",), "subPathExpr and subPath are mutually exclusive"))
    return found


def _listed(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def container_problems(
    container: dict[str, Any], relaxed_env: bool = False, init: bool = False, is_pod: bool = False
) -> Found:
    """validateContainerCommon (CORE): name, ports, env, envFrom, mounts, resources,
    security context ids; validateContainers / validateInitContainers: restartPolicy;
    validateContainerOnlyForPod (`is_pod`: a Pod, not a pod template): the image."""
    found: Found = []
    name = container.get("name")
    if isinstance(name, str) and name and (problem := dns_label_problem(name)):
        found.append((("name",), f"container name {problem}"))
    image = container.get("image")
    if is_pod and isinstance(image, str) and image != image.strip(GO_SPACE):
        found.append((("image",), "must not have leading or trailing whitespace"))
    restart = container.get("restartPolicy")
    if restart is not None and not init:
        found.append(
            (
                ("restartPolicy",),
                "may not be set for non-init containers (only an init container may be a sidecar "
                "with restartPolicy Always)",
            )
        )
    elif init and isinstance(restart, str) and restart not in INIT_RESTART_POLICIES:
        found.append((("restartPolicy",), f"{quoted(restart)} is not supported: only Always"))
    port_names: set[str] = set()
    for i, port in enumerate(_listed(container.get("ports"))):
        port = _mapping(port)
        pname = port.get("name")
        if isinstance(pname, str) and pname:
            if problem := port_name_problem(pname):
                found.append((("ports", i, "name"), problem))
            elif pname in port_names:
                found.append((("ports", i, "name"), f"port name {quoted(pname)} is used twice"))
            port_names.add(pname)
        for key in ("containerPort", "hostPort"):
            number = port.get(key)
            # hostPort 0 means none.
            unset = key == "hostPort" and number == 0
            if (
                isinstance(number, int)
                and not isinstance(number, bool)
                and not unset
                and not 1 <= number <= 65535
            ):
                found.append((("ports", i, key), "must be a port number from 1 to 65535"))
    for i, env in enumerate(_listed(container.get("env"))):
        ename = _mapping(env).get("name")
        if isinstance(ename, str) and (problem := env_name_problem(ename, relaxed_env)):
            found.append((("env", i, "name"), problem))
        found += [(("env", i, *where), m) for where, m in env_value_from_problems(env)]
        field_ref = _mapping(_mapping(_mapping(env).get("valueFrom")).get("fieldRef"))
        if problem := field_ref_problem(field_ref):
            found.append((("env", i, "valueFrom", "fieldRef", "fieldPath"), problem))
    for i, source in enumerate(_listed(container.get("envFrom"))):
        prefix = _mapping(source).get("prefix")
        if isinstance(prefix, str) and prefix and (problem := env_name_problem(prefix, relaxed_env)):
            found.append((("envFrom", i, "prefix"), problem.replace("env name", "env prefix", 1)))
    paths: set[str] = set()
    for i, mount in enumerate(_listed(container.get("volumeMounts"))):
        path = _mapping(mount).get("mountPath")
        if isinstance(path, str) and path in paths:
            found.append(
                (("volumeMounts", i, "mountPath"), f"{quoted(path)} is mounted twice in this container")
            )
        paths.add(path)
        found += [(("volumeMounts", i, *w), m) for w, m in sub_path_problems(mount)]
    found += resources_problems(container.get("resources"))
    found += [(("securityContext", *where), m) for where, m in _ids(container.get("securityContext"))]
    return found


def _ids(context: Any) -> Found:
    """IsValidUserID / IsValidGroupID (validation.go:326-338) of a security context."""
    context = _mapping(context)
    return [
        ((key,), f"must be from 0 to {MAX_ID}")
        for key in ("runAsUser", "runAsGroup", "fsGroup")
        if isinstance(context.get(key), int) and not 0 <= context[key] <= MAX_ID
    ]


# --- tolerations, taints, selectors ---------------------------------------------------------

# Source: CORE validateTaintEffect (NoSchedule, PreferNoSchedule, NoExecute).
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")


def toleration_problems(toleration: Any) -> Found:
    """ValidateTolerations (CORE)."""
    if not isinstance(toleration, dict):
        return []
    found: Found = []
    key = toleration.get("key") or ""
    operator = toleration.get("operator") or ""
    value = toleration.get("value") or ""
    effect = toleration.get("effect") or ""
    if isinstance(key, str) and key and (problem := qualified_name_problem(key)):
        found.append((("key",), f"toleration key {quoted(key)} {problem}"))
    if not key and operator != "Exists":
        found.append((("operator",), "must be Exists when key is empty (a toleration of every taint)"))
    if toleration.get("tolerationSeconds") is not None and effect != "NoExecute":
        found.append((("effect",), "must be NoExecute when tolerationSeconds is set"))
    if (
        operator in ("", "Equal")
        and isinstance(value, str)
        and (problem := label_value_problem(str(key), value))
    ):
        found.append((("value",), problem.replace("label value", "toleration value", 1)))
    elif operator == "Exists" and value:
        found.append((("value",), "must be empty when operator is Exists"))
    elif operator not in ("", "Equal", "Exists"):
        found.append((("operator",), f"{quoted(str(operator))} is not Equal or Exists"))
    if effect and effect not in TAINT_EFFECTS:
        found.append((("effect",), f"{quoted(str(effect))} is not one of {', '.join(TAINT_EFFECTS)}"))
    return found


def taint_problems(taint: Any) -> Found:
    """validateNodeTaints (CORE): key a qualified name, value a label value, effect set."""
    if not isinstance(taint, dict):
        return []
    found: Found = []
    key, value, effect = taint.get("key") or "", taint.get("value") or "", taint.get("effect") or ""
    problem = qualified_name_problem(str(key)) if key else "is required"
    if problem:
        found.append((("key",), f"taint key {quoted(str(key))} {problem}"))
    if isinstance(value, str) and (problem := label_value_problem(str(key), value)):
        found.append((("value",), problem.replace("label value", "taint value", 1)))
    if effect not in TAINT_EFFECTS:
        found.append((("effect",), f"{quoted(str(effect))} is not one of {', '.join(TAINT_EFFECTS)}"))
    return found


def _selector_terms(affinity: Any) -> Iterable[tuple[Path, Any]]:
    node = _mapping(_mapping(affinity).get("nodeAffinity"))
    required = _mapping(node.get("requiredDuringSchedulingIgnoredDuringExecution"))
    for i, term in enumerate(_listed(required.get("nodeSelectorTerms"))):
        yield (
            (
                "affinity",
                "nodeAffinity",
                "requiredDuringSchedulingIgnoredDuringExecution",
                "nodeSelectorTerms",
                i,
            ),
            term,
        )
    for i, pref in enumerate(_listed(node.get("preferredDuringSchedulingIgnoredDuringExecution"))):
        yield (
            ("affinity", "nodeAffinity", "preferredDuringSchedulingIgnoredDuringExecution", i, "preference"),
            _mapping(pref).get("preference"),
        )


def node_selector_requirement_problems(requirement: Any) -> Found:
    """ValidateNodeSelectorRequirement (CORE): key a qualified name; In/NotIn need values,
    Exists/DoesNotExist take none, Gt/Lt take one."""
    requirement = _mapping(requirement)
    found: Found = []
    key, operator, values = (
        requirement.get("key"),
        requirement.get("operator"),
        _listed(requirement.get("values")),
    )
    if isinstance(key, str) and (problem := qualified_name_problem(key)):
        found.append((("key",), f"key {quoted(key)} {problem}"))
    if operator in ("In", "NotIn") and not values:
        found.append((("values",), f"must list values for operator {operator}"))
    elif operator in ("Exists", "DoesNotExist") and values:
        found.append((("values",), f"must be empty for operator {operator}"))
    elif operator in ("Gt", "Lt") and len(values) != 1:
        found.append((("values",), f"must hold one number for operator {operator}"))
    return found


# --- pods -------------------------------------------------------------------------------------

# Source: CORE MaxDNSNameservers, MaxDNSSearchPaths, MaxDNSSearchListChars ("derived from
# restrictions in Linux libc name resolution handling") and validatePodDNSConfig.
MAX_DNS_NAMESERVERS = 3
MAX_DNS_SEARCHES = 32
MAX_DNS_SEARCH_CHARS = 2048


def _ip_problem(value: str) -> str | None:
    """validation.IsValidIP: netutils.ParseIPSloppy, which takes IPv4 octets with leading
    zeros and no IPv6 zone."""
    import ipaddress

    if re.fullmatch(r"[0-9]+(\.[0-9]+){3}", value):
        ok = all(int(octet) <= 255 for octet in value.split("."))
    else:
        try:
            ok = "%" not in value and isinstance(ipaddress.ip_address(value), ipaddress.IPv6Address)
        except ValueError:
            ok = False
    return None if ok else f"{quoted(value)} is not an IP address"


def dns_problems(spec: dict[str, Any]) -> Found:
    """validatePodDNSConfig (CORE): dnsPolicy None needs a dnsConfig with a nameserver; at
    most 3 nameservers, each an IP; at most 32 search domains, 2048 characters joined by
    spaces; every option named."""
    policy, config = spec.get("dnsPolicy"), spec.get("dnsConfig")
    if policy == "None":
        if not isinstance(config, dict):
            return [(("dnsConfig",), "is required when dnsPolicy is None (with at least one nameserver)")]
        if not _listed(config.get("nameservers")):
            return [
                (("dnsConfig", "nameservers"), "must list at least one nameserver when dnsPolicy is None")
            ]
    config = _mapping(config)
    found: Found = []
    nameservers = _listed(config.get("nameservers"))
    if len(nameservers) > MAX_DNS_NAMESERVERS:
        found.append(
            (("dnsConfig", "nameservers"), f"lists {len(nameservers)}; at most {MAX_DNS_NAMESERVERS}")
        )
    for i, server in enumerate(nameservers):
        if isinstance(server, str) and (problem := _ip_problem(server)):
            found.append((("dnsConfig", "nameservers", i), problem))
    searches = [s for s in _listed(config.get("searches")) if isinstance(s, str)]
    if len(searches) > MAX_DNS_SEARCHES:
        found.append((("dnsConfig", "searches"), f"lists {len(searches)}; at most {MAX_DNS_SEARCHES}"))
    if len(" ".join(searches)) > MAX_DNS_SEARCH_CHARS:
        found.append(
            (
                ("dnsConfig", "searches"),
                f"hold more than {MAX_DNS_SEARCH_CHARS} characters (spaces between them counted)",
            )
        )
    for i, option in enumerate(_listed(config.get("options"))):
        if isinstance(option, dict) and not option.get("name"):
            found.append((("dnsConfig", "options", i, "name"), "is required"))
    return found


# Source: CORE validateTopologySpreadConstraints, ValidateMaxSkew, validateMinDomains,
# ValidateSpreadConstraintNotRepeat, validateNodeInclusionPolicy.
SPREAD_ACTIONS = ("DoNotSchedule", "ScheduleAnyway")
NODE_INCLUSION_POLICIES = ("Ignore", "Honor")


def _int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def topology_spread_problems(constraints: Any) -> Found:
    """validateTopologySpreadConstraints (CORE): maxSkew and minDomains above zero,
    minDomains only with DoNotSchedule, a topologyKey, each {topologyKey, whenUnsatisfiable}
    pair once."""
    found: Found = []
    listed = _listed(constraints)
    for i, constraint in enumerate(listed):
        if not isinstance(constraint, dict):
            continue
        skew, min_domains = constraint.get("maxSkew"), constraint.get("minDomains")
        key, action = constraint.get("topologyKey"), constraint.get("whenUnsatisfiable")
        if _int(skew) and skew <= 0:
            found.append(((i, "maxSkew"), "must be greater than zero"))
        if key == "":
            found.append(((i, "topologyKey"), "is required"))
        if isinstance(action, str) and action not in SPREAD_ACTIONS:
            found.append(
                ((i, "whenUnsatisfiable"), f"{quoted(action)} is not DoNotSchedule or ScheduleAnyway")
            )
        if _int(min_domains):
            if min_domains <= 0:
                found.append(((i, "minDomains"), "must be greater than zero"))
            if action != "DoNotSchedule":
                found.append(((i, "minDomains"), "needs whenUnsatisfiable DoNotSchedule"))
        for policy in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
            value = constraint.get(policy)
            if isinstance(value, str) and value not in NODE_INCLUSION_POLICIES:
                found.append(((i, policy), f"{quoted(value)} is not Ignore or Honor"))
        later = [_mapping(c) for c in listed[i + 1 :]]
        if any(c.get("topologyKey") == key and c.get("whenUnsatisfiable") == action for c in later):
            found.append(
                ((i,), f"topologyKey {quoted(str(key))} with {action} is repeated in a later constraint")
            )
    return found


# Source: CORE validateVolumeSource: the volume types, one of which a volume names ("must
# specify a volume type", "may not specify more than 1 volume type"), as the v1 API spells them.
VOLUME_SOURCES = (
    "emptyDir",
    "hostPath",
    "gitRepo",
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "secret",
    "nfs",
    "iscsi",
    "glusterfs",
    "flocker",
    "persistentVolumeClaim",
    "rbd",
    "cinder",
    "cephfs",
    "quobyte",
    "downwardAPI",
    "fc",
    "flexVolume",
    "configMap",
    "azureFile",
    "vsphereVolume",
    "photonPersistentDisk",
    "portworxVolume",
    "azureDisk",
    "storageos",
    "projected",
    "scaleIO",
    "csi",
    "ephemeral",
    "image",
)


def volume_source_problems(volume: Any) -> Found:
    """validateVolumeSource (CORE): exactly one volume type; an emptyDir's sizeLimit not
    negative."""
    volume = _mapping(volume)
    sources = [key for key in VOLUME_SOURCES if volume.get(key) is not None]
    found: Found = []
    if not sources:
        found.append(((), f"must name a volume type (one of {', '.join(VOLUME_SOURCES[:6])}, ...)"))
    elif len(sources) > 1:
        found.append(((sources[1],), f"names {' and '.join(sources)}; a volume has one type"))
    size = signed_quantity(_mapping(volume.get("emptyDir")).get("sizeLimit"))
    if size is not None and size < 0:
        found.append((("emptyDir", "sizeLimit"), "must not be negative"))
    return found


def host_alias_problems(alias: Any) -> Found:
    """ValidateHostAliases (CORE): the ip an IP address (IsValidIPForLegacyField), each
    hostname a DNS subdomain."""
    alias = _mapping(alias)
    found: Found = []
    ip = alias.get("ip")
    if isinstance(ip, str) and (problem := _ip_problem(ip)):
        found.append((("ip",), problem))
    for j, hostname in enumerate(_listed(alias.get("hostnames"))):
        if isinstance(hostname, str) and (problem := dns_subdomain_problem(hostname)):
            found.append((("hostnames", j), problem))
    return found


# Source: CORE SysctlSegmentFmt, SysctlContainSlashFmt, SysctlMaxLength and IsValidSysctlName;
# validateSysctls refuses a name given twice.
_SYSCTL_SEGMENT = r"[a-z0-9]([-_a-z0-9]*[a-z0-9])?"
_SYSCTL_NAME = re.compile(rf"({_SYSCTL_SEGMENT}[./])*{_SYSCTL_SEGMENT}")
SYSCTL_NAME_MAX = 253


def sysctls_problems(sysctls: Any) -> Found:
    """validateSysctls (CORE): each name a sysctl name, none twice."""
    found: Found = []
    seen: set[str] = set()
    for i, sysctl in enumerate(_listed(sysctls)):
        name = _mapping(sysctl).get("name")
        if not isinstance(name, str) or not name:
            continue
        if len(name) > SYSCTL_NAME_MAX or not _full(_SYSCTL_NAME, name):
            found.append(
                (
                    (i, "name"),
                    f"sysctl name {quoted(name)} is invalid (lower-case letters, digits, '-' and '_' in "
                    "parts joined by '.' or '/', each starting and ending with a letter or digit, at "
                    "most 253 characters)",
                )
            )
        elif name in seen:
            found.append(((i, "name"), f"sysctl {quoted(name)} is set twice"))
        seen.add(name)
    return found


def pod_spec_problems(spec: Any, relaxed_env: bool = False, is_pod: bool = False) -> Found:
    """ValidatePodSpec (CORE), the rules of it the schema does not carry. Paths start at the
    PodSpec. Required fields are left to the schema: a task pod spec is a partial one.
    `is_pod`: the spec of a Pod (a task's), not of a pod template."""
    if not isinstance(spec, dict):
        return []
    found: Found = []
    volumes: set[str] = set()
    for i, volume in enumerate(_listed(spec.get("volumes"))):
        name = _mapping(volume).get("name")
        if isinstance(name, str) and name:
            if problem := dns_label_problem(name):
                found.append((("volumes", i, "name"), f"volume name {problem}"))
            elif name in volumes:
                found.append((("volumes", i, "name"), f"volume name {quoted(name)} is used twice"))
            volumes.add(name)
        found += [(("volumes", i, *where), m) for where, m in volume_source_problems(volume)]
    for i, alias in enumerate(_listed(spec.get("hostAliases"))):
        found += [(("hostAliases", i, *where), m) for where, m in host_alias_problems(alias)]
    sysctls = _mapping(spec.get("securityContext")).get("sysctls")
    found += [(("securityContext", "sysctls", *where), m) for where, m in sysctls_problems(sysctls)]
    containers: set[str] = set()
    for kind in ("containers", "initContainers"):
        for i, container in enumerate(_listed(spec.get(kind))):
            if not isinstance(container, dict):
                continue
            found += [
                ((kind, i, *where), m)
                for where, m in container_problems(container, relaxed_env, kind == "initContainers", is_pod)
            ]
            name = container.get("name")
            if isinstance(name, str) and name:
                if name in containers:
                    found.append(((kind, i, "name"), f"container name {quoted(name)} is used twice"))
                containers.add(name)
    for i, toleration in enumerate(_listed(spec.get("tolerations"))):
        found += [(("tolerations", i, *where), m) for where, m in toleration_problems(toleration)]
    found += [(("nodeSelector",), p) for p in labels_problems(spec.get("nodeSelector"))]
    for where, term in _selector_terms(spec.get("affinity")):
        for j, requirement in enumerate(_listed(_mapping(term).get("matchExpressions"))):
            found += [
                ((*where, "matchExpressions", j, *w), m)
                for w, m in node_selector_requirement_problems(requirement)
            ]
    for key, rule in (
        ("serviceAccountName", dns_subdomain_problem),
        ("priorityClassName", dns_subdomain_problem),
        ("hostname", dns_label_problem),
        ("subdomain", dns_label_problem),
    ):
        value = spec.get(key)
        if isinstance(value, str) and value and (problem := rule(value)):
            found.append(((key,), problem))
    found += dns_problems(spec)
    found += [
        (("topologySpreadConstraints", *where), m)
        for where, m in topology_spread_problems(spec.get("topologySpreadConstraints"))
    ]
    deadline = spec.get("activeDeadlineSeconds")
    if isinstance(deadline, int) and not isinstance(deadline, bool) and not 1 <= deadline <= MAX_ID:
        found.append((("activeDeadlineSeconds",), f"must be from 1 to {MAX_ID}"))
    found += [(("securityContext", *where), m) for where, m in _ids(spec.get("securityContext"))]
    return found


def volume_mount_problems(
    spec: Any, provided: Callable[[str], bool] | None = None, where: str = "in the pod"
) -> Found:
    """ValidateVolumeMounts (CORE): each mount names a volume of the pod ("Not found"). A task
    pod spec gets volumes merged in by others: `provided` says which names they give."""
    spec = _mapping(spec)
    volumes = {_mapping(v).get("name") for v in _listed(spec.get("volumes"))}
    found: Found = []
    for kind in ("containers", "initContainers"):
        for i, container in enumerate(_listed(spec.get(kind))):
            for j, mount in enumerate(_listed(_mapping(container).get("volumeMounts"))):
                name = _mapping(mount).get("name")
                if isinstance(name, str) and name not in volumes and not (provided and provided(name)):
                    found.append(
                        ((kind, i, "volumeMounts", j, "name"), f"no volume named {quoted(name)} {where}")
                    )
    return found


# The volumes Determined's master adds to every task pod it creates, by name. Source:
# determined-ai/determined v0.38.1 master/internal/rm/kubernetesrm/volumes.go
# (dockerMountsToHostVolumes "det-host-volume-%d", one per bind mount and shared_fs storage;
# configureShmVolume "det-shm-volume"; configureAdditionalFilesVolumes "archive-volume",
# "entrypoint-volume", "additional-files-volume") and spec.go handleRootArchiveFiles
# ("root-volume-%d"); configureJobSpec appends them to the pod spec's own volumes (read
# 2026-11-25 with git show v0.38.1:<path>).
MASTER_TASK_VOLUMES = ("det-shm-volume", "archive-volume", "entrypoint-volume", "additional-files-volume")
_MASTER_NUMBERED_VOLUME = re.compile(r"(det-host-volume|root-volume)-(0|[1-9][0-9]*)")


def master_task_volume(name: str) -> bool:
    """Whether the master may give a task pod a volume of this name (numbered ones exist only
    when the task has that many mounts or root files: mounting one is not refused)."""
    return name in MASTER_TASK_VOLUMES or _full(_MASTER_NUMBERED_VOLUME, name)


def task_mount_problems(spec: Any, provided: Iterable[str] = ()) -> Found:
    """Mounts of a task pod spec that name a volume of neither the spec, `provided` (the
    layers merged with it) nor the master."""
    names = set(provided)
    return volume_mount_problems(
        spec,
        lambda name: name in names or master_task_volume(name),
        "in this pod spec, the other pod specs or the ones Determined's master adds (Kubernetes "
        "refuses the pod: volume not found)",
    )


def pod_problems(pod: Any, relaxed_env: bool = False, is_pod: bool = False) -> Found:
    """A Pod or pod template (metadata + spec): its metadata's labels and annotations, and
    its spec. `is_pod`: a Pod (a task's), not a pod template."""
    if not isinstance(pod, dict):
        return []
    found = metadata_problems("Pod", pod.get("metadata"), template=True)
    found += [(("spec", *where), m) for where, m in pod_spec_problems(pod.get("spec"), relaxed_env, is_pod)]
    return found


# --- Secrets and ConfigMaps -------------------------------------------------------------------

# Source: kubernetes pkg/apis/core/types.go MaxSecretSize = 1 * 1024 * 1024, checked by CORE
# ValidateSecret (sum of data values) and ValidateConfigMap (data and binaryData together).
MAX_DATA_BYTES = 1024 * 1024


def data_size(obj: dict[str, Any]) -> int:
    """Bytes of a Secret's data (stringData is merged into data before validation; data is
    base64) or a ConfigMap's data and binaryData."""
    import base64
    import binascii

    total = 0
    for section in ("data", "binaryData"):
        for value in _mapping(obj.get(section)).values():
            if not isinstance(value, str):
                continue
            if obj.get("kind") == "Secret" or section == "binaryData":
                try:
                    total += len(base64.b64decode(value, validate=True))
                    continue
                except (binascii.Error, ValueError):
                    pass
            total += _size(value)
    total += sum(_size(v) for v in _mapping(obj.get("stringData")).values() if isinstance(v, str))
    return total


def data_size_problem(kind: str, size: int) -> str | None:
    if size > MAX_DATA_BYTES:
        return f"{kind} data is {size} bytes; Kubernetes takes at most {MAX_DATA_BYTES} (1 MiB) in one {kind}"
    return None


def data_problems(obj: dict[str, Any]) -> Found:
    found: Found = []
    for section in ("data", "binaryData", "stringData"):
        for key in _mapping(obj.get(section)):
            if isinstance(key, str) and (problem := config_key_problem(key)):
                found.append(((section,), problem))
    if problem := data_size_problem(str(obj.get("kind")), data_size(obj)):
        found.append((("data",), problem))
    return found


# --- whole objects ----------------------------------------------------------------------------

POD_TEMPLATE_PATHS: dict[str, Path] = {
    "Deployment": ("spec", "template"),
    "StatefulSet": ("spec", "template"),
    "DaemonSet": ("spec", "template"),
    "ReplicaSet": ("spec", "template"),
    "Job": ("spec", "template"),
    "CronJob": ("spec", "jobTemplate", "spec", "template"),
    "PodTemplate": ("template",),
}


def at(obj: Any, path: Path) -> Any:
    for step in path:
        if isinstance(step, int):
            obj = obj[step] if isinstance(obj, list) and step < len(obj) else None
        else:
            obj = obj.get(step) if isinstance(obj, dict) else None
    return obj


def object_problems(obj: Any) -> Found:
    """Every rule above that applies to one Kubernetes object as the API server receives it."""
    if not isinstance(obj, dict):
        return []
    kind = str(obj.get("kind") or "")
    found = metadata_problems(kind, obj.get("metadata"))
    template_path = POD_TEMPLATE_PATHS.get(kind) or (() if kind == "Pod" else None)
    if template_path is not None:
        template = at(obj, template_path)
        found += [((*template_path, *w), m) for w, m in pod_problems(template, is_pod=kind == "Pod")]
        found += [
            ((*template_path, "spec", *w), m)
            for w, m in volume_mount_problems(_mapping(template).get("spec"))
        ]
    if kind in ("Secret", "ConfigMap"):
        found += data_problems(obj)
    if kind == "Node":
        for i, taint in enumerate(_listed(at(obj, ("spec", "taints")))):
            found += [(("spec", "taints", i, *w), m) for w, m in taint_problems(taint)]
    return found
