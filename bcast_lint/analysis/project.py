"""The project a file belongs to: where its modules are and what each binds at top level.

A file's import root is found as Python would find it: the directory above the highest
`__init__.py` chain around it (a script outside any package is its own root). A module name is
then looked up on disk under that root, so a module outside the linted paths is read too (for
its summaries only; it is never reported).

Each module is indexed once per Project from CPython's `ast`, which is many times cheaper than
LibCST: its top-level imports (relative ones resolved against its package), and its functions
and methods with their lines. Which names a function calls is read from its text, as a
pre-filter only (what a call really is, LibCST and the summaries decide). Byte tests decide
before any parse whether a module can matter at all.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import os
import re
from dataclasses import dataclass, field
from typing import Callable, Iterable, Optional, TypeVar

from bcast_lint.analysis.apis import API_PACKAGES, gated_call_words
from bcast_lint.analysis.words import COLLECTIVE_WORDS, mentions_collective, names_collective
from bcast_lint.source import Source

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_MAX_RESOLUTION_STEPS = 16  # re-export chains longer than this are treated as unresolved
_FROM_IMPORT = re.compile(rb"(?:^|(?<=\r))[ \t]*from[ \t]+(\.*)([\w.]*)[ \t]+import[ \t]+(?:\(([^)]*)\)|([^\r\n#;]+))",
                          re.M)  # a line starts after \n (re.M) or a lone \r
_MAX_REEXPORT_HOPS = 3
_MAX_BASE_HOPS = 4  # base classes followed up from a class, for an inherited method
_TOP_LEVEL = re.compile(rb"[\r\n](?=[^\s#])")
_USED = re.compile(rb"(?<![\w.])([A-Za-z_]\w*)\s*[.(]")
CALLED = re.compile(r"(?<![\w.])([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)\s*\(")  # in a text
DEFINED = re.compile(r"\bdef\s+[A-Za-z_]\w*\s*\(")  # `def f(`, which CALLED would take for a call
SELF_READ = re.compile(r"\bself\.([A-Za-z_]\w*)\b(?!\s*\()")  # `self.seed`, which may be a property
PROPERTY = re.compile(r"@(?:functools\.)?(?:property|cached_property)\b")

T = TypeVar("T")


@dataclass(frozen=True)
class Location:
    """Where a module sits: its import root and its dotted name."""

    root: str
    name: str
    is_package: bool  # an __init__.py

    @property
    def package(self) -> str:
        """The package that relative imports start from."""
        return self.name if self.is_package else self.name.rpartition(".")[0]


@dataclass(frozen=True)
class FunctionIndex:
    qualname: str  # "f" or "Class.method"
    first_line: int  # with decorators
    def_line: int
    last_line: int
    column: int  # of the `def` (methods are indented)


@dataclass(frozen=True)
class FunctionRef:
    """A function of the project: the module's file and its qualified name there."""

    path: str
    module: str
    qualname: str

    @property
    def qualified_name(self) -> str:
        return f"{self.module}.{self.qualname}"

    @property
    def short_name(self) -> str:
        return self.qualname.rsplit(".", 1)[-1]


@dataclass
class ModuleIndex:
    path: str
    location: Location
    source: Source
    bindings: dict[str, str]  # top-level import: bound name -> qualified target
    star_imports: tuple[str, ...]
    functions: dict[str, FunctionIndex]
    classes: frozenset[str]
    imports: tuple[tuple[int, int, frozenset], ...]  # each top-level import: lines, names it binds
    defined: frozenset[str] = field(default=frozenset())  # other top-level names (assignments)
    bases: dict[str, tuple[str, ...]] = field(default_factory=dict)  # class -> its bases, as dotted names
    # "Class.attr" -> what its methods assign it (`self.model = DDP(net, broadcast_buffers=False)`):
    # each constructor's qualified name, and the keywords it is passed as a literal False.
    attributes: dict[str, tuple[tuple[str, frozenset], ...]] = field(default_factory=dict)
    # Each top-level `NAME = [...]` (a list, tuple or dict literal): its lines and the name. A summary
    # keeps those its function reads: how many items a literal table holds decides whether a share
    # of it dealt by rank is even (`ROWS[rank::world]`).
    tables: tuple[tuple[int, int, frozenset], ...] = ()

    @functools.cached_property
    def digest(self) -> str:
        return digest(self.source.data)

    @functools.cached_property
    def memo(self) -> dict:
        """What the analyses of this module's code compute once per file (FileContext's memo):
        the linted module's and each of its functions analysed alone for a summary share it."""
        return {}

    def per_module(self, compute: Callable[[str], T]) -> T:
        """compute(the module's whole text), once per module."""
        key = ("per_module", compute)
        if key not in self.memo:
            self.memo[key] = compute(self.source.text)
        return self.memo[key]

    @functools.cached_property
    def lines(self) -> list[str]:
        return self.source.lines()

    @functools.cached_property
    def environment_per_rank(self) -> tuple:
        """The module's writes of environment variables under a test on the rank (once per module)."""
        from bcast_lint.analysis.environment import set_per_rank  # it reads LibCST trees: not at start-up

        return set_per_rank(self.source.text)

    @functools.cached_property
    def gated_words(self) -> frozenset:
        """The gated call words (apis.GATED_CALL_WORDS) that count in this module."""
        return gated_call_words(self.source.text)

    def text(self, function: FunctionIndex) -> str:
        return "".join(self.lines[function.first_line - 1:function.last_line])


class Project:
    """Module lookups and indexes for one run, shared by every file it lints."""

    def __init__(self) -> None:
        self._package_dirs: dict[str, bool] = {}
        self._paths: dict[tuple[str, str], Optional[str]] = {}
        self._indexes: dict[str, Optional[ModuleIndex]] = {}
        self._raw: dict[str, Optional[bytes]] = {}
        self._worthy: dict[tuple, bool] = {}
        self._helpers: dict[tuple, tuple[bool, frozenset]] = {}  # (module, name, root) -> defines a collective helper
        self._classes_checked: dict[tuple, tuple[bool, frozenset]] = {}  # see _class_calls_collective
        self._exports: dict[str, list] = {}  # path -> its `from M import ...` statements
        self.touched: set[str] = set()  # modules read since the current file began (cache keys)
        self.summaries = None  # the run's analysis.summaries.Summaries, attached by analysis.module.run_summaries

    # -- where modules are -------------------------------------------------------------------
    def locate(self, filename: str) -> Location:
        path = os.path.abspath(filename)
        directory, base = os.path.split(path)
        stem = os.path.splitext(base)[0]
        is_package = stem == "__init__"
        parts = [] if is_package else [stem]
        while self._is_package_dir(directory):
            directory, package = os.path.split(directory)
            parts.insert(0, package)
        return Location(directory, ".".join(parts), is_package)

    def _is_package_dir(self, directory: str) -> bool:
        if directory not in self._package_dirs:
            self._package_dirs[directory] = os.path.isfile(os.path.join(directory, "__init__.py"))
        return self._package_dirs[directory]

    def module_path(self, name: str, root: str) -> Optional[str]:
        """The file of module `name` under the importer's root, as Python's `sys.path[0]` finds
        it. Other linted files' roots are not searched: they are not on the importer's path, and
        with thousands of script directories each lookup would probe them all."""
        key = (root, name)
        if key not in self._paths:
            self._paths[key] = _find_module(root, name)
        return self._paths[key]

    # -- the second chance of the pre-filter -------------------------------------------------
    def imports_collective_helper(self, filename: str, source: bytes, read: Optional[set] = None) -> bool:
        """Whether a file with a rank condition but no collective call of its own calls a name
        it imported with `from M import name`, where M (or a module M re-exports it from)
        defines `name` as a function whose own text calls a collective, or `name` is a project
        module that calls one. Byte-level, like the pre-filter: no parse. `read` receives the
        paths of the modules the answer depends on (the cache keeps them with a skipped file)."""
        location = self.locate(filename)
        read = read if read is not None else set()
        for module, pairs in _from_imports(source, location.package):
            for name, bound in pairs:
                if name[:1].isupper():  # a class: its methods matter to a subclass (self.sync()), or
                    # to the object the file makes of it (`tracker = Tracker()`, `tracker.sync()`)
                    if (_subclassed(source, bound) or bound + b"(" in source) and self._class_calls_collective(
                            module, name, location.root, _MAX_REEXPORT_HOPS, read):
                        return True
                    continue
                found, paths = self._defines_helper(module, name, location.root, _MAX_REEXPORT_HOPS)
                read |= paths
                if found and (bound + b"(" in source or bound + b"." in source):  # called, or a module used
                    return True
        return False

    def _class_calls_collective(self, module: str, name: bytes, root: str, hops: int, read: set) -> bool:
        """Whether the module defining class `name` (following re-exports) calls a collective,
        once per class: every module of a package may import the same base class."""
        key = (module, name, root, hops)
        if key not in self._classes_checked:
            self._classes_checked[key] = (False, frozenset())  # a re-export cycle adds nothing
            found: set[str] = set()
            self._classes_checked[key] = (self._find_class_collective(module, name, root, hops, found),
                                          frozenset(found))
        answer, paths = self._classes_checked[key]
        read |= paths
        return answer

    def _find_class_collective(self, module: str, name: bytes, root: str, hops: int, read: set) -> bool:
        path = self.module_path(module, root)
        data = self._bytes(path) if path else None
        if data is None:
            return False
        read.add(path)
        if re.search(rb"(?:^|(?<=\r))[ \t]*class[ \t]+" + re.escape(name) + rb"\b", data, re.M):
            return self._calls_collective(path)
        if path not in self._exports:
            self._exports[path] = _from_imports(data, self.locate(path).package)
        return hops > 0 and any(self._class_calls_collective(source, imported, root, hops - 1, read)
                                for source, pairs in self._exports[path]
                                for imported, bound in pairs if bound == name)

    def _defines_helper(self, module: str, name: bytes, root: str, hops: int) -> tuple[bool, frozenset]:
        """The answer, and the paths of the modules it read."""
        key = (module, name, root)
        if key not in self._helpers:
            self._helpers[key] = (False, frozenset())  # a re-export cycle adds nothing
            read: set[str] = set()
            self._helpers[key] = (self._find_helper(module, name, root, hops, read), frozenset(read))
        return self._helpers[key]

    def _find_helper(self, module: str, name: bytes, root: str, hops: int, read: set) -> bool:
        path = self.module_path(module, root)
        data = self._bytes(path) if path else None
        if data is None or name[:1].isupper():  # a class's constructor is no helper
            return False
        read.add(path)
        submodule = self.module_path(f"{module}.{_ascii(name)}", root)
        if submodule is not None:
            read.add(submodule)
            return self._calls_collective(submodule)
        if _function_text_calls_collective(data, name):
            return True
        if hops == 0:
            return False
        if path not in self._exports:
            self._exports[path] = _from_imports(data, self.locate(path).package)
        found = False
        for source, pairs in self._exports[path]:
            for imported, bound in pairs:
                if bound == name:
                    answer, paths = self._defines_helper(source, imported, root, hops - 1)
                    read |= paths
                    found = found or answer
        return found

    def digest_of(self, path: str) -> Optional[str]:
        """The content digest of a module this run read, as cache entries record it."""
        data = self._bytes(path)
        return digest(data) if data is not None else None

    def _calls_collective(self, path: str) -> bool:
        """Whether a module calls something named like a collective, or re-exports one
        (`from torch.distributed import broadcast as send_all`), once per path."""
        key = (path, "calls")
        if key not in self._worthy:
            data = self._bytes(path) or b""
            self._worthy[key] = names_collective(data) or _reexports_collective(data)
        return self._worthy[key]

    def _bytes(self, path: str) -> Optional[bytes]:
        index = self._indexes.get(path)
        if index is not None:
            return index.source.data
        if path not in self._raw:
            try:
                with open(path, "rb") as handle:
                    self._raw[path] = handle.read()
            except OSError:
                self._raw[path] = None
        return self._raw[path]

    # -- what modules bind -------------------------------------------------------------------
    def index(self, path: str, source: Optional[Source] = None,
              tree: Optional[ast.Module] = None) -> Optional[ModuleIndex]:
        """The module's index; `source` and `tree` when the caller already has them."""
        known = self._indexes.get(path)
        if path not in self._indexes or (
                source is not None and (known is None or known.source.data != source.data)):
            self._indexes[path] = self._build_index(path, source, tree)  # new, or changed (--fix)
        self.touched.add(path)
        return self._indexes[path]

    def _build_index(self, path: str, source: Optional[Source],
                     tree: Optional[ast.Module]) -> Optional[ModuleIndex]:
        try:
            if source is None:
                data = self._bytes(path)
                if data is None:
                    return None
                source = Source.from_bytes(data)
            if tree is None:
                tree = compile(source.data, path, "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
        except (UnicodeDecodeError, SyntaxError, ValueError, MemoryError, RecursionError):
            return None
        return _index_tree(path, self.locate(path), source, tree)

    def resolve(self, qualified: str, root: str,
                worth: Optional[Callable[[bytes], bool]] = None) -> Optional[str | FunctionRef]:
        """What a qualified name refers to, following re-exports through the project's modules:
        a FunctionRef for a project function, the qualified name outside the project (e.g.
        `torch.distributed.broadcast`), or None when it lies in the project but is not found.
        `worth`: a byte test a module must pass to be read at all (a package's `__init__.py`
        needs only to name what is looked up in it): what fails it counts as not found."""
        for _ in range(_MAX_RESOLUTION_STEPS):
            if qualified.split(".", 1)[0] in API_PACKAGES:
                return qualified
            found = self._split_module(qualified, root, worth)
            if found is None:
                return qualified  # not a module of this project: the standard library, say
            index, rest = found
            if index is None or not rest:
                return None  # not worth reading, or a module itself, which is not callable
            target = _binding(index, rest)
            if isinstance(target, FunctionRef) or target is None:
                return target
            qualified = target
        return None

    def _split_module(self, qualified: str, root: str, worth) -> Optional[tuple[Optional[ModuleIndex], list[str]]]:
        """The longest leading part of `qualified` that is a project module (its index, or None
        when it is not worth reading), and the rest."""
        parts = qualified.split(".")
        if self.module_path(parts[0], root) is None:
            return None
        for end in range(len(parts), 0, -1):
            path = self.module_path(".".join(parts[:end]), root)
            if path is None:
                continue
            rest = parts[end:]
            if worth is not None and path not in self._indexes and not self._worth(path, rest, worth):
                return None, rest
            return self.index(path), rest
        return None

    def _worth(self, path: str, rest: list[str], worth: Callable[[bytes], bool]) -> bool:
        """Whether a module may define or re-export `rest[0]` as `worth` asks."""
        data = self._bytes(path) or b""
        if not rest:
            return False
        name = re.escape(rest[0].encode())
        if rest[0].encode() not in data:
            return b"import *" in data
        if re.search(rb"def[ \t]+" + name + rb"[ \t]*\(", data):
            key = (path, worth)
            if key not in self._worthy:
                self._worthy[key] = worth(data)
            return self._worthy[key]  # defines it: worth reading only if it can matter
        return (os.path.basename(path) == "__init__.py"
                or re.search(rb"import\b[^\r\n]*\b" + name + rb"\b", data) is not None)

    def method(self, index: ModuleIndex, klass: str, name: str, hops: int = _MAX_BASE_HOPS) -> Optional[FunctionRef]:
        """Method `name` of class `klass` of `index`'s module, defined there or inherited from a
        base class of the project (depth first, as the MRO of single inheritance goes)."""
        if f"{klass}.{name}" in index.functions:
            return FunctionRef(index.path, index.location.name, f"{klass}.{name}")
        if hops == 0:
            return None
        for base in index.bases.get(klass, ()):
            found = self._class(index, base, _MAX_RESOLUTION_STEPS)
            if found is not None:
                method = self.method(*found, name, hops - 1)
                if method is not None:
                    return method
        return None

    def super_method(self, index: ModuleIndex, klass: str, name: str) -> Optional[FunctionRef]:
        """What `super().name(...)` reaches in a method of `klass`: the method of its first base
        of the project that defines or inherits it."""
        for base in index.bases.get(klass, ()):
            found = self._class(index, base, _MAX_RESOLUTION_STEPS)
            method = self.method(*found, name, _MAX_BASE_HOPS - 1) if found is not None else None
            if method is not None:
                return method
        return None

    def _class(self, index: ModuleIndex, name: str, steps: int) -> Optional[tuple[ModuleIndex, str]]:
        """The module and name of the project class `name` ("Base", "mod.Base") means in `index`."""
        if name in index.classes:
            return index, name
        head, _, rest = name.partition(".")
        if head not in index.bindings or steps == 0:
            return None
        qualified = index.bindings[head] + (f".{rest}" if rest else "")
        module, _, klass = qualified.rpartition(".")
        path = self.module_path(module, index.location.root) if module else None
        other = self.index(path) if path is not None else None
        return self._class(other, klass, steps - 1) if other is not None else None

    def is_project_name(self, qualified: str, root: str) -> bool:
        return (qualified.split(".", 1)[0] not in API_PACKAGES
                and self.module_path(qualified.split(".", 1)[0], root) is not None)

    def function_index(self, ref: FunctionRef) -> Optional[FunctionIndex]:
        index = self.index(ref.path)
        return index.functions.get(ref.qualname) if index is not None else None

    def callees(self, ref: FunctionRef) -> Iterable[FunctionRef]:
        """The project functions `ref` calls by name (`f()`, `mod.f()`, `self.m()`)."""
        index = self.index(ref.path)
        function = self.function_index(ref)
        if index is None or function is None:
            return
        for called in set(CALLED.findall(DEFINED.sub("", index.text(function)))):
            head = called.split(".", 1)[0]
            if head == "self" or head in index.functions or head in index.bindings:
                target = self.resolve_in_module(index, called, function.qualname, names_collective)
                if isinstance(target, FunctionRef):
                    yield target
        if "." in function.qualname:  # a read of the class's property runs its body
            klass = function.qualname.rsplit(".", 1)[0]
            for name in set(SELF_READ.findall(index.text(function))):
                target = self.method(index, klass, name)
                if target is not None and self.is_property(target):
                    yield target

    def properties(self, index: ModuleIndex, klass: str) -> frozenset[str]:
        """The names of the properties class `klass` of `index`'s module defines itself (found once
        per class: a method analysed alone asks for its class's)."""
        key = ("properties", klass)
        if key not in index.memo:
            index.memo[key] = frozenset(
                qualname.rsplit(".", 1)[1] for qualname in index.functions
                if qualname.rsplit(".", 1)[0] == klass and self.is_property(FunctionRef(index.path, index.location.name,
                                                                                     qualname)))
        return index.memo[key]

    def is_property(self, ref: FunctionRef) -> bool:
        index, function = self.index(ref.path), self.function_index(ref)
        head = index.text(function).split("def", 1)[0] if index is not None and function is not None else ""
        return PROPERTY.search(head) is not None

    def resolve_in_module(self, index: ModuleIndex, called: str, qualname: Optional[str] = None,
                          worth: Optional[Callable[[bytes], bool]] = None) -> Optional[str | FunctionRef]:
        """What `called` ("f", "mod.f", "self.m") means at the top level of `index`'s module
        (or in method `qualname`'s class, for `self.m`)."""
        head, _, tail = called.partition(".")
        if head == "self" and qualname and "." in qualname:
            return self.method(index, qualname.rsplit(".", 1)[0], tail) if tail and "." not in tail else None
        if head in index.functions:
            return FunctionRef(index.path, index.location.name, head) if not tail else None
        if head in index.bindings:
            target = index.bindings[head] + (f".{tail}" if tail else "")
            return self.resolve(target, index.location.root, worth)
        return None


def digest(data: bytes) -> str:
    """The content digest cache entries record for the modules they read."""
    return hashlib.sha256(data).hexdigest()[:16]


def _reexports_collective(data: bytes) -> bool:
    """`from torch.distributed import broadcast as send_all`: a collective bound under a name
    of this module (`from ... import *` too). Relative imports do not reach an API package."""
    if not mentions_collective(data):
        return False
    return any(module.split(".", 1)[0] in API_PACKAGES and any(
        name == b"*" or _ascii(name) in COLLECTIVE_WORDS for name, _ in pairs)
        for module, pairs in _from_imports(data, ""))


def _subclassed(source: bytes, name: bytes) -> bool:
    """Whether a class statement names `name` among its bases: `class Trainer(Base):`."""
    return re.search(rb"class[ \t]+\w+[ \t]*\([^)]*\b" + re.escape(name) + rb"\b", source) is not None


def _ascii(name: bytes) -> str:
    r"""An identifier matched by a bytes pattern (`\w` there is ASCII): no file is decoded here."""
    return str(name, "ascii")


def _top_level_def(data: bytes, name: bytes) -> int:
    """Where `def name(` starts a line at the top level, or -1 (a literal search: a multi-line
    regular expression over a large module is many times slower)."""
    needle = b"def " + name + b"("
    if data.startswith(needle):
        return 0
    found = data.find(b"\n" + needle)
    return found + 1 if found >= 0 else -1


def _function_text_calls_collective(data: bytes, name: bytes, depth: int = 1) -> bool:
    """Whether top-level `def name(` is followed, before the next top-level statement, by a call
    of a word named like a collective, or of another function of the module that is (`depth`
    levels deep)."""
    start = _top_level_def(data, name)
    if start < 0:
        return False
    end = _TOP_LEVEL.search(data, start + 1)
    text = data[start:end.start() if end else len(data)]
    if names_collective(text):
        return True
    return depth > 0 and any(_function_text_calls_collective(data, called, depth - 1)
                             for called in set(_USED.findall(text)) - {name, b"def"})


def _from_imports(source: bytes, package: str) -> list[tuple[str, list[tuple[bytes, bytes]]]]:
    """(absolute module, [(imported name, bound name)]) for each `from M import a, b as c`."""
    found = []
    for match in _FROM_IMPORT.finditer(source):
        dots, named, grouped, plain = match.groups()
        module = absolute_module(_ascii(named) or None, len(dots), package)
        if module is None:
            continue
        words = [part.split() for part in (grouped or plain).replace(b"\\", b" ").split(b",")]
        pairs = [(w[0], w[-1]) for w in words if w and w[0] != b"*"]
        found.append((module, pairs))
    return found


def _find_module(root: str, name: str) -> Optional[str]:
    base = os.path.join(root, *name.split("."))
    for candidate in (base + ".py", os.path.join(base, "__init__.py")):
        if os.path.isfile(candidate):
            return candidate
    return None


def _binding(index: ModuleIndex, rest: list[str]) -> Optional[str | FunctionRef]:
    """What `rest` (["broadcast"], ["Class", "method"]) is in `index`'s module."""
    head = rest[0]
    if head in index.functions and len(rest) == 1:
        return FunctionRef(index.path, index.location.name, head)
    if head in index.classes:
        qualname = ".".join(rest[:2])
        return FunctionRef(index.path, index.location.name, qualname) if qualname in index.functions else None
    if head in index.bindings:
        return ".".join((index.bindings[head], *rest[1:]))
    if head in index.defined:
        return None  # a variable of that module: its value is unknown here
    for module in index.star_imports:
        return ".".join((module, *rest))  # the first star import that could define it
    return None


# -- building an index from CPython's ast -------------------------------------------------------

def _index_tree(path: str, location: Location, source: Source, tree: ast.Module) -> ModuleIndex:
    bindings: dict[str, str] = {}
    stars: list[str] = []
    functions: dict[str, FunctionIndex] = {}
    classes: set[str] = set()
    defined: set[str] = set()
    bases: dict[str, tuple[str, ...]] = {}
    imports: list[tuple[int, int, frozenset]] = []
    tables: list[tuple[int, int, frozenset]] = []
    for statement in tree.body:
        if isinstance(statement, (ast.Import, ast.ImportFrom)):
            found = ast_import_bindings(statement, location.package)
            imports.append((statement.lineno, statement.end_lineno, frozenset(b for b, _ in found)))
            for bound, target in found:
                if bound == "*":
                    stars.append(target)
                else:
                    bindings[bound] = target
        elif isinstance(statement, _FUNCTIONS):
            functions[statement.name] = _function_index(statement, statement.name)
        elif isinstance(statement, ast.ClassDef):
            classes.add(statement.name)
            bases[statement.name] = tuple(filter(None, map(dotted_name, statement.bases)))
            for member in statement.body:
                if isinstance(member, _FUNCTIONS):
                    qualname = f"{statement.name}.{member.name}"
                    functions[qualname] = _function_index(member, qualname)
        else:
            defined.update(_assigned_names(statement))
            if isinstance(statement, ast.Assign) and isinstance(statement.value, (ast.List, ast.Tuple, ast.Dict)):
                tables.append((statement.lineno, statement.end_lineno, frozenset(_assigned_names(statement))))
    attributes: dict[str, list] = {}
    for klass in (s for s in tree.body if isinstance(s, ast.ClassDef)):
        for attribute, made in _constructed_attributes(klass, bindings):
            attributes.setdefault(f"{klass.name}.{attribute}", []).append(made)
    return ModuleIndex(path, location, source, bindings, tuple(stars), functions, frozenset(classes),
                       tuple(imports), frozenset(defined), bases,
                       {name: tuple(made) for name, made in attributes.items()}, tuple(tables))


def _constructed_attributes(klass: ast.ClassDef, bindings: dict[str, str]) -> Iterable[tuple[str, tuple]]:
    """`self.attr = Ctor(...)` in the class's methods, as (attr, (Ctor's qualified name through the
    module's imports, the keywords passed a literal False)), and `self.attr = param` for a parameter
    annotated with an imported class (`fabric: L.Fabric`): what a method analysed alone, for its
    summary, cannot see of its own class (`self.model = DDP(net)` in `__init__`)."""
    for member in klass.body:
        if not isinstance(member, _FUNCTIONS):
            continue
        annotated = _annotated_parameters(member)
        for node in ast.walk(member):
            if not isinstance(node, ast.Assign):
                continue
            if isinstance(node.value, ast.Call):
                made, false = dotted_name(node.value.func), frozenset(
                    k.arg for k in node.value.keywords
                    if k.arg and isinstance(k.value, ast.Constant) and k.value.value is False)
            elif isinstance(node.value, ast.Name) and node.value.id in annotated:
                made, false = annotated[node.value.id], frozenset()
            else:
                continue
            head, _, tail = (made or "").partition(".")
            if head not in bindings:
                continue
            qualified = bindings[head] + (f".{tail}" if tail else "")
            for target in node.targets:
                if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) \
                        and target.value.id == "self":
                    yield target.attr, (qualified, false)


def _annotated_parameters(function: ast.AST) -> dict[str, str]:
    """A function's parameters annotated with a (dotted) name, or with one in quotes: name -> annotation."""
    arguments = function.args
    found = {}
    for parameter in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs):
        annotation = parameter.annotation
        if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
            written = annotation.value.strip()
            found[parameter.arg] = written if re.fullmatch(r"[A-Za-z_][\w.]*", written) else None
        else:
            found[parameter.arg] = dotted_name(annotation) if annotation is not None else None
    return {name: annotation for name, annotation in found.items() if annotation}


def dotted_name(node: ast.expr) -> Optional[str]:
    """`x` or `mod.Base` for an expression written as a (dotted) name; None otherwise."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = dotted_name(node.value)
        return f"{head}.{node.attr}" if head else None
    return None


def ast_import_bindings(statement: ast.stmt, package: str) -> list[tuple[str, str]]:
    """(bound name, qualified target) of one import; ("*", module) for a star import."""
    if isinstance(statement, ast.Import):
        return [(alias.asname, alias.name) if alias.asname else (alias.name.split(".")[0],) * 2
                for alias in statement.names]
    module = absolute_module(statement.module, statement.level, package)
    if module is None:
        return []
    return [("*", module) if alias.name == "*" else (alias.asname or alias.name, f"{module}.{alias.name}")
            for alias in statement.names]


def absolute_module(module: Optional[str], level: int, package: str) -> Optional[str]:
    """`from ..x import y` in package `a.b.c` imports from `a.b.x`; None when it climbs out."""
    if level == 0:
        return module
    parts = package.split(".") if package else []
    if level - 1 > len(parts) or (level - 1 == len(parts) and not module):
        return None
    base = parts[: len(parts) - (level - 1)]
    return ".".join((*base, module) if module else base) or None


def _function_index(node: ast.AST, qualname: str) -> FunctionIndex:
    first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    return FunctionIndex(qualname, first, node.lineno, node.end_lineno, node.col_offset)


def _assigned_names(statement: ast.stmt) -> Iterable[str]:
    targets = getattr(statement, "targets", None) or [getattr(statement, "target", None)]
    for target in targets:
        if isinstance(target, ast.Name):
            yield target.id
