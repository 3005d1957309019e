"""Rule documentation: `docs/rules/<id>.md` when present, else from the rule."""
from __future__ import annotations

from pathlib import Path

from .findings import Rule


def _docs_dir() -> Path:
    """Installed: the pages ship as `pipelint/rule_docs`; from a checkout: `docs/rules`."""
    here = Path(__file__).resolve().parent
    installed = here / "rule_docs"
    return installed if installed.is_dir() else here.parent / "docs" / "rules"


DOCS_DIR = _docs_dir()
DOCS_URL = "https://github.com/pipelint/pipelint/blob/main/docs/rules/{id}.md"


def rule_page(rule: Rule, plugin: str) -> str:
    page = DOCS_DIR / f"{rule.id}.md"
    if page.is_file():
        return page.read_text(encoding="utf-8")
    return (f"# {rule.id} ({rule.name})\n\n{rule.short}\n\nPlugin: {plugin}; default severity: "
            f"{rule.severity.value}\n\n{rule.full}\n\n## How to fix\n\n{rule.help}\n")


def help_uri(rule: Rule) -> str:
    """A third-party rule's own page when it declares one, pipelint's page otherwise."""
    return rule.help_uri or DOCS_URL.format(id=rule.id)
