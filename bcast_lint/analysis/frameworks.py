"""The frameworks' calls that run collectives inside, read from the map generated from their pinned
sources (bcast_lint/data/framework_map.json, written by scripts/generate_framework_map.py).

The map gives, for each public method, property or function that may run a collective, what it runs
(`strategy.barrier()`), the chain of file:line hops that proves it, and, where one is visible, the
argument without which it runs none (`sync_dist`). It also gives the public names of the mapped
classes (`lightning.Trainer`), what a mapped class hands the user (`LightningModule.trainer` is a
Trainer), the classes of Lightning's hook parameters (`trainer`, `pl_module`) and of the
frameworks' own module variables (ignite's `_model`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Optional

# Packages published twice under another name, with the same code.
_PACKAGE_ALIASES = (("pytorch_lightning.", "lightning.pytorch."), ("lightning_fabric.", "lightning.fabric."))
# The import names of the mapped frameworks (the PyPI name differs for pytorch-ignite).
IMPORT_NAMES = {"torch": "torch", "accelerate": "accelerate", "transformers": "transformers",
                "lightning": "lightning", "deepspeed": "deepspeed", "torchmetrics": "torchmetrics",
                "pytorch-ignite": "ignite", "mmengine": "mmengine"}


# The package a call belongs to, for the coverage per framework (`--statistics`); the project's own
# helpers and what cannot be told count as "other".
_FRAMEWORK_OF_PACKAGE = {**{package: name for name, package in IMPORT_NAMES.items()},
                         "pytorch_lightning": "lightning", "lightning_fabric": "lightning",
                         "Accelerator": "accelerate"}
OTHER = "other"


def framework_of(qualified_names) -> str:
    """The mapped framework one of `qualified_names` belongs to (`ignite.distributed.all_reduce`:
    pytorch-ignite), or OTHER."""
    for qualified in qualified_names:
        found = _FRAMEWORK_OF_PACKAGE.get(qualified.split(".", 1)[0])
        if found is not None:
            return found
    return OTHER


@dataclass(frozen=True)
class Entry:
    framework: str
    version: str
    name: str  # qualified: `lightning.pytorch.trainer.trainer.Trainer.save_checkpoint`
    kind: str  # "method", "property" or "function"
    inside: str  # `strategy.barrier()`
    chain: tuple[str, ...]
    when: Optional[str] = None  # runs a collective only when this argument is passed, and true
    hand_written: bool = False
    when_object: Optional["ObjectArgument"] = None  # ...or when an argument is an object of a class

    @property
    def owner(self) -> str:
        return self.name.rsplit(".", 1)[0]

    @property
    def short_name(self) -> str:
        return self.name.rsplit(".", 1)[-1]

    @property
    def runs(self) -> str:
        """How a message says what it runs: `runs strategy.barrier() inside (lightning 2.6.6)`."""
        return f"runs {self.inside} inside ({self.framework} {self.version})"


@dataclass(frozen=True)
class ObjectArgument:
    """An argument that makes a call run a collective when it is an object of `klass`, whatever its
    `when` keyword says (a torchmetrics Metric handed to LightningModule.log is computed at the
    epoch's end), and what the call then runs."""

    keyword: str
    position: int  # counted without `self`
    klass: str
    inside: str
    chain: tuple[str, ...]


@dataclass(frozen=True)
class FrameworkMap:
    versions: dict
    entries: dict  # name -> Entry
    methods: dict  # owner class -> {method name -> Entry}
    aliases: dict  # public name -> the map's name (classes and functions)
    attributes: dict  # class -> {attribute -> class}
    hook_parameters: dict  # class -> {parameter name -> class}
    instances: dict  # a framework's module variable, rebound at run time -> its class
    subclasses: dict  # a mapped class's public subclass that overrides none of its entries -> the class

    def canonical(self, qualified: str) -> str:
        """The map's name for a qualified name: `lightning.Trainer`, `pytorch_lightning.Trainer` ->
        `lightning.pytorch.trainer.trainer.Trainer`; a subclass that keeps a mapped class's
        entries as they are (`torchmetrics.MeanMetric`) -> that class (`Metric`)."""
        for alias, real in _PACKAGE_ALIASES:
            if qualified.startswith(alias):
                qualified = real + qualified[len(alias):]
        qualified = self.aliases.get(qualified, qualified)
        return self.subclasses.get(qualified, qualified)

    def function(self, qualified: str) -> Optional[Entry]:
        entry = self.entries.get(self.canonical(qualified))
        return entry if entry is not None and entry.kind == "function" else None

    def is_class(self, qualified: str) -> bool:
        return self.canonical(qualified) in self.methods

    def method(self, owner: str, name: str) -> Optional[Entry]:
        return self.methods.get(owner, {}).get(name)

    def property_names(self) -> frozenset:
        """The short names of the mapped properties (`log_dir`)."""
        return frozenset(entry.short_name for entry in self.entries.values() if entry.kind == "property")

    def classes(self) -> frozenset:
        return frozenset(self.methods)

    def source(self) -> str:
        """Where the map comes from, as the rule's documentation says it."""
        versions = ", ".join(f"{name} {version}" for name, version in self.versions.items())
        return f"scripts/generate_framework_map.py from the pinned sources of {versions}"


@lru_cache(maxsize=1)
def load() -> FrameworkMap:
    data = json.loads(resources.files("bcast_lint.data").joinpath("framework_map.json").read_text())
    versions = data["versions"]
    entries = {}
    for raw in data["entries"]:
        entries[raw["name"]] = Entry(raw["framework"], versions[raw["framework"]], raw["name"], raw["kind"],
                                     raw["inside"], tuple(raw["chain"]), raw.get("when"),
                                     raw.get("hand_written", False), _object_argument(raw.get("when_object")))
    methods: dict = {}
    for entry in entries.values():
        if entry.kind != "function":
            methods.setdefault(entry.owner, {})[entry.short_name] = entry
    return FrameworkMap(versions, entries, methods, data["aliases"], data["attributes"], data["hook_parameters"],
                        data["instances"], data["subclasses"])


def _object_argument(raw: Optional[dict]) -> Optional[ObjectArgument]:
    if raw is None:
        return None
    return ObjectArgument(raw["keyword"], raw["position"], raw["class"], raw["inside"], tuple(raw["chain"]))
