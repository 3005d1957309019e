"""Map the repository's folders into the one `pipelint` import namespace.

The design fixes the source layout (`analyzer/` core, `plugins/` checks,
`grammars/` Lark grammars, `docs/rules/` rule pages); users import one
namespace.  Packages are *found* under each folder, never listed by hand, so
a new subpackage cannot be left out of the wheel again.  Everything else
(metadata, entry points, extras) lives in pyproject.toml.
"""
import base64
import hashlib
import os
import zipfile
from pathlib import Path

from setuptools import find_packages, setup
from setuptools.command.build_py import build_py
from setuptools.command.editable_wheel import editable_wheel

PTH = "pipelint-tilelang.pth"
# One line, run by `site` at every start-up: costs an environment lookup unless PIPELINT_TILELANG is set.
PTH_LINE = ('import os; os.environ.get("PIPELINT_TILELANG", "off").strip().lower() in ("", "off") '
            'or __import__("pipelint._tilelang_hook")\n')

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


class BuildWithHook(build_py):
    """Also put `pipelint-tilelang.pth` at the top of the wheel (site-packages), so that
    PIPELINT_TILELANG=warn lints kernels in programs that never import pipelint."""

    def run(self) -> None:
        super().run()
        with open(os.path.join(self.build_lib, PTH), "w", encoding="utf-8") as fh:
            fh.write(PTH_LINE)

    def get_outputs(self, include_bytecode: bool = True) -> list[str]:
        return [*super().get_outputs(include_bytecode), os.path.join(self.build_lib, PTH)]


class EditableWithHook(editable_wheel):
    """`pip install -e .` gets the same `.pth` hook as the wheel (README's setup is editable: the
    hook must work there too).  The finished editable wheel is rewritten with the file added
    and listed in its RECORD; setuptools' own editable machinery is left as it is."""

    def run(self) -> None:
        super().run()
        for wheel in Path(self.dist_dir).glob("*.whl"):
            add_to_wheel(wheel, PTH, PTH_LINE)


def add_to_wheel(wheel: Path, name: str, text: str) -> None:
    data = text.encode()
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    tmp = wheel.with_name(wheel.name + ".tmp")
    with zipfile.ZipFile(wheel) as src:
        if name in src.namelist():
            return
        with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as dst:
            for item in src.infolist():
                content = src.read(item.filename)
                if item.filename.endswith(".dist-info/RECORD"):
                    content = f"{name},sha256={digest},{len(data)}\n".encode() + content
                dst.writestr(item, content)
            dst.writestr(name, data)
    os.replace(tmp, wheel)


setup(
    cmdclass={"build_py": BuildWithHook, "editable_wheel": EditableWithHook},
    packages=_packages(),
    package_dir=FOLDERS,
    package_data={"pipelint": ["py.typed", "config.schema.json"], "pipelint.grammars": ["*.lark"], "pipelint.rule_docs": ["*.md"]},
)
