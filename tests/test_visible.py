"""Hidden characters made visible (juge.visible), checked on any text."""

from __future__ import annotations

import html
import re
import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from juge.visible import HIDDEN, visible_html, visible_text

hidden_heavy = st.text(
    alphabet=st.sampled_from(
        ["a", "<", "&", '"', "\u202e", "\u2066", "\u200b", "\x00", "\n", "é", "\ufeff", "\ufe0f", "\u034f", "❤"]
    )
)


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(), hidden_heavy))
def test_no_hidden_character_survives_and_the_rest_is_kept(text: str) -> None:
    shown = str(visible_html(text))
    assert HIDDEN.search(shown) is None
    assert "<script" not in shown
    # Undo the markers and the escaping: the text comes back with each hidden character named.
    names = re.sub(r'<span class="hidden-char" title="a hidden character">(U\+[0-9A-F]{4,5})</span>', r"⟨\1⟩", shown)
    assert html.unescape(names) == visible_text(text) or not HIDDEN.search(text) and shown == text


def test_every_bidi_control_and_format_character_is_hidden() -> None:
    bidi = [chr(c) for c in (0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A))]
    assert all(HIDDEN.fullmatch(c) for c in bidi)
    formats = [
        chr(c)
        for c in range(0x10000)
        if unicodedata.category(chr(c)) == "Cf"
        and c not in (0x0600, 0x0601, 0x0602, 0x0603, 0x0604, 0x0605, 0x06DD, 0x070F, 0x0890, 0x0891, 0x08E2, 0x110BD)
    ]
    missing = [f"U+{ord(c):04X}" for c in formats if not HIDDEN.fullmatch(c)]
    assert missing == []


def test_marks_that_hide_inside_a_tag_are_shown_and_an_emojis_variation_is_not() -> None:
    shown = visible_text("</re\u034fsp\ufe0fon\u180bse> \U0001f44d\ufe0f 1\ufe0f\u20e3 \u2764\ufe0f")
    assert shown == "</re⟨U+034F⟩sp⟨U+FE0F⟩on⟨U+180B⟩se> \U0001f44d\ufe0f 1\ufe0f\u20e3 \u2764\ufe0f"
    assert "U+FE0F" in str(visible_html("<\ufe0f/response>"))
