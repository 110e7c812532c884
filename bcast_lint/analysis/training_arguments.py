"""transformers' `TrainingArguments.should_save` and `should_log` as rank tests, where the receiver is
known to be a TrainingArguments.

Both are `self.process_index == 0` (the local main process with `save_on_each_node` /
`log_on_each_node`; transformers/training_args.py, `should_save` and `should_log`), so they read as
`is_main_process`. The name alone says nothing: `TrainerControl.should_save` (`control.should_save` in
a callback) is a flag every rank holds alike, and a table by name made it a rank test in transformers'
own code. So the receiver must be a TrainingArguments: `self.args` in a `Trainer` subclass, the `args`
parameter of a `TrainerCallback` method, a parameter or variable annotated so, a name assigned
`TrainingArguments(...)` (or a subclass transformers defines, `Seq2SeqTrainingArguments`), or the
item of `HfArgumentParser((..., TrainingArguments)).parse_args_into_dataclasses()` in its position.
"""

from __future__ import annotations

import ast
from typing import Callable, Optional

import libcst as cst

from bcast_lint.analysis.expressions import last_name
from bcast_lint.analysis.syntax import parsed
from bcast_lint.analysis.walk import Visitor

# Each is `process_index == 0` by default (transformers/training_args.py).
TESTS = {"should_save": "is_main_process", "should_log": "is_main_process"}
_TRAINER = "transformers.trainer.Trainer"  # the framework map's name for transformers' Trainer
_PARSE_METHODS = frozenset({"parse_args_into_dataclasses", "parse_dict", "parse_json_file", "parse_yaml_file"})


def best_metric(text: str) -> Optional[tuple[str, str]]:
    """("eval_<name>", name) for the module's `metric_for_best_model="<name>"`: the key the
    Trainer looks up in the evaluation's metrics (transformers/trainer.py, _determine_best_metric,
    which prefixes "eval_"), or None. Read with CPython's `ast` from the whole text."""
    if "metric_for_best_model" not in text:
        return None
    tree = parsed(text)
    if tree is None:
        return None
    for keyword in (node for node in ast.walk(tree) if isinstance(node, ast.keyword)):
        if keyword.arg == "metric_for_best_model" and isinstance(keyword.value, ast.Constant) \
                and isinstance(keyword.value.value, str):
            name = keyword.value.value
            return (name if name.startswith("eval_") else f"eval_{name}"), name
    return None


def _is_training_arguments(qualified: set[str]) -> bool:
    return any(q.startswith("transformers.") and q.endswith("TrainingArguments") for q in qualified)


class _Facts(Visitor):
    """One pass over the module: the scope of each `x.should_save`/`x.should_log`, what names are
    annotated with, and each name unpacked from a parser's `parse_args_into_dataclasses()` with its
    position."""

    def __init__(self, module: cst.Module) -> None:
        self.scopes: dict[cst.Attribute, cst.CSTNode] = {}
        self.annotated: list[tuple[cst.CSTNode, str, cst.BaseExpression]] = []  # scope, name, annotation
        self.parsed: list[tuple[cst.CSTNode, str, int, cst.Call]] = []  # scope, name, position, parse call
        self._scope: list[cst.CSTNode] = [module]

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._scope.append(node)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._scope.pop()

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value in TESTS:
            self.scopes[node] = self._scope[-1]

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if isinstance(node.target, cst.Name):
            self.annotated.append((self._scope[-1], node.target.value, node.annotation.annotation))

    def visit_Assign(self, node: cst.Assign) -> None:
        value = node.value
        if not isinstance(value, cst.Call) or last_name(value.func) not in _PARSE_METHODS:
            return
        for target in node.targets:
            if isinstance(target.target, (cst.Tuple, cst.List)):
                for position, element in enumerate(target.target.elements):
                    if isinstance(element.value, cst.Name):
                        self.parsed.append((self._scope[-1], element.value.value, position, value))


class TrainingArgumentsTests:
    """The typed rank tests of one module (see the module's docstring), for ranks.RankConditions."""

    def __init__(self, module: cst.Module, qualified_names: Callable[..., set[str]],
                 class_of_method: Callable[[cst.CSTNode], Optional[cst.ClassDef]],
                 mapped_base: Callable[[Optional[cst.ClassDef]], Optional[str]],
                 assigned: Callable[[str], list]) -> None:
        self._module = module
        self._qualified_names = qualified_names
        self._class_of_method = class_of_method
        self._mapped_base = mapped_base
        self._assigned = assigned
        self._facts: Optional[_Facts] = None

    def property_of(self, expr: cst.Attribute) -> Optional[str]:
        """The main-process property `expr` equals (`args.should_save`: is_main_process), or None."""
        test = TESTS.get(expr.attr.value)
        if test is None:
            return None
        if self._facts is None:
            self._facts = _Facts(self._module)
            self._facts.walk(self._module)
        scope = self._facts.scopes.get(expr, self._module)
        return test if self._holds(expr.value, scope) else None

    def _holds(self, expr: cst.BaseExpression, scope: cst.CSTNode) -> bool:
        """Whether `expr` names a TrainingArguments where `scope` reads it."""
        if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self":
            return expr.attr.value == "args" and self._mapped_base(self._class_of_method(scope)) == _TRAINER
        if not isinstance(expr, cst.Name):
            return False
        name = expr.value
        if isinstance(scope, cst.FunctionDef):
            params = scope.params
            param = next((p for p in (*params.posonly_params, *params.params, *params.kwonly_params)
                          if p.name.value == name), None)
            if param is not None:
                if param.annotation is not None:
                    return self._names_class(param.annotation.annotation)
                return name == "args" and self._in_callback(scope)
        visible = (scope, self._module)
        return any(where in visible and self._names_class(annotation)
                   for where, target, annotation in self._facts.annotated if target == name) \
            or any(where in visible and isinstance(value, cst.Call) and self._names_class(value.func)
                   for where, value in self._assigned(name)) \
            or any(where in visible and self._parsed_as_class(call, position, where)
                   for where, target, position, call in self._facts.parsed if target == name)

    def _names_class(self, expr: cst.BaseExpression) -> bool:
        return _is_training_arguments(self._qualified_names(expr, self._module))

    def _in_callback(self, method: cst.FunctionDef) -> bool:
        """A method of a `TrainerCallback` subclass: every hook is handed `args`, a TrainingArguments."""
        klass = self._class_of_method(method)
        return klass is not None and any(
            q.startswith("transformers.") and q.endswith("TrainerCallback")
            for base in klass.bases for q in self._qualified_names(base.value, self._module))

    def _parsed_as_class(self, call: cst.Call, position: int, scope: cst.CSTNode) -> bool:
        """`parser.parse_args_into_dataclasses()` (or `HfArgumentParser(...).parse...()`), whose item
        `position` is of the class at that position of the parser's dataclass tuple."""
        if not isinstance(call.func, cst.Attribute):
            return False
        parser = call.func.value
        if isinstance(parser, cst.Name):
            made = [value for where, value in self._assigned(parser.value) if where in (scope, self._module)]
            parser = made[-1] if len(made) == 1 else None
        if not isinstance(parser, cst.Call) or not parser.args \
                or not (last_name(parser.func) or "").endswith("HfArgumentParser"):
            return False
        classes = parser.args[0].value
        if isinstance(classes, (cst.Tuple, cst.List)):
            elements = classes.elements
            return position < len(elements) and self._names_class(elements[position].value)
        return position == 0 and self._names_class(classes)
