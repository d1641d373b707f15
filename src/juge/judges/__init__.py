"""Judges: rubric + template + strict parser, versioned by the hash of all three."""

from juge.judges.judge import SETUPS, Judge, judge_from_dict, load_judge
from juge.judges.pairwise import as_agreement_label, combine_orders, to_fixed_order
from juge.judges.parsers import (
    ParseResult,
    parse_additive,
    parse_criteria,
    parse_pairwise,
    parse_passfail,
    parse_score,
    parse_structured,
)
from juge.judges.render import builtin_templates, neutralise
from juge.judges.rubric import Criterion, Example, Rubric, load_rubric

__all__ = [
    "SETUPS",
    "Criterion",
    "Example",
    "Judge",
    "ParseResult",
    "Rubric",
    "as_agreement_label",
    "builtin_templates",
    "combine_orders",
    "judge_from_dict",
    "load_judge",
    "load_rubric",
    "neutralise",
    "parse_additive",
    "parse_criteria",
    "parse_pairwise",
    "parse_passfail",
    "parse_score",
    "parse_structured",
    "to_fixed_order",
]
