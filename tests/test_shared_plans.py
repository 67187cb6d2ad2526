"""The stack plans the test session's worker processes share (tests/planning.py): a plan read
back is the plan that was written, and it is kept under a digest of what it is made from."""

from __future__ import annotations

import planning


def test_a_plan_read_back_by_another_process_is_the_plan_written(tmp_path):
    written = planning.SharedPlans(tmp_path).get("local", False)
    # A second reader of the directory, as another worker is: it finds the plan and reads it.
    read = planning.SharedPlans(tmp_path).get("local", False)
    assert read is not written
    assert written.recorder.deployment is not None  # the writer keeps its live component
    assert read.recorder.deployment is None  # which is not written
    written.recorder.deployment = None
    assert read == written
    # Including the engine's requests the policy checks read (protobuf messages).
    assert [r.request for r in read.recorder.resources] == [r.request for r in written.recorder.resources]
    assert all(r.request is not None for r in read.recorder.resources)


def test_a_plan_is_kept_under_a_digest_of_its_stack_file_mode_and_code(tmp_path, monkeypatch):
    stack = tmp_path / "Pulumi.x.yaml"
    stack.write_text("config:\n  determined:cloud: existing\n")
    monkeypatch.setattr(planning, "_stack_path", lambda name: stack)
    shared = planning.SharedPlans(tmp_path / "plans")
    update = shared._file("x", False)
    assert shared._file("x", False) == update
    assert shared._file("x", True) != update
    stack.write_text("config:\n  determined:cloud: existing\n  determined:environment: prod\n")
    assert shared._file("x", False) != update

    # The code digest reads every project file by content.
    code = tmp_path / "module.py"
    code.write_text("A = 1\n")
    monkeypatch.setattr(planning, "_project_files", lambda: iter([code]))
    monkeypatch.setattr(planning, "ROOT", tmp_path)
    planning.code_digest.cache_clear()
    try:
        before = planning.code_digest()
        planning.code_digest.cache_clear()
        code.write_text("A = 2\n")
        assert planning.code_digest() != before
    finally:
        planning.code_digest.cache_clear()


def test_the_code_digest_covers_the_program_and_the_fixture_stacks():
    files = {p.relative_to(planning.ROOT).as_posix() for p in planning._project_files()}
    assert "__main__.py" in files
    assert any(f.startswith("components/") and f.endswith(".py") for f in files)
    assert any(f.startswith("plan/") for f in files)
    assert any(f.startswith("tests/fixtures/stacks/") for f in files)
    assert not any(f.startswith(("tests/invariants/", ".git/", ".venv/")) for f in files)
