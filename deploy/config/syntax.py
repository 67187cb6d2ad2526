"""Value syntaxes that Kubernetes, the clouds and the master accept, as annotated types.

Every pattern must match the whole value (`re.fullmatch`): `re.match(...$)` would accept a
trailing newline ("8Gi\\n") that Kubernetes then refuses. Messages describe the form in
words and with an example, never with a regex.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from typing import Annotated, Any

from pydantic import AfterValidator, BeforeValidator, Field

# Largest value a 32-bit signed integer holds: what the master's Postgres columns and
# Kubernetes' int32 fields store.
INT32_MAX = 2**31 - 1

_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_LABEL_NAME = re.compile(r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?")
# Kubernetes resource.Quantity: a decimal number with an optional binary (Ki..Ei),
# decimal (m, k, M..E) or exponent suffix.
_QUANTITY = re.compile(
    r"(?P<number>[0-9]+(\.[0-9]*)?|\.[0-9]+)(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|m|k|M|G|T|P|E|[eE][-+]?[0-9]+)?"
)
_SEMVER = re.compile(r"(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)")
_KUBERNETES_MINOR = re.compile(r"1\.(0|[1-9][0-9]*)")
_CHART_VERSION = re.compile(r"v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)")
# An image repository without tag, by the grammar of distribution/reference: an optional
# registry host (with port), then lower-case path components.
_PATH_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_REGISTRY_HOST = (
    r"(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*(?::[0-9]+)?)"
)
_REPOSITORY = re.compile(rf"(?:{_REGISTRY_HOST}/)?{_PATH_COMPONENT}(?:/{_PATH_COMPONENT})*")
_HOSTNAME = re.compile(r"(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+")
_EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+")
_URL = re.compile(r"https?://[^\s/]+(/\S*)?")


def _full(pattern: re.Pattern[str], value: str) -> bool:
    return pattern.fullmatch(value) is not None


# Longest value a message repeats whole: a longer one is cut, so that what is allowed, which
# follows it, still fits on the line.
SHOWN_LENGTH = 80


def shown(value: str) -> str:
    """A value as a message repeats it: quoted, escapes visible, cut when long."""
    if len(value) <= SHOWN_LENGTH:
        return repr(value)
    return f"{value[:SHOWN_LENGTH]!r}... ({len(value)} characters)"


def control_character(value: str) -> bool:
    """Whether the value holds a newline, tab, NUL or other control character."""
    return any(ord(c) < 32 or 127 <= ord(c) < 160 for c in value)


def dns_label_problem(value: str) -> str | None:
    if len(value) > 63 or not _full(_DNS_LABEL, value):
        return (
            f"{shown(value)} is not a valid DNS label (lower-case letters, digits and '-', "
            "starting and ending with a letter or digit, at most 63 characters)"
        )
    return None


def _check(problem: Callable[[str], str | None]) -> Callable[[str], str]:
    def check(value: str) -> str:
        message = problem(value)
        if message:
            raise ValueError(message)
        return value

    return check


def pattern_check(pattern: re.Pattern[str] | str, describe: str, max_length: int | None = None):
    """A validator: the whole value matches `pattern`, else "'<value>' is not <describe>"."""
    compiled = re.compile(pattern)

    def problem(value: str) -> str | None:
        if (max_length and len(value) > max_length) or not _full(compiled, value):
            return f"{shown(value)} is not {describe}"
        return None

    return _check(problem)


DnsLabel = Annotated[str, AfterValidator(_check(dns_label_problem))]
DnsSubdomain = Annotated[
    str,
    AfterValidator(
        pattern_check(
            _DNS_SUBDOMAIN,
            "a valid Kubernetes name (lower-case letters, digits, '-' and '.', at most 253 characters; "
            "example: standard-rwo)",
            253,
        )
    ),
]
Version = Annotated[
    str,
    AfterValidator(
        pattern_check(_SEMVER, "a release version MAJOR.MINOR.PATCH without leading zeros (example: 0.38.1)")
    ),
]
KubernetesMinor = Annotated[
    str, AfterValidator(pattern_check(_KUBERNETES_MINOR, "a Kubernetes minor version (example: 1.33)"))
]
ChartVersion = Annotated[
    str,
    AfterValidator(pattern_check(_CHART_VERSION, "a chart version vMAJOR.MINOR.PATCH (example: v26.7.0)")),
]
ImageRepository = Annotated[
    str,
    AfterValidator(
        pattern_check(
            _REPOSITORY,
            "an image registry or repository path (examples: determinedai, "
            "mirror.example.com:5000/determinedai)",
            255,
        )
    ),
]
# A pinned image reference: a repository with a tag, a digest, or both
# (mirror.example.com/determinedai/determined-master:0.38.1, postgres:17.6@sha256:...).
_IMAGE = re.compile(
    rf"{_REPOSITORY.pattern}(?::[A-Za-z0-9_][A-Za-z0-9_.-]{{0,127}})?(?:@sha256:[0-9a-f]{{64}})?"
)


def _image_problem(value: str) -> str | None:
    if len(value) > 255 or not _full(_IMAGE, value):
        return (
            f"{shown(value)} is not an image reference (repository with a tag or digest; example: "
            "mirror.example.com/determinedai/determined-master:0.38.1)"
        )
    last = value.rsplit("/", 1)[-1]
    if ":" not in last and "@" not in value:
        return f"{value!r} has no tag or digest: pin the image (example: postgres:17.6)"
    return None


ImageReference = Annotated[str, AfterValidator(_check(_image_problem))]
# An environment variable name as Kubernetes accepts it (C identifiers, plus '.' and '-').
EnvName = Annotated[
    str,
    AfterValidator(
        pattern_check(
            r"[-._a-zA-Z][-._a-zA-Z0-9]*",
            "an environment variable name (letters, digits, '_', '-' and '.', not starting with a digit)",
        )
    ),
]
HostName = Annotated[
    str, AfterValidator(pattern_check(_HOSTNAME, "a host name (example: det.example.com)", 253))
]
Email = Annotated[str, AfterValidator(pattern_check(_EMAIL, "an e-mail address"))]
# user:password@ (or a token as the user) in a URL's authority.
_URL_CREDENTIALS = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^/?#]*@")


def _url_problem(value: str) -> str | None:
    # Checked first, and the value not repeated: it holds a secret.
    if _URL_CREDENTIALS.match(value):
        return (
            "must not hold a password or token (user:password@ in the URL): URLs are not kept secret, "
            "and this one would be written in clear where the project uses it"
        )
    if not _full(_URL, value):
        return f"{shown(value)} is not an http:// or https:// URL (example: https://host.example.com:8443)"
    return None


HttpUrl = Annotated[str, AfterValidator(_check(_url_problem))]


def _absolute_path_problem(value: str) -> str | None:
    if not value.startswith("/") or control_character(value):
        return f"{shown(value)} is not an absolute path (one line, starting with '/')"
    return None


AbsolutePath = Annotated[str, AfterValidator(_check(_absolute_path_problem))]

# A host name or IP address, without port or path (a Service name is a host name too).
_HOST_NAME = re.compile(r"[A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?(\.[A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?)*")


def _host_problem(value: str) -> str | None:
    try:
        ipaddress.ip_address(value)
        return None
    except ValueError:
        pass
    if len(value) > 253 or not _full(_HOST_NAME, value):
        return (
            f"{shown(value)} is not a host name or IP address (examples: db.example.com, 10.0.0.5; "
            "no scheme, port or path: the port has a key of its own)"
        )
    return None


Host = Annotated[str, AfterValidator(_check(_host_problem))]


def pem_certificates_problem(value: str) -> str | None:
    """CA certificates in PEM form, and nothing secret: the value is written in clear."""
    if "PRIVATE KEY-----" in value:
        return (
            "holds a private key: give only the CA certificates (-----BEGIN CERTIFICATE----- ...); "
            "this value is not kept secret"
        )
    if "-----BEGIN CERTIFICATE-----" not in value or "-----END CERTIFICATE-----" not in value:
        return "must be CA certificates in PEM form (-----BEGIN CERTIFICATE----- ...)"
    return None


NonEmpty = Annotated[str, Field(min_length=1)]


def _no_boolean(value: Any) -> Any:
    # pydantic would read `true` as 1; a count given as a boolean is a mistake.
    if isinstance(value, bool):
        raise ValueError("must be a whole number, not a boolean")
    return value


# true or false only: pydantic would also read "yes", "on" and "1" as true (the YAML 1.2 the
# stack file is read with keeps them strings, and so must the model).
Flag = Annotated[bool, Field(strict=True)]


def _number(value: Any) -> Any:
    if isinstance(value, bool):
        raise ValueError("must be a number, not a boolean")
    return value


Fraction = Annotated[float, BeforeValidator(_number)]


def whole_number(ge: int, le: int = INT32_MAX) -> Any:
    """An int within [ge, le] (default: what a 32-bit column holds); booleans refused."""
    return Annotated[int, BeforeValidator(_no_boolean), Field(ge=ge, le=le)]


def _cidr(value: str) -> str:
    try:
        ipaddress.ip_network(value, strict=True)
    except ValueError:
        raise ValueError(f"{shown(value)} is not a CIDR range (example: 203.0.113.0/24)") from None
    return value


Cidr = Annotated[str, AfterValidator(_cidr)]


# --- quantities -----------------------------------------------------------------------


def _number_as_text(value: Any) -> Any:
    # YAML turns `cpu: 2` into a number; Kubernetes quantities are strings.
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    return value


def quantity_value(value: str) -> Decimal:
    """The numeric value of a quantity in base units ('500m' -> 0.5, '1Ki' -> 1024)."""
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


def _positive_quantity(value: str) -> str:
    try:
        amount = quantity_value(value)
    except ValueError:
        raise ValueError(
            f"{shown(value)} is not a Kubernetes quantity (examples: '2', '500m', '8Gi', '30Gi')"
        ) from None
    if amount <= 0:
        raise ValueError(f"{value!r} must be greater than zero")
    return value


Quantity = Annotated[str, BeforeValidator(_number_as_text), AfterValidator(_positive_quantity)]


# --- labels and taints -----------------------------------------------------------------


def label_key_problem(key: str, what: str = "label key") -> str | None:
    prefix, _, name = key.rpartition("/")
    if prefix and (len(prefix) > 253 or not _full(_DNS_SUBDOMAIN, prefix)):
        return (
            f"{what} {shown(key)} has an invalid prefix {shown(prefix)} (a DNS subdomain such as example.com)"
        )
    if not name or len(name) > 63 or not _full(_LABEL_NAME, name):
        return (
            f"{what} {shown(key)} is invalid (name part: letters, digits, '-', '_', '.', starting and ending "
            "with a letter or digit, at most 63 characters)"
        )
    return None


def label_value_problem(key: str, value: str) -> str | None:
    if value and (len(value) > 63 or not _full(_LABEL_NAME, value)):
        return (
            f"label value {shown(value)} for {shown(key)} is invalid (letters, digits, '-', '_', '.', "
            "starting and ending with a letter or digit, at most 63 characters)"
        )
    return None


def _labels(labels: dict[str, str]) -> dict[str, str]:
    for key, value in labels.items():
        message = label_key_problem(key) or label_value_problem(key, value)
        if message:
            raise ValueError(message)
    return labels


LabelKey = Annotated[str, AfterValidator(_check(label_key_problem))]
Labels = Annotated[dict[str, str], AfterValidator(_labels)]


def _annotations(annotations: dict[str, str]) -> dict[str, str]:
    # Annotation keys have the syntax of label keys; their values are free text.
    for key in annotations:
        message = label_key_problem(key, "annotation key")
        if message:
            raise ValueError(message)
    return annotations


Annotations = Annotated[dict[str, str], AfterValidator(_annotations)]
