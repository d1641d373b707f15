"""Loading judges from TOML: errors name file and field; the version hash moves only when it should."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from juge.data.records import Case
from juge.errors import InputError
from juge.judges import judge_from_dict, load_judge

SCORE_JUDGE = """
name = "helpful"
setup = "score"
provider = "scripted"
model = "judge-model-1"
marker = "Total rating:"

[rubric]
description = "Does the answer solve the customer's problem?"
levels = { 1 = "Not at all", 2 = "Partly", 3 = "Mostly", 4 = "Fully" }
"""


def write(folder: Path, name: str, text: str | bytes) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    return path


def test_load_score_judge(tmp_path: Path) -> None:
    judge = load_judge(write(tmp_path, "helpful.toml", SCORE_JUDGE))
    assert (judge.name, judge.setup, judge.model, judge.provider) == ("helpful", "score", "judge-model-1", "scripted")
    assert judge.temperature == 0.0
    assert judge.template_id == "score-v1"
    assert len(judge.template_hash) == 12 and int(judge.template_hash, 16) >= 0
    assert judge.allowed() == ("1", "2", "3", "4")
    assert judge.parse("Solves it.\nTotal rating: 4").verdict == 4
    assert judge.parse("Solves it.\nTotal rating: 5").outcome == "unparsed"
    assert judge.parse("Solves it.\nNOTE: 4").outcome == "unparsed"


def test_rubric_and_template_from_files(tmp_path: Path) -> None:
    write(tmp_path, "rubrics/faithful.toml", 'name = "faithful"\ndescription = "Only facts from the context."\n')
    write(
        tmp_path,
        "templates/short.j2",
        "{% block user %}{{ context }}\n{{ response }}\n{{ rubric.description }} PASS or FAIL?{% endblock %}",
    )
    path = write(
        tmp_path,
        "judges/faithful.toml",
        'name = "faithful"\nsetup = "passfail"\nrubric = "../rubrics/faithful.toml"\n'
        'template = "../templates/short.j2"\n',
    )
    judge = load_judge(path)
    assert judge.template_id == "short"
    messages = judge.render(Case(id="1", context="Open at 8.", output="8 am"))
    assert [m["role"] for m in messages] == ["user"]
    assert "<context>\nOpen at 8.\n</context>" in messages[0]["content"]
    assert "Only facts from the context." in messages[0]["content"]


def test_builtin_template_can_be_named(tmp_path: Path) -> None:
    judge = judge_from_dict(
        {"name": "p", "setup": "passfail", "description": "d", "template": "passfail-ref-v1", "reference": True},
        tmp_path,
    )
    assert judge.template_id == "passfail-ref-v1"


def test_criteria_and_additive_and_pairwise(tmp_path: Path) -> None:
    criteria = judge_from_dict(
        {
            "name": "support",
            "setup": "criteria",
            "description": "Reply quality",
            "scale": [1, 3],
            "criteria": {
                "correct": {"description": "right"},
                "helpful": {"description": "useful"},
                "tone": {"description": "polite", "levels": {"0": "rude", "1": "ok"}},
            },
        }
    )
    assert criteria.parser_config["criteria"] == {"correct": [1, 3], "helpful": [1, 3], "tone": [0, 1]}
    assert criteria.parse('Why.\n{"correct": 3, "helpful": 1, "tone": 1}').outcome == "ok"
    assert criteria.parse('Why.\n{"correct": 3, "helpful": 1, "tone": 2}').outcome == "unparsed"
    assert criteria.allowed() is None
    additive = judge_from_dict({"name": "list", "setup": "additive", "description": "d", "items": ["a", "b", "c"]})
    assert additive.allowed() == ("0", "1", "2", "3") and additive.parse("x\nTotal: 3").verdict == 3
    pair = judge_from_dict({"name": "pair", "setup": "pairwise", "description": "better"})
    assert pair.allowed() == ("A", "B", "C") and pair.parse("x [[C]]").verdict == "C"


def test_python_dicts_may_use_integer_level_keys() -> None:
    judge = judge_from_dict({"name": "s", "setup": "score", "description": "d", "levels": {0: "no", 1: "yes"}})
    assert judge.allowed() == ("0", "1")


def test_float_rescale(tmp_path: Path) -> None:
    judge = judge_from_dict(
        {
            "name": "r",
            "setup": "score",
            "description": "d",
            "marker": "Total rating:",
            "levels": {"1": "a", "2": "b", "3": "c", "4": "d"},
            "rescale_from": [0, 10],
        }
    )
    assert judge.parse("x\nTotal rating: 5").verdict == pytest.approx(2.5)
    assert judge.allowed() is None
    assert judge.json_schema()["properties"]["score"]["type"] == "number"


BAD = [
    ('name = "x"\nsetup = "vibes"\ndescription = "d"\n', "setup"),
    ('setup = "passfail"\ndescription = "d"\n', "name"),
    ('name = "x"\nsetup = "passfail"\ndescription = "d"\ntemprature = 0.2\n', "temprature"),
    ('name = "x"\nsetup = "passfail"\ndescription = "d"\ntemperature = -1\n', "temperature"),
    ('name = "x"\nsetup = "passfail"\n', "description"),
    ('name = "x"\nsetup = "score"\ndescription = "d"\n', "levels"),
    ('name = "x"\nsetup = "score"\ndescription = "d"\nlevels = { 1 = "a", 3 = "c" }\n', "levels"),
    ('name = "x"\nsetup = "score"\ndescription = "d"\nlevels = { one = "a" }\n', "levels"),
    ('name = "x"\nsetup = "score"\ndescription = "d"\nlevels = { 1 = "a", 2 = "b" }\nscale = [1, 5]\n', "scale"),
    (
        'name = "x"\nsetup = "score"\ndescription = "d"\nlevels = { 1 = "a", 2 = "b" }\nrescale_from = [10, 0]\n',
        "rescale_from",
    ),
    ('name = "x"\nsetup = "passfail"\ndescription = "d"\nmarker = "NOTE:"\n', "marker"),
    ('name = "x"\nsetup = "score"\ndescription = "d"\nlevels = { 1 = "a", 2 = "b" }\nmarker = "NOTE: "\n', "marker"),
    ('name = "x"\nsetup = "score"\ndescription = "d"\nlevels = { 1 = "a" }\n', "levels"),
    ('name = "x"\nsetup = "passfail"\ndescription = "d"\nlevels = { 1 = "a", 2 = "b" }\n', "levels"),
    ('name = "x"\nsetup = "additive"\ndescription = "d"\n', "items"),
    ('name = "x"\nsetup = "additive"\ndescription = "d"\nitems = []\n', "items"),
    ('name = "x"\nsetup = "criteria"\ndescription = "d"\n[criteria.tone]\ndescription = "t"\n', "criteria.tone"),
    (
        'name = "x"\nsetup = "criteria"\ndescription = "d"\nconstrained = true\n'
        '[criteria.tone]\ndescription = "t"\nlevels = { 1 = "a", 2 = "b" }\n',
        "constrained",
    ),
    ('name = "x"\nsetup = "passfail"\ndescription = "d"\ntemplate = "missing.j2"\n', "template"),
    ('name = "x"\nsetup = "passfail"\ndescription = "d"\nsolve_template = "solve-v1"\n', "solve_template"),
    ('name = "x"\nsetup = "passfail"\ndescription = "d"\n[rubric]\ndescription = "e"\n', "description"),
    ('name = "x"\nsetup = "passfail"\n[rubric]\ndescription = "d"\nlevel = { 1 = "a" }\n', "rubric.level"),
    (
        'name = "x"\nsetup = "passfail"\ndescription = "d"\n[[examples]]\nresponse = "r"\njudgment = "**PASS**"\n',
        "examples[0].judgment",
    ),
]


@pytest.mark.parametrize("text, field", BAD)
def test_bad_config_names_file_and_field(tmp_path: Path, text: str, field: str) -> None:
    path = write(tmp_path, "judge.toml", text)
    with pytest.raises(InputError) as caught:
        load_judge(path)
    message = str(caught.value)
    assert message.startswith(str(path)), message
    assert f"field '{field}'" in message, message


def test_file_level_errors(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="not found"):
        load_judge(tmp_path / "nope.toml")
    with pytest.raises(InputError, match=r"judge.toml.*invalid TOML"):
        load_judge(write(tmp_path, "judge.toml", 'name = "x\n'))
    with pytest.raises(InputError, match=r"latin1.toml.*UTF-8"):
        load_judge(write(tmp_path, "latin1.toml", 'name = "caf\xe9"\n'.encode("latin-1")))
    path = write(tmp_path, "j.toml", 'name = "x"\nsetup = "passfail"\nrubric = "rubric.toml"\n')
    with pytest.raises(InputError, match=r"rubric.toml: file not found"):
        load_judge(path)
    write(tmp_path, "rubric.toml", 'name = "x"\n')
    with pytest.raises(InputError, match=r"rubric.toml: field 'description'"):
        load_judge(path)


@pytest.mark.parametrize(
    "template, where",
    [
        ("{% block user %}{{ response }}{{ no_such_variable }}{% endblock %}", "no_such_variable"),
        ("{% block user %}{{ response }{% endblock %}", "line 1"),
        ("{{ response }}", "block user"),
    ],
)
def test_broken_user_template_fails_at_load(tmp_path: Path, template: str, where: str) -> None:
    write(tmp_path, "t.j2", template)
    with pytest.raises(InputError) as caught:
        judge_from_dict(
            {"name": "x", "setup": "passfail", "description": "d", "template": "t.j2"},
            tmp_path,
            source="eval.toml: judges[0]",
        )
    message = str(caught.value)
    assert "t.j2" in message
    assert where in message or where == "line 1" and "t.j2:1" in message


def test_broken_solve_template_is_blamed_on_solve_template(tmp_path: Path) -> None:
    write(tmp_path, "solve.j2", "{% block user %}{{ question }} {{ response }}{% endblock %}")
    with pytest.raises(InputError, match=r"field 'solve_template'.*solve.j2.*'response' is undefined"):
        judge_from_dict(
            {"name": "x", "setup": "passfail", "description": "d", "solve_first": True, "solve_template": "solve.j2"},
            tmp_path,
            source="j.toml",
        )


def test_eval_table_source_is_named(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"^eval.toml: judges\[2\]: field 'setup'"):
        judge_from_dict({"name": "x", "setup": "nope"}, tmp_path, source="eval.toml: judges[2]")


# --- the version hash -------------------------------------------------------------

BASE = {
    "name": "helpful",
    "setup": "score",
    "marker": "NOTE:",
    "model": "m1",
    "rubric": {"description": "Solves the problem.", "levels": {"1": "no", "2": "partly", "3": "yes"}},
}


def version(**changes) -> str:
    return judge_from_dict(BASE | changes).template_hash


def test_hash_is_stable_across_loads_and_files(tmp_path: Path) -> None:
    first = load_judge(write(tmp_path, "a.toml", SCORE_JUDGE)).template_hash
    second = load_judge(write(tmp_path, "b/other-name.toml", SCORE_JUDGE)).template_hash
    assert first == second
    assert version() == version()


def test_hash_is_the_same_in_another_process() -> None:
    code = (
        "import json, sys; from juge.judges import judge_from_dict; "
        "print(judge_from_dict(json.loads(sys.argv[1])).template_hash)"
    )
    for seed in ("1", "2"):
        out = subprocess.run(
            [sys.executable, "-c", code, json.dumps(BASE)],
            capture_output=True,
            text=True,
            check=True,
            env=os.environ | {"PYTHONHASHSEED": seed},
        )
        assert out.stdout.strip() == version()


def test_hash_ignores_the_model_options() -> None:
    assert version(model="m2", temperature=0.7, max_tokens=10, provider="openai") == version()


@pytest.mark.parametrize(
    "changes",
    [
        {"rubric": BASE["rubric"] | {"description": "Solves the problem fully."}},
        {"rubric": BASE["rubric"] | {"levels": {"1": "no", "2": "partly", "3": "yes!"}}},
        {"rubric": BASE["rubric"] | {"levels": {"1": "no", "2": "partly", "3": "yes", "4": "wow"}}},
        {"rubric": BASE["rubric"] | {"examples": [{"response": "r", "judgment": "Good.\nNOTE: 3"}]}},
        {"marker": "Total rating:"},
        {"reference": True},
        {"solve_first": True},
        {"structured": True},
        {"require_reason": False},
        {"setup": "score", "rescale_from": [0, 10]},
    ],
)
def test_hash_changes_with_rubric_template_or_parser(changes: dict) -> None:
    assert version(**changes) != version()


def test_hash_changes_when_the_template_file_changes(tmp_path: Path) -> None:
    template = write(tmp_path, "mine.j2", "{% block user %}{{ response }}\nRate it. {{ marker }} n{% endblock %}")
    before = judge_from_dict(BASE | {"template": "mine.j2"}, tmp_path).template_hash
    same = judge_from_dict(BASE | {"template": "mine.j2"}, tmp_path).template_hash
    template.write_text("{% block user %}{{ response }}\nRate it now. {{ marker }} n{% endblock %}")
    after = judge_from_dict(BASE | {"template": "mine.j2"}, tmp_path).template_hash
    assert before == same != after


def test_misspelt_required_key_names_the_key_its_line_and_the_likely_key(tmp_path: Path) -> None:
    """A misspelt required key is both unknown and missing: the key the user wrote is the one named."""
    path = write(tmp_path, "typo.toml", 'name = "x"\ndescription = "d"\n\nsetpu = "pairwise"\n')
    with pytest.raises(InputError) as caught:
        load_judge(path)
    err = caught.value
    assert (err.path, err.line, err.field) == (str(path), 4, "setpu")
    assert "'setup'" in (err.detail or "")
    # an unknown optional key keeps its line, and is suggested the key it is closest to
    path = write(tmp_path, "typo2.toml", 'name = "x"\nsetup = "passfail"\ndescription = "d"\nmodle = "m"\n')
    with pytest.raises(InputError) as caught:
        load_judge(path)
    assert (caught.value.line, caught.value.field) == (4, "modle") and "'model'" in (caught.value.detail or "")


def test_misspelt_required_key_in_an_eval_file(tmp_path: Path) -> None:
    from juge.config import load_eval

    write(tmp_path, "cases.jsonl", '{"id": "a", "question": "q", "output": "o"}\n')
    path = write(
        tmp_path,
        "eval.toml",
        'cases = "cases.jsonl"\n\n[[judges]]\nname = "x"\ndescription = "d"\nsetpu = "passfail"\n',
    )
    with pytest.raises(InputError) as caught:
        load_eval(path)
    assert (caught.value.line, caught.value.field) == (6, "judges[0].setpu")
    assert "'setup'" in (caught.value.detail or "")


@pytest.mark.parametrize("value", ['"yes"', '"false"', "1"])
def test_a_boolean_key_takes_only_true_or_false(tmp_path: Path, value: str) -> None:
    path = write(tmp_path, "judge.toml", f'name = "x"\nsetup = "passfail"\ndescription = "d"\nreference = {value}\n')
    with pytest.raises(InputError) as caught:
        load_judge(path)
    assert (caught.value.path, caught.value.line, caught.value.field) == (str(path), 4, "reference")
    assert load_judge(
        write(tmp_path, "ok.toml", 'name = "x"\nsetup = "passfail"\ndescription = "d"\nreference = true\n')
    )


def test_a_missing_judge_file_is_named_where_the_eval_file_gives_it(tmp_path: Path) -> None:
    """QA2: `file = "pff.toml"` said only '.../pff.toml: file not found', not the eval file's line."""
    from juge.config import load_eval

    write(tmp_path, "cases.jsonl", '{"id": "a", "question": "q", "output": "o"}\n')
    path = write(tmp_path, "eval.toml", 'cases = "cases.jsonl"\n\n[[judges]]\nfile = "pff.toml"\n')
    with pytest.raises(InputError) as caught:
        load_eval(path)
    assert (Path(caught.value.path).name, caught.value.line, caught.value.field) == ("eval.toml", 4, "judges[0].file")
