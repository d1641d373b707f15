"""Turning a case into judge prompts with Jinja2 templates.

A judge template is one Jinja2 file with a ``user`` block and an optional
``system`` block; each block becomes one chat message. Templates never see raw
case text: every untrusted piece (question, conversation, context, source,
response(s), reference, the judge's own solution) arrives already wrapped in
its XML-style tag, with any of our tags inside the data neutralised
(``</response>`` becomes ``&lt;/response>``) so the data cannot close its
delimiter and pose as instructions. Autoescape is off (code answers keep their
``<`` and ``&``); undefined variables are errors.
"""

from __future__ import annotations

import functools
import json
import re
import sys
import unicodedata
from dataclasses import dataclass
from importlib import resources
from typing import Any

import jinja2

from juge.data.records import Case, Message
from juge.judges.textnorm import HOMOGLYPHS

TAGS = (
    "question",
    "conversation",
    "turn",
    "context",
    "source",
    "response_a",
    "response_b",
    "response",
    "reference",
    "own_solution",
    "example",
)
# Unicode category Cf (format characters: zero-width space and joiners, bidi controls, soft hyphen,
# BOM, ...) as code point ranges, for the Unicode version of `unicodedata` below; under another
# version the table is built by scanning every code point once, on first use (a test checks the
# ranges against that scan).
FORMAT_RANGES_UNICODE = "14.0.0"
FORMAT_RANGES = (
    (0x00AD, 0x00AD), (0x0600, 0x0605), (0x061C, 0x061C), (0x06DD, 0x06DD), (0x070F, 0x070F),
    (0x0890, 0x0891), (0x08E2, 0x08E2), (0x180E, 0x180E), (0x200B, 0x200F), (0x202A, 0x202E),
    (0x2060, 0x2064), (0x2066, 0x206F), (0xFEFF, 0xFEFF), (0xFFF9, 0xFFFB), (0x110BD, 0x110BD),
    (0x110CD, 0x110CD), (0x13430, 0x13438), (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A), (0xE0001, 0xE0001),
    (0xE0020, 0xE007F),
)  # fmt: skip


def scan_format_characters() -> str:
    """Every character of Unicode category Cf, in code point order, by asking `unicodedata` of each."""
    return "".join(chr(c) for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) == "Cf")


def format_characters() -> str:
    """Every character of Unicode category Cf, in code point order."""
    if unicodedata.unidata_version == FORMAT_RANGES_UNICODE:
        return "".join(chr(c) for first, last in FORMAT_RANGES for c in range(first, last + 1))
    return scan_format_characters()


def _look_alikes(ch: str) -> str:
    """`ch` and the characters a reader takes for it: its other case, its fullwidth form, and its
    Cyrillic, Greek, Cherokee or small-capital homoglyphs (the table the parsers' skeleton uses)."""
    same = {ch.lower(), ch.upper()}
    same |= {chr(ord(c) - 0x21 + 0xFF01) for c in tuple(same) if "!" <= c <= "~"}  # fullwidth forms
    same |= {g for g, latin in HOMOGLYPHS.items() if latin.lower() == ch.lower()}
    return "[" + "".join(re.escape(c) for c in sorted(same)) + "]"


# `<`, or a character a reader takes for it (fullwidth, small form, angle quotation marks and
# brackets), that opens or closes one of our tags, even when the tag is spelled with invisible
# characters (`<\u200b/response>`), look-alike letters (Cyrillic `е`) or a fullwidth slash.
_LESS_THAN = "[<\uff1c\ufe64\u2039\u2329\u27e8\u3008\u02c2\u1438]"


@functools.cache
def _tag_opening() -> re.Pattern[str]:
    """The pattern `neutralise` defuses, built on first use (not when `juge --help` imports this)."""
    # What a reader (or a tokenizer) may skip inside a tag: invisible format characters; around
    # the slash, white space too.
    invisible = "[" + "".join(re.escape(c) for c in format_characters()) + "]*"
    blank = invisible[:-2] + "\\s]*"
    tags = "|".join(invisible.join(_look_alikes(ch) for ch in tag) for tag in TAGS)
    return re.compile(
        _LESS_THAN
        + "(?="
        + blank
        + "[/\uff0f\u2215\u2044]?"
        + blank
        + "(?:"
        + tags
        + ")(?!"
        + invisible
        + "[A-Za-z0-9_-]))"
    )


def neutralise(text: str) -> str:
    """Defuse any opening or closing delimiter tag inside untrusted text (``<`` -> ``&lt;``).

    Also a tag disguised with invisible characters inside it (white space around the slash), or
    written with a fullwidth ``＜`` or ``／``: a model may read those as the tag.
    """
    return _tag_opening().sub("&lt;", text)


def wrap(tag: str, text: str | None) -> str:
    """``<tag>\\n…\\n</tag>`` around neutralised text; empty string when there is no text."""
    if text is None:
        return ""
    return f"<{tag}>\n{neutralise(text)}\n</{tag}>"


def wrap_conversation(messages: list[Message]) -> str:
    """Every turn of a multi-turn input, each in ``<turn role="...">``, inside ``<conversation>``."""
    turns = "\n".join(f'<turn role="{m.role}">\n{neutralise(m.content)}\n</turn>' for m in messages)
    return f"<conversation>\n{turns}\n</conversation>"


@functools.lru_cache(maxsize=1)
def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=False,
    )


@functools.lru_cache(maxsize=64)
def compile_template(source: str) -> jinja2.Template:
    """Compile template source (cached by its text). Raises jinja2.TemplateSyntaxError."""
    return _environment().from_string(source)


@dataclass(frozen=True)
class Prompt:
    system: str | None
    user: str

    def messages(self) -> list[dict[str, str]]:
        out = [{"role": "system", "content": self.system}] if self.system else []
        return out + [{"role": "user", "content": self.user}]


def render_blocks(source: str, variables: dict[str, Any]) -> Prompt:
    """Render the ``system`` and ``user`` blocks of a template (whitespace at both ends trimmed)."""
    template = compile_template(source)
    if "user" not in template.blocks:
        raise ValueError("the template has no {% block user %}")

    context = template.new_context(variables)  # one for both blocks, as `Template.render` shares one with its blocks

    def block(name: str) -> str:
        return "".join(template.blocks[name](context)).strip()

    system = block("system") if "system" in template.blocks else None
    return Prompt(system=system or None, user=block("user"))


def case_blocks(case: Case) -> dict[str, str]:
    """The case's inputs as wrapped blocks; a multi-turn input becomes `conversation`, else `question`."""
    multi_turn = bool(case.messages)
    return {
        "question": "" if multi_turn else wrap("question", case.question),
        "conversation": wrap_conversation(case.conversation()) if multi_turn else "",
        "context": wrap("context", case.context),
        "source": wrap("source", case.source),
    }


def example_data(example: Any) -> str:
    """An example's data as wrapped blocks, in the order a real prompt shows them."""
    parts = [
        wrap("question", example.question),
        wrap("context", example.context),
        wrap("reference", example.reference),
        wrap("response", example.response),
        wrap("response_a", example.response_a),
        wrap("response_b", example.response_b),
    ]
    return "\n".join(p for p in parts if p)


def schema_text(schema: dict[str, Any] | None) -> str:
    return json.dumps(schema, sort_keys=True) if schema else ""


def builtin_templates() -> dict[str, str]:
    """The built-in templates, id -> Jinja2 source (ids are the file stems, e.g. ``passfail-v1``)."""
    folder = resources.files("juge.judges") / "templates"
    return {
        entry.name.removesuffix(".j2"): entry.read_text(encoding="utf-8")
        for entry in sorted(folder.iterdir(), key=lambda e: e.name)
        if entry.name.endswith(".j2")
    }
