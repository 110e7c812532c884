"""The rule registry: one class per module, ordered by code."""

from bcast_lint.rules.base import Rule
from bcast_lint.rules.hardcoded_device import HardcodedDevice
from bcast_lint.rules.maybe_none import BroadcastArgMaybeNone
from bcast_lint.rules.unbound import BroadcastArgUnbound
from bcast_lint.rules.uninitialized_placeholder import UninitializedPlaceholder

ALL_RULES: tuple[type[Rule], ...] = tuple(sorted(
    (BroadcastArgMaybeNone, BroadcastArgUnbound, UninitializedPlaceholder, HardcodedDevice),
    key=lambda rule: rule.code,
))
RULES_BY_CODE = {rule.code: rule for rule in ALL_RULES}
