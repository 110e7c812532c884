"""A linted module's place in its project: what its calls of the project's own functions reach,
which of its functions must survive the engine's cut, and which other modules its result read."""

from __future__ import annotations

import ast
import os
import re
from dataclasses import dataclass, field
from typing import Callable, Optional, Union

import libcst as cst

from bcast_lint.analysis.apis import CATALOG, STATE_DICT_HOOKS
from bcast_lint.analysis.names import dotted_parts
from bcast_lint.analysis.project import FunctionRef, ModuleIndex, Project
from bcast_lint.analysis.summaries import Summaries
from bcast_lint.analysis.words import COLLECTIVE_WORDS, gathers_only_index, mentions_collective, names_collective
from bcast_lint.source import Source


@dataclass(frozen=True)
class FileContext:
    project: Project
    summaries: Summaries
    index: Optional[ModuleIndex]  # the module's own top-level names
    klass: Optional[str] = None  # for a method analysed on its own (a summary): its class
    summary: bool = False  # the module is a function analysed alone, for its summary
    _memo: dict = field(default_factory=dict, compare=False)

    @property
    def package(self) -> Optional[str]:
        return self.index.location.package if self.index is not None else None

    def target(self, func: cst.BaseExpression, qualified: set[str], klass: Optional[str],
               local: bool, worth: Optional[Callable[[bytes], bool]] = None) -> Union[str, FunctionRef, None]:
        """What a call of `func` reaches in the project: a FunctionRef, a qualified name outside
        it (`torch.distributed.broadcast` re-exported by a project module), or None. `local`:
        the calling scope binds the called name itself; `worth`: see Project.resolve."""
        index = self.index
        if index is None:
            return None
        parts = dotted_parts(func)
        klass = klass or self.klass
        if calls_super(func):  # `super().save(step)`: the base class's method
            return self.project.super_method(index, klass, func.attr.value) if klass else None
        if parts and parts[0] == "self":
            return self.project.method(index, klass, parts[1]) if klass and len(parts) == 2 else None
        for name in qualified:
            if self.project.is_project_name(name, index.location.root):
                return self.project.resolve(name, index.location.root, worth)
        if len(parts) == 1 and parts[0] in index.functions and not qualified and not local:
            return FunctionRef(index.path, index.location.name, parts[0])
        return None

    def class_properties(self) -> frozenset[str]:
        """For a method analysed on its own, the properties its class defines that may run a
        collective (`self.seed` reads one)."""
        if self.klass is None or self.index is None:
            return frozenset()
        index, klass = self.index, self.klass
        return frozenset(name for name in self.project.properties(index, klass) if self.summaries.may_run_collective(
            FunctionRef(index.path, index.location.name, f"{klass}.{name}")))

    def method_of(self, klass: cst.BaseExpression, qualified: set[str], method: str) -> Optional[FunctionRef]:
        """The project method `method` of the class a constructor call names (`Tracker` defined in
        this module, or imported from another of the project's modules), its bases included."""
        index = self.index
        if index is None:
            return None
        parts = dotted_parts(klass)
        if parts and len(parts) == 1 and parts[0] in index.bases:  # a class of this module
            return self.project.method(index, parts[0], method)
        for name in qualified:
            module, _, class_name = name.rpartition(".")
            if module and self.project.is_project_name(name, index.location.root):
                path = self.project.module_path(module, index.location.root)
                other = self.project.index(path) if path else None
                if other is not None:
                    return self.project.method(other, class_name, method)
        return None

    def helper_words(self) -> frozenset[str]:
        """Names whose calls may run a collective through a project function: imported helpers,
        functions of imported project modules, and the module's own functions that call a
        collective or such a name (`self.m` for a method). The engine keeps the functions that
        call them, which its cut would otherwise drop, and the analysis resolves only the
        project calls they name. Text-level, as the cut itself: what a call really is, the
        analysis decides. Computed once per file."""
        if "helper_words" not in self._memo:
            self._memo["helper_words"] = self._helper_words()
        return self._memo["helper_words"]

    def _helper_words(self) -> frozenset[str]:
        index = self.index
        if index is None:
            return frozenset()
        words = self._imported_helpers(index)
        calls = {qualname: _called_words(index.text(function)) for qualname, function in index.functions.items()}
        words |= self._inherited_helpers(index, calls)
        found = words | COLLECTIVE_WORDS | index.gated_words  # `full_tensor(` where torch.distributed is imported
        changed = True
        while changed:  # a function calling a helper is a helper too
            changed = False
            for qualname in [q for q in calls if not calls[q].isdisjoint(found)]:
                # A method is called as `self.m(`: a bare `m` would keep every `x.m(` too, which
                # only a module that makes an object of the class needs (`t = Tracker()`, `t.m(`).
                klass, _, method = qualname.rpartition(".")
                # (`super().m(` in a subclass calls it as a bare `m(` does.)
                made = bool(klass) and (f"{klass}(" in index.source.text or f"super().{method}(" in index.source.text)
                new = {f"self.{method}" if klass else qualname, *((method,) if made else ())}
                new |= {call for call, hook in STATE_DICT_HOOKS.items() if klass and method == hook}  # `m.state_dict()`
                if method in ("forward", "__call__") and made:  # `self.norm = Norm(w)`, then `self.norm(x)`
                    new |= _holders(index.source.text, klass)
                words |= new
                found |= new
                del calls[qualname]
                changed = True
        return frozenset(words)

    def _inherited_helpers(self, index: ModuleIndex, calls: dict) -> set[str]:
        """`self.sync` for a method that calls `self.sync(` which its class inherits from a
        project base class, where it may run a collective."""
        words = set()
        for qualname, called in calls.items():
            klass = qualname.split(".", 1)[0] if "." in qualname else None
            if klass is None or not index.bases.get(klass):
                continue
            for word in called:
                if word.startswith("self.") and f"{klass}.{word[5:]}" not in index.functions:
                    method = self.project.method(index, klass, word[5:])
                    if method is not None and self.summaries.may_run_collective(method):
                        words.add(word)
        return words

    def _imported_helpers(self, index: ModuleIndex) -> set[str]:
        text = index.source.text
        words: set[str] = set()
        for bound, target in index.bindings.items():
            # A name the module never calls or uses is no helper (substring tests: a few more
            # names resolved costs less than a regular expression).
            if (f"{bound}(" not in text and f"{bound}." not in text) \
                    or not self.project.is_project_name(target, index.location.root):
                continue
            if bound[:1].isupper():  # a class: its methods are, where the module makes one
                words |= self._class_helpers(target) if f"{bound}(" in text else set()
                continue
            resolved = self.project.resolve(target, index.location.root, names_collective)
            if isinstance(resolved, FunctionRef) and self.summaries.may_run_collective(resolved) \
                    or resolved in CATALOG:  # a project function, or a re-exported collective
                words.add(bound)
            elif resolved is None:
                words |= self._module_helpers(target)
        return words

    def _class_helpers(self, target: str) -> set[str]:
        """The methods of project class `target` (`pkg.metrics.Tracker`) that may run a
        collective, as the bare names their calls spell (`tracker.sync_stats(`)."""
        module, _, klass = target.rpartition(".")
        path = self.project.module_path(module, self.index.location.root) if module else None
        other = self.project.index(path) if path else None
        if other is None:
            return set()
        return {qualname.split(".", 1)[1] for qualname in other.functions if qualname.startswith(klass + ".")
                and self.summaries.may_run_collective(FunctionRef(path, other.location.name, qualname))}

    def _module_helpers(self, module: str) -> set[str]:
        """The functions of project module `module` that may run a collective, and the names it
        re-exports a collective under (`from torch.distributed import broadcast as send_all`)."""
        path = self.project.module_path(module, self.index.location.root)
        data = self.project._bytes(path) if path else None
        if data is None or not mentions_collective(data):
            return set()
        other = self.project.index(path)
        if other is None:
            return set()
        words = {bound for bound, target in other.bindings.items() if target in CATALOG}
        if names_collective(data):
            words |= {qualname for qualname in other.functions if "." not in qualname
                      and self.summaries.may_run_collective(FunctionRef(path, other.location.name, qualname))}
        return words

    def dependencies(self) -> tuple[tuple[str, str], ...]:
        """(path, digest) of the other modules whose contents the analysis of this one read."""
        own = self.index.path if self.index is not None else None
        found = []
        for path in sorted(self.project.touched - {own}):
            index = self.project.index(path)
            if index is not None:
                found.append((path, index.digest))
        return tuple(found)


# The name in front of a `(` (`broadcast`, or `m` of `self.m`), matched on the reversed text
# before it: a match at its start, where a search from the front would try every character.
_REVERSED_NAME = re.compile(r"\s*(\w+)(?:\s*\.\s*(fles)(?!\w))?")
_LONGEST_NAME = 100  # characters looked at before each `(`


def _called_words(text: str) -> frozenset[str]:
    """The names a text calls, by their last part (`broadcast` for `dist.broadcast(` and for
    `x[0].broadcast(`), and `self.m` for a method called on self."""
    words = set()
    for before in text.split("(")[:-1]:
        found = _REVERSED_NAME.match(before[:-_LONGEST_NAME - 1:-1])
        if found is not None:
            name = found.group(1)[::-1]
            words.add(name)
            if found.group(2):
                words.add(f"self.{name}")
    if "gather" in words and gathers_only_index(text):
        words.discard("gather")  # `torch.gather(x, 1, i)`: a modeling function indexes, and is no helper
    return frozenset(words)


def file_context(summaries: Summaries, filename: str, source: Source, tree: ast.Module) -> FileContext:
    """The context of a linted file in the run `summaries` belong to; its index is built from the
    tree the engine already has."""
    project = summaries.project
    project.touched = set()
    index = project.index(os.path.abspath(filename), source, tree)
    return FileContext(project, summaries, index, _memo=index.memo if index is not None else {})


def _holders(text: str, klass: str) -> set[str]:
    """The names and `self.` attributes assigned an instance of `klass`, or a container holding one
    (`self.body = nn.Sequential(nn.Linear(w, w), Norm(w))`), on the assignment's first line."""
    pattern = re.compile(r"[ \t]*((?:self\.)?[A-Za-z_]\w*)[ \t]*(?::[^=\n]*)?=[^=\n][^\n]*\b"
                         + re.escape(klass) + r"[ \t]*\(")
    found: set[str] = set()
    mention = text.find(klass)
    while mention != -1:  # only the lines naming the class: the pattern cannot skip to it
        start, end = text.rfind("\n", 0, mention) + 1, text.find("\n", mention)
        end = len(text) if end == -1 else end
        if match := pattern.match(text, start, end):
            found.add(match.group(1))
        mention = text.find(klass, end)
    return found


def calls_super(func: cst.BaseExpression) -> bool:
    """`super().name` (or `super(Class, self).name`)."""
    return isinstance(func, cst.Attribute) and isinstance(func.value, cst.Call) \
        and isinstance(func.value.func, cst.Name) and func.value.func.value == "super"
