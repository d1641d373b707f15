"""LLM judges in a pytest suite, with juge's plugin (installed with juge: the `juge_judge` fixture).

    pytest examples/pytest                       # the judge calls OpenAI; answers are cached in .juge/juge.db
    pytest examples/pytest --juge-db ci.db       # another store

Each call goes through juge's engine, cache and store, as `juge run` does: a re-run with the same prompts costs
nothing, and `juge show RUN_ID` or `juge report --run RUN_ID` open what the test judged.
"""

from pathlib import Path

from juge.pytest_plugin import assert_judged

HERE = Path(__file__).parent


def test_support_replies_pass_the_evals_gate(juge_judge):
    run = juge_judge(HERE / "eval.toml")
    assert_judged(run)  # the eval's [gate]: min_pass_rate = 0.75


def test_support_replies_lower_bound(juge_judge):
    run = juge_judge(HERE / "eval.toml")
    assert_judged(run, min_pass_rate_lower=0.6)  # the pass rate's 95 % lower bound (exact interval)


def test_a_reply_written_in_the_test(juge_judge):
    run = juge_judge(
        cases=[
            {
                "id": "sunday",
                "question": "Are you open on Sunday?",
                "context": "Crumb & Co. bakery. Open Tue-Sat 7:00-18:00, Sun 8:00-13:00, closed Mon.",
                "output": "Yes, on Sundays from 8:00 to 13:00.",
            }
        ],
        judge=HERE / "faithful.toml",
    )
    assert_judged(run)  # no gate given and none in a file: every case must pass
