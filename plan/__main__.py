"""python -m plan <stack> | --config <stack yaml> [--out DIR]

Exit status: 0 clean; 1 a mandatory policy is violated; 2 a configuration error.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from deploy.config import ConfigError
from plan import runner, stackfile


def _stack_name(path: Path) -> str:
    name = path.name
    if name.startswith("Pulumi.") and name.endswith((".yaml", ".yml")):
        return name[len("Pulumi.") :].rsplit(".", 1)[0]
    return path.stem


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m plan", description=__doc__.splitlines()[0])
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument("stack", nargs="?", help="stack name: stacks/Pulumi.<stack>.yaml")
    target.add_argument("--config", type=Path, help="path to a stack configuration file")
    parser.add_argument("--out", type=Path, help="output directory (default build/plan/<stack>)")
    args = parser.parse_args(argv)

    path = args.config or stackfile.stack_path(args.stack)
    stack = args.stack or _stack_name(path)
    out = args.out or Path("build") / "plan" / stack
    try:
        config, secret_keys = stackfile.load_stack_file(path)
        result = runner.plan(config, secret_keys, stack)
    except stackfile.StackFileError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except ConfigError as exc:
        print(f"Configuration errors in {path}:", file=sys.stderr)
        for problem in exc.problems:
            print(f"  {problem}", file=sys.stderr)
        return 2
    runner.write(result, out)
    print(runner.summary(result, stack, out))
    return 1 if result.mandatory_violations else 0


if __name__ == "__main__":
    sys.exit(main())
