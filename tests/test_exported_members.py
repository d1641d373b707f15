"""`juge.__all__` is juge's public API (as httpx's test_exported_members.py pins httpx's): every name it lists
resolves, every public name `import juge` offers is listed, and so is the model of every result file juge writes
and every error class a caller catches."""

from __future__ import annotations

from types import ModuleType

import juge
from juge.errors import Fault, InputError, JugeError
from juge.label.results import LABEL_RESULTS
from juge.results import LISTS, POLICY_FILES, RESULTS

# What juge/__init__.py imports to work (not part of the API).
_IMPLEMENTATION = {"annotations", "importlib", "version", "PackageNotFoundError", "TYPE_CHECKING", "Any"}


def test_all_is_every_public_name_sorted_once() -> None:
    assert juge.__all__ == sorted(juge.__all__, key=lambda n: (n.startswith("_"), n.casefold()))
    assert len(set(juge.__all__)) == len(juge.__all__)
    defined = {
        name
        for name, value in vars(juge).items()
        if not name.startswith("_") and name not in _IMPLEMENTATION and not isinstance(value, ModuleType)
    }
    offered = defined | set(juge._LAZY) | {"policy", "__version__"}  # names imported on first use
    assert set(juge.__all__) == offered


def test_every_listed_name_resolves() -> None:
    for name in juge.__all__:
        assert getattr(juge, name) is not None, name
    assert isinstance(juge.policy, ModuleType)


def test_every_result_model_and_error_is_exported() -> None:
    models = {m.__name__ for m in (*RESULTS, *POLICY_FILES, *LABEL_RESULTS, *LISTS.values())}
    assert models <= set(juge.__all__), sorted(models - set(juge.__all__))
    assert {"JugeError", "InputError", "Fault", "RunNotFound"} <= set(juge.__all__)
    assert issubclass(juge.RunNotFound, InputError) and {juge.InputError, juge.Fault} == {InputError, Fault}
    assert juge.JugeError is JugeError
