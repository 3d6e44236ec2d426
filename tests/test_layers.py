"""The dependency rule of STYLE.md, checked by import-linter (contracts in pyproject.toml)."""

import ast
from pathlib import Path

from django.conf import settings
from importlinter.cli import lint_imports


def test_apps_import_only_downwards_and_the_webhook_modules_have_no_cycle(monkeypatch):
    monkeypatch.chdir(settings.BASE_DIR)

    assert lint_imports() == 0


# The bench measures the product from outside, so it takes only public names of it (import-linter sees
# which modules are imported, not which names): a private name (`_x`) may change with its module.
PRODUCT_PACKAGES = ("helpdesk", "sla", "tickets", "integrations", "config", "api_framework", "foundation", "tools")


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _private_names_taken(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    modules = set()  # names bound to product modules: `import tickets.services` binds `tickets`
    taken = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module.split(".")[0] in PRODUCT_PACKAGES:
            names = [*node.module.split("."), *(alias.name for alias in node.names)]
            taken += [f"{node.module}: {name}" for name in names if _private(name)]
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in PRODUCT_PACKAGES:
                    taken += [f"{alias.name}: {part}" for part in alias.name.split(".") if _private(part)]
                    modules.add(alias.asname or alias.name.split(".")[0])
    for node in ast.walk(tree):
        chain = []
        while isinstance(node, ast.Attribute):
            chain.append(node.attr)
            node = node.value
        if isinstance(node, ast.Name) and node.id in modules:
            taken += [f"{node.id}: {name}" for name in chain if _private(name)]
    return [f"{path.relative_to(settings.BASE_DIR)} takes {entry}" for entry in taken]


def test_the_bench_takes_no_private_name_of_the_product():
    bench = Path(settings.BASE_DIR) / "bench"

    taken = [entry for path in sorted(bench.rglob("*.py")) for entry in _private_names_taken(path)]

    assert taken == []
