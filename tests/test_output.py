import json
import os
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

import bcast_lint
from bcast_lint.codes import RULE_NAMES
from bcast_lint.model import SAFE, UNSAFE, Edit, FileResult, Finding, Fix
from bcast_lint.output import FORMATS, render, render_errors

SCHEMA_PATH = Path(__file__).parent / "data" / "sarif-schema-2.1.0.json"

SAFE_FIX = Fix(SAFE, "Drop the assignment", (Edit(3, 5, 3, 9, ""),))
UNSAFE_FIX = Fix(UNSAFE, "Use torch.empty", (Edit(7, 10, 7, 20, "torch.empty(n)"), Edit(8, 1, 8, 1, "# moved\n")))

PLAIN = Finding("BCL003", "placeholder is uninitialized", "pkg/train.py", 12, 9, 12, 30)
WITH_SAFE_FIX = Finding("BCL006", "broadcast returns None", "pkg/train.py", 3, 5, 3, 30, SAFE_FIX)
WITH_UNSAFE_FIX = Finding("BCL004", "hard-coded device 'cuda:0'", "a.py", 7, 10, 7, 20, UNSAFE_FIX)
SYNTAX = Finding("BCL900", "cannot parse: invalid syntax", "broken.py", 1, 1, 1, 2)

RESULTS = [
    FileResult("pkg/train.py", (PLAIN, WITH_SAFE_FIX)),
    FileResult("a.py", (WITH_UNSAFE_FIX,)),
    FileResult("clean.py"),
    FileResult("gone.py", error="no such file or directory"),
]


# --- text and concise ------------------------------------------------------------------------


def test_text_lists_findings_sorted_with_a_summary():
    assert render(RESULTS, "text") == (
        "a.py:7:10: BCL004 hard-coded device 'cuda:0'\n"
        "pkg/train.py:3:5: BCL006 broadcast returns None\n"
        "pkg/train.py:12:9: BCL003 placeholder is uninitialized\n"
        "Found 3 errors.\n"
        "[*] 1 fixable with the --fix option (1 hidden fix can be enabled with the --unsafe-fixes option).\n"
    )


def test_text_is_the_older_name_of_concise():
    assert render(RESULTS, "concise") == render(RESULTS, "text")
    assert render(RESULTS, "concise", show_fixes=True) == render(RESULTS, "text", show_fixes=True)


# --- full ------------------------------------------------------------------------------------

HELPED = Finding("BCL001", "'ids' is None on other ranks", "t.py", 10, 7, 10, 21, SAFE_FIX,
                 help="Allocate a placeholder on every rank")
SOURCE = {("t.py", 10): "ids = broadcast(ids)", ("t.py", 3): "\tx = dist.broadcast("}


def _line(filename, number):
    return SOURCE.get((filename, number))


def test_full_shows_the_source_line_a_caret_under_the_range_and_the_help():
    assert render([FileResult("t.py", (HELPED,))], "full", source_line=_line) == (
        "t.py:10:7: BCL001 [*] 'ids' is None on other ranks\n"
        "   |\n"
        "10 | ids = broadcast(ids)\n"
        "   |       ^^^^^^^^^^^^^^ BCL001\n"
        "   |\n"
        "   = help: Allocate a placeholder on every rank\n"
        "\n"
        "Found 1 error.\n"
        "[*] 1 fixable with the --fix option.\n"
    )


def test_full_marks_only_fixes_that_apply_and_underlines_a_multiline_range_to_its_line_end():
    multiline = Finding("BCL006", "broadcast returns None", "t.py", 3, 6, 5, 2, UNSAFE_FIX)
    text = render([FileResult("t.py", (multiline,))], "full", source_line=_line)
    assert text.startswith("t.py:3:6: BCL006 broadcast returns None\n")  # unsafe: no [*]
    assert "3 | \tx = dist.broadcast(\n  | \t    ^^^^^^^^^^^^^^^ BCL006\n" in text  # tab kept
    assert "help:" not in text
    with_unsafe = render([FileResult("t.py", (multiline,))], "full", source_line=_line, unsafe_fixes=True)
    assert with_unsafe.startswith("t.py:3:6: BCL006 [*] broadcast returns None\n")


def test_full_without_the_source_keeps_the_header_and_the_help():
    text = render([FileResult("gone.py", (HELPED,))], "full")
    assert text.splitlines()[:3] == ["t.py:10:7: BCL001 [*] 'ids' is None on other ranks",
                                     "   = help: Allocate a placeholder on every rank", ""]


def test_full_is_the_default_format():
    from bcast_lint.output import DEFAULT_FORMAT

    assert DEFAULT_FORMAT == "full" and FORMATS[0] == "full"


# --- summaries after --fix and --diff --------------------------------------------------------


def test_after_fix_the_summary_counts_fixed_and_remaining_as_ruff_does():
    text = render(RESULTS, "concise", fixed=(PLAIN,))
    assert "Found 4 errors (1 fixed, 3 remaining).\n" in text
    everything_fixed = render([FileResult("clean.py")], "concise", fixed=(PLAIN, PLAIN))
    assert everything_fixed == "Found 2 errors (2 fixed, 0 remaining).\n"


def test_show_fixes_lists_what_was_fixed():
    text = render([FileResult("clean.py")], "concise", fixed=(WITH_SAFE_FIX,), show_fixes=True)
    assert "Fixed 1 error:\npkg/train.py:3:5: BCL006 Drop the assignment\n" in text


def test_would_fix_summary_after_diff():
    from bcast_lint.output import would_fix_summary

    hidden = [FileResult("a.py", (WITH_UNSAFE_FIX,))]
    assert would_fix_summary((PLAIN, PLAIN), [], False) == "Would fix 2 errors.\n"
    assert would_fix_summary((PLAIN,), hidden, False) == (
        "Would fix 1 error (1 additional fix available with --unsafe-fixes).\n")
    assert would_fix_summary((), hidden, False) == (
        "No errors would be fixed (1 fix available with --unsafe-fixes).\n")
    assert would_fix_summary((), hidden, True) == ""
    assert would_fix_summary((), [FileResult("x.py", (PLAIN,))], False) == ""  # no hidden fixes


def test_no_findings_passes():
    assert render([FileResult("clean.py")], "text") == "All checks passed!\n"
    assert render([], "concise") == "All checks passed!\n"


def test_singular_and_no_fix_hint():
    assert render([FileResult("x.py", (PLAIN,))], "text").endswith("\nFound 1 error.\n")


def test_only_unsafe_fixes_points_at_unsafe_fixes_option():
    text = render([FileResult("a.py", (WITH_UNSAFE_FIX, WITH_UNSAFE_FIX))], "text")
    assert text.endswith(
        "Found 2 errors.\nNo fixes available (2 hidden fixes can be enabled with the --unsafe-fixes option).\n"
    )


def test_unsafe_fixes_enabled_counts_them_as_fixable():
    text = render(RESULTS, "text", unsafe_fixes=True)
    assert text.endswith("Found 3 errors.\n[*] 2 fixable with the --fix option.\n")


def test_fix_hint_can_be_turned_off():
    assert render(RESULTS, "text", fix_available_hint=False).endswith("\nFound 3 errors.\n")


def test_show_fixes_lists_each_available_fix():
    text = render(RESULTS, "text", show_fixes=True)
    assert (
        "\nAvailable fixes:\n"
        "a.py:7:10: BCL004 [unsafe] Use torch.empty\n"
        "pkg/train.py:3:5: BCL006 [safe] Drop the assignment\n\n"
        "Found 3 errors.\n"
    ) in text


def test_show_fixes_without_fixes_adds_nothing():
    results = [FileResult("x.py", (PLAIN,))]
    assert render(results, "text", show_fixes=True) == render(results, "text")


def test_summary_can_be_left_out():
    assert render(RESULTS, "text", summary=False) == (
        "a.py:7:10: BCL004 hard-coded device 'cuda:0'\n"
        "pkg/train.py:3:5: BCL006 broadcast returns None\n"
        "pkg/train.py:12:9: BCL003 placeholder is uninitialized\n"
    )
    assert render([FileResult("clean.py")], "text", summary=False) == ""


def test_no_findings_but_unchecked_files_does_not_claim_success():
    results = [FileResult("clean.py"), FileResult("gone.py", error="no such file or directory")]
    assert render(results, "text") == "No findings, but 1 file could not be checked.\n"


def test_errors_are_rendered_separately():
    assert "gone.py" not in render(RESULTS, "text")
    assert render_errors(RESULTS) == "gone.py: error: no such file or directory\n"
    assert render_errors([FileResult("ok.py")]) == ""


def test_unknown_format_is_rejected():
    with pytest.raises(ValueError, match="unknown output format 'xml'"):
        render(RESULTS, "xml")


# --- statistics ------------------------------------------------------------------------------


def test_statistics_count_per_code_by_count_then_code():
    results = [FileResult("a.py", (WITH_UNSAFE_FIX, PLAIN, WITH_UNSAFE_FIX, SYNTAX))]
    assert render(results, "text", statistics=True) == (
        "2\tBCL004\thardcoded-device\n"
        "1\tBCL003\tuninitialized-placeholder\n"
        "1\tBCL900\tsyntax-error\n"
        "Found 4 errors.\n"
        "No fixes available (2 hidden fixes can be enabled with the --unsafe-fixes option).\n"
    )


def test_statistics_as_json():
    rows = json.loads(render(RESULTS, "json", statistics=True))["codes"]
    assert rows == [
        {"code": "BCL003", "name": "uninitialized-placeholder", "count": 1, "fixable": False},
        {"code": "BCL004", "name": "hardcoded-device", "count": 1, "fixable": True},
        {"code": "BCL006", "name": "broadcast-result-is-none", "count": 1, "fixable": True},
    ]


def test_statistics_give_the_coverage_per_framework():
    results = [FileResult("a.py", analysed=5, unresolved=((3, "strategy.barrier"),),
                          frameworks=(("lightning", 2, 1), ("torch", 3, 0))),
               FileResult("b.py", analysed=4, frameworks=(("torch", 4, 0),))]
    assert render(results, "text", statistics=True, summary=False) == (
        "\n"
        "Collective calls by framework (analysed, unresolved):\n"
        "7\t0\ttorch\n"
        "2\t1\tlightning\n"
    )
    assert json.loads(render(results, "json", statistics=True))["frameworks"] == [
        {"framework": "torch", "analysed": 7, "unresolved": 0},
        {"framework": "lightning", "analysed": 2, "unresolved": 1},
    ]


# --- grouped ---------------------------------------------------------------------------------


def test_grouped_puts_findings_under_their_file():
    assert render(RESULTS, "grouped", fix_available_hint=False) == (
        "a.py:\n"
        "  7:10 BCL004 hard-coded device 'cuda:0'\n"
        "\n"
        "pkg/train.py:\n"
        "  3:5 BCL006 broadcast returns None\n"
        "  12:9 BCL003 placeholder is uninitialized\n"
        "\n"
        "Found 3 errors.\n"
    )


# --- json and json-lines ---------------------------------------------------------------------


def test_json_is_an_array_of_finding_dicts():
    data = json.loads(render(RESULTS, "json"))
    assert data == [WITH_UNSAFE_FIX.as_dict(), WITH_SAFE_FIX.as_dict(), PLAIN.as_dict()]
    assert set(data[0]) == {"code", "message", "filename", "line", "column", "end_line", "end_column", "fix", "help"}
    assert data[2]["fix"] is None
    assert data[0]["fix"]["edits"][0]["content"] == "torch.empty(n)"


def test_json_without_findings_is_an_empty_array():
    assert json.loads(render([FileResult("a.py")], "json")) == []


def test_json_lines_has_one_object_per_line():
    lines = render(RESULTS, "json-lines").splitlines()
    assert [json.loads(line) for line in lines] == [f.as_dict() for f in (WITH_UNSAFE_FIX, WITH_SAFE_FIX, PLAIN)]
    assert render([], "json-lines") == ""


# --- github ----------------------------------------------------------------------------------


def test_github_workflow_commands():
    assert render([FileResult("pkg/train.py", (PLAIN,))], "github") == (
        "::error title=bcast-lint (BCL003),file=pkg/train.py,line=12,col=9,endLine=12,endColumn=30"
        "::BCL003 placeholder is uninitialized\n"
    )


def test_github_escapes_data_and_properties():
    odd = Finding("BCL001", "100% wrong\r\nsecond: line, here", "dir,a/b:c%.py", 1, 2, 3, 4)
    line = render([FileResult(odd.filename, (odd,))], "github")
    assert line == (
        "::error title=bcast-lint (BCL001),file=dir%2Ca/b%3Ac%25.py,line=1,col=2,endLine=3,endColumn=4"
        "::BCL001 100%25 wrong%0D%0Asecond: line, here\n"
    )
    assert line.count("\n") == 1


# --- sarif -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sarif_validator():
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    validator_class = jsonschema.validators.validator_for(schema)
    validator_class.check_schema(schema)
    return validator_class(schema, format_checker=validator_class.FORMAT_CHECKER)


def assert_valid(validator, log):
    errors = sorted(validator.iter_errors(log), key=str)
    assert not errors, "\n".join(f"{list(e.absolute_path)}: {e.message}" for e in errors)


def test_shipped_schema_is_the_official_one():
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    assert schema["id"] == "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
    assert schema["$schema"] == "http://json-schema.org/draft-04/schema#"


@pytest.mark.parametrize(
    "results",
    [RESULTS, [], [FileResult("clean.py")], [FileResult("broken.py", (SYNTAX,))]],
    ids=["findings-and-fixes", "nothing", "clean", "syntax-error"],
)
def test_sarif_validates_against_the_official_schema(sarif_validator, results):
    assert_valid(sarif_validator, json.loads(render(results, "sarif")))


def test_schema_catches_a_broken_log(sarif_validator):
    # Guards against a validator that accepts anything (a wrong draft, an empty schema).
    log = json.loads(render(RESULTS, "sarif"))
    del log["runs"][0]["tool"]["driver"]["name"]
    log["runs"][0]["results"][0]["level"] = "fatal"
    assert len(list(sarif_validator.iter_errors(log))) == 2


def test_sarif_describes_the_tool_and_its_rules():
    log = json.loads(render(RESULTS, "sarif"))
    assert log["version"] == "2.1.0"
    driver = log["runs"][0]["tool"]["driver"]
    assert driver["name"] == "bcast-lint"
    assert driver["version"] == bcast_lint.__version__
    assert [rule["id"] for rule in driver["rules"]] == [*RULE_NAMES, "BCL900"]
    from bcast_lint.codes import RULES_BY_CODE

    assert driver["rules"][0] == {
        "id": "BCL001",
        "name": RULE_NAMES["BCL001"],
        "shortDescription": {"text": RULE_NAMES["BCL001"]},
        "fullDescription": {"text": RULES_BY_CODE["BCL001"].load().summary()},
        "helpUri": f"https://github.com/bcast-lint/bcast-lint/blob/v{bcast_lint.__version__}"
                   "/docs/rules/BCL001.md",
    }
    for rule in driver["rules"]:  # each links the page that exists for it in this checkout
        assert rule["fullDescription"]["text"].startswith(("Flags ", "Reports "))
        assert (Path(__file__).parent.parent / "docs" / "rules" / f"{rule['id']}.md").is_file()


def test_sarif_results_locations_and_rule_index():
    run = json.loads(render(RESULTS, "sarif"))["runs"][0]
    first = run["results"][0]
    assert first["ruleId"] == "BCL004"
    assert run["tool"]["driver"]["rules"][first["ruleIndex"]]["id"] == "BCL004"
    assert first["level"] == "error"
    assert first["message"] == {"text": "hard-coded device 'cuda:0'"}
    assert first["locations"] == [
        {
            "physicalLocation": {
                "artifactLocation": {"uri": "a.py"},
                "region": {"startLine": 7, "startColumn": 10, "endLine": 7, "endColumn": 20},
            }
        }
    ]
    assert "fixes" not in run["results"][2]


def test_sarif_fixes_carry_every_edit():
    fix = json.loads(render(RESULTS, "sarif"))["runs"][0]["results"][0]["fixes"][0]
    assert fix["description"] == {"text": "Use torch.empty"}
    assert fix["properties"] == {"applicability": "unsafe"}
    (change,) = fix["artifactChanges"]
    assert change["artifactLocation"] == {"uri": "a.py"}
    assert change["replacements"] == [
        {
            "deletedRegion": {"startLine": 7, "startColumn": 10, "endLine": 7, "endColumn": 20},
            "insertedContent": {"text": "torch.empty(n)"},
        },
        {
            "deletedRegion": {"startLine": 8, "startColumn": 1, "endLine": 8, "endColumn": 1},
            "insertedContent": {"text": "# moved\n"},
        },
    ]


def test_sarif_syntax_error_points_at_its_own_page():
    run = json.loads(render([FileResult("broken.py", (SYNTAX,))], "sarif"))["runs"][0]
    result = run["results"][0]
    assert result["ruleId"] == "BCL900"
    rule = run["tool"]["driver"]["rules"][result["ruleIndex"]]
    assert rule["id"] == "BCL900" and rule["name"] == "syntax-error"
    assert rule["helpUri"].endswith("/docs/rules/BCL900.md")
    assert rule["fullDescription"]["text"].startswith("Reports a file that Python cannot parse")


def test_sarif_uris_are_relative_posix_and_escaped(tmp_path, monkeypatch, sarif_validator):
    monkeypatch.chdir(tmp_path)
    inside = Finding("BCL003", "m", str(tmp_path / "sub dir" / "x.py"), 1, 1, 1, 2)
    outside = Finding("BCL003", "m", "/elsewhere/y.py", 1, 1, 1, 2)
    log = json.loads(render([FileResult("x", (inside, outside))], "sarif"))
    uris = [r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in log["runs"][0]["results"]]
    assert uris == ["file:///elsewhere/y.py", "sub%20dir/x.py"]
    assert_valid(sarif_validator, log)


# --- every format ----------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_ends_with_a_newline_and_ignores_file_errors(fmt):
    text = render(RESULTS, fmt)
    assert text.endswith("\n")
    assert "gone.py" not in text


def test_importing_output_does_not_import_libcst():
    code = "import sys, bcast_lint.output; sys.exit('libcst' in sys.modules)"
    env = {**os.environ, "PYTHONPATH": os.path.dirname(os.path.dirname(os.path.abspath(__file__)))}
    assert subprocess.run([sys.executable, "-c", code], env=env).returncode == 0
