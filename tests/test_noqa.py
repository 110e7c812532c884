import pytest

from bcast_lint.noqa import is_suppressed


@pytest.mark.parametrize(("line", "code", "suppressed"), [
    ("x = 1  # noqa", "BCL001", True),
    ("x = 1  # NOQA", "BCL001", True),
    ("x = 1  # noqa: BCL001", "BCL001", True),
    ("x = 1  # noqa:BCL001,BCL003", "BCL003", True),
    ("x = 1  # noqa: BCL001 BCL003", "BCL003", True),
    ("x = 1  # noqa: BCL00", "BCL003", True),
    ("x = 1  # noqa: BCL002", "BCL001", False),
    ("x = 1  # noqa: E501", "BCL001", False),
    ("x = 1  # no qa", "BCL001", False),
    ("x = 1", "BCL001", False),
])
def test_noqa_like_flake8(line, code, suppressed):
    assert is_suppressed(code, line) is suppressed
