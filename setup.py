"""Map the repository's folders into the one `pipelint` import namespace.

The design fixes the source layout (`analyzer/` core, `plugins/` checks,
`grammars/` Lark grammars, `docs/rules/` rule pages); users import one
namespace.  Packages are *found* under each folder, never listed by hand, so
a new subpackage cannot be left out of the wheel again.  Everything else
(metadata, entry points, extras) lives in pyproject.toml.
"""
from setuptools import find_packages, setup

FOLDERS = {               # import name -> folder in the repository
    "pipelint": "analyzer",
    "pipelint.plugins": "plugins",
    "pipelint.grammars": "grammars",
    "pipelint.rule_docs": "docs/rules",
}


def _packages() -> list[str]:
    found = []
    for name, folder in FOLDERS.items():
        found.append(name)
        found += [f"{name}.{sub}" for sub in find_packages(folder)]
    return found


setup(
    packages=_packages(),
    package_dir=FOLDERS,
    package_data={"pipelint": ["py.typed"], "pipelint.grammars": ["*.lark"], "pipelint.rule_docs": ["*.md"]},
)
