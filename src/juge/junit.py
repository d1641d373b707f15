"""JUnit XML, the test report every CI reads: suites of test cases (passed, failure, error, skipped) made XML-safe.
The commands that write it (`juge run`, `juge calibrate`, `juge policy test`, `juge audit status` with ``--junit``)
each say what a test case is; this module writes the file."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable

from juge.visible import visible_text

# What XML 1.0 cannot hold at all (after visible_text has marked the controls): surrogates, U+FFFE, U+FFFF.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
MESSAGE_CHARS = 200  # a failure's message attribute is one line; the whole answer is its text


def xml_safe(text: str) -> str:
    """`text` with every character XML 1.0 cannot hold, and every hidden one, shown as ``⟨U+XXXX⟩``."""
    return _NOT_XML.sub(lambda m: f"⟨U+{ord(m.group()):04X}⟩", visible_text(text))


def _line(text: str) -> str:
    first = " ".join(xml_safe(text).split())
    return first if len(first) <= MESSAGE_CHARS else first[: MESSAGE_CHARS - 1] + "…"


class JUnitSuite:
    """One ``<testsuite>`` being filled: :meth:`case` adds a test case, :func:`junit_document` closes it."""

    def __init__(self, name: str):
        self.element = ET.Element("testsuite", name=name)
        self.counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
        self.time = 0.0

    def case(
        self,
        classname: str,
        name: str,
        *,
        failure: tuple[str, str] | None = None,
        error: tuple[str, str] | None = None,
        skipped: str | None = None,
        out: str | None = None,
        kind: str | None = None,
        seconds: float | None = None,
    ) -> None:
        """One test case; `failure` and `error` are (message, text)."""
        element = ET.SubElement(self.element, "testcase", classname=xml_safe(classname), name=xml_safe(name))
        element.set("time", f"{seconds or 0.0:.3f}")
        self.time += seconds or 0.0
        self.counts["tests"] += 1
        for tag, given in (("failure", failure), ("error", error)):
            if given is not None:
                child = ET.SubElement(element, tag, message=_line(given[0]), type=kind or tag)
                child.text = xml_safe(given[1])
                self.counts["failures" if tag == "failure" else "errors"] += 1
        if skipped is not None:
            ET.SubElement(element, "skipped", message=_line(skipped))
            self.counts["skipped"] += 1
        if out:
            ET.SubElement(element, "system-out").text = xml_safe(out)

    def finish(self) -> ET.Element:
        for key, value in self.counts.items():
            self.element.set(key, str(value))
        self.element.set("time", f"{self.time:.3f}")
        return self.element


def junit_document(name: str, suites: Iterable[JUnitSuite]) -> str:
    """The XML of ``<testsuites>`` holding `suites`, with the totals a CI shows."""
    root = ET.Element("testsuites", name=xml_safe(name))
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for suite in suites:
        root.append(suite.finish())
        for key in totals:
            totals[key] += suite.counts[key]
    for key, value in totals.items():
        root.set(key, str(value))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
