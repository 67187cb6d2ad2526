"""The plan writes only into a directory of its own, whole or not at all, and never
deletes a file it did not write."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest
from planning import files

from plan import output
from plan.errors import PlanFailure
from plan.output import MARKER, OutputError


def text(content: str):
    return lambda path: path.write_text(content)


def plan_files(tag: str, names=("resources.json", "manifests/a.yaml")) -> dict:
    return {name: text(f"{tag}:{name}\n") for name in names}


def write(out: Path, tag: str = "one", names=("resources.json", "manifests/a.yaml"), needles=frozenset()):
    return output.write(out, "s", "update", plan_files(tag, names), set(needles))


def siblings(out: Path) -> list[str]:
    """What is next to `out`: no staging or old copy may be left there."""
    return sorted(p.name for p in out.parent.iterdir() if p != out)


def test_a_new_directory_gets_the_files_and_a_marker_listing_them(tmp_path):
    out = tmp_path / "build" / "plan" / "s"
    assert write(out) == []
    assert files(out) == {
        "resources.json": b"one:resources.json\n",
        "manifests/a.yaml": b"one:manifests/a.yaml\n",
        MARKER: (out / MARKER).read_bytes(),
    }
    marker = json.loads((out / MARKER).read_text())
    assert marker == {
        "format": 1,
        "stack": "s",
        "mode": "update",
        "files": ["manifests/a.yaml", "resources.json"],
    }
    assert siblings(out) == []
    assert oct(out.stat().st_mode & 0o777) == oct(0o777 & ~_umask())


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_an_earlier_plan_is_replaced_whole(tmp_path):
    out = tmp_path / "out"
    write(out, "one", names=("resources.json", "manifests/a.yaml", "manifests/b.yaml", "master.yaml"))
    write(out, "two", names=("resources.json", "manifests/c.yaml"))
    assert set(files(out)) == {"resources.json", "manifests/c.yaml", MARKER}
    assert (out / "resources.json").read_text() == "two:resources.json\n"
    assert siblings(out) == []


def test_an_empty_directory_is_used(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    assert write(out) == []
    assert set(files(out)) == {"resources.json", "manifests/a.yaml", MARKER}
    assert siblings(out) == []


def _tree(path: Path) -> dict[str, bytes | None]:
    return {
        p.relative_to(path).as_posix(): (p.read_bytes() if p.is_file() else None) for p in path.rglob("*")
    }


@pytest.mark.parametrize(
    "foreign",
    [
        "Pulumi.t.yaml",  # the user's stack file
        "manifests/mine.yaml",  # a file of the user's among an earlier plan's
        "notes/",  # an empty directory of the user's
    ],
)
def test_a_directory_holding_anything_the_plan_did_not_write_is_refused(tmp_path, foreign):
    out = tmp_path / "out"
    write(out)
    target = out / foreign
    if foreign.endswith("/"):
        target.mkdir()
    else:
        target.parent.mkdir(exist_ok=True)
        target.write_text("the user's\n")
    before = _tree(out)
    with pytest.raises(
        OutputError,
        match=r"holds files the plan did not write \((Pulumi\.t\.yaml|manifests/mine\.yaml|notes)\)",
    ):
        write(out, "two")
    assert _tree(out) == before
    assert siblings(out) == []


def test_a_directory_without_a_marker_is_refused(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "resources.json").write_text("[]\n")
    with pytest.raises(OutputError, match="did not write"):
        write(out)
    assert _tree(out) == {"resources.json": b"[]\n"}


@pytest.mark.parametrize(
    "marker",
    [
        {"format": 1, "stack": "s", "files": ["resources.json", "../elsewhere"]},
        {"format": 1, "stack": "s", "files": ["/etc/passwd"]},
        {"format": 2, "stack": "s", "files": ["resources.json"]},
        {"format": 1, "stack": "s", "files": "resources.json"},
        ["resources.json"],
    ],
)
def test_a_marker_the_plan_did_not_write_is_not_trusted(tmp_path, marker):
    out = tmp_path / "out"
    out.mkdir()
    (out / "resources.json").write_text("[]\n")
    (out / MARKER).write_text(json.dumps(marker))
    before = _tree(out)
    with pytest.raises(OutputError, match="did not write"):
        write(out)
    assert _tree(out) == before


def test_a_file_or_a_link_as_out_is_refused(tmp_path):
    file = tmp_path / "file"
    file.write_text("x")
    with pytest.raises(OutputError, match="is a file, not a directory"):
        write(file)
    assert file.read_text() == "x"
    target = tmp_path / "target"
    write(target)
    link = tmp_path / "link"
    link.symlink_to(target)
    with pytest.raises(OutputError, match="is a symbolic link"):
        write(link)
    assert link.is_symlink()


def test_an_out_that_cannot_be_written_is_refused(tmp_path, monkeypatch):
    out = tmp_path / "out"
    monkeypatch.setattr(os, "access", lambda *_: False)
    with pytest.raises(OutputError, match="cannot write to"):
        write(out)
    assert not out.exists()


def test_a_failed_write_leaves_the_earlier_plan_whole(tmp_path):
    out = tmp_path / "out"
    write(out)
    before = _tree(out)

    def fail(path):
        raise OSError(28, "No space left on device")

    with pytest.raises(OutputError, match=r"cannot write \(No space left on device\)"):
        output.write(out, "s", "update", {**plan_files("two"), "master.yaml": fail}, set())
    assert _tree(out) == before
    assert siblings(out) == []


def test_a_secret_found_in_an_output_stops_before_anything_is_moved(tmp_path):
    out = tmp_path / "out"
    write(out)
    before = _tree(out)
    leak = "PlanSecret0123456789" + "0Aa"
    with pytest.raises(PlanFailure) as info:
        output.write(out, "s", "update", {"master.yaml": text(f"password: {leak}\n")}, {leak})
    assert str(info.value) == "a secret value would be written to master.yaml; nothing was written"
    assert _tree(out) == before
    assert siblings(out) == []


def test_a_file_added_to_an_earlier_plan_meanwhile_is_kept(tmp_path, monkeypatch):
    out = tmp_path / "out"
    write(out)
    real = output.owned_files
    listed = real(out)
    (out / "added.txt").write_text("the user's\n")
    # The check saw the plan before the file was added.
    monkeypatch.setattr(output, "owned_files", lambda path: listed if path == out else real(path))
    (warning,) = write(out, "two")
    assert warning.startswith("kept ") and warning.endswith("it holds files the plan did not write")
    (kept,) = [p for p in tmp_path.iterdir() if p.name.startswith(".out.old-")]
    assert files(kept / "plan") == {"added.txt": b"the user's\n"}
    assert (out / "resources.json").read_text() == "two:resources.json\n"


def test_concurrent_plans_into_one_directory_never_mix(tmp_path):
    out = tmp_path / "out"
    errors: list[BaseException] = []

    def run(tag: str) -> None:
        names = ("resources.json", f"manifests/{tag}.yaml", f"manifests/{tag}-2.yaml")
        try:
            for _ in range(5):
                write(out, tag, names=names)
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(f"t{i}",)) for i in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    written = files(out)
    listed = json.loads(written.pop(MARKER))["files"]
    assert sorted(written) == listed
    (tag,) = {content.decode().split(":")[0] for content in written.values()}
    assert f"manifests/{tag}.yaml" in written
    assert siblings(out) == []


def test_manifest_file_names_are_safe_and_unique():
    from plan.runner import manifest_files

    objects = [
        {"kind": "Secret", "metadata": {"name": "a", "namespace": "det"}},
        {"kind": "Secret", "metadata": {"name": "a", "namespace": "det"}},
        {"kind": "ConfigMap", "metadata": {"name": "[unknown until apply]"}},
        {"kind": "ConfigMap", "metadata": "[secret]"},
    ]
    assert [name for name, _ in manifest_files(objects)] == [
        "det--secret--a.yaml",
        "det--secret--a--2.yaml",
        "cluster--configmap--unknown_until_apply.yaml",
        "cluster--configmap--_.yaml",
    ]


def test_deleting_an_earlier_plan_never_follows_a_link(tmp_path, monkeypatch):
    out = tmp_path / "out"
    write(out)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "a.yaml").write_text("the user's\n")
    real = output.owned_files
    listed = real(out)
    # Swapped for a link after the check: the marker still lists manifests/a.yaml.
    (out / "manifests" / "a.yaml").unlink()
    (out / "manifests").rmdir()
    (out / "manifests").symlink_to(outside)
    monkeypatch.setattr(output, "owned_files", lambda path: listed if path == out else real(path))
    (warning,) = write(out, "two")
    assert warning.startswith("kept ")
    assert (outside / "a.yaml").read_text() == "the user's\n"
