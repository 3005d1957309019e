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


def rule_page(rule: Rule, plugin: str, example: str = "") -> str:
    """A rule's documentation: its generated page (`docs/rules/<id>.md`) when there is one,
    else the same page rendered from the declaration (a third-party rule, a new one)."""
    page = DOCS_DIR / f"{rule.id}.md"
    if page.is_file():
        return page.read_text(encoding="utf-8")
    return render_page(rule, plugin, example or "No example is declared for this rule.")


def render_page(rule: Rule, plugin: str, example: str) -> str:
    """The page of one rule (what `docs/generate_rule_docs.py` writes): what it finds, why it
    matters for the pipeline, an example, and the fix."""
    return f"""# {rule.id}

**{rule.short}** — plugin `{plugin}`, default severity `{rule.severity.value}`, tags: {', '.join(rule.tags)}.

## What

{rule.full}

## Why it matters for the pipeline

{rule.rationale or rule.full}

## Example

{example}

## How to fix

{rule.help}

Suppress one occurrence with `// pipelint: ignore[{rule.id}]` on the line or the line before, or
configure it in `[tool.pipelint]` (`ignore`, `per-file-ignores`, `severity`).
"""


def help_uri(rule: Rule) -> str:
    """A third-party rule's own page when it declares one, pipelint's page otherwise."""
    return rule.help_uri or DOCS_URL.format(id=rule.id)
