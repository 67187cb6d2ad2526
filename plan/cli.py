"""python -m plan <stack> | --config <stack yaml> [--out DIR] [--preview] [--debug]

Exit status: 0 clean; 1 a mandatory policy is violated; 2 a configuration or usage error
(one line per problem, no traceback); 3 an internal error (a bug: one line, the traceback
only with --debug), or the summary could not be printed (the plan is written); 130, 143,
129 ended by SIGINT, SIGTERM, SIGHUP (nothing written).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import traceback
from pathlib import Path

from plan import interrupts, output, stackfile
from plan.errors import PlanFailure, UsageError

USAGE_ERROR = 2
INTERNAL_ERROR = 3


def _stack_name(path: Path) -> str:
    name = path.name
    if name.startswith("Pulumi.") and name.endswith((".yaml", ".yml")):
        return name[len("Pulumi.") :].rsplit(".", 1)[0]
    return path.stem


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m plan", description=__doc__.splitlines()[0])
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument("stack", nargs="?", help="stack name: stacks/Pulumi.<stack>.yaml")
    # Taken as text: Path("") would be the working directory.
    target.add_argument("--config", help="path to a stack configuration file")
    parser.add_argument("--out", help="output directory (default build/plan/<stack>)")
    parser.add_argument(
        "--preview",
        action="store_true",
        help="plan as a first `pulumi preview` sees it: computed values unknown",
    )
    parser.add_argument("--debug", action="store_true", help="print the traceback of an internal error")
    return parser


def _one_line(text: str, limit: int = 200) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 3] + "..."


def _internal_error(exc: BaseException, secrets: set[str] | None, debug: bool) -> int:
    """One line naming the error. Its text is shown only when it cannot hold a secret:
    `secrets` is None while the user's real values are being handled (the text is then
    left out), else the set of values that must not be shown."""
    message = _one_line(str(exc))
    if secrets is None or any(s and s in message for s in secrets):
        message = ""
    name = type(exc).__name__
    shown = f"{name}: {message}" if message else name
    if debug:
        traceback.print_exception(exc, file=sys.stderr)
    hint = "" if debug else "; rerun with --debug for the traceback"
    print(f"internal error: {shown}{hint}", file=sys.stderr)
    return INTERNAL_ERROR


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    with interrupts.installed():
        return _main(args)


def _path(option: str, value: str) -> Path:
    if not value:
        raise UsageError(f"{option} is empty; give a path")
    return Path(value)


def _print_summary(text: str, out: Path) -> int | None:
    """Print the summary; None when it was printed (or the reader went away: `| head`),
    else the exit status for a standard output that cannot be written (a full disk)."""
    try:
        print(text)
        sys.stdout.flush()
        return None
    except OSError as exc:
        # What is left in the buffer goes nowhere: Python's own flush at exit would
        # otherwise fail again, with a message of its own.
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            os.close(devnull)
        except (OSError, ValueError):
            pass  # not a file (a test's capture): nothing is flushed at exit
        if isinstance(exc, BrokenPipeError):
            return None
        reason = exc.strerror or type(exc).__name__
        print(
            f"error: the plan is written to {out}, but its summary could not be printed ({reason})",
            file=sys.stderr,
        )
        return INTERNAL_ERROR


def _main(args: argparse.Namespace) -> int:
    # None until the config is validated: the real secret values are then known.
    real_secrets: set[str] | None = None
    try:
        if args.config is not None:
            path = _path("--config", args.config)
            try:
                stack = stackfile.check_stack_name(_stack_name(path) or "stack")
            except UsageError as exc:
                raise UsageError(f"{exc}; it comes from the file name {path.name!r}") from None
        else:
            stack = stackfile.check_stack_name(args.stack)
            path = stackfile.stack_path(stack)
        out = Path("build") / "plan" / stack if args.out is None else _path("--out", args.out)
        output.check(out)
        # Before the program's modules load: a FIFO or a device is refused at once.
        stackfile.check_file(path)

        from components.config import ConfigError, secret_values
        from plan import runner

        try:
            loaded = stackfile.read_stack_file(path)
            if loaded.environments:
                print(f"warning: {stackfile.environments_warning(loaded.environments)}", file=sys.stderr)
            config, secret_keys = loaded.config, loaded.secret_keys
            prepared = runner.prepare(config, secret_keys)
        except ConfigError as exc:
            print(f"Configuration errors in {path}:", file=sys.stderr)
            for problem in exc.problems:
                print(f"  {_one_line(str(problem), 1000)}", file=sys.stderr)
            return USAGE_ERROR
        real_secrets = secret_values(prepared.cfg)
        result = runner.run(prepared, stack, preview=args.preview)
        for warning in runner.write(result, out):
            print(f"warning: {warning}", file=sys.stderr)
    except UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return USAGE_ERROR
    except PlanFailure as exc:
        print(f"error: {exc}", file=sys.stderr)
        return INTERNAL_ERROR
    except KeyboardInterrupt:
        # Only where the handler is not installed (cli.main called off the main thread).
        print("interrupted: no plan written", file=sys.stderr)
        return interrupts.exit_status(signal.SIGINT)
    except Exception as exc:
        return _internal_error(exc, real_secrets, args.debug)
    failed = _print_summary(runner.summary(result, stack, out), out)
    if failed is not None:
        return failed
    return 1 if result.mandatory_violations else 0
