"""Shared test setup."""

from __future__ import annotations

import os
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


# Runtime jobs of a framework (its start-up alone takes tens of seconds, DeepSpeed's first one
# builds an extension for minutes): with the slow tests, not among the quick runtime ones.
_FRAMEWORK_JOBS = ("lightning", "fabric", "deepspeed", "transformers")


def _cost_rank(item: pytest.Item) -> int:
    # The quick start's chain of installs on one clone: first, at the head of the first worker's
    # half, which runs it in order (the other steals from the tail).
    if item.path.name == "test_quick_start.py":
        return 0
    if item.get_closest_marker("slow") or item.get_closest_marker("network") or (
            item.get_closest_marker("runtime") and any(framework in item.name for framework in _FRAMEWORK_JOBS)):
        return 1
    return 2 if item.get_closest_marker("runtime") else 3


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The longest tests first (the quick start's chain of installs, the real-world corpus, the
    runtime jobs), the many short ones last: the two xdist workers then finish together instead of
    one running a late five-minute chain alone. A stable sort keeps each file's order."""
    items.sort(key=_cost_rank)
