"""Each use of a library's private API names the test that breaks when the library changes it
(`# Private <library> API: <test>`), and docs/decisions.md's "Private APIs we lean on" table lists
that test (issue 20, item 4): the comments and the table stay true as tests are renamed."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("foundation", "api_framework", "helpdesk", "sla", "tickets", "integrations", "config", "tools")
SOURCES = [*(path for package in PACKAGES for path in (ROOT / package).rglob("*.py")), ROOT / "gunicorn.conf.py"]
COMMENT = re.compile(r"# Private [\w-]+ API: (test_\w+)$", re.M)


def named_in_comments() -> dict[str, list[str]]:
    """Test name: the files whose comments name it."""
    named: dict[str, list[str]] = {}
    for path in SOURCES:
        for test in COMMENT.findall(path.read_text()):
            named.setdefault(test, []).append(str(path.relative_to(ROOT)))
    return named


def defined_tests() -> dict[str, list[str]]:
    defined: dict[str, list[str]] = {}
    for path in (ROOT / "tests").rglob("test_*.py"):
        for test in re.findall(r"^def (test_\w+)\(", path.read_text(), re.M):
            defined.setdefault(test, []).append(str(path.relative_to(ROOT)))
    return defined


def listed_in_decisions() -> set[str]:
    text = (ROOT / "docs" / "decisions.md").read_text()
    section = re.search(r"^## Private APIs we lean on.*?\n(.*?)(?=^## )", text, re.S | re.M)
    assert section, "docs/decisions.md has no '## Private APIs we lean on' section"
    return set(re.findall(r"::(test_\w+)`", section.group(1)))


def test_the_comments_are_found():
    """A broken pattern must not make the tests below pass on nothing."""
    named = named_in_comments()

    assert "test_a_slow_statement_on_a_server_that_answers_keeps_its_budget" in named
    assert "test_path_ids_are_plain_strings" in named


def test_each_comment_names_one_test_that_exists():
    defined = defined_tests()

    missing = {test: files for test, files in named_in_comments().items() if len(defined.get(test, [])) != 1}

    assert missing == {}, f"rename the comment in these files, or the test: {missing}"


def test_each_test_a_comment_names_is_in_the_decisions_table():
    unlisted = set(named_in_comments()) - listed_in_decisions()

    assert unlisted == set(), f"add these to docs/decisions.md, 'Private APIs we lean on': {sorted(unlisted)}"
