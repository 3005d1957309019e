"""JUnit XML: one test case per checked file, failed by each of its findings.

CI systems that only show test reports (Jenkins, GitLab's test widget, Azure)
then list the kernels that fail and why.  Tool errors are `<error>` elements.
Control characters (XML 1.0 cannot hold them, terminals would run them) are made
visible in every attribute and text.
"""
from __future__ import annotations

import xml.etree.ElementTree as ET

from ..findings import Report
from .escape import visible
from .present import repo_relative, shown_findings


def render(report: Report, root: object = None, **_: object) -> str:
    by_path: dict[str, list] = {repo_relative(r.path, root): [] for r in report.files}
    for f in shown_findings(report):
        by_path.setdefault(repo_relative(f.location.path, root), []).append(f)
    errors: dict[str, list] = {}
    for e in report.errors:
        where = repo_relative(e.path, root) if e.path else "pipelint"
        errors.setdefault(where, []).append(e)
        by_path.setdefault(where, [])
    failures = sum(1 for findings in by_path.values() if findings)
    top = ET.Element("testsuites", name="pipelint", tests=str(len(by_path)), failures=str(failures),
                      errors=str(len(errors)))
    suite = ET.SubElement(top, "testsuite", name="pipelint", tests=str(len(by_path)), failures=str(failures),
                          errors=str(len(errors)))
    for path in sorted(by_path):
        case = ET.SubElement(suite, "testcase", classname="pipelint", name=visible(path), file=visible(path))
        for f in by_path[path]:
            loc = f.location
            failure = ET.SubElement(case, "failure", type=visible(f.rule),
                                    message=visible(f"{f.severity.value}: {f.message}"))
            failure.text = visible(f"{repo_relative(loc.path, root)}:{loc.line}:{loc.column}: "
                                   f"{f.severity.value}[{f.rule}] {f.message}")
        for e in errors.get(path, []):
            ET.SubElement(case, "error", type="tool-error", message=visible(e.message)).text = \
                _lines(e.detail or e.message)
    ET.indent(top)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(top, encoding="unicode") + "\n"


def _lines(text: str) -> str:
    """A multi-line text (a traceback) with its line breaks kept and every other control character
    made visible."""
    return "\n".join(visible(line) for line in text.split("\n"))
