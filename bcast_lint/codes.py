"""Every rule code and its name: the public contract, importable without libcst.

The CLI validates `--select`/configuration against this table before any parsing happens;
each rule module declares its own code and takes its name from here.
"""

RULE_NAMES = {
    "BCL001": "broadcast-arg-maybe-none",
    "BCL002": "broadcast-arg-unbound",
    "BCL003": "uninitialized-placeholder",
    "BCL004": "hardcoded-device",
    "BCL005": "collective-on-some-ranks",
    "BCL006": "broadcast-result-is-none",
    "BCL007": "placeholder-mismatch",
    "BCL008": "non-tensor-broadcast",
    "BCL009": "source-mismatch",
    "BCL010": "broadcast-into-temporary",
}

# Not a rule: reported for a file that cannot be parsed, so a pre-commit run shows it like a finding.
SYNTAX_ERROR = "BCL900"
ALL_CODES = (*RULE_NAMES, SYNTAX_ERROR)


def is_known_selector(selector: str) -> bool:
    """A selector is a code or a prefix of one ("BCL", "BCL00", "BCL003"); "ALL" selects everything."""
    return selector == "ALL" or any(code.startswith(selector) for code in ALL_CODES)
