"""The one meaning of "better" per judge kind (calibrate's headline, policy derive's choice, tune's ranking)."""

from juge.calibration.better import Merit, best, catches_enough, measure, order


def test_the_measure_of_each_kind():
    assert (measure("passfail"), measure("score"), measure("pairwise")) == ("kappa", "weighted_kappa", "agreement")


def test_failures_caught_against_the_people_bar_as_printed():
    assert catches_enough(0.8, 0.8) and catches_enough(0.8004, 0.8) and not catches_enough(0.79, 0.8)
    assert catches_enough(None, 0.5)  # people said no FAIL: nothing to catch
    assert catches_enough(0.1, None) and not catches_enough(0.0, None)  # no bar: at least one failure
    assert not catches_enough(0.0, 0.0)  # a judge that catches nothing never reaches the bar


def test_kappa_decides_and_a_judge_that_misses_failures_never_wins():
    lazy = Merit(value=0.25, agreement=0.875, caught=1 / 6, bar=1.0, passfail=True)
    careful = Merit(value=0.49, agreement=0.80, caught=1.0, bar=1.0, passfail=True)
    always_pass = Merit(value=0.0, agreement=0.85, caught=0.0, bar=1.0, passfail=True)
    assert best([lazy, always_pass, careful]) == 2
    # a higher kappa does not help a candidate below the bar
    sharp_but_blind = Merit(value=0.9, agreement=0.95, caught=0.5, bar=0.8, passfail=True)
    enough = Merit(value=0.6, agreement=0.85, caught=0.8, bar=0.8, passfail=True)
    assert order([sharp_but_blind, enough]) == [1, 0]
    # nobody reaches the bar: one that catches some failures still beats one that catches none
    poor = Merit(value=-0.03, agreement=0.7, caught=1 / 6, bar=1.0, passfail=True)
    assert best([always_pass, poor]) == 1


def test_ties_go_to_agreement_then_to_the_order_given():
    a, b = Merit(value=0.7004, agreement=0.8), Merit(value=0.7001, agreement=0.9)
    assert best([a, b]) == 1  # equal kappa as printed (0.700): agreement decides
    assert order([Merit(value=0.5, agreement=0.5)] * 3) == [0, 1, 2]
    assert order([Merit(None), Merit(0.1)]) == [1, 0]  # an undefined figure ranks last
