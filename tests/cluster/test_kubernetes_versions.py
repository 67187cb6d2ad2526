"""The Kubernetes version tables (components/versions.py): EKS versions with their support dates
and cluster-autoscaler images, GKE channel defaults. They go stale with the calendar, so a
test fails as soon as a date in them has passed since they were read: then read the sources
again (EKS release calendar, GKE release notes and schedule, autoscaler releases) and update
the rows, the read dates and, when a newer minor is out, the default."""

from __future__ import annotations

from datetime import date

import pytest

from components import versions


def _boundaries() -> list[tuple[str, date]]:
    found = []
    for minor, row in versions.EKS_VERSIONS.items():
        found.append((f"EKS {minor} end of standard support", row.end_of_standard_support))
        found.append((f"EKS {minor} end of extended support", row.end_of_extended_support))
    for channel, row in versions.GKE_CHANNELS.items():
        found.append((f"GKE {channel} default's end of standard support", row.end_of_standard_support))
    return found


def test_no_support_date_has_passed_since_the_tables_were_read():
    today = versions.today()
    read = min(versions.EKS_VERSIONS_READ, versions.GKE_CHANNELS_READ)
    passed = [f"{what} ({when})" for what, when in _boundaries() if read < when <= today]
    assert not passed, "the version tables are out of date: " + "; ".join(passed)


def test_the_eks_default_is_the_newest_version_and_in_standard_support():
    newest = max(versions.EKS_VERSIONS, key=versions.minor_tuple)
    assert newest == versions.DEFAULT_EKS_KUBERNETES_VERSION
    assert versions.eks_support(newest, versions.today()) == "standard"


def test_every_eks_version_is_still_offered_and_has_the_autoscaler_of_its_minor():
    today = versions.today()
    for minor, row in versions.EKS_VERSIONS.items():
        assert versions.eks_support(minor, today) is not None, minor
        assert row.cluster_autoscaler.startswith(f"v{minor}."), minor
        # EKS: 14 months of standard support, then 12 of extended support.
        assert (row.end_of_standard_support.year - row.released.year) * 12 + (
            row.end_of_standard_support.month - row.released.month
        ) == 14, minor
        assert row.end_of_extended_support == row.end_of_standard_support.replace(
            year=row.end_of_standard_support.year + 1
        ), minor


@pytest.mark.parametrize(
    ("version", "today", "support"),
    [
        ("1.34", date(2026, 12, 1), "standard"),
        ("1.34", date(2026, 12, 2), "extended"),  # billing starts on the day standard support ends
        ("1.33", date(2027, 7, 28), "extended"),
        ("1.33", date(2027, 7, 29), None),
        ("1.31", date(2026, 11, 25), None),  # not in the table: not offered by this release
        ("1.99", date(2026, 11, 25), None),
    ],
)
def test_support_follows_the_dates(version, today, support):
    assert versions.eks_support(version, today) == support


def test_the_autoscaler_image_of_a_minor_the_table_lacks_is_the_nearest_one():
    assert versions.cluster_autoscaler_image("1.35") == "v1.35.2"
    assert versions.cluster_autoscaler_image("1.31") == versions.EKS_VERSIONS["1.32"].cluster_autoscaler


def test_every_gke_channel_default_is_in_standard_support():
    today = versions.today()
    for channel, row in versions.GKE_CHANNELS.items():
        assert today < row.end_of_standard_support, channel
        assert row.default_version.count(".") == 3 and "-gke." in row.default_version, channel
