"""No real-looking secret in what the repository shows people: an example key in the real format
would be copied, pass the format check, and be found by every leaked-key scanner (issue 19, item 12)."""

import re
import subprocess
from pathlib import Path

from integrations.keys import KEY_PREFIX, is_well_formed

ROOT = Path(__file__).resolve().parent.parent
# The key format without its anchors: what a leaked-key scanner looks for.
KEY_SHAPE = re.compile(rf"{KEY_PREFIX}[0-9A-Za-z]{{40}}")


def shown_files() -> list[Path]:
    """Every tracked text people read or copy from: documentation, examples, the environment template."""
    listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    names = [name for name in listed.splitlines() if not name.startswith("tests/")]
    return [
        ROOT / name
        for name in names
        if name.endswith((".md", ".txt", ".example", ".lua")) or name.startswith("examples/")
    ]


def test_no_document_or_example_shows_a_key_in_the_real_format():
    files = shown_files()
    assert ROOT / "README.md" in files and ROOT / ".env.example" in files

    found = {
        (str(path.relative_to(ROOT)), match)
        for path in files
        for match in KEY_SHAPE.findall(path.read_text(errors="replace"))
    }

    assert found == set()


def test_the_readmes_placeholder_is_not_a_well_formed_key():
    line = next(line for line in (ROOT / "README.md").read_text().splitlines() if line.startswith("API key: "))
    placeholder = line.removeprefix("API key: ")

    assert placeholder.startswith(KEY_PREFIX)
    assert not is_well_formed(placeholder)
    assert not KEY_SHAPE.search(placeholder)
