"""Shared test setup."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# Decided once, before any test runs: the framework-map check would otherwise create the checkout's
# folder, and the real-world check would then download its libraries into it instead of the cache.
_CHECKOUT_CORPUS = ROOT / "benchmarks" / ".corpus"
_HAS_CHECKOUT_CORPUS = _CHECKOUT_CORPUS.exists()


@pytest.fixture(scope="session")
def corpus_dir() -> Path:
    """Where the pinned libraries are downloaded: the checkout's benchmarks/.corpus when it has one
    (the benchmarks' own), else a cache outside the checkout that every later clone reuses (CI
    clones afresh)."""
    if _HAS_CHECKOUT_CORPUS:
        return _CHECKOUT_CORPUS
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "bcast-lint" / "corpus"


# Runtime jobs of a framework: its start-up alone takes tens of seconds, DeepSpeed's first one
# builds an extension for minutes.
_FRAMEWORK_JOBS = ("lightning", "fabric", "deepspeed", "transformers")


def _estimated_seconds(item: pytest.Item, variants: int) -> float:
    """A rough wall time under a full run on the 2-core machine, enough to deal the long tests
    out evenly: the quick start's chain of installs on one clone (7 min in all), the seventeen
    real libraries and DeepSpeed's runtime job (4-5 min each), then the other jobs; a slow test
    run on `variants` parameters (77 small programs) shares its time among them."""
    slow = item.get_closest_marker("slow") or item.get_closest_marker("network")
    runtime = item.get_closest_marker("runtime") is not None
    if item.path.name == "test_quick_start.py":
        return 110.0 if slow else 0.1
    if "real_world_corpus" in item.name or (runtime and "deepspeed" in item.name):
        return 250.0
    if runtime and any(framework in item.name for framework in _FRAMEWORK_JOBS):
        return 60.0
    if runtime:
        return 25.0
    return 40.0 / variants if slow else 0.1


def _units(items: list[pytest.Item]) -> list[list[pytest.Item]]:
    """Tests that must run in order on one worker: the quick start's, which share one clone and
    its `.venv` (a module-scoped fixture, made again on every worker that runs one of them)."""
    chain = [item for item in items if item.path.name == "test_quick_start.py"]
    return ([chain] if chain else []) + [[item] for item in items if item.path.name != "test_quick_start.py"]


def _dealt(items: list[pytest.Item], workers: int) -> list[pytest.Item]:
    """The suite in `workers` blocks of the sizes worksteal hands out first (it gives worker i
    the i-th contiguous block, then an idle worker takes the tail half of the longest queue): the
    long tests are dealt out, the longest first, each to the block with the least estimated
    time, and head their blocks; the short ones fill the blocks in file order and are what the
    idle workers take. Sorted longest first without dealing, the first block held every long
    test and its worker ran them one after another at the end of the run."""
    variants = Counter((item.path, item.originalname) for item in items)
    long_units, short = [], []
    for unit in _units(items):
        cost = sum(_estimated_seconds(item, variants[item.path, item.originalname]) for item in unit)
        if cost >= 1:
            long_units.append((cost, unit))
        else:
            short.extend(unit)
    sizes, left = [], len(items)
    for index in range(workers):
        sizes.append(left // (workers - index))
        left -= sizes[-1]
    long_units.sort(key=lambda pair: -pair[0])  # stable: file order among equals
    blocks: list[list[pytest.Item]] = [[] for _ in range(workers)]
    loads = [0.0] * workers
    for cost, unit in long_units:
        block = min(range(workers), key=lambda index: (loads[index], index))
        blocks[block].extend(unit)
        loads[block] += cost
    if any(len(block) > size for block, size in zip(blocks, sizes)):
        return [item for _, unit in long_units for item in unit] + short
    for block, size in zip(blocks, sizes):
        taken = size - len(block)
        block.extend(short[:taken])
        short = short[taken:]
    return [item for block in blocks for item in block]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The long tests first in each xdist worker's block (the quick start's chain of installs,
    the real-world corpus, the framework and runtime jobs), the many short ones after: the
    workers then finish together instead of one running a late five-minute test alone. Every
    worker computes the same order from the same collection, as xdist requires."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    items[:] = _dealt(items, max(workers, 1))
