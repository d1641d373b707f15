"""The tag-defusing pattern is built on first use from a shipped table of format characters: `juge --help`
scans no Unicode table, and the table is the one `unicodedata` gives."""

from __future__ import annotations

import subprocess
import sys
import unicodedata

import pytest

from juge.judges import render


@pytest.mark.skipif(
    unicodedata.unidata_version != render.FORMAT_RANGES_UNICODE,
    reason=f"FORMAT_RANGES are for Unicode {render.FORMAT_RANGES_UNICODE}; this Python scans its own",
)
def test_the_shipped_format_ranges_are_unicode_category_cf() -> None:
    assert render.format_characters() == render.scan_format_characters()


def test_format_characters_are_every_cf_character_whatever_the_unicode_version() -> None:
    chars = render.format_characters()
    assert list(chars) == sorted(set(chars))
    assert all(unicodedata.category(c) == "Cf" for c in chars)
    assert {"\u200b", "\u200d", "\u202e", "\u00ad", "\ufeff", "\U000e0001"} <= set(chars)


def test_importing_the_cli_builds_no_pattern() -> None:
    code = "import juge.cli, juge.judges.render as r; print(r._tag_opening.cache_info().currsize)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert done.stdout.strip() == "0"
