"""The parsers' regular expressions compile on first use: importing them compiles none, a PASS/FAIL answer compiles
only what its checks reach, and a lazy pattern answers as the compiled one does."""

from __future__ import annotations

import json
import re
import subprocess
import sys

from juge.lazy import lazy_pattern

_SCRIPT = """
import json, re, sys
compiled = []
original = re.compile
def spy(pattern, flags=0):
    compiled.append(sys._getframe(1).f_globals.get("__name__", ""))
    return original(pattern, flags)
re.compile = spy
from juge.judges import contradictions, parsers
at_import = [m for m in compiled if m in ("juge.judges.parsers", "juge.judges.contradictions")]
result = parsers.parse_passfail("PASS\\nThe answer names the capital and cites its source.")
print(json.dumps({
    "at_import": at_import,
    "verdict": result.verdict,
    "pairwise_compiled": "finditer" in vars(contradictions._PAIR_CUED),
    "score_compiled": "finditer" in vars(contradictions._SCORE_CUED),
    "passfail_compiled": "finditer" in vars(contradictions._PF_ANY),
}))
"""


def test_importing_the_parsers_compiles_no_pattern_and_an_answer_only_those_it_reaches() -> None:
    done = subprocess.run([sys.executable, "-c", _SCRIPT], capture_output=True, text=True, check=True)
    found = json.loads(done.stdout.splitlines()[-1])
    assert found["at_import"] == []
    assert found["verdict"] == "PASS" and found["passfail_compiled"]
    assert not found["pairwise_compiled"] and not found["score_compiled"]


def test_a_lazy_pattern_answers_as_the_compiled_one() -> None:
    source, flags = r"(?P<word>[a-z]+)\s*(?P<n>[0-9]+)", re.IGNORECASE
    lazy, eager = lazy_pattern(source, flags), re.compile(source, flags)
    text = "Score 4 and total 7; NOTE 12"
    assert lazy.pattern == eager.pattern and lazy.flags == eager.flags and lazy.groupindex == eager.groupindex
    assert [m.groupdict() for m in lazy.finditer(text)] == [m.groupdict() for m in eager.finditer(text)]
    assert lazy.findall(text) == eager.findall(text)
    assert lazy.sub("-", text) == eager.sub("-", text) and lazy.split(text) == eager.split(text)
    assert lazy.fullmatch("abc 1") is not None and lazy.match("1 abc") is None
    assert lazy.search(text).group("n") == "4"  # type: ignore[union-attr]
