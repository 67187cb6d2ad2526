"""A policy pack reached as the Pulumi engine reaches it: started as its own process, then
spoken to over the analyzer gRPC protocol (`pulumirpc.Analyzer`).

How `pulumi preview --policy-pack <dir>` starts a Python pack (pulumi/pulumi v3.259.0):
- pkg/resource/plugin/analyzer_plugin.go `NewPolicyAnalyzer`: loads <dir>/PulumiPolicy.yaml and
  has the pack's language host run the directory as an analyzer plugin with the engine's
  address as its one argument; then `Handshake` and `ConfigureStack` with the stack's
  organization, project, name, decrypted config, secret keys, dry-run flag and tags
  (UNIMPLEMENTED is fine for either). pkg/engine/update.go `loadPolicyPlugins` then calls
  `GetAnalyzerInfo` and `Configure`; the deployment `Analyze`s each resource and ends with
  `AnalyzeStack` (pkg/resource/components/step_generator.go).
- sdk/python/cmd/pulumi-language-python/main.go `RunPlugin` (kind analyzer): runs
  `<python> -u -m pulumi.policy <engine address> <dir>` in <dir>, where <python> is
  bin/python of the virtualenv PulumiPolicy.yaml's `runtime.options.virtualenv` names
  (relative to <dir>; sdk/python/toolchain/pip.go `resolveVirtualEnvironmentPath`), in the
  CLI's environment activated for it (toolchain.go `ActivateVirtualEnv`: VIRTUAL_ENV, its
  bin first on PATH, no PYTHONHOME) plus PULUMI_ORGANIZATION, PULUMI_PROJECT, PULUMI_STACK,
  PULUMI_DRY_RUN ("true"/"false") and PULUMI_CONFIG (the config as a JSON object of strings),
  each only when not empty. sdk/policy_proxy.go answers Handshake and ConfigureStack itself,
  starts the pack with that request's values, then forwards the ConfigureStack request and
  every later call to it: the pack never sees a Handshake.
- pkg/resource/plugin/plugin.go: the port is the plugin's first line of stdout; the client
  dials 127.0.0.1:<port> and waits up to 10 s for it; closing interrupts the plugin's process
  group and kills it if it has not exited within 5 s.
The pack never dials the engine address (pulumi/policy/__main__.py only parses it): the plan
passes one where nothing listens.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import yaml
from google.protobuf import empty_pb2
from pulumi.runtime.proto import analyzer_pb2, analyzer_pb2_grpc

# What the plan waits for before it calls the pack stuck: its port (Python, grpc and the
# pack's modules load first), each call, and the pack's exit once told to stop.
START_TIMEOUT = 60.0
CONNECT_TIMEOUT = 10.0  # the engine's pluginRPCConnectionTimeout
CALL_TIMEOUT = 120.0
STOP_GRACE = 5.0  # the engine's wait between interrupting and killing a plugin
# Where the pack is told the engine listens: nothing does, and the pack never dials it.
ENGINE_ADDRESS = "127.0.0.1:1"
# pulumi_policy's server accepts messages up to 400 MiB; a stack's AnalyzeStack can be large.
_CHANNEL_OPTIONS = [
    ("grpc.max_send_message_length", 400 * 1024 * 1024),
    ("grpc.max_receive_message_length", 400 * 1024 * 1024),
]
# How much of the pack's output an error message quotes.
_OUTPUT_TAIL = 4000


class PackError(Exception):
    """The pack could not be started or did not answer."""


@dataclass(frozen=True)
class Session:
    """What the engine tells a pack about the run (ConfigureStack, and the pack's environment)."""

    project: str
    stack: str
    config: Mapping[str, str]
    secret_keys: tuple[str, ...] = ()
    dry_run: bool = False
    organization: str = ""
    tags: Mapping[str, str] | None = None

    def configure_request(self) -> analyzer_pb2.AnalyzerStackConfigureRequest:
        return analyzer_pb2.AnalyzerStackConfigureRequest(
            stack=self.stack,
            project=self.project,
            organization=self.organization,
            dry_run=self.dry_run,
            config=dict(self.config),
            config_secret_keys=list(self.secret_keys),
            tags=dict(self.tags or {}),
        )


@dataclass(frozen=True)
class Launch:
    """How the language host starts a pack: the command, where, with what environment."""

    argv: list[str]
    cwd: Path
    env: dict[str, str]


def _virtualenv(pack: Path) -> Path | None:
    project = yaml.safe_load((pack / "PulumiPolicy.yaml").read_text()) or {}
    runtime = project.get("runtime")
    name = runtime if isinstance(runtime, str) else (runtime or {}).get("name")
    if name != "python":
        raise PackError(f"{pack}/PulumiPolicy.yaml: runtime {name!r}, not python")
    options = runtime.get("options") if isinstance(runtime, dict) else None
    venv = (options or {}).get("virtualenv")
    return Path(os.path.normpath(pack / venv)) if venv else None


def activated(environ: Mapping[str, str], venv: Path) -> dict[str, str]:
    """toolchain.ActivateVirtualEnv: the venv's bin first on PATH, VIRTUAL_ENV, no PYTHONHOME."""
    env = {k: v for k, v in environ.items() if k.upper() not in ("PYTHONHOME", "VIRTUAL_ENV")}
    path_key = next((k for k in env if k.upper() == "PATH"), "PATH")
    env[path_key] = f"{venv / 'bin'}{os.pathsep}{env[path_key]}" if env.get(path_key) else str(venv / "bin")
    env["VIRTUAL_ENV"] = str(venv)
    return env


def launch(pack: Path, session: Session, environ: Mapping[str, str] | None = None) -> Launch:
    """The command, directory and environment the CLI runs the pack at `pack` with."""
    pack = Path(os.path.abspath(pack))
    # The plan's own run ignores what a shell sets for real runs (config, stack); the CLI
    # would override those variables with the same values anyway.
    base = {
        k: v
        for k, v in (os.environ if environ is None else environ).items()
        if not k.startswith("PULUMI_CONFIG")
        and k not in ("PULUMI_ORGANIZATION", "PULUMI_PROJECT", "PULUMI_STACK", "PULUMI_DRY_RUN")
    }
    venv = _virtualenv(pack)
    if venv is not None:
        python = str(venv / "bin" / "python")
        env = activated(base, venv)
    else:
        # toolchain.CommandPath: PULUMI_PYTHON_CMD, else python3, else python, on PATH.
        names = [base["PULUMI_PYTHON_CMD"]] if base.get("PULUMI_PYTHON_CMD") else ["python3", "python"]
        found = [shutil.which(n, path=base.get("PATH")) for n in names]
        python = next((f for f in found if f), "")
        if not python:
            raise PackError(f"no {' or '.join(names)} on PATH to run the policy pack")
        env = dict(base)
    values = {
        "PULUMI_ORGANIZATION": session.organization,
        "PULUMI_PROJECT": session.project,
        "PULUMI_STACK": session.stack,
        "PULUMI_DRY_RUN": "true" if session.dry_run else "false",
        # Go's json.Marshal of a map: keys sorted, no spaces.
        "PULUMI_CONFIG": json.dumps(dict(session.config), sort_keys=True, separators=(",", ":"))
        if session.config
        else "",
    }
    env |= {k: v for k, v in values.items() if v}
    argv = [python, "-u", "-m", "pulumi.policy", ENGINE_ADDRESS, str(pack)]
    return Launch(argv, pack, env)


class _Tail:
    """The last bytes of a pipe, read in a thread so the pack never blocks on a full pipe."""

    def __init__(self, pipe: Any):
        self.data = bytearray()
        self._pipe = pipe
        self._thread = threading.Thread(target=self._drain, daemon=True)
        self._thread.start()

    def _drain(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            while chunk := os.read(self._pipe.fileno(), 65536):
                self.data += chunk
                del self.data[: max(0, len(self.data) - _OUTPUT_TAIL)]

    def text(self, wait: float = 0.5) -> str:
        self._thread.join(wait)
        return self.data.decode(errors="replace").strip()

    def close(self) -> None:
        # The pack's group is gone, so the pipe ends at once; its fd is closed only then (a
        # closed fd's number may be reused while the thread still reads it).
        self._thread.join(1.0)
        if not self._thread.is_alive():
            self._pipe.close()


def _read_port(proc: subprocess.Popen, deadline: float) -> int:
    """The first line of the pack's stdout, read a byte at a time as the engine reads it."""
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    line = b""
    while not line.endswith(b"\n"):
        left = deadline - time.monotonic()
        if left <= 0:
            raise PackError(f"the policy pack wrote no port within {START_TIMEOUT:.0f} s")
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            continue
        byte = os.read(fd, 1)
        if not byte:
            code = proc.wait()
            raise PackError(f"the policy pack exited (status {code}) before writing its port")
        line += byte
    text = line.decode(errors="replace").strip()
    if not text.isdigit():
        raise PackError(f"the policy pack wrote an invalid port to stdout: {text!r}")
    return int(text)


def stop(proc: subprocess.Popen) -> None:
    """End the pack and anything it started: tell its process group to terminate (the engine
    interrupts it; SIGTERM ends a Python pack at once where SIGINT lets it unwind for a third
    of a second), kill the group if the pack lingers, then kill whatever of the group is left."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(STOP_GRACE)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)


@contextlib.contextmanager
def _signals_end_the_pack() -> Iterator[None]:
    """While a pack runs, SIGTERM and SIGHUP end the plan by an exception (so the pack is
    stopped on the way out) instead of killing it outright, which would orphan the pack.
    Under the plan's own handler (plan.interrupts), which kills the pack's group itself at
    once, nothing is changed."""
    from plan import interrupts

    if threading.current_thread() is not threading.main_thread() or interrupts.handling():
        yield
        return

    def leave(signum: int, _frame: Any) -> None:
        raise SystemExit(128 + signum)

    previous = {sig: signal.signal(sig, leave) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


@contextlib.contextmanager
def started(spec: Launch) -> Iterator[tuple[int, _Tail]]:
    """The pack running as its own process (its own process group): (port, its stderr)."""
    with _signals_end_the_pack():
        try:
            proc = subprocess.Popen(
                spec.argv,
                cwd=spec.cwd,
                env=spec.env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )
        except OSError as exc:
            raise PackError(f"the policy pack could not be started: {exc}") from None
        assert proc.stderr is not None and proc.stdout is not None
        tails = [_Tail(proc.stderr)]
        try:
            try:
                port = _read_port(proc, time.monotonic() + START_TIMEOUT)
            except PackError as exc:
                stop(proc)
                # The pack's last word (a traceback ends with the exception).
                lines = tails[0].text().splitlines()
                raise PackError(f"{exc}{': ' + lines[-1] if lines else ''}") from None
            # Whatever the pack writes after its port must not fill the pipe.
            tails.append(_Tail(proc.stdout))
            yield port, tails[0]
        finally:
            stop(proc)
            for tail in tails:
                tail.close()
            if len(tails) == 1:
                proc.stdout.close()


class Analyzer:
    """A client of one policy pack, with the engine's calls and a deadline on each."""

    def __init__(self, channel: grpc.Channel):
        self._stub = analyzer_pb2_grpc.AnalyzerStub(channel)

    def _call(self, method: str, request: Any, optional: bool = False, connecting: bool = False) -> Any:
        timeout = CONNECT_TIMEOUT if connecting else CALL_TIMEOUT
        try:
            return getattr(self._stub, method)(request, timeout=timeout, wait_for_ready=connecting)
        except grpc.RpcError as exc:
            if optional and exc.code() == grpc.StatusCode.UNIMPLEMENTED:
                return None
            if exc.code() == grpc.StatusCode.DEADLINE_EXCEEDED:
                raise PackError(f"the policy pack did not answer {method} within {timeout:.0f} s") from None
            raise PackError(f"the policy pack failed {method}: {exc.details()}") from None

    def configure_stack(self, session: Session) -> None:
        """The first call the pack gets, once its server is ready: the language host answers
        the engine's Handshake itself and forwards its ConfigureStack (policy_proxy.go Attach;
        UNIMPLEMENTED is an answer)."""
        self._call("ConfigureStack", session.configure_request(), optional=True, connecting=True)

    def info(self) -> analyzer_pb2.AnalyzerInfo:
        return self._call("GetAnalyzerInfo", empty_pb2.Empty())

    def configure(self, info: analyzer_pb2.AnalyzerInfo) -> None:
        """What the engine sends a local pack without a config file: every policy at the level
        it declares (pkg/engine/update.go loadPolicyPlugins, ReconcilePolicyPackConfig)."""
        if not info.supportsConfig or not info.policies:
            return
        self._call(
            "Configure",
            analyzer_pb2.ConfigureAnalyzerRequest(
                policyConfig={
                    p.name: analyzer_pb2.PolicyConfig(enforcementLevel=p.enforcementLevel)
                    for p in info.policies
                }
            ),
        )

    def analyze(self, request: analyzer_pb2.AnalyzeRequest) -> analyzer_pb2.AnalyzeResponse:
        return self._call("Analyze", request)

    def remediate(self, request: analyzer_pb2.AnalyzeRequest) -> Any:
        return self._call("Remediate", request, optional=True)

    def analyze_stack(self, resources: list[analyzer_pb2.AnalyzerResource]) -> analyzer_pb2.AnalyzeResponse:
        return self._call("AnalyzeStack", analyzer_pb2.AnalyzeStackRequest(resources=resources))


@contextlib.contextmanager
def connected(port: int) -> Iterator[Analyzer]:
    """A client of the pack listening on `port` (its first call, ConfigureStack, waits for it)."""
    channel = grpc.insecure_channel(f"127.0.0.1:{port}", options=_CHANNEL_OPTIONS)
    try:
        yield Analyzer(channel)
    finally:
        channel.close()


@contextlib.contextmanager
def served(policies: list[Any], name: str) -> Iterator[int]:
    """Policy objects (not a pack directory) served in this process by the servicer
    `pulumi_policy.PolicyPack` serves a pack with (policy.py, pulumi-policy 1.21.0), on a port
    of its own: the same protocol, without a process to start."""
    from concurrent.futures import ThreadPoolExecutor

    from pulumi_policy import EnforcementLevel
    from pulumi_policy.policy import _PolicyAnalyzerServicer

    # As PolicyPack builds it: version "0.0.1", the pack's default level advisory.
    servicer = _PolicyAnalyzerServicer(name, "0.0.1", list(policies), EnforcementLevel.ADVISORY)
    executor = ThreadPoolExecutor(max_workers=4, thread_name_prefix="plan-policies")
    server = grpc.server(executor, options=_CHANNEL_OPTIONS)
    analyzer_pb2_grpc.add_AnalyzerServicer_to_server(servicer, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        yield port
    finally:
        server.stop(1.0).wait()
        executor.shutdown(wait=True)
