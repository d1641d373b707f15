"""Text a person reads, with its hidden characters shown.

Case text, answers and judge output may carry characters that change what a reader sees without
being seen: a right-to-left override (U+202E) reverses the rest of a line, isolates and embeddings
reorder it, zero-width and other format characters hide inside words, control characters do odd
things to a terminal or a page. Wherever such text is shown (the labelling app, reports), each of
these characters is replaced by a visible marker naming it (``⟨U+202E⟩``), so none of them acts and
the reader sees that it was there; the page also isolates each text block (CSS ``unicode-bidi:
isolate``) so right-to-left text cannot spill into what follows.
"""

from __future__ import annotations

import re

from markupsafe import Markup, escape

# Controls (C0 but tab, newline, carriage return; DEL; C1), bidi marks, embeddings, overrides and
# isolates, zero-width and other format characters, line/paragraph separators, tag characters, the
# combining grapheme joiner.
_ALWAYS = (
    "\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u00ad\u034f\u061c\u115f\u1160\u180e\u200b-\u200f\u2028-\u202e"
    "\u2060-\u2064\u2066-\u206f\u3164\ufeff\ufff9-\ufffb\U000e0000-\U000e007f"
)
# Variation selectors (Mongolian's too): hidden after an ASCII letter, a tag's `<`, `/`, `>`, or another
# hidden character, where they vary nothing and only hide inside a word or a tag (`</re\ufe0fsponse>`);
# after an emoji, a digit (keycaps) or a CJK or Mongolian letter they are real variations, left alone.
_SELECTORS = "\ufe00-\ufe0f\u180b-\u180d\u180f\U000e0100-\U000e01ef"
HIDDEN = re.compile(f"[{_ALWAYS}]|(?<=[A-Za-z</>_{_ALWAYS}{_SELECTORS}])[{_SELECTORS}]")


def _name(char: str) -> str:
    return f"U+{ord(char):04X}"


def has_hidden(text: str) -> bool:
    return HIDDEN.search(text) is not None


def visible_text(text: str) -> str:
    """Plain text with each hidden character replaced by ``⟨U+XXXX⟩`` (Markdown, terminals)."""
    return HIDDEN.sub(lambda m: f"⟨{_name(m.group())}⟩", text)


def visible_html(value: object) -> object:
    """For a Jinja `finalize`: a string holding hidden characters becomes escaped HTML with each one
    shown as a marked ``U+XXXX``; anything else (numbers, Markup, plain text) is returned as it is."""
    if not isinstance(value, str) or isinstance(value, Markup) or not has_hidden(value):
        return value
    parts, last = [], 0
    for m in HIDDEN.finditer(value):
        parts.append(escape(value[last : m.start()]))
        parts.append(Markup('<span class="hidden-char" title="a hidden character">{}</span>').format(_name(m.group())))
        last = m.end()
    parts.append(escape(value[last:]))
    return Markup("").join(parts)


# Control characters (C0 but tab and newline, DEL, C1) and bidi overrides and isolates: model text
# holding them could clear the terminal, set its title or reorder what the reader sees.
_TERMINAL_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def has_terminal_control(text: str) -> bool:
    """Whether `text` holds a character :func:`terminal_safe` would escape."""
    return _TERMINAL_CONTROLS.search(text) is not None


def terminal_safe(text: str) -> str:
    """`text` with every terminal control character shown as its escape (ESC as ``\\x1b``)."""
    return _TERMINAL_CONTROLS.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


def visible_name(name: str) -> str:
    """`name` (a judge's or a panel's, from a file) if it holds no hidden character, else ValueError: a name is
    printed as it is in terminal tables and headings, and an escape or a bidi override there would act."""
    found = HIDDEN.search(name)
    if found:
        raise ValueError(f"the name holds a hidden or control character ({_name(found.group())}); use visible text")
    return name
