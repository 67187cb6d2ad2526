"""checkov's Kubernetes checks over directories of manifests, one scan per directory, in one
process (checkov's start-up is most of its time).

Runs in .venv-scan (checkov cannot share the project's venv), started by test_checkov.py:

    .venv-scan/bin/python tests/invariants/checkov_scan.py <root> <out.json>

Each directory under <root> is scanned on its own, so checkov's graph checks (a pod and the
NetworkPolicy that selects it, a binding and its role) see one stack at a time; checkov's own
command line cannot do that in one run (with several -d it reports the first directory
again for each). <out.json>: {directory: {"failed": [...], "skipped": [...]}}, each finding
{check, name, file, line, comment}: `line` is the first line of the object it is about;
"resources": what checkov scanned (its ids).
"""

from __future__ import annotations

import json
import multiprocessing
import os
import sys
from pathlib import Path


def _finding(record) -> dict:
    return {
        "check": record.check_id,
        "name": record.check_name,
        "file": Path(record.file_path).name,
        "line": record.file_line_range[0],
        "comment": (record.check_result or {}).get("suppress_comment"),
    }


def _scan(directory: Path) -> tuple[str, dict]:
    from checkov.kubernetes.runner import Runner
    from checkov.runner_filter import RunnerFilter

    report = Runner().run(root_folder=str(directory), runner_filter=RunnerFilter(framework=["kubernetes"]))
    return directory.name, {
        "failed": [_finding(r) for r in report.failed_checks],
        "skipped": [_finding(r) for r in report.skipped_checks],
        "parsing_errors": list(report.parsing_errors),
        "resources": sorted(report.resources),
    }


def main(root: str, out: str) -> int:
    # checkov parallelizes parsing file by file (a fork each); here whole directories run in
    # parallel instead, after one import of checkov.
    os.environ["CHECKOV_PARALLELIZATION_TYPE"] = "none"
    # Imported here: only .venv-scan has checkov.
    import yaml
    from checkov.kubernetes.parser import k8_yaml

    # checkov reads YAML with PyYAML's pure-Python loader (most of its time here); the same
    # loader on libyaml gives the same documents and line numbers, several times faster.
    if yaml.__with_libyaml__:

        class LineLoader(yaml.CSafeLoader):
            def construct_mapping(self, node, deep=False):
                # As k8_yaml.SafeLineLoader does: each mapping knows its lines.
                mapping = yaml.constructor.SafeConstructor.construct_mapping(self, node, deep=deep)
                mapping["__startline__"] = node.start_mark.line + 1
                mapping["__endline__"] = node.end_mark.line + 1
                return mapping

        k8_yaml.SafeLineLoader = LineLoader
    import checkov.kubernetes.runner  # noqa: F401  (once, before the workers fork)

    directories = sorted(p for p in Path(root).iterdir() if p.is_dir())
    with multiprocessing.get_context("fork").Pool(min(len(directories), os.cpu_count() or 1)) as pool:
        results = dict(pool.map(_scan, directories, chunksize=1))
    Path(out).write_text(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
