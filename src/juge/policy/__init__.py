"""Judge policies: derive on dev, test once on holdout, route new items, audit.

``juge.policy.derive(...)`` and ``juge.policy.test(policy, ...)`` are the Python API (see
:func:`juge.api.policy_derive` and :func:`juge.api.policy_test`); routing and the audit are
``juge.route(policy, ...)`` and ``juge.audit_sample(policy, run)``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from juge.results import HoldoutTest, PolicyResult


def derive(**kwargs: Any) -> PolicyResult:
    """Derive a judge policy on the dev split: :func:`juge.api.policy_derive`."""
    from juge.api import policy_derive

    return policy_derive(**kwargs)


def test(policy: Any, **kwargs: Any) -> HoldoutTest:
    """Test a policy once on the holdout split: :func:`juge.api.policy_test`."""
    from juge.api import policy_test

    return policy_test(policy, **kwargs)


test.__test__ = False  # type: ignore[attr-defined]  # not a pytest test
__all__ = ["derive", "test"]
