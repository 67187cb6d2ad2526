"""Value syntaxes that Kubernetes, the clouds and the master accept, as annotated types.

Every pattern must match the whole value (`re.fullmatch`): `re.match(...$)` would accept a
trailing newline ("8Gi\\n") that Kubernetes then refuses. Messages describe the form in
words and with an example, never with a regex.
"""

from __future__ import annotations

import base64
import binascii
import ipaddress
import re
import ssl
import unicodedata
from collections.abc import Callable
from typing import Annotated, Any

from pydantic import AfterValidator, BeforeValidator, Field, ValidationError
from pydantic_core import InitErrorDetails, PydanticCustomError

from components.kube import api_rules
from components.kube.api_rules import quantity_value  # one parser for the project: Kubernetes'

# Largest value a 32-bit signed integer holds: what the master's Postgres columns and
# Kubernetes' int32 fields store.
INT32_MAX = 2**31 - 1

_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
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


# --- text -------------------------------------------------------------------------------

# Bidirectional embedding, override and isolate controls: text holding them reads otherwise
# than it is (master.yaml, the web UI, a terminal showing the plan). Source: Unicode
# Standard Annex #9, "Explicit Directional Embeddings/Overrides/Isolates" (U+202A-U+202E,
# U+2066-U+2069), https://www.unicode.org/reports/tr9/ (read 2026-11); the "Trojan Source"
# characters of CVE-2021-42574, https://nvd.nist.gov/vuln/detail/CVE-2021-42574 (read 2026-11).
BIDI_CONTROLS = frozenset(map(chr, [*range(0x202A, 0x202F), *range(0x2066, 0x206A)]))
# What a multi-line value (PEM) may hold besides printable text.
_LINE_BREAKS = frozenset("\n\r\t")


def _character_name(c: str) -> str:
    names = {"\n": "a newline", "\r": "a carriage return", "\t": "a tab", "\0": "a NUL", "\x1b": "an escape"}
    if c in names:
        return names[c]
    if c in BIDI_CONTROLS:
        return f"a bidirectional control (U+{ord(c):04X} {unicodedata.name(c)})"
    if unicodedata.category(c) == "Cs":
        return f"a lone surrogate (U+{ord(c):04X}, not encodable as UTF-8)"
    return f"a control character (U+{ord(c):04X})"


def text_problem(value: str, multiline: bool = False) -> str | None:
    """Why `value` is not text a value may hold, or None: control characters (newlines and
    tabs too, unless `multiline`), bidirectional controls and lone surrogates are refused.
    The message never repeats the value (it may be a secret): it names the character and
    where it is."""
    for i, c in enumerate(value):
        if multiline and c in _LINE_BREAKS:
            continue
        if ord(c) < 32 or 127 <= ord(c) < 160 or c in BIDI_CONTROLS or unicodedata.category(c) == "Cs":
            where = "at the end" if i == len(value) - 1 else f"at character {i + 1} of {len(value)}"
            kind = "text (newlines allowed)" if multiline else "one line of text"
            return f"must be {kind} without control characters; it holds {_character_name(c)} {where}"
    return None


def dns_label_problem(value: str) -> str | None:
    # The API server's rule (IsDNS1123Label), in the config's words.
    if api_rules.dns_label_problem(value):
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
        # Control and bidirectional characters first: a loose pattern (an e-mail's [^@\s]) lets
        # a NUL or U+202E through.
        if (max_length and len(value) > max_length) or not _full(compiled, value) or text_problem(value):
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


def _registry_port_problem(value: str) -> str | None:
    # The registry host of an image reference is its first component, when others follow.
    if "/" in value and (message := port_problem(value.split("/", 1)[0])):
        return f"{shown(value)}: its registry {message}"
    return _registry_case_problem(value)


def _registry_case_problem(value: str) -> str | None:
    """Repository path components are lower case; a first component with upper case and no
    '.' or ':' (not localhost) is read as a registry host by distribution/reference's
    splitDockerDomain (v0.6: `strings.ToLower(name[:i]) == name[:i]` keeps only lower-case
    ones on Docker Hub), and older parsers refuse the reference ("repository name must be
    lowercase"). Either way the image is not the Docker Hub repository meant. Source:
    https://github.com/distribution/reference/blob/main/normalize.go and regexp.go (path
    components [a-z0-9]+...), read 2026-11-25."""
    first = value.split("/", 1)[0]
    if "/" not in value or first == first.lower() or any(c in first for c in ".:") or first == "localhost":
        return None
    return (
        f"{shown(value)}: {first!r} has upper-case letters, which repository paths never have; container "
        "runtimes take it for a registry host (it has no '.' or ':', so none they can reach) or refuse "
        "the reference: write the path in lower case (determinedai/...), or give the registry's full "
        "host name"
    )


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
    AfterValidator(_check(_registry_port_problem)),
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
    return _registry_port_problem(value)


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


# TCP ports are 16-bit numbers, and port 0 cannot be dialled: a URL or host naming another
# port reaches nothing (Go's net.Dial, which the master uses, fails with "invalid port";
# Python's urllib, under boto3 and requests in tasks, with "Port out of range 0-65535").
# Source: RFC 9293 section 3.1 (the 16-bit source and destination port fields),
# https://www.rfc-editor.org/rfc/rfc9293 (read 2026-11); IANA's Service Name and Transport
# Protocol Port Number Registry (port 0 "Reserved"; ranges 0-65535, RFC 6335),
# https://www.iana.org/assignments/service-names-port-numbers/ (read 2026-11); RFC 3986
# section 3.2.3 (the port of a URL's authority), https://www.rfc-editor.org/rfc/rfc3986 (read
# 2026-11).
PORT_MIN, PORT_MAX = 1, 65535
# The port of an authority (host:port, [v6]:port), after any user information.
_AUTHORITY_PORT = re.compile(r"(?:[^@]*@)?(?:\[[^\]]*\]|[^:\[\]]*):(?P<port>[^:]*)")


def port_problem(authority: str) -> str | None:
    """Why the port of `authority` (host, host:port or [v6]:port, no scheme or path) cannot
    be dialled, or None (no port, or one from PORT_MIN to PORT_MAX)."""
    match = _AUTHORITY_PORT.fullmatch(authority)
    if match is None or not match["port"]:
        return None
    port = match["port"]
    if not port.isascii() or not port.isdigit() or not PORT_MIN <= int(port) <= PORT_MAX:
        shown_port = shown(port)
        return f"names port {shown_port}; TCP ports are {PORT_MIN} to {PORT_MAX}"
    return None


def _url_authority(value: str) -> str:
    return value.split("://", 1)[-1].split("/", 1)[0].split("?", 1)[0].split("#", 1)[0]


def _url_problem(value: str) -> str | None:
    # Checked first, and the value not repeated: it holds a secret.
    if _URL_CREDENTIALS.match(value):
        return (
            "must not hold a password or token (user:password@ in the URL): URLs are not kept secret, "
            "and this one would be written in clear where the project uses it"
        )
    if not _full(_URL, value) or text_problem(value):
        return f"{shown(value)} is not an http:// or https:// URL (example: https://host.example.com:8443)"
    if message := port_problem(_url_authority(value)):
        return f"{shown(value)} {message}"
    return None


HttpUrl = Annotated[str, AfterValidator(_check(_url_problem))]


def registry_server_problem(value: str) -> str | None:
    """Why the port of a registry server (host[:port][/path], optionally with http(s)://)
    cannot be dialled, or None."""
    message = port_problem(_url_authority(value))
    return f"{shown(value)} {message}" if message else None


# A validator of a registry server's port (its syntax is checked by the caller's pattern).
RegistryServerPort = AfterValidator(_check(registry_server_problem))


def _absolute_path_problem(value: str) -> str | None:
    if not value.startswith("/") or text_problem(value):
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


# PEM blocks (RFC 7468, section 2: "-----BEGIN <label>-----" ... "-----END <label>-----").
_PEM_BLOCK = re.compile(r"-----BEGIN ([A-Z0-9 ]+)-----(.*?)-----END ([A-Z0-9 ]+)-----", re.DOTALL)


def _der_length(der: bytes) -> int | None:
    """The length of the DER SEQUENCE `der` starts with, header included (X.690 8.1.3)."""
    if len(der) < 2 or der[0] != 0x30:
        return None
    if der[1] < 0x80:
        return 2 + der[1]
    count = der[1] & 0x7F
    if not 0 < count <= 4 or len(der) < 2 + count:
        return None
    return 2 + count + int.from_bytes(der[2 : 2 + count], "big")


def _parses_as_x509(der: bytes) -> bool:
    """Whether `der` is exactly one X.509 certificate: one DER SEQUENCE, nothing after it (Go's
    x509.ParseCertificate, which the master's trust store uses, refuses trailing data), that
    OpenSSL reads as a certificate (as the task containers' SSL_CERT_FILE is read)."""
    if _der_length(der) != len(der):
        return False
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    try:
        context.load_verify_locations(cadata=der)
    except (ssl.SSLError, ValueError):
        return False
    return True


def pem_certificates_problem(value: str) -> str | None:
    """CA certificates in PEM form, each an X.509 certificate, and nothing secret: the value
    is written in clear. Text between blocks is allowed (bundles carry comments); a block of
    another kind, or one that is not a certificate, is refused: OpenSSL clients (Python's
    ssl, requests, curl) fail to load a trust file holding it. Source: RFC 7468 section 5
    (the CERTIFICATE label, base64 of a DER Certificate of RFC 5280 section 4.1),
    https://www.rfc-editor.org/rfc/rfc7468 (read 2026-11); Python ssl
    SSLContext.load_verify_locations, https://docs.python.org/3/library/ssl.html (read 2026-11)."""
    if "PRIVATE KEY-----" in value:
        return (
            "holds a private key: give only the CA certificates (-----BEGIN CERTIFICATE----- ...); "
            "this value is not kept secret"
        )
    if message := text_problem(value, multiline=True):
        return message
    blocks = list(_PEM_BLOCK.finditer(value))
    if not blocks:
        return "must be CA certificates in PEM form (-----BEGIN CERTIFICATE----- ...)"
    outside = _PEM_BLOCK.sub("", value)
    if "-----BEGIN" in outside or "-----END" in outside:
        return "holds a BEGIN or END line without its pair: each certificate needs both"
    for number, block in enumerate(blocks, 1):
        label, body, end = block[1], block[2], block[3]
        if label != end:
            return f"block {number} begins as {label!r} and ends as {end!r}"
        if label != "CERTIFICATE":
            return f"block {number} is a {label!r} block: only CERTIFICATE blocks (CA certificates) go here"
        try:
            der = base64.b64decode("".join(body.split()), validate=True)
        except (binascii.Error, ValueError):
            return f"certificate {number} is not base64 text"
        if not _parses_as_x509(der):
            return f"certificate {number} does not parse as an X.509 certificate (truncated, or another kind)"
    return None


PemCertificates = Annotated[str, AfterValidator(_check(pem_certificates_problem))]


def path_safe(key: str) -> bool:
    # A key a key path can show: a ':' would end the path early, a space or control would
    # hide where it ends.
    return bool(key) and ":" not in key and not any(c.isspace() for c in key) and not text_problem(key)


def entry_at(path: str, key: str) -> tuple[str, str]:
    """Where a problem of one entry of the mapping at `path` is reported, and the start of its
    message: `path.key` and nothing, or, for a key a path cannot show, `path` and the key."""
    return (f"{path}.{key}", "") if path_safe(key) else (path, f"key {shown(key)}: ")


def each_entry(check: Callable[[str, Any], str | None]) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """A validator of a mapping that reports every bad entry, each at its own key (`tags.team`),
    in one run. A key a path cannot show (a ':', a space, a control character) is reported at
    the mapping, the message naming it."""

    def validate(entries: dict[str, Any]) -> dict[str, Any]:
        details = []
        for key, value in entries.items():
            message = check(key, value)
            if message is None:
                continue
            at, text = ((key,), message) if path_safe(key) else ((), f"key {shown(key)}: {message}")
            details.append(
                InitErrorDetails(type=PydanticCustomError("value_error", text), loc=at, input=None)
            )
        if details:
            raise ValidationError.from_exception_data("entries", details)
        return entries

    return validate


def _multiline_problem(value: str) -> str | None:
    return text_problem(value, multiline=True)


# One line of text (no control character, newline included; no bidirectional control): every
# string value that is not a pattern of its own (names, users, contexts, descriptions).
Text = Annotated[str, AfterValidator(_check(text_problem))]
NonEmpty = Annotated[str, Field(min_length=1), AfterValidator(_check(text_problem))]
# Text of several lines (PEM, scripts): newlines and tabs allowed, other controls not.
MultilineText = Annotated[str, AfterValidator(_check(_multiline_problem))]


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
    # The API server's rule (IsQualifiedName), one for the project.
    problem = api_rules.qualified_name_problem(key)
    return f"{what} {shown(key)} {problem}" if problem else None


def label_value_problem(key: str, value: str) -> str | None:
    return api_rules.label_value_problem(key, value)


def _labels(labels: dict[str, str]) -> dict[str, str]:
    for key, value in labels.items():
        message = label_key_problem(key) or label_value_problem(key, value)
        if message:
            raise ValueError(message)
    return labels


LabelKey = Annotated[str, AfterValidator(_check(label_key_problem))]
Labels = Annotated[dict[str, str], AfterValidator(_labels)]


def _annotations(annotations: dict[str, str]) -> dict[str, str]:
    # Annotation keys have the syntax of label keys (case aside); their values are free text,
    # at most 256 KiB with the keys: the API server's rules.
    problems = api_rules.annotations_problems(annotations) + annotation_value_problems(annotations)
    if problems:
        raise ValueError(problems[0])
    return annotations


def annotation_value_problems(annotations: Any) -> list[str]:
    """Annotation values are text like any other (JSON of several lines is common: newlines and
    tabs are fine); Kubernetes would store a NUL, the project does not pass one on."""
    if not isinstance(annotations, dict):
        return []
    return [
        f"annotation {shown(str(key))} value {problem}"
        for key, value in annotations.items()
        if isinstance(value, str) and (problem := text_problem(value, multiline=True))
    ]


Annotations = Annotated[dict[str, str], AfterValidator(_annotations)]
