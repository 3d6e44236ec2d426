"""requirements.lock is what gets installed: it must pin exactly what requirements.txt names."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?==([^\s\\;]+)")


def pins(path: Path) -> dict[str, str]:
    found = {}
    for line in path.read_text().splitlines():
        match = PIN.match(line.strip())
        if match:
            found[re.sub(r"[-_.]+", "-", match.group(1)).lower()] = match.group(2)
    return found


def test_every_requirement_is_locked_at_the_same_version():
    wanted = pins(ROOT / "requirements.txt")
    locked = pins(ROOT / "requirements.lock")

    assert wanted, "requirements.txt names no pinned package"
    mismatched = {name: (version, locked.get(name)) for name, version in wanted.items() if locked.get(name) != version}
    assert mismatched == {}, "run `make lock` after editing requirements.txt: {name: (wanted, locked)}"


def test_every_locked_package_has_a_hash():
    entries = re.split(r"\n(?=[A-Za-z0-9])", (ROOT / "requirements.lock").read_text())
    packages = [entry for entry in entries if PIN.match(entry)]

    assert len(packages) > len(pins(ROOT / "requirements.txt"))  # the transitive ones too
    assert [entry.split()[0] for entry in packages if "--hash=sha256:" not in entry] == []


def test_the_lock_names_no_machine_local_index():
    text = (ROOT / "requirements.lock").read_text()

    assert "--index-url" not in text
    assert "--extra-index-url" not in text
    assert "--find-links" not in text
