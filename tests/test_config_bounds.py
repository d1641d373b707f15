"""Engine and price options: finite, within documented bounds, or exit 2 naming file, line and field."""

from __future__ import annotations

import pytest

from juge.config import load_eval
from juge.errors import InputError
from juge.testing.mockserver import MockConfig, _parse_args


def eval_with(tmp_path, body: str):
    (tmp_path / "cases.jsonl").write_text('{"id": "a", "question": "q", "output": "x"}\n', encoding="utf-8")
    path = tmp_path / "eval.toml"
    path.write_text('cases = "cases.jsonl"\n[provider]\nname = "scripted"\n' + body, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "body, field",
    [
        ("[engine]\nbackoff = 1e308\n", "engine.backoff"),
        ("[engine]\nmax_backoff = inf\n", "engine.max_backoff"),
        ("[engine]\ntimeout = inf\n", "engine.timeout"),
        ("[engine]\ntimeout = nan\n", "engine.timeout"),
        ("[engine]\ntimeout = 86400\n", "engine.timeout"),
        ("[engine]\nbackoff = -1\n", "engine.backoff"),
        ("[engine]\nbatch_poll = inf\n", "engine.batch_poll"),
        ('[prices]\n"m1" = { input = -0.5, output = 1.5 }\n', "prices.m1.input"),
        ('[prices]\n"m1" = { input = nan, output = 1.5 }\n', "prices.m1.input"),
        ('[prices]\n"m1" = { input = 0.5, output = inf }\n', "prices.m1.output"),
        ('[prices]\n"m1" = { input = 0.5, output = 1e9 }\n', "prices.m1.output"),
        ('[prices]\n"m1" = { input = 0.5, ouput = 1.5 }\n', "prices.m1.ouput"),
        ('[prices]\n"m1" = { input = 0.5 }\n', "prices"),
        ("[gate]\nmin_score = nan\n", "gate.min_score"),
    ],
)
def test_out_of_bounds_options_name_file_line_and_field(tmp_path, body: str, field: str) -> None:
    path = eval_with(tmp_path, body)
    with pytest.raises(InputError) as exc:
        load_eval(path)
    assert exc.value.path == str(path) and exc.value.field == field
    if field != "prices":
        assert exc.value.line == 5


def test_bounds_themselves_are_accepted(tmp_path) -> None:
    body = (
        '[engine]\ntimeout = 3600\nbackoff = 0\nmax_backoff = 3600\n[prices]\n"m1" = { input = 0, output = 1000000 }\n'
    )
    config = load_eval(eval_with(tmp_path, body))
    assert config.spec.engine.timeout == 3600 and config.spec.prices["m1"]["output"] == 1000000


@pytest.mark.parametrize(
    "argv",
    [
        ["--fault", "rate_limit=nan"],
        ["--fault", "rate_limit=-0.1"],
        ["--fault", "rate_limit=inf"],
        ["--max-concurrency", "-1"],
        ["--max-concurrency", "0"],
        ["--latency", "nan"],
        ["--latency", "inf"],
    ],
)
def test_the_mock_server_refuses_bad_options_cleanly(argv, capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        _parse_args(argv)
    assert exc.value.code == 2
    assert "error:" in capsys.readouterr().err


def test_the_mock_config_refuses_a_nan_rate() -> None:
    with pytest.raises(ValueError):
        MockConfig(faults={"rate_limit": float("nan")})
