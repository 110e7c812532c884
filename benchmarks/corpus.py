"""The benchmark corpus: the pinned sdists, fetched once with `pip download` and extracted, or a
few generated files for `--smoke`."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

CORPUS = (
    ("transformers", "5.24.0"),
    ("accelerate", "1.15.0"),
    ("trl", "1.16.0"),
    ("diffusers", "0.42.1"),
    ("peft", "0.21.2"),
    ("deepspeed", "0.19.8"),
)
# A dense distributed-training corpus (issue 22): libraries whose code is mostly distributed training,
# fetched as `pip download --no-deps` serves them (a wheel or an sdist).
DENSE_CORPUS = (
    ("megatron-core", "0.16.1"),
    ("verl", "0.9.1"),
    ("axolotl", "0.19.0"),
    ("colossalai", "0.5.0"),
    ("torchtune", "0.6.1"),
    ("mosaicml", "0.32.1"),
    ("lightning", "2.6.6"),
    ("fairscale", "0.4.13"),
)
TINY_FILE = "import os\n\nprint(os.getcwd())\n"


@dataclass(frozen=True)
class Corpus:
    root: Path
    files: tuple[str, ...]  # sorted, relative to root
    lines: int
    description: str


def fetch_corpus(corpus_dir: Path) -> Corpus:
    sdists, src = corpus_dir / "sdist", corpus_dir / "src"
    files: list[str] = []
    for name, version in CORPUS:
        archive = find_sdist(sdists, name, version) or download_sdist(sdists, name, version)
        top = extract_sdist(archive, src)
        files += [
            path.relative_to(src).as_posix() for path in (src / top).rglob("*.py") if path.is_file()
        ]
    files.sort()
    description = " ".join(f"{name}=={version}" for name, version in CORPUS)
    return Corpus(src, tuple(files), count_lines(src, files), description)


def fetch_dense_corpus(corpus_dir: Path) -> Corpus:
    src = corpus_dir / "src"
    files = sorted(path.relative_to(src).as_posix() for name, version in DENSE_CORPUS
                   for path in fetch_library(corpus_dir, name, version).rglob("*.py") if path.is_file())
    description = "dense: " + " ".join(f"{name}=={version}" for name, version in DENSE_CORPUS)
    return Corpus(src, tuple(files), count_lines(src, files), description)


def fetch_library(corpus_dir: Path, name: str, version: str) -> Path:
    """`corpus_dir/src/NAME-VERSION`, downloaded (a wheel or an sdist) and extracted on first use."""
    target = corpus_dir / "src" / f"{name}-{version}"
    marker = corpus_dir / "src" / f".extracted-{name}-{version}"
    if marker.exists():
        return target
    downloads = corpus_dir / "dist" / f"{name}-{version}"
    if not any(downloads.glob("*")):
        print(f"fetching {name}=={version} ...", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
                        f"{name}=={version}", "-d", str(downloads)], check=True)
    archive = next(downloads.glob("*"))
    shutil.rmtree(target, ignore_errors=True)
    if archive.suffix == ".whl":
        with zipfile.ZipFile(archive) as wheel:
            wheel.extractall(target)
    else:
        with tarfile.open(archive) as tar:
            # The "data" filter refuses absolute paths, "..", links out of the tree and devices;
            # an sdist holds one NAME-VERSION/ folder, which becomes `target` itself.
            tar.extractall(target.parent, filter="data")
    marker.write_text(archive.name)
    return target


def normalize(name: str) -> str:
    """Sdist file names spell a project name with "_" where the name may have "-" or "."."""
    return name.lower().replace("-", "_").replace(".", "_")


def find_sdist(sdists: Path, name: str, version: str) -> Path | None:
    for archive in sdists.glob("*.tar*"):
        found_name, _, found_version = archive.name.split(".tar")[0].rpartition("-")
        if normalize(found_name) == normalize(name) and found_version == version:
            return archive
    return None


def download_sdist(sdists: Path, name: str, version: str) -> Path:
    sdists.mkdir(parents=True, exist_ok=True)
    print(f"fetching {name}=={version} ...", file=sys.stderr)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--quiet",
            "--no-deps",
            "--no-binary",
            ":all:",
            f"{name}=={version}",
            "-d",
            str(sdists),
        ],
        check=True,
    )
    archive = find_sdist(sdists, name, version)
    if archive is None:
        raise SystemExit(f"pip download of {name}=={version} produced no .tar sdist in {sdists}")
    return archive


def extract_sdist(archive: Path, src: Path) -> str:
    """Extract once; a marker written after success makes an interrupted extraction start over."""
    marker = src / f".extracted-{archive.name}"
    with tarfile.open(archive) as tar:
        top = tar.getnames()[0].split("/")[0]
        if not marker.exists():
            shutil.rmtree(src / top, ignore_errors=True)
            src.mkdir(parents=True, exist_ok=True)
            # The "data" filter refuses absolute paths, "..", links out of the tree and devices.
            tar.extractall(src, filter="data")
            marker.write_text(top)
    return top


def count_lines(root: Path, files: list[str]) -> int:
    """Also reads every file once, so the OS file cache is equally warm for every tool."""
    return sum((root / name).read_bytes().count(b"\n") for name in files)


def synthetic_corpus(root: Path) -> Corpus:
    """A few generated files, some with broadcasts and some without, for --smoke."""
    collective = (
        "import torch\nimport torch.distributed as dist\n\n\n"
        "def sync(rank):\n    t = torch.zeros(4) if rank == 0 else None\n"
        "    dist.broadcast(t, src=0)\n    return t\n"
    )
    plain = "def add(a, b):\n    return a + b\n\n\nclass Box:\n    value = 1\n"
    files = []
    for index in range(24):
        name = f"pkg{index % 3}/mod_{index:02d}.py"
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(collective if index % 3 == 0 else plain)
        files.append(name)
    files.sort()
    return Corpus(root, tuple(files), count_lines(root, files), "synthetic smoke corpus")
