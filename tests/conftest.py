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
