"""`juge probe injection` as a function: the judge (a judge file, or one of an eval file's judges) and the
provider a user names, the engine options, the store; the probe itself is :mod:`juge.probes.injection`
(imported on call: numpy and scipy)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from juge.errors import InputError

if TYPE_CHECKING:
    from rich.console import Console

    from juge.probes.injection import ProbeRun


def _probe_judge(eval_file: Path | None, judge: str, model: str | None) -> tuple[Any, Any, Path, Any]:
    """(judge, its provider spec or None, base folder, the eval config or None), from an eval file or a judge file."""
    from juge.judges import load_judge
    from juge.runs.providers import judge_provider_spec

    config = None
    if eval_file is not None:
        from juge.config import load_eval

        config = load_eval(eval_file)
        chosen = [j for j in config.judges if j.name == judge]
        if not chosen:
            names = ", ".join(j.name for j in config.judges) or "none"
            raise InputError(f"{eval_file}: no judge named {judge!r} (its judges: {names})")
        found, base = chosen[0], config.base_dir
    else:
        path = Path(judge)
        if not path.is_file():
            raise InputError(f"{path}: judge file not found (give a judge TOML file, or --eval FILE with a judge name)")
        found, base = load_judge(path), path.parent
    if model is not None:
        found = replace(found, model=model)
    return found, judge_provider_spec(found), base, config


def probe_injection(
    judge: str | Path,
    *,
    eval_file: str | Path | None = None,
    provider: str | None = None,
    model: str | None = None,
    base_url: str | None = None,
    api_key_env: str | None = None,
    limit: int | None = None,
    kinds: Sequence[str] = (),
    concurrency: int | None = None,
    resume: bool = True,
    progress: bool = False,
    db: str | Path | None = None,
    resamples: int = 2000,
    seed: int = 0,
    console: Console | None = None,
) -> ProbeRun:
    """The injection probe (``juge probe injection``): how often text injected into the worse answer moves a
    judge's right verdict. ``judge`` is a judge file, or with ``eval_file`` the name of one of its judges;
    ``provider``, ``model``, ``base_url`` and ``api_key_env`` override its files. Every call goes through
    the engine into the store ``db`` as a run (resumed when ``resume``). Returns the run with its :class:`ProbeResult` (``.result``)."""
    from juge.arguments import refuse_text
    from juge.config import provider_override
    from juge.probes.injection import load_items, load_kinds, run_probe
    from juge.runs.plan import engine_options
    from juge.runs.providers import Providers
    from juge.store import DEFAULT_DB, open_store

    refuse_text("kinds", kinds, "list")
    found, own_spec, base_dir, config = _probe_judge(
        Path(eval_file) if eval_file is not None else None, str(judge), model
    )
    items = load_items()[:limit]
    all_kinds = load_kinds()
    chosen = list(all_kinds)
    if kinds:
        unknown = sorted(set(kinds) - {k.kind for k in all_kinds})
        if unknown:
            raise InputError(
                f"--kind: unknown injection kind(s) {', '.join(unknown)}; known: {', '.join(k.kind for k in all_kinds)}"
            )
        chosen = [k for k in all_kinds if k.kind in kinds]
    override = provider_override(provider, base_url, api_key_env)
    default = config.spec.provider if config is not None else None
    spec = override or own_spec or default
    if spec is None:
        raise InputError(f"judge {found.name!r} names no provider: give --provider (or use --eval with a [provider])")
    provider_obj = Providers(default or spec, base_dir).get(spec)
    options = engine_options(config, concurrency=concurrency, progress=progress)
    provider_key = provider_obj.cache_identity
    with open_store(db if db is not None else DEFAULT_DB) as store:  # a SQLite file (made) or a PostgreSQL URL
        return run_probe(
            found,
            provider_obj,
            store,
            options,
            items=items,
            kinds=chosen,
            provider_key=provider_key,
            resume=resume,
            console=console,
            n_resamples=resamples,
            seed=seed,
        )
