"""The Estimate record: JSON shape, formatting, NaN handling."""

import json
import math

import numpy as np
import pytest
from pydantic import ValidationError

from juge.stats import Estimate


def test_to_dict_and_fmt():
    est = Estimate(0.71234, 0.65, 0.7701, n=155)
    assert est.to_dict() == {"value": 0.71234, "low": 0.65, "high": 0.7701, "n": 155}
    assert est.fmt() == "0.712 [0.650, 0.770] n=155"
    assert est.fmt(digits=1) == "0.7 [0.7, 0.8] n=155"


def test_undefined_value_never_produces_nan():
    est = Estimate(math.nan, 0.1, 0.2, n=0)
    assert est.value is None and est.low is None and est.high is None
    assert json.dumps(est.to_dict()) == '{"value": null, "low": null, "high": null, "n": 0}'
    assert est.fmt() == "n/a n=0"


def test_missing_interval_is_formatted_without_brackets():
    est = Estimate(0.5, math.inf, None, n=3)
    assert est.low is None and est.fmt() == "0.500 n=3"


def test_numpy_scalars_become_plain_python_types():
    est = Estimate(np.float64(0.25), np.float32(0.125), np.float64(0.5), n=np.int64(8))
    assert type(est.value) is float and type(est.n) is int
    json.dumps(est.to_dict())


def test_frozen():
    with pytest.raises(ValidationError):
        Estimate(0.1, None, None, n=1).value = 0.2
