"""The tools compared, and how each is found or installed (TorchFix, Fixit and a plugin-free flake8
get venvs of their own)."""

from __future__ import annotations

import importlib.metadata
import os
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
ALL_TOOLS = ("bcast-lint", "ruff", "torchfix", "flake8", "fixit")
# Installed into their own venvs: TorchFix pins libcst<1.6 and Fixit pins click<8.2, which
# would downgrade the project's own environment, and TorchFix registers a flake8 plugin
# that would distort the flake8 comparison.
TOOL_PINS = {"torchfix": "TorchFix==0.7.0", "fixit": "fixit==2.2.1"}


@dataclass(frozen=True)
class Tool:
    """How to run one tool, or why it cannot run."""

    name: str
    prefix: tuple[str, ...] = ()
    env: dict = field(default_factory=dict)
    version: str = ""
    unavailable: str | None = None


def find_executable(name: str) -> str | None:
    beside = Path(sys.executable).parent / name
    return str(beside) if beside.exists() else shutil.which(name)


def version_of(prefix: tuple[str, ...], env: dict | None = None) -> str:
    try:
        out = subprocess.run(
            [*prefix, "--version"],
            check=False,
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, **(env or {})},
        )
    except OSError:
        return "?"
    return (
        (out.stdout.strip() or out.stderr.strip()).splitlines()[0] if out.returncode == 0 else "?"
    )


def resolve_bcast_lint(override: str | None) -> Tool:
    if override:
        prefix = tuple(shlex.split(override))
        return Tool("bcast-lint", prefix, version=version_of(prefix))
    env: dict = {}
    if executable := find_executable("bcast-lint"):
        prefix: tuple[str, ...] = (executable,)
    elif (REPO_ROOT / "bcast_lint" / "cli.py").exists():
        # Not installed: run the checkout, wherever the tool's working directory is.
        prefix, env = (sys.executable, "-m", "bcast_lint"), {"PYTHONPATH": str(REPO_ROOT)}
    else:
        return Tool("bcast-lint", unavailable="n/a (not installed)")
    return Tool("bcast-lint", prefix, env, version_of(prefix, env))


def resolve_ruff() -> Tool:
    executable = find_executable("ruff")
    if executable is None:
        return Tool("ruff", unavailable="n/a (not installed)")
    # ruff has no thread flag; rayon reads this.
    return Tool("ruff", (executable,), {"RAYON_NUM_THREADS": "1"}, version_of((executable,)))


def resolve_venv_tool(name: str, script: str, corpus_dir: Path, install: bool) -> Tool:
    venv = corpus_dir / "venvs" / name
    executable = venv / "bin" / script
    if not executable.exists() and install:
        reason = make_venv(venv, [TOOL_PINS[name]])
        if reason:
            return Tool(name, unavailable=f"n/a ({reason})")
    if not executable.exists():
        return Tool(name, unavailable="n/a (not installed)")
    return Tool(name, (str(executable),), version=version_of((str(executable),)))


def make_venv(venv: Path, requirements: list[str]) -> str | None:
    """Create (or update) a throwaway venv; returns why it failed, or None."""
    print(f"installing {' '.join(requirements)} into {venv} ...", file=sys.stderr)
    try:
        if not (venv / "bin" / "python").exists():
            subprocess.run(
                [sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True
            )
        subprocess.run(
            [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", *requirements],
            check=True,
            capture_output=True,
            text=True,
        )
    except subprocess.CalledProcessError as error:
        last = (error.stderr or "").strip().splitlines()[-1:] or [f"exit {error.returncode}"]
        return f"install failed: {last[0][:80]}"
    return None


def flake8_plugin_installed() -> bool:
    return any(
        ep.name.startswith("BCL")
        for ep in importlib.metadata.entry_points(group="flake8.extension")
    )


def flake8_pins() -> list[str]:
    """flake8 and this environment's flake8 plugins but bcast-lint, at the same versions."""
    dists = {"flake8"}
    for group in ("flake8.extension", "flake8.report"):
        for ep in importlib.metadata.entry_points(group=group):
            if ep.dist is not None and not ep.name.startswith("BCL"):
                dists.add(ep.dist.name)
    for name in ("pyflakes", "pycodestyle", "mccabe"):
        dists.add(name)
    return sorted(f"{name}=={importlib.metadata.version(name)}" for name in dists)


def resolve_flake8(corpus_dir: Path, install: bool) -> tuple[Tool, Tool]:
    """flake8 here (with the bcast-lint plugin) and the same flake8 in a venv without it."""
    try:
        importlib.metadata.version("flake8")
    except importlib.metadata.PackageNotFoundError:
        missing = "n/a (not installed)"
        return Tool("flake8", unavailable=missing), Tool("flake8 no plugin", unavailable=missing)
    prefix = (sys.executable, "-m", "flake8")
    version = version_of(prefix)
    with_plugin = (
        Tool("flake8", prefix, version=version)
        if flake8_plugin_installed()
        else Tool("flake8", unavailable="n/a (BCL plugin not installed)")
    )
    plain = corpus_dir / "venvs" / "flake8-plain"
    reason = make_venv(plain, flake8_pins()) if install else None
    if reason or not (plain / "bin" / "python").exists():
        return with_plugin, Tool(
            "flake8 no plugin", unavailable=f"n/a ({reason or 'not installed'})"
        )
    plain_prefix = (str(plain / "bin" / "python"), "-m", "flake8")
    return with_plugin, Tool("flake8 no plugin", plain_prefix, version=version_of(plain_prefix))


def resolve_tools(
    selected: list[str], corpus_dir: Path, install: bool, bcast_lint_cmd: str | None
) -> dict:
    tools: dict[str, Tool] = {}
    if "bcast-lint" in selected:
        tools["bcast-lint"] = resolve_bcast_lint(bcast_lint_cmd)
    if "ruff" in selected:
        tools["ruff"] = resolve_ruff()
    if "flake8" in selected:
        tools["flake8"], tools["flake8 no plugin"] = resolve_flake8(corpus_dir, install)
    if "torchfix" in selected:
        tools["torchfix"] = resolve_venv_tool("torchfix", "torchfix", corpus_dir, install)
    if "fixit" in selected:
        tools["fixit"] = resolve_venv_tool("fixit", "fixit", corpus_dir, install)
    return tools
