"""The docstring examples of the public API are runnable: every module that defines a name in
`juge.__all__` runs its `>>>` examples, from an empty folder, and they print what they say."""

from __future__ import annotations

import doctest
import importlib
import inspect

import pytest

import juge


def _public_modules() -> list[str]:
    names = set()
    for name in juge.__all__:
        obj = getattr(juge, name)
        module = inspect.getmodule(obj)
        if module is not None and module.__name__.startswith("juge"):
            names.add(module.__name__)
    return sorted(names | {"juge"})


def test_the_api_modules_have_examples() -> None:
    # juge.api only re-exports: the functions and their examples live in the feature packages' api modules
    assert "juge.calibration.api" in _public_modules()
    assert doctest.DocTestFinder().find(importlib.import_module("juge.calibration.api"))


@pytest.mark.parametrize("module", _public_modules())
def test_docstring_examples_run(module: str, tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)  # examples that write files write them here
    result = doctest.testmod(
        importlib.import_module(module), optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, report=True
    )
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples in {module} failed (printed above)"
