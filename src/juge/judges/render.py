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
from dataclasses import dataclass
from importlib import resources
from typing import Any

import jinja2

from juge.data.records import Case, Message
from juge.judges.textnorm import skeleton

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
    # the tags of juge tune's proposal prompt (juge.tune.propose)
    "case",
    "rubric_now",
    "rubric",
)
# `<`, or a character a reader takes for it (fullwidth, small form, angle quotation marks and
# brackets), that may open or close one of our tags.
_LESS_THAN = re.compile("[<\uff1c\ufe64\u2039\u2329\u27e8\u3008\u02c2\u1438]")
# What follows `<` in the skeleton of one of our tags: white space and a slash (or one a reader takes for
# one), the tag's name, and no more of a word (`<responses>` is not ours).
_OUR_TAG = re.compile(r"\s*[/\u2215\u2044]?\s*(?:" + "|".join(TAGS) + r")(?![a-z0-9_-])")
_LONGEST = max(map(len, TAGS)) + 2  # the skeleton's characters, blanks aside, a tag needs at most


def _opens_our_tag(text: str, start: int) -> bool:
    """Whether `text` from `start` (just after a `<`) reads as one of our tags, judged on its skeleton (`textnorm.skeleton`:
    look-alike and mathematical letters folded; invisible characters, combining marks and variation
    selectors dropped). The window grows until its skeleton holds a tag's length of characters besides
    white space, or the text ends."""
    size = 2 * _LONGEST
    while True:
        folded = skeleton(text[start : start + size]).lower()
        if len("".join(folded.split())) >= _LONGEST or start + size >= len(text):
            return _OUR_TAG.match(folded) is not None
        size *= 4


def neutralise(text: str) -> str:
    """Defuse any opening or closing delimiter tag inside untrusted text (``<`` -> ``&lt;``).

    Also a tag a reader or a tokenizer may take for ours: spelled with invisible characters, combining
    marks or variation selectors inside it (white space around the slash), look-alike letters (Cyrillic,
    Greek, Armenian, mathematical, fullwidth), or a fullwidth ``＜`` or ``／`` (see `_opens_our_tag`).
    """
    out, last = [], 0
    for m in _LESS_THAN.finditer(text):
        if _opens_our_tag(text, m.end()):
            out += [text[last : m.start()], "&lt;"]
            last = m.end()
    return "".join(out) + text[last:] if out else text


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


@functools.lru_cache(maxsize=64)
def _template_globals(source: str) -> dict[str, Any]:
    """The compiled template's globals (the environment's: range, dict, ...) as one plain dict."""
    return dict(compile_template(source).globals)


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

    # One context for both blocks, as `Template.render` shares one with its blocks: what `new_context` builds, without
    # copying the globals' ChainMap on every call (that copy cost more than rendering both blocks).
    env = template.environment
    context = env.context_class(env, _template_globals(source) | variables, template.name, template.blocks)

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
