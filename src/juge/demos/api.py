"""`juge demo`: the calibration study on the embedded MT-Bench sample, its report, and with ``live`` the local
judge's own calls. It sits above reports (it writes one) and calls a model, so it is not in calibration/."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from juge.calibration.api import Progress, with_headline
from juge.calibration.results import Calibration
from juge.errors import InputError

if TYPE_CHECKING:
    from rich.console import Console


def demo(
    out: str | Path | None = None,
    *,
    split: Literal["dev", "all"] = "dev",
    resamples: int = 2000,
    seed: int = 0,
    live: bool = False,
    limit: int = 40,
    db: str | Path | None = None,
    progress: Progress | None = None,
    console: Console | None = None,
) -> Calibration:
    """The calibration study on the embedded MT-Bench sample (``juge demo``): no network, no key.

    With ``out``, writes ``out/calibration.json`` and ``out/report.html``, and the sample's own
    ``out/items.jsonl`` and ``out/judgments.jsonl`` (the format ``juge calibrate`` reads). ``live`` also runs the
    local judge (needs ``juge[local]``) on ``limit`` pairs, storing its calls in ``db`` (default
    ``out/juge.db``); with ``console``, the local judge's progress and a line about its run go there.

    >>> import juge
    >>> juge.demo(resamples=100).n_votes
    404
    """
    from juge.calibration.demo import demo_file, study_of_demo
    from juge.calibration.pairwise import Bootstrap
    from juge.files import write_atomic, write_json
    from juge.reports import write_report

    if split not in ("dev", "all"):
        raise InputError(f"--split must be dev or all (holdout is kept for the final test), got {split!r}")
    if db is not None and not live:
        raise InputError("--db is used only with --live (it stores the local judge's calls)")
    if live and out is None and db is None:
        raise InputError("live: give out (or db) for the local judge's store")
    extra: list[Any] = []
    if live:
        from juge.demos.live import live_demo_run
        from juge.providers.base import ProviderError

        store_path = Path(db) if db is not None else Path(out or ".") / "juge.db"
        try:
            live_run = live_demo_run(
                store_path, split=split, limit=limit, seed=seed, console=console, progress=console is not None
            )
        except ProviderError as exc:
            raise InputError(f"--live: {exc}") from None
        extra = live_run.judgments
        if console is not None:
            calls, cached = live_run.stats.get("calls", 0), live_run.stats.get("cache_hits", 0)
            console.print(
                f"local judge: run {live_run.run_id}{' (resumed)' if live_run.resumed else ''} in {store_path}: "
                f"{len(extra)} judgments, {calls} model calls, {cached} answered from the cache "
                f"(juge show {live_run.run_id} --db {store_path})",
                highlight=False,
                markup=False,
                soft_wrap=True,
            )
    boot = Bootstrap(n_resamples=resamples, seed=seed)
    study = with_headline(study_of_demo(split=split, boot=boot, progress=progress, extra_judgments=extra))
    if out is not None:
        json_path = write_json(Path(out) / "calibration.json", study.to_dict())
        write_report(study, Path(out) / "report.html", "html", items=demo_file("items.jsonl"), source=json_path.name)
        # The inputs beside the results: the next-step hint runs `juge calibrate` on them, and they show the format.
        for name in ("items.jsonl", "judgments.jsonl"):
            write_atomic(Path(out) / name, demo_file(name).read_bytes())
    return study
