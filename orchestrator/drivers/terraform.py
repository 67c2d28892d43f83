"""The one Terraform driver, for the local, AWS and GCP stacks alike.

Each sweep gets its own working directory per stack: the stack's files are
copied there, with the variables (`terraform.tfvars.json`) and the state next
to them. So sweeps never share state, and `destroy` runs against the
configuration that created the resources even if the stack has changed since.
A stack's local modules (`source = "../aws"`) are copied too, in the same
relative layout, so the copy finds them where the original does.

Providers are downloaded once into a plugin cache shared by every sweep
(`TF_PLUGIN_CACHE_DIR`, `$XDG_CACHE_HOME/interregion/terraform-plugins`), checked
against the stack's committed `.terraform.lock.hcl`. `apply` and `destroy` run with
`-json`: a failure's one line is the error diagnostic's summary and detail, read from
Terraform's machine-readable stream rather than from its boxed text.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
from pathlib import Path
from typing import Any

from orchestrator.core import UserError, cache_home, debug
from orchestrator.drivers import interrupts
from orchestrator.drivers import processes as children
from orchestrator.model import Host, hosts_from_output

# How long each stage may take before it is stopped: generous, since a cloud
# apply of forty VMs takes minutes, but a hung provider must not hold a sweep
# (and its billed VMs) forever.
INIT_TIMEOUT_S = 10 * 60
APPLY_TIMEOUT_S = 30 * 60
OUTPUT_TIMEOUT_S = 2 * 60
TIMEOUTS_S = {
    "init": INIT_TIMEOUT_S,
    "apply": APPLY_TIMEOUT_S,
    "destroy": APPLY_TIMEOUT_S,
    "output": OUTPUT_TIMEOUT_S,
}
# After its time is up, or on an interrupt, terraform gets SIGINT (it stops cleanly
# and keeps its state) and this long to finish; then SIGTERM, then SIGKILL.
STOP_GRACE_S = 60.0

TFVARS = "terraform.tfvars.json"
STATE = "terraform.tfstate"
# Files of a stack that are per-sweep, never copied from the source folder.
_NOT_COPIED = re.compile(r"(terraform\.tfstate.*|.*\.tfvars(\.json)?|\.terraform)$")
# Value context under a source line ("    ├───", "    │ var.x is ...") and the
# corners of boxed diagnostics carry no message of their own.
_LOCAL_MODULE = re.compile(r'^\s*source\s*=\s*"(\.\.?/[^"]*)"', re.MULTILINE)
_SKIP = re.compile(r"^(\s+[│├]|[╷╵])")
_CONTEXT = re.compile(r"^(on \S+ line \d+|\d+:|with |in |This was checked by|\(and \d+ more)")


def plugin_cache_dir() -> Path | None:
    """Where providers are kept between sweeps (made if missing); None if it cannot be
    made: Terraform then downloads into each sweep's folder, and a teardown still runs."""
    folder = cache_home() / "terraform-plugins"
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return folder


class TerraformStack:
    """A Terraform stack (`source`) run in a working directory of one sweep."""

    def __init__(
        self,
        source: Path,
        workdir: Path,
        env: dict[str, str] | None = None,
        timeouts_s: dict[str, float] | None = None,
        stop_grace_s: float = STOP_GRACE_S,
    ):
        self.source = Path(source)
        self.workdir = Path(workdir)
        self.rundir = self._rundir()  # where terraform runs: the copy of `source`
        self.env = {
            **os.environ,
            "TF_IN_AUTOMATION": "1",
            "TF_INPUT": "0",
            "CHECKPOINT_DISABLE": "1",  # no version check calls home
            **(env or {}),
        }
        cache = None if "TF_PLUGIN_CACHE_DIR" in self.env else plugin_cache_dir()
        if cache is not None:  # the user's own cache wins
            self.env["TF_PLUGIN_CACHE_DIR"] = str(cache)
        self.timeouts_s = {**TIMEOUTS_S, **(timeouts_s or {})}
        self.stop_grace_s = stop_grace_s
        # on an interrupt: SIGINT (terraform stops cleanly, saving its state), then
        # SIGTERM, then SIGKILL, each after its wait
        self.interrupt_steps = (
            (signal.SIGINT, stop_grace_s),
            (signal.SIGTERM, 10.0),
            (signal.SIGKILL, 5.0),
        )

    def apply(self, variables: dict[str, Any]) -> list[Host]:
        """Write the variables, init, apply; return the hosts the stack outputs."""
        if not (self.source / "main.tf").exists():
            raise UserError(f"{self.source} is not a Terraform stack (no main.tf)")
        self._copy_stack()
        (self.rundir / TFVARS).write_text(json.dumps(variables, indent=1, sort_keys=True))
        self._run("init", ["init", "-input=false", "-no-color"])
        self._run("apply", ["apply", "-json", "-input=false", "-auto-approve"])
        return self.hosts()

    def hosts(self) -> list[Host]:
        """The hosts of the last apply, from `terraform output -json`."""
        if not self.applied():
            raise UserError(f"no Terraform state in {self.workdir}: provision the sweep first")
        out = self._run("output", ["output", "-json", "-no-color"])
        try:
            return hosts_from_output(json.loads(out))
        except json.JSONDecodeError:
            raise UserError(f"terraform output in {self.workdir} is not JSON") from None

    def applied(self) -> bool:
        return (self.rundir / STATE).exists()

    def destroy(self) -> None:
        """Destroy what the stack made; nothing to do if it was never applied."""
        if not self.applied():
            return
        # The copied configuration may be gone if the folder was cleaned by hand.
        if not (self.rundir / "main.tf").exists():
            self._copy_stack()
        self._run("init", ["init", "-input=false", "-no-color"])
        self._run("destroy", ["destroy", "-json", "-input=false", "-auto-approve"])

    def _rundir(self) -> Path:
        if self.source.is_dir():
            dirs = module_dirs(self.source)
            root = Path(os.path.commonpath(dirs))
            return self.workdir / self.source.resolve().relative_to(root)
        # The stack folder is gone: destroy still works from the copy with state.
        found = sorted(self.workdir.glob(f"**/{STATE}"))
        return found[0].parent if found else self.workdir

    def _copy_stack(self) -> None:
        dirs = module_dirs(self.source)
        root = Path(os.path.commonpath(dirs))
        for directory in dirs:
            target = self.workdir / directory.relative_to(root)
            target.mkdir(parents=True, exist_ok=True)
            for path in sorted(directory.iterdir()):
                # Top-level files only: other subfolders (like infra/local/delayd)
                # are not Terraform's business; local modules are listed in dirs.
                if path.is_file() and not _NOT_COPIED.fullmatch(path.name):
                    shutil.copy2(path, target / path.name)

    def _run(self, what: str, args: list[str]) -> str:
        timeout_s = self.timeouts_s[what]
        log = self.workdir / f"terraform-{what}.log"
        debug(f"run: terraform {' '.join(args)} in {self.rundir} (its log: {log})")
        try:
            process = subprocess.Popen(
                ["terraform", f"-chdir={self.rundir}", *args],
                env=self.env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                stdin=subprocess.DEVNULL,
                # its own group: terraform gets exactly the signals we forward (a second
                # SIGINT would make it quit without saving what it created)
                start_new_session=True,
            )
        except FileNotFoundError:
            raise UserError(
                "terraform is not installed: see https://developer.hashicorp.com/terraform/install"
            ) from None

        def stop(why: str) -> None:
            """Let terraform save what it made first, then end its whole group (a provider
            plugin it started must not outlive it), and log what was sent."""
            with interrupts.deferred():
                said = children.stop_group(process, self.interrupt_steps)
                stdout, stderr = _remaining_output(process)
                log.write_text(
                    f"{stdout}{stderr}\ninterregion: terraform {what} stopped ({why}): {said}\n"
                )

        with process, children.registered(process):
            try:
                stdout, stderr = process.communicate(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                stop(f"timeout {timeout_s:g} s")  # the same polite stop as on an interrupt
                raise UserError(
                    f"terraform {what} did not finish within {timeout_s:g} s and was stopped "
                    f"(log: {log}): check the cloud, then run the stage again"
                ) from None
            except BaseException as e:  # Ctrl-C, SIGTERM, an error of ours
                stop(type(e).__name__)
                raise
        streamed = "-json" in args and what != "output"
        if streamed:  # the log keeps the messages readable; the stream is kept beside it
            (self.workdir / f"terraform-{what}.jsonl").write_text(stdout)
            log.write_text(json_messages(stdout) + stderr)
            for item in _json_lines(stdout):  # -v: what it made, destroyed or failed
                if item.get("type") in SAID_TYPES and "@message" in item:
                    debug(f"terraform {what}: {item['@message']}")
        else:
            log.write_text(stdout + stderr)
        if process.returncode != 0:
            found = summarize_diagnostics(stdout) if streamed else None
            raise UserError(f"terraform {what} failed: {found or summarize_error(stderr)}")
        return stdout


def _remaining_output(process: subprocess.Popen[str]) -> tuple[str, str]:
    """What a stopped terraform printed; nothing if its pipes are still held open."""
    try:
        return process.communicate(timeout=5)
    except subprocess.TimeoutExpired:
        return "", "(no output: a child of terraform still holds it)"


def module_dirs(source: Path) -> list[Path]:
    """The stack folder and every local module it uses, recursively (resolved paths)."""
    found: list[Path] = []
    todo = [Path(source).resolve()]
    while todo:
        directory = todo.pop(0)
        if directory in found:
            continue
        found.append(directory)
        for tf in sorted(directory.glob("*.tf")):
            for relative in _LOCAL_MODULE.findall(tf.read_text()):
                todo.append((directory / relative).resolve())
    return found


# the messages of a `-json` stream that -v shows: each resource done or failed, the sum
SAID_TYPES = ("apply_complete", "apply_errored", "change_summary")


def _json_lines(stream: str) -> list[dict[str, Any]]:
    """The objects of a `-json` stream; lines that are not JSON objects are left out."""
    found = []
    for line in stream.splitlines():
        try:
            item = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(item, dict):
            found.append(item)
    return found


def json_messages(stream: str) -> str:
    """The human-readable `@message` of each line of a `-json` stream, one per line."""
    return "".join(f"{item['@message']}\n" for item in _json_lines(stream) if "@message" in item)


def summarize_diagnostics(stream: str) -> str | None:
    """One line from the first error diagnostic of a `-json` stream (`apply -json`,
    `destroy -json`: `{"type": "diagnostic", "diagnostic": {"severity": "error",
    "summary": ..., "detail": ...}}`); None when the stream holds no error diagnostic.

    The detail of a failed provisioner is the last `error: ...` line the command printed
    (the emulator's own message); otherwise its first paragraph, on one line.
    """
    for item in _json_lines(stream):
        diagnostic = item.get("diagnostic")
        if item.get("type") != "diagnostic" or not isinstance(diagnostic, dict):
            continue
        if diagnostic.get("severity") != "error":
            continue
        summary = " ".join(str(diagnostic.get("summary") or "").split()) or "error"
        detail = str(diagnostic.get("detail") or "")
        # a command's output follows "Output: " on the same line
        output = detail.split(". Output: ", 1)[1] if ". Output: " in detail else ""
        said = [
            line.strip()[len("error: ") :]
            for line in output.splitlines()
            if line.strip().lower().startswith("error: ")
        ]
        if said:
            return f"{summary}: {said[-1]}"
        first = next((p for p in re.split(r"\n\s*\n", detail) if p.strip()), "")
        first = " ".join(first.split())
        first = re.sub(r"^Error running command '[^']*': ", "", first)
        first = re.sub(r"\s*Output:\s*$", "", first)
        return f"{summary}: {first}" if first else summary
    return None


def summarize_error(stderr: str) -> str:
    """One line out of Terraform's error output: the error and its most telling detail.

    The detail of a failed provisioner is the last `error: ...` line the
    command printed (the emulator's own message); otherwise the first paragraph
    of prose after the source-code context, re-joined where Terraform wrapped it.
    """
    lines = [
        line.removeprefix("│").strip() for line in stderr.splitlines() if not _SKIP.match(line)
    ]
    errors = [i for i, line in enumerate(lines) if line.startswith("Error: ")]
    if not errors:
        meaningful = [line for line in lines if line and not line.startswith("Warning")]
        return meaningful[-1] if meaningful else "no error message (see the log in the workdir)"
    start = errors[0]
    summary = lines[start][len("Error: ") :].strip()
    end = errors[1] if len(errors) > 1 else len(lines)
    body = lines[start + 1 : end]
    command_output = [line for line in body if line.lower().startswith("error: ")]
    if command_output:
        return f"{summary}: {command_output[-1][len('error: ') :]}"
    for paragraph in _paragraphs(body):
        if _CONTEXT.match(paragraph[0]):
            continue
        detail = " ".join(paragraph)
        detail = re.sub(r"^Error running command '[^']*': ", "", detail)
        detail = re.sub(r"\s*Output:\s*$", "", detail)
        return f"{summary}: {detail}"
    return summary


def _paragraphs(lines: list[str]) -> list[list[str]]:
    paragraphs: list[list[str]] = [[]]
    for line in lines:
        if line:
            paragraphs[-1].append(line)
        elif paragraphs[-1]:
            paragraphs.append([])
    return [p for p in paragraphs if p]
