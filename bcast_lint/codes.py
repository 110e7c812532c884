"""The rule registry: one row per rule, the only list of rules there is (as ruff's `codes.rs`).

Standard library only: the CLI validates `--select`/configuration against it before any parsing,
and a rule's class (which needs libcst) is imported only when `RuleSpec.load` asks for it.

Adding a rule is adding its module under `bcast_lint/rules/` and one row to `RULES`, in code order.
"""

from __future__ import annotations

import enum
import importlib
from dataclasses import dataclass


class FixAvailability(enum.Enum):
    """Whether a rule's findings come with a fix (ruff's `FIX_AVAILABILITY`)."""

    NEVER = "never"
    SOMETIMES = "sometimes"
    ALWAYS = "always"


NEVER, SOMETIMES, ALWAYS = FixAvailability.NEVER, FixAvailability.SOMETIMES, FixAvailability.ALWAYS

RULES_PACKAGE = "bcast_lint.rules"


@dataclass(frozen=True)
class RuleSpec:
    """What the project states about a rule, without importing it.

    `rule` is "module:Class" inside bcast_lint.rules. An `opt_in` rule is off unless selected by
    its full code: a prefix ("BCL", "BCL01") or "ALL" does not enable it.
    """

    code: str
    name: str
    rule: str
    fix: FixAvailability
    opt_in: bool = False

    def load(self) -> type:
        """The rule class (importing its module, and so libcst)."""
        module, _, cls = self.rule.partition(":")
        return getattr(importlib.import_module(f"{RULES_PACKAGE}.{module}"), cls)


RULES: tuple[RuleSpec, ...] = (
    RuleSpec("BCL001", "broadcast-arg-maybe-none", "maybe_none:BroadcastArgMaybeNone", SOMETIMES),
    RuleSpec("BCL002", "broadcast-arg-unbound", "unbound:BroadcastArgUnbound", SOMETIMES),
    RuleSpec("BCL003", "uninitialized-placeholder", "uninitialized_placeholder:UninitializedPlaceholder",
             ALWAYS),
    RuleSpec("BCL004", "hardcoded-device", "hardcoded_device:HardcodedDevice", SOMETIMES),
    RuleSpec("BCL005", "collective-on-some-ranks", "collective_on_some_ranks:CollectiveOnSomeRanks",
             SOMETIMES),
    RuleSpec("BCL006", "broadcast-result-is-none", "broadcast_result_is_none:BroadcastResultIsNone",
             SOMETIMES),
    RuleSpec("BCL007", "placeholder-mismatch", "placeholder_mismatch:PlaceholderMismatch", SOMETIMES),
    RuleSpec("BCL008", "non-tensor-broadcast", "non_tensor_broadcast:NonTensorBroadcast", SOMETIMES),
    RuleSpec("BCL009", "source-mismatch", "source_mismatch:SourceMismatch", NEVER),
    RuleSpec("BCL010", "broadcast-into-temporary", "broadcast_into_temporary:BroadcastIntoTemporary",
             NEVER),
    RuleSpec("BCL011", "collective-method-on-some-ranks",
             "collective_method_on_some_ranks:CollectiveMethodOnSomeRanks", SOMETIMES),
    RuleSpec("BCL012", "empty-placeholder", "empty_placeholder:EmptyPlaceholder", ALWAYS, opt_in=True),
    RuleSpec("BCL013", "object-list-mismatch", "object_list_mismatch:ObjectListMismatch", SOMETIMES),
    RuleSpec("BCL014", "root-only-list-on-every-rank", "root_only_list:RootOnlyListOnEveryRank", SOMETIMES),
    RuleSpec("BCL015", "gather-rank-dependent-shape", "gather_rank_dependent_shape:GatherRankDependentShape",
             NEVER),
    RuleSpec("BCL016", "async-read-before-wait", "async_read_before_wait:AsyncReadBeforeWait", SOMETIMES),
)

RULES_BY_CODE = {spec.code: spec for spec in RULES}
RULE_NAMES = {spec.code: spec.name for spec in RULES}

# Not a rule: reported for a file that cannot be parsed, so a pre-commit run shows it like a finding.
SYNTAX_ERROR = "BCL900"
SYNTAX_ERROR_NAME = "syntax-error"
ALL_CODES = (*RULE_NAMES, SYNTAX_ERROR)
OPT_IN_CODES = frozenset(spec.code for spec in RULES if spec.opt_in)


def is_known_selector(selector: str) -> bool:
    """A selector is a code or a prefix of one ("BCL", "BCL00", "BCL003"); "ALL" selects everything."""
    return selector == "ALL" or any(code.startswith(selector) for code in ALL_CODES)

