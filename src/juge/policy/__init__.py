"""Judge policies: derive on dev, test once on holdout, route new items, audit.

``juge.policy.derive(...)`` and ``juge.policy.test(policy, ...)`` are the Python API
(:func:`juge.policy.api.policy_derive` and :func:`juge.policy.api.policy_test`, typed keyword parameters);
routing and the audit are ``juge.route(policy, ...)`` and ``juge.audit_sample(policy, run)``. They load on first
use: the package's small modules (the decision and status rules) are read by the result models.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from juge.policy.api import policy_derive as derive
    from juge.policy.api import policy_test as test

__all__ = ["derive", "test"]
_API = {"derive": "policy_derive", "test": "policy_test"}


def __getattr__(name: str) -> Any:
    if name in _API:
        from juge.policy import api

        return getattr(api, _API[name])
    raise AttributeError(f"module 'juge.policy' has no attribute {name!r}")
