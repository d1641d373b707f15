"""The policy feature's API: derive a policy on dev, test it once on holdout, route new items, draw the weekly
audit. ``juge.policy.derive`` / ``juge.policy.test`` and ``juge.route`` / ``juge.audit_sample`` are these functions
(``juge.api`` re-exports them); each returns a typed result and never prints.
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from juge.errors import InputError
from juge.policy.results import AuditSample, HoldoutTest, PlanResult, PolicyResult, PolicyStatusReport, RouteResult
from juge.runs.api import _in_running_loop, _run_id
from juge.runs.results import Run

if TYPE_CHECKING:
    from juge.calibration.api import Rows
    from juge.calibration.source import StudySource


def policy_derive(
    *,
    items: Rows | None = None,
    judgments: Rows | Sequence[str | Path] | None = None,
    run: str | None = None,
    labels: Rows | None = None,
    db: str | Path | None = None,
    mapping: Mapping[str, str] | None = None,
    labels_map: Mapping[str, str] | None = None,
    kind: Literal["pairwise", "passfail", "score"] | None = None,
    split: str = "dev",
    force_split: bool = False,
    margin: float = 0.05,
    rule: str = "margin",
    target: float = 0.9,
    confidence: float = 0.9,
    min_recall: float | None = None,
    threshold: float | None = None,
    judges: Sequence[str] | None = None,
    audit_n: int = 10,
    resamples: int = 2000,
    seed: int = 0,
    source: StudySource | None = None,
    cascade: str | Sequence[str] | None = None,
    prices: Mapping[str, Mapping[str, float]] | str | Path | None = None,
    minutes_per_label: float | None = None,
    minute_price: float | None = None,
    choose: bool = False,
) -> PolicyResult:
    """Derive a judge policy on the dev split (``juge policy derive``; ``juge.policy.derive``).

    For a pairwise, PASS/FAIL or score judge (``kind``; default: guessed from the items and labels).
    Which judge, which prompt per category, what goes to a person; ``to_dict()`` (or ``save(path)``) is the
    policy file that ``juge.policy.test`` and ``juge.route`` read (its ``policy_hash`` covers every key).
    ``split="holdout"`` needs ``force_split`` (the holdout is kept for the one test). ``min_recall`` and
    ``threshold`` are for PASS/FAIL and score judges, ``target`` and ``confidence`` for ``rule="guarantee"``.
    What the readers warned about the inputs is in ``.input_warnings`` and ``.input_notices``.

    Args:
        items: the items (a JSONL/CSV path, a DataFrame or rows); default with ``run``: the run's cases.
        judgments: recorded judge calls (paths, a DataFrame or rows), or None with ``run``.
        run: a stored run whose judgments (and, without ``items``, cases) are read.
        labels: human labels in a separate table (they replace the votes the items carry).
        db: the store ``run`` is read from (a SQLite file or a ``postgresql://`` URL).
        mapping: columns of ``items`` as juge's fields (``--map``).
        labels_map: columns of ``labels`` as juge's fields (``--labels-map``).
        kind: the judge kind (pairwise, passfail, score); None guesses it from the items and labels.
        split: the split the policy is derived on.
        force_split: derive on ``split="holdout"`` anyway (then test on another split).
        margin: how far judge-vs-person agreement may fall below person-vs-person.
        rule: ``margin``, ``lower-bound`` (stricter) or ``guarantee`` (route by confidence, pairs).
        target: ``rule="guarantee"``: the agreement with the majority required on judged items.
        confidence: ``rule="guarantee"``: the confidence level of the guarantee.
        min_recall: PASS/FAIL judges: the share of human FAILs the judge must catch to decide a category.
        threshold: score judges: a case passes at this score or above (None: chosen on dev from the labels).
        judges: candidate judges (names or ``judge/template``); None: every judge in the judgments.
        audit_n: decisions a person reads each week (rule 5).
        resamples: bootstrap resamples of every interval.
        seed: seed of the bootstrap.
        source: the inputs as one :class:`~juge.calibration.source.StudySource`, with every shared input option
            (``--scale``, ``--missing``, ``--label-cols``, ...), instead of ``items`` ... ``labels_map``.
        cascade: judge names, cheapest first (``"chat-small,chat-strong"`` or a list): each stage decides the
            items it may with a confidence threshold that keeps agreement with the majority at ``target`` with
            probability ``confidence``; the rest go to the next stage, then to a person (pairwise judges).
            Every configuration considered (each judge alone, each prefix, the cascade) is measured on dev and
            the cheapest within noise of the best is recorded (``cascade.configurations``, ``cascade.choice``).
        prices: with ``cascade``: US$ per million tokens by model name prefix (``{"gpt-6-luna": {"input":
            0.15, "output": 0.6}}``), or a TOML file with a ``[prices]`` table (an eval file will do); kept in
            the policy, and used by ``policy_test`` when it is given none.
        minutes_per_label: with ``cascade``: person-minutes one label takes, for the minutes saved (default
            1.0).
        minute_price: with ``cascade``: US$ one person-minute costs; the choice then ranks each configuration by
            its calls plus its people's minutes (default: by its calls alone).
        choose: with ``cascade``: the policy routes with the configuration chosen on dev (derived again on the
            same dev data with its stages; ``cascade.configurations`` and ``cascade.choice`` are the first
            derivation's, ``choice.given`` the cascade given) instead of the cascade as given.

    >>> import juge
    >>> p = juge.policy.derive(items=juge.demo_path("items.jsonl"),
    ...                        judgments=juge.demo_path("judgments.jsonl"), resamples=100)
    >>> p.judge, p.judge_decides("coding")
    ('chat-strong/pair-v2', False)
    """
    from juge.calibration.pairwise import Bootstrap
    from juge.policy.cascade import parse_stages
    from juge.policy.derivation import CHOOSE_NEEDS_CASCADE, derive_any_policy
    from juge.policy.inputs import policy_study, weighs_labels

    if split == "holdout" and not force_split:
        raise InputError(
            "--split holdout: the holdout split is kept for the one final `juge policy test`; derive "
            "on dev (the default), or pass --force-split to derive on holdout and test on another split"
        )
    for name, value in (("--target", target), ("--confidence", confidence)):
        if not 0 < value < 1:
            raise InputError(f"{name} must be a share strictly between 0 and 1 (e.g. 0.9), got {value:g}")
    if resamples < 1:
        raise InputError("--resamples must be at least 1")
    if choose and cascade is None:
        raise InputError(CHOOSE_NEEDS_CASCADE)
    prices, minutes_per_label = cost_inputs(prices, minutes_per_label)
    if cascade is None and (prices or minutes_per_label is not None or minute_price is not None):
        raise InputError(
            "--prices, --minutes-per-label and --minute-price price a cascade's configurations: give --cascade too"
        )
    if minute_price is not None and not (0 <= minute_price <= MAX_MINUTE_PRICE):
        raise InputError(
            f"--minute-price must be US$ per person-minute, 0 to {MAX_MINUTE_PRICE:,.0f}, got {minute_price:g}"
        )
    study = policy_study(
        items=items, judgments=judgments, run=run, labels=labels, db=db, mapping=mapping, labels_map=labels_map,
        kind=kind, source=source, weighable=weighs_labels(rule, cascade),
        command="juge policy derive" + (" --cascade" if cascade else f" --rule {rule}" if rule == "guarantee" else ""),
    )  # fmt: skip
    policy = derive_any_policy(
        study.data,
        split=split,
        margin=margin,
        rule=rule,
        target=target,
        confidence=confidence,
        min_recall=min_recall,
        threshold=threshold,
        judges=judges,
        audit_n=audit_n,
        boot=Bootstrap(n_resamples=resamples, seed=seed, item_weights=study.item_weights),
        cascade=None if cascade is None else parse_stages(cascade),
        prices=prices,
        minutes_per_label=minutes_per_label,
        minute_price=minute_price,
        choose=choose,
        weighting=study.weighting,
    )
    run_id = run if run is not None else source.run if source is not None else None
    if run_id is not None:  # the run's config knows the judge's provider, rubric and parser; the calls do not
        from juge.policy.identity import with_run_identity

        policy = with_run_identity(policy, run_id, db if db is not None else source.db if source else None)
    result = PolicyResult.model_validate(policy)
    result._input_warnings, result._input_notices = study.warnings, study.notices
    return result


def policy_test(
    policy: PolicyResult | Mapping[str, Any] | str | Path,
    *,
    items: Rows | None = None,
    judgments: Rows | Sequence[str | Path] | None = None,
    run: str | None = None,
    labels: Rows | None = None,
    db: str | Path | None = None,
    mapping: Mapping[str, str] | None = None,
    labels_map: Mapping[str, str] | None = None,
    split: str = "holdout",
    force: bool = False,
    json_path: str | Path | None = None,
    resamples: int = 2000,
    seed: int = 0,
    source: StudySource | None = None,
    prices: Mapping[str, Mapping[str, float]] | str | Path | None = None,
    minutes_per_label: float | None = None,
) -> HoldoutTest:
    """Test a policy once on the held-out split (``juge policy test``; ``juge.policy.test``).

    The use is recorded in ``db``, in this machine's holdout registry and, when ``policy`` is a file, in the
    file (``holdout_tests``); a second test of the same items is refused unless ``force``. ``json_path``: also
    write the result there; the files are written only once the test is recorded, so nothing is half-written.
    The result's ``status`` (``held``, ``not held``, ``untested``) is also written into a policy file.

    Args:
        policy: the policy file (the test is recorded in it), or a PolicyResult or its dict.
        items: the items (a JSONL/CSV path, a DataFrame or rows); default with ``run``: the run's cases.
        judgments: recorded judge calls (paths, a DataFrame or rows), or None with ``run``.
        run: a stored run whose judgments (and, without ``items``, cases) are read.
        labels: human labels in a separate table (they replace the votes the items carry).
        db: the store the test is recorded in (and ``run`` read from).
        mapping: columns of ``items`` as juge's fields (``--map``).
        labels_map: columns of ``labels`` as juge's fields (``--labels-map``).
        split: the held-out split.
        force: test items that were tested before (the result and the records say FORCED).
        json_path: also write the result there (only with a policy file).
        resamples: bootstrap resamples of every interval.
        seed: seed of the bootstrap.
        source: the inputs as one :class:`~juge.calibration.source.StudySource` (as for ``policy_derive``); its
            ``db`` is the store the test is recorded in when ``db`` is not given.
        prices: a cascade's prices, US$ per million tokens by model name prefix (``{"gpt-6-luna": {"input":
            0.15, "output": 0.6}}``), or a TOML file with a ``[prices]`` table (an eval file will do); models
            in neither this nor the built-in table leave the cost in tokens (each configuration's US$ cost is
            then None, with a warning). Default: the prices the policy was derived with.
        minutes_per_label: person-minutes one label takes, for the minutes saved (default: the policy's, 1.0).
    """
    from juge.calibration.pairwise import Bootstrap
    from juge.files import writable
    from juge.policy.holdout import run_holdout_test, test_policy
    from juge.policy.inputs import load_policy, policy_study, weighs_labels
    from juge.store import open_store

    if resamples < 1:
        raise InputError("--resamples must be at least 1")
    prices, minutes_per_label = cost_inputs(prices, minutes_per_label)
    if source is not None and db is None:
        db = source.db  # the store the test is recorded in is the one the inputs name
    document = load_policy(policy)  # a bad policy file is named before the data is read
    study = policy_study(
        items=items, judgments=judgments, run=run, labels=labels, db=db, mapping=mapping, labels_map=labels_map,
        kind=document.judge_kind, source=source, command="juge policy test",
        weighable=weighs_labels(document.rule, document.cascade),
    )  # fmt: skip
    boot = Bootstrap(n_resamples=resamples, seed=seed, item_weights=study.item_weights)
    if isinstance(policy, str | Path):  # checked before the store is opened (made): test_policy stages them
        writable(Path(policy), "--policy")
        writable(None if json_path is None else Path(json_path), "--json")
    with open_store(db) as store:
        if isinstance(policy, str | Path):
            result = test_policy(
                policy,
                study.data,
                store,
                split=split,
                force=force,
                boot=boot,
                json_path=json_path,
                prices=prices,
                minutes_per_label=minutes_per_label,
                weighting=study.weighting,
            )
        else:
            if json_path is not None:
                raise InputError("json_path: give the policy as a file (the test is recorded in it) or save the result")
            result = run_holdout_test(
                document, study.data, store, split=split, force=force, boot=boot, prices=prices,
                minutes_per_label=minutes_per_label, weighting=study.weighting,
            )  # fmt: skip
    test = HoldoutTest.model_validate(result)
    test._input_warnings, test._input_notices = study.warnings, study.notices
    return test


MAX_PLAN_FACTOR = 1000.0  # juge plan searches up to this many times the current items

# Finite bounds far above any real figure: a count of items times 1e308 minutes (or their product with 1e308 US$
# a minute) is infinite, and a policy file holding Infinity is not JSON.
MAX_MINUTES_PER_LABEL = 10_080.0  # a week
MAX_MINUTE_PRICE = 1_000_000.0  # US$ a person-minute


def cost_inputs(
    prices: Mapping[str, Mapping[str, float]] | str | Path | None, minutes_per_label: float | None
) -> tuple[Mapping[str, Mapping[str, float]] | None, float | None]:
    """``--prices`` read (a TOML file's ``[prices]`` table) and ``--minutes-per-label`` checked, for derive and test."""
    from juge.policy.cascade import read_prices

    if minutes_per_label is not None and not (0 <= minutes_per_label <= MAX_MINUTES_PER_LABEL):
        raise InputError(
            f"--minutes-per-label must be a number of minutes, 0 to {MAX_MINUTES_PER_LABEL:,.0f}, "
            f"got {minutes_per_label:g}"
        )
    return (read_prices(prices) if isinstance(prices, str | Path) else prices), minutes_per_label


policy_test.__test__ = False  # type: ignore[attr-defined]  # an API function, not a test for pytest


def route(
    policy: PolicyResult | Mapping[str, Any] | str | Path,
    *,
    item: str | Path | None = None,
    items: str | Path | None = None,
    judgments: str | Path | None = None,
    eval_file: str | Path | None = None,
    db: str | Path | None = None,
    concurrency: int | None = None,
    provider: str | None = None,
    base_url: str | None = None,
    api_key_env: str | None = None,
    model: str | None = None,
    progress: bool = False,
    force: bool = False,
    mapping: Mapping[str, str] | None = None,
) -> RouteResult:
    """Route new items by a policy (``juge route``): to the judge (its verdict stands) or to a person, with the
    reason.

    A policy whose recorded holdout test did not hold (status ``not held``, ``forced``) is refused (InputError)
    unless ``force``; a forced use is recorded in the policy file (when ``policy`` is one) and in the result
    (``forced``, ``warning``, ``policy_status`` ``forced``). An untested policy routes, with a note in ``notes``.

    Without ``eval_file``: one ``item`` (JSON) with its recorded judge calls (under ``judgments`` in it, or
    in a ``judgments`` JSONL file); an item with none goes to a person and ``notes`` says why. With
    ``eval_file``: the policy's judge is called live through the engine (cache, retries, the store ``db``)
    on ``items`` (a cases file) or one ``item``; ``provider``, ``base_url``, ``api_key_env`` and ``model``
    override the eval file's provider and model (a server given by address needs no key); ``mapping`` reads
    the columns of ``items`` (``--map``) instead of the eval file's mapping.
    """
    from juge.policy.inputs import load_policy
    from juge.policy.route import route_recorded_item
    from juge.policy.status import use_policy

    if eval_file is None:
        if items is not None:
            raise InputError("--items needs --eval: the eval file names the judge to call on new items")
        if mapping:
            raise InputError("--map reads the columns of --items, which needs --eval")
        if provider or base_url or api_key_env or model or concurrency is not None:
            raise InputError(
                "--provider, --base-url, --api-key-env, --model and --concurrency apply with --eval (calling the "
                "judge); without it the item's recorded calls are routed"
            )
        if item is None:
            raise InputError("give --item FILE (one item with its judge calls), or --eval with --items or --item")
        document = load_policy(policy)
        use = use_policy(document, force=force, command="juge route", path=_policy_path(policy))
        routed = route_recorded_item(
            document,
            Path(item),
            None if judgments is None else Path(judgments),
            force=force,
            source=str(policy) if isinstance(policy, str | Path) else "policy",
        )
        return _with_use(routed, use)
    if judgments is not None:
        raise InputError("--judgments is for recorded calls; with --eval the judge is called")
    document = load_policy(policy)
    use = use_policy(document, force=force, command="juge route --eval", path=_policy_path(policy))
    from juge.policy.live_route import route_new_items

    def call() -> RouteResult:
        return route_new_items(
            document, eval_file, item=None if item is None else Path(item), items=None if items is None else Path(items),
            db=db, concurrency=concurrency, provider=provider, base_url=base_url, api_key_env=api_key_env,
            model=model, progress=progress, mapping=None if mapping is None else dict(mapping), force=force,
        )  # fmt: skip

    if not _in_running_loop():
        return _with_use(call(), use)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="juge-route") as pool:
        return _with_use(pool.submit(call).result(), use)  # the engine runs its own loop: not in the caller's


def policy_status(
    policy: PolicyResult | Mapping[str, Any] | str | Path,
    *,
    db: str | Path | None = None,
    run: str | None = None,
    eval_file: str | Path | None = None,
) -> PolicyStatusReport:
    """Where a policy stands (``juge policy status``): derived on what, tested when and whether it held, its
    audits, its judge's identity, whether it has EXPIRED and why, and what to run next.

    Expiry is checked against the judge as it is now: ``eval_file`` (the judge file as it would be called: the
    model it asks for, its template hash and rubric; no call is made) and a stored run in ``db`` (``run``, else
    the newest run with calls of the policy's judge: the model version as answered). A store that does not exist
    is skipped (nothing to check there) unless ``run`` names a run in it."""
    from juge.policy.inputs import load_policy
    from juge.policy.standing import policy_standing
    from juge.store import DEFAULT_DB, open_store

    document = load_policy(policy)
    source = str(policy) if isinstance(policy, str | Path) else "policy"
    path = DEFAULT_DB if db is None else db
    if run is None and _missing_sqlite(path):
        return policy_standing(document, eval_file=eval_file, source=source)
    with open_store(path, must_exist=True) as store:
        return policy_standing(document, store=store, run=run, eval_file=eval_file, source=source)


def _missing_sqlite(db: str | Path) -> bool:
    text = str(db)
    return "://" not in text and not Path(text).exists()


def _policy_path(policy: Any) -> Path | None:
    """The policy file a forced use is recorded in (None for a policy given as a model or a dict)."""
    return Path(policy) if isinstance(policy, str | Path) else None


def _with_use(result: Any, use: Any) -> Any:
    """A route or audit result with the policy's status, FORCED and the untested note (``PolicyUse``); a FORCED
    identity check the result carries stays."""
    warnings = [w for w in (use.warning, result.warning) if w]
    return result.model_copy(
        update={
            "policy_status": use.policy_status,
            "forced": use.forced or result.forced,
            "warning": "\n".join(warnings) or None,
            **({"notes": [*use.notes, *result.notes]} if hasattr(result, "notes") else {}),
        }
    )


def audit_sample(
    policy: PolicyResult | Mapping[str, Any] | str | Path,
    run: str | Run,
    *,
    db: str | Path | None = None,
    n: int = 10,
    seed: int | None = None,
    force: bool = False,
) -> AuditSample:
    """The weekly audit (``juge audit-sample``): ``n`` random decisions the policy's judge made alone in a
    stored run, each with the item and the judge's raw texts. ``seed`` defaults to the ISO year and week.
    A policy that did not hold on its holdout test is refused unless ``force`` (recorded, as :func:`route`)."""
    from juge.policy.audit import audit_run
    from juge.policy.inputs import load_policy
    from juge.policy.status import use_policy

    document = load_policy(policy)
    use = use_policy(document, force=force, command="juge audit-sample", path=_policy_path(policy))
    source = str(policy) if isinstance(policy, str | Path) else "policy"
    return _with_use(audit_run(document, _run_id(run), db=db, n=n, seed=seed, force=force, source=source), use)


def plan(
    *,
    items: Rows | None = None,
    judgments: Rows | Sequence[str | Path] | None = None,
    run: str | None = None,
    labels: Rows | None = None,
    db: str | Path | None = None,
    split: str = "dev",
    margin: float = 0.05,
    probability: float = 0.8,
    max_factor: float = 10.0,
    reps: int = 400,
    judges: Sequence[str] | None = None,
    width: float | None = None,
    confidence: float = 0.95,
    threshold: float | None = None,
    label_threshold: float | None = None,
    min_recall: float | None = None,
    resamples: int = 500,
    seed: int = 0,
    source: StudySource | None = None,
) -> PlanResult:
    """How many more labels would settle each decision (``juge plan``).

    Without ``width``: from a policy study (the inputs of ``juge.policy.derive``: pairwise, PASS/FAIL or scores),
    for each category and overall, the fewest dev items (each with as many raters as now) that settle the policy
    rule in at least ``probability`` of simulated studies (items drawn with replacement from those in hand, ``reps``
    per size, up to ``max_factor`` times the current items): for pairs the interval of judge-vs-person minus
    person-vs-person agreement is clear of ``-margin``; for PASS/FAIL and scores the rule of ``policy derive``
    gives the same decision with every judge figure at either end of its interval. ``min_recall`` and
    ``threshold`` are those of ``policy derive`` for PASS/FAIL and score studies. With ``width``: from a stored
    ``run`` and pass/fail ``labels`` (the inputs of ``juge.estimate``), the labels an interval of that width needs
    under labels alone, PPI++ and stratified PPI++ by category.
    ``resamples`` only sets the bootstrap of the policy derived first (the judge and templates it chooses).

    >>> import juge
    >>> p = juge.plan(items=juge.demo_path("items.jsonl"), judgments=juge.demo_path("judgments.jsonl"), reps=100)
    >>> [d.category for d in p.decisions][:2]
    ['coding', 'extraction']
    """
    from juge.data.draw import unweighted_figures
    from juge.policy.inputs import policy_study
    from juge.policy.plan import pass_rate_notes, plan_pass_rate, plan_policy
    from juge.policy.results import PlanResult

    if not 0 < probability < 1:
        raise InputError(f"--probability must be a share strictly between 0 and 1 (e.g. 0.8), got {probability:g}")
    if not 1 <= max_factor <= MAX_PLAN_FACTOR:  # NaN and 1e308 are no size to simulate
        raise InputError(f"--max-factor must be between 1 and {MAX_PLAN_FACTOR:g}, got {max_factor:g}")
    if reps < 10:
        raise InputError(f"--reps must be at least 10, got {reps}")
    if width is not None:
        from juge.runs.corrected_run import read_pass_rate

        if not 0 < width < 1:
            raise InputError(f"--width must be between 0 and 1 (e.g. 0.1), got {width:g}")
        if run is None and (source is None or source.run is None):
            raise InputError("--width plans a corrected pass rate: give --run RUN_ID and --labels FILE (as estimate)")
        read = read_pass_rate(
            run if run is not None else source.run,  # type: ignore[union-attr,arg-type]
            labels, db=db, threshold=threshold, label_threshold=label_threshold,
            source=source,
        )  # fmt: skip
        weighting = unweighted_figures(read.draw, "juge plan --width")
        rate = plan_pass_rate(read.outcomes, read.human, read.categories, width=width, confidence=confidence)
        return PlanResult(
            probability=probability, margin=margin, level=confidence, reps=reps, pass_rate=rate,
            notes=[*read.notes, *pass_rate_notes(rate)], warnings=read.warnings, weighting=weighting,
        )  # fmt: skip
    study = policy_study(
        items=items, judgments=judgments, run=run, labels=labels, db=db, source=source, command="juge plan"
    )
    judge, decisions, level = plan_policy(
        study.data, split=split, margin=margin, probability=probability, reps=reps, max_factor=max_factor,
        judges=judges, resamples=resamples, seed=seed, min_recall=min_recall, threshold=threshold,
    )  # fmt: skip
    notes = list(study.notices)
    raters: dict[str, set[str]] = {}
    for lab in getattr(study.data, "labels", None) or []:
        raters.setdefault(lab.item_id, set()).add(lab.rater_id)
    if raters and max(len(r) for r in raters.values()) < 2:
        # Every decision is judged against person vs person: with one rater per item it never exists, and new items
        # are simulated with as many raters as now, so "not within" would be the answer at any size.
        notes.append(
            "no item has two or more raters: person vs person, the bar every decision is measured against, cannot "
            "be measured however many items come (each is assumed to get as many raters as now); have some items "
            "labelled by two people (juge label init --overlap)"
        )
    return PlanResult(
        probability=probability, margin=margin, level=level, reps=reps, split=split, judge=judge,
        decisions=decisions, notes=notes, warnings=study.warnings, weighting=study.weighting,
        )  # fmt: skip
