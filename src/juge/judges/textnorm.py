"""Text skeletons for spotting disguised verdicts.

A strict parser accepts only the exact ASCII format. To say *why* an output was
refused, and to catch a second verdict hidden by look-alike characters, the
parsers also look at the output's skeleton: Unicode compatibility folding
(NFKC: fullwidth and mathematical letters become ASCII), with invisible format
characters (category Cf: zero-width space, joiners, BOM, bidi controls, soft
hyphen), combining marks (variation selectors and the grapheme joiner are marks too)
and control characters removed, and common Cyrillic, Greek, Armenian, Cherokee and
small-capital homoglyphs of Latin letters replaced (after the Unicode confusables
list, UTS #39). The skeleton is never used to accept an
output, only to refuse one.

`comparable_text` is the skeleton two texts are compared by when "the same to a reader" must not be evaded
(the holdout's item fingerprint): case folded, whitespace runs one space, trailing punctuation dropped.
"""

from __future__ import annotations

import unicodedata

HOMOGLYPHS = {
    # Cyrillic
    "А": "A",
    "В": "B",
    "С": "C",
    "Е": "E",
    "Н": "H",
    "І": "I",
    "Ј": "J",
    "К": "K",
    "М": "M",
    "О": "O",
    "Р": "P",
    "Ѕ": "S",
    "Т": "T",
    "Х": "X",
    "Ү": "Y",
    "Ԛ": "Q",
    "Ԝ": "W",
    "а": "a",
    "с": "c",
    "е": "e",
    "о": "o",
    "р": "p",
    "х": "x",
    "у": "y",
    "ѕ": "s",
    "і": "i",
    "ј": "j",
    "ԁ": "d",
    "һ": "h",
    "ԛ": "q",
    "ԝ": "w",
    "ӏ": "l",
    # Greek
    "Α": "A",
    "Β": "B",
    "Ε": "E",
    "Ζ": "Z",
    "Η": "H",
    "Ι": "I",
    "Κ": "K",
    "Μ": "M",
    "Ν": "N",
    "Ο": "O",
    "Ρ": "P",
    "Τ": "T",
    "Υ": "Y",
    "Χ": "X",
    "ο": "o",
    "ν": "v",
    "α": "a",
    "ι": "i",
    "ρ": "p",
    "υ": "u",
    "τ": "t",
    "κ": "k",
    "ϲ": "c",
    "ϳ": "j",
    # Armenian
    "Օ": "O",
    "Ս": "U",
    "Տ": "S",
    "օ": "o",
    "ս": "u",
    "ո": "n",
    "հ": "h",
    "զ": "q",
    "ց": "g",
    # Cherokee
    "Ꭺ": "A",
    "Ᏼ": "B",
    "Ꮯ": "C",
    "Ꭼ": "E",
    "Ꮪ": "S",
    "Ꭲ": "T",
    "Ꮲ": "P",
    "Ꮃ": "W",
    "Ꮋ": "H",
    # Latin small capitals and other letter forms
    "ᴀ": "A",
    "ʙ": "B",
    "ᴄ": "C",
    "ᴅ": "D",
    "ᴇ": "E",
    "ꜰ": "F",
    "ɢ": "G",
    "ʜ": "H",
    "ɪ": "I",
    "ᴊ": "J",
    "ᴋ": "K",
    "ʟ": "L",
    "ᴍ": "M",
    "ɴ": "N",
    "ᴏ": "O",
    "ᴘ": "P",
    "ʀ": "R",
    "ꜱ": "S",
    "ᴛ": "T",
    "ᴜ": "U",
    "ᴠ": "V",
    "ᴡ": "W",
    "ʏ": "Y",
    "ᴢ": "Z",
    "ı": "i",
}
_TABLE = str.maketrans(HOMOGLYPHS)
_KEEP_CONTROLS = {"\n", "\t"}
# ASCII's only invisible characters are its controls (category Cc); ASCII has no look-alikes to fold.
_ASCII_CONTROLS = str.maketrans(dict.fromkeys([chr(c) for c in (*range(0x20), 0x7F) if chr(c) not in _KEEP_CONTROLS]))


def skeleton(text: str) -> str:
    """Fold `text` to what a reader would see: ASCII look-alikes, no invisible characters."""
    if text.isascii():  # the same result as below, without a Unicode lookup per character
        return text.translate(_ASCII_CONTROLS)
    decomposed = unicodedata.normalize("NFKD", text)
    kept = "".join(
        ch for ch in decomposed if ch in _KEEP_CONTROLS or unicodedata.category(ch) not in {"Cf", "Cc", "Mn", "Me"}
    )
    return unicodedata.normalize("NFKC", kept.translate(_TABLE))


def comparable_text(text: str | None) -> str:
    """`text` as a reader tells it apart: its skeleton, case folded, every run of whitespace one space, and
    no punctuation or whitespace at its end (None is the empty text). A zero-width space, a look-alike
    letter or a full stop added does not make another text."""
    if not text:
        return ""
    folded = " ".join(skeleton(text).casefold().split())
    end = len(folded)
    while end and (folded[end - 1].isspace() or unicodedata.category(folded[end - 1]).startswith("P")):
        end -= 1
    return folded[:end]
