"""Log policy patterns judged
by Go's regexp syntax (RE2) as the master compiles them, the retention schedule as the
master's cron parser reads it, master.env names the stack sets itself, empty AWS tag values
and Google Cloud labels in international letters.

The pattern and schedule verdicts below were checked against Go itself (Go 1.19's
regexp.Compile; robfig/cron v3.0.1's ParseStandard and time.ParseDuration) when written;
`(?<name>re)` is Go 1.22's, the master's toolchain.
"""

from __future__ import annotations

import pytest
from conftest import EKS, GKE, make_config, raw_config

import stack_args
from components import cloud_limits, versions
from components.config import ConfigError, go_regexp, go_time, load_config
from components.determined import master as master_app

# --- log policy patterns (go_regexp) ----------------------------------------------------------

# Patterns Go's regexp.Compile takes.
GO_ACCEPTS = [
    r"\p{Lu}RROR",  # case 023: Unicode classes
    r"fatal\z",  # case 024: end of text
    r"\pL\PN\p{Greek}\p{^Han}\p{Any}[\p{Lu}\d]",
    r"\A(?i)cuda(?-i: OUT)\b.*$",
    r"(?P<gpu>\d+)(?<node>\w+)",  # (?<name>) since Go 1.22
    r"(?s:.)(?U)a*(?im)^x$",
    r"(?)x",
    r"^*$*\b*",
    r"a{2}?x{0,1000}(a{10}){100}",
    r"[]a][^]a][a-][-a][[:alpha:][:^digit:]][\x00-\x{10FFFF}]",
    r"\Q(a*\E+\Qtail",
    r"\012\0\x41\x{1F600}\_\-\ \.\a\f\n\r\t\v",
    r"a{,5}a{01}x{",
    "(" * 999 + "a" + ")" * 999,
]
# Patterns it refuses, each with what the message must say.
GO_REFUSES = [
    ("CUDA(?= out of memory)", "no lookahead"),  # case 021
    (r"(error) \1", r"\1 is a backreference"),  # case 022
    ("(?<=x)y", "no lookbehind"),
    ("(?!x)", "no negative lookahead"),
    ("(?>x)", "no atomic group"),
    ("(?#note)", "no comment"),
    ("(?x)a", "unknown group syntax"),
    ("(?i-)a", "unknown group syntax"),
    (r"\Z", r"\Z is not an escape"),
    (r"\C", r"\C (any byte)"),
    (r"[\b]", r"\b is not an escape"),
    (r"\8", "backreference"),
    (r"\x4", r"invalid \x escape"),
    (r"\x{110000}", r"invalid \x escape"),
    (r"\p{greek}", "names no Unicode category or script"),
    (r"\p{Cn}", "names no Unicode category or script"),  # only from Go 1.25
    (r"\pX", "names no Unicode category or script"),
    ("[[:word]x:]]", "is not a POSIX class"),
    ("[z-a]", "character range out of order"),
    ("[a", "missing ']'"),
    ("(a", "missing ')'"),
    ("a)", "unexpected ')'"),
    ("a**", "repetition of a repetition"),
    ("a*??", "repetition of a repetition"),
    ("x{2}{3}", "repetition of a repetition"),
    ("*a", "nothing before it"),
    ("(|*)", "nothing before it"),
    ("{5}", "nothing before it"),
    ("a{1001}", "repetition count out of range"),
    ("a{3,2}", "repetition count out of range"),
    ("(a{500}){3}", "multiply to more than 1000"),
    ("\\", "trailing backslash"),
    ("(?P<n-1>x)", "invalid named group"),
    ("(" * 1001 + "a" + ")" * 1001, "nests more than 1000 levels"),
    ("a{1000}" * 3400, "too large"),
]


@pytest.mark.parametrize("pattern", GO_ACCEPTS, ids=range(len(GO_ACCEPTS)))
def test_go_regexp_accepts_what_go_compiles(pattern):
    assert go_regexp.problem(pattern) is None


@pytest.mark.parametrize(("pattern", "why"), GO_REFUSES, ids=[c[0][:20] for c in GO_REFUSES])
def test_go_regexp_refuses_what_go_refuses(pattern, why):
    problem = go_regexp.problem(pattern)
    assert problem and why in problem, problem


def test_a_long_literal_is_not_too_large_for_go():
    # Go keeps a run of literal text as one node and never estimates its size.
    assert go_regexp.problem("x" * 3_400_000) is None


def tcd_problems(pattern: str) -> list[str]:
    with pytest.raises(ConfigError) as info:
        load_config(raw_config(taskContainerDefaults={"logPolicies": [{"pattern": pattern}]}))
    return [str(p) for p in info.value.problems]


@pytest.mark.parametrize(
    ("pattern", "why"),
    [("CUDA(?= out of memory)", "lookahead"), (r"(error) \1", "backreference")],
)
def test_a_log_policy_pattern_the_master_cannot_compile_is_refused_at_its_key(pattern, why):
    found = tcd_problems(pattern)
    assert len(found) == 1, found
    assert found[0].startswith(
        "determined:taskContainerDefaults.logPolicies[0].pattern: is not a regular expression the "
        "master can compile: "
    )
    assert why in found[0]


@pytest.mark.parametrize("pattern", [r"\p{Lu}RROR", r"fatal\z"])
def test_a_log_policy_pattern_go_takes_is_accepted_though_python_refuses_it(pattern):
    cfg = make_config(taskContainerDefaults={"logPolicies": [{"pattern": pattern}]})
    assert cfg.task_container_defaults.log_policies[0].pattern == pattern


# --- retention schedule (go_time) -------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "nanoseconds"),
    [
        ("24h", 86_400 * 10**9),
        ("1h30m", 5_400 * 10**9),
        (".5h", 1_800 * 10**9),
        ("1.h", 3_600 * 10**9),
        ("+1µs", 1_000),
        ("1μs", 1_000),
        ("0", 0),
        ("-1h", -3_600 * 10**9),
        ("9223372036854775807ns", 2**63 - 1),
    ],
)
def test_go_durations(text, nanoseconds):
    assert go_time.parse_duration(text) == nanoseconds


@pytest.mark.parametrize("text", ["", "1", "h", ".s", "1h ", "1d", "9223372036854775808ns", "+-1h"])
def test_not_go_durations(text):
    assert go_time.parse_duration(text) is None


CRON_ACCEPTED = [
    "@daily",  # case 045
    "@midnight",
    "@every 1h30m",
    "0 3 * * *",
    "*/5 1-5/2 ? JAN-mar sun,Sat",
    "5/15 * * * *",
    "*-5 * * * *",  # robfig ignores what follows '*'
    ", 3 * * *",  # an empty list fires never, but parses
    "  0\t3 * * *  ",
    "TZ=UTC 0 3 * * *",
    "CRON_TZ=Local @hourly",
]
CRON_REFUSED = [
    ("@Daily", "is not one of @yearly"),
    ("@every 1d", "is not one of @yearly"),
    ("0 3 * *", "has 4 fields"),
    ("0 0 3 * * *", "has 6 fields"),
    ("0 3 * * 7", "day of week: '7' is outside 0-6"),
    ("0 0 0 * *", "day of month: '0' is outside 1-31"),
    ("60 * * * *", "minute: '60' is outside 0-59"),
    ("*/0 * * * *", "has a step of 0"),
    ("5-2 * * * *", "starts after it ends"),
    ("1-2-3 * * * *", "too many '-'"),
    ("1/2/3 * * * *", "too many '/'"),
    ("0x5 * * * *", "is not a number or a name"),
    ("TZ=UTC", "must be followed by a space"),
    ("CRON_TZ=Europe/Berlin 0 3 * * *", "only UTC works"),
]


@pytest.mark.parametrize("spec", CRON_ACCEPTED)
def test_cron_schedules_robfig_parses(spec):
    assert go_time.cron_problem(spec) is None


@pytest.mark.parametrize(("spec", "why"), CRON_REFUSED, ids=[c[0] for c in CRON_REFUSED])
def test_cron_schedules_robfig_refuses(spec, why):
    problem = go_time.cron_problem(spec)
    assert problem and why in problem, problem


def retention_problems(schedule: str) -> list[str]:
    with pytest.raises(ConfigError) as info:
        load_config(raw_config(master={"retention": {"schedule": schedule}}))
    return [str(p) for p in info.value.problems]


@pytest.mark.parametrize("schedule", ["@daily", "@every 12h", "24h", "0 3 * * *", "TZ=UTC 30 2 * * sun"])
def test_the_retention_schedule_takes_what_the_master_takes(schedule):
    assert make_config(master={"retention": {"schedule": schedule}}).master.retention.schedule == schedule


@pytest.mark.parametrize(
    ("schedule", "why"),
    [
        ("0s", "'0s' is not a positive duration"),
        ("-1h", "'-1h' is not a positive duration"),
        ("@weekly ", "is not one of @yearly"),
        ("0 3 * * 7", "'7' is outside 0-6"),
    ],
)
def test_the_retention_schedule_refuses_what_the_master_refuses(schedule, why):
    found = retention_problems(schedule)
    assert len(found) == 1 and found[0].startswith("determined:master.retention.schedule: "), found
    assert why in found[0]


def test_a_retention_time_zone_is_refused_on_the_stock_image_only():
    # The stock master image has no time zone database (go_time.CRON_ZONES); an image of
    # one's own may have one, so any zone name robfig takes is left to it.
    schedule = "TZ=Europe/Paris 0 3 * * *"
    found = retention_problems(schedule)
    assert len(found) == 1 and "the stock master image has no time zone database" in found[0], found
    image = "mirror.example.com/det/determined-master:0.38.1"
    cfg = make_config(master={"image": image, "retention": {"schedule": schedule}})
    assert cfg.master.retention.schedule == schedule


# --- master.env names the stack sets ----------------------------------------------------------

MASTER_WITH_EVERYTHING = {
    "version": ".".join(map(str, versions.RELEASE_NAMESPACE_SINCE)),
    "proxy": {"httpProxy": "http://proxy:3128", "httpsProxy": "http://proxy:3128"},
    "caBundleSecret": "corp-ca",
}


def test_no_env_value_of_master_env_is_silently_dropped():
    # Derived from the app's own env (components/determined/master.py), so a name it adds later is covered:
    # master.env of each name the stack sets is refused at its key, or its value is the one
    # the master gets.
    cfg = make_config(master=MASTER_WITH_EVERYTHING)
    names = [e["name"] for e in master_app._env(stack_args.determined_args(cfg))]
    assert {"DET_RELEASE_NAMESPACE", "https_proxy", "SSL_CERT_DIR"} <= set(names)
    for name in names:
        raw = raw_config(master={**MASTER_WITH_EVERYTHING, "env": {name: "mine"}})
        try:
            cfg = load_config(raw)
        except ConfigError as exc:
            found = [str(p) for p in exc.problems]
            assert len(found) == 1, found
            assert found[0].startswith(
                f"determined:master.env.{name}: {name} is set by the stack on the master: "
            )
            continue
        env = [e for e in master_app._env(stack_args.determined_args(cfg)) if e["name"] == name]
        assert env == [{"name": name, "value": "mine"}], (name, env)


def test_case_050_release_namespace_in_master_env_is_refused():
    with pytest.raises(ConfigError) as info:
        load_config(raw_config(master={"env": {"DET_RELEASE_NAMESPACE": "kube-system"}}))
    assert [str(p) for p in info.value.problems] == [
        "determined:master.env.DET_RELEASE_NAMESPACE: DET_RELEASE_NAMESPACE is set by the stack on the "
        "master: it must name the master's own namespace"
    ]


def test_env_names_the_stack_does_not_set_stay_the_users():
    # Without master.proxy the stack sets no proxy variables: the user's own are passed on.
    cfg = make_config(master={"env": {"HTTPS_PROXY": "http://p:3128", "GODEBUG": "x509sha1=1"}})
    env = {e["name"]: e.get("value") for e in master_app._env(cfg)}
    assert env["HTTPS_PROXY"] == "http://p:3128" and env["GODEBUG"] == "x509sha1=1"


# --- tags and labels --------------------------------------------------------------------------


def test_case_089_an_empty_aws_tag_value_is_accepted_and_passes_the_plans_check():
    cfg = make_config(**{**EKS, "cluster": {**EKS["cluster"], "tags": {"team": "ml", "costcenter": ""}}})
    assert cfg.cluster.tags["costcenter"] == ""
    assert cloud_limits.aws_tags_problems(dict(cfg.cluster.tags)) == []


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("team", "équipe-ml"),
        ("équipe", "ml"),
        ("部署", "研究"),
        ("team", ""),
        ("k", "ü" * 63),
        ("a_b-1", "0_x-"),
    ],
)
def test_google_labels_in_international_letters_are_accepted(key, value):
    assert cloud_limits.gcp_label_problem(key, value) is None
    cfg = make_config(**{**GKE, "cluster": {**GKE["cluster"], "tags": {key: value}}})
    assert cfg.cluster.tags[key] == value


@pytest.mark.parametrize(
    ("key", "value", "why"),
    [
        ("team", "Équipe", "label value"),  # upper case, in any script
        ("Équipe", "ml", "label key"),
        ("1team", "ml", "label key"),  # keys start with a letter
        ("_team", "ml", "label key"),
        ("team", "a.b", "label value"),
        ("team", "ü" * 64, "label value"),
        ("", "x", "label key"),
    ],
)
def test_google_labels_google_refuses_are_refused(key, value, why):
    problem = cloud_limits.gcp_label_problem(key, value)
    assert problem and problem.startswith(why), problem
