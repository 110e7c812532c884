"""The rule registry: every Rule subclass defined in a module of this package, ordered by code.

Rules are discovered rather than listed so that adding a rule is adding one module.
"""

from __future__ import annotations

import importlib
import pkgutil

from bcast_lint.rules.base import Rule


def _discover() -> tuple[type[Rule], ...]:
    found = []
    for module_info in pkgutil.iter_modules(__path__):
        module = importlib.import_module(f"{__name__}.{module_info.name}")
        found.extend(
            value for value in vars(module).values()
            if isinstance(value, type) and issubclass(value, Rule) and value is not Rule
            and value.__module__ == module.__name__
        )
    return tuple(sorted(found, key=lambda rule: rule.code))


ALL_RULES = _discover()
RULES_BY_CODE = {rule.code: rule for rule in ALL_RULES}
