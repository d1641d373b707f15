"""The public Python API: what each `juge` command does, as a function returning a typed result.

Every CLI command parses its options, calls one function here, and prints or writes what it returns;
the functions raise :class:`juge.errors.InputError` (the CLI's exit 2) on bad input and never print.
They are re-exported by :mod:`juge` (``juge.run``, ``juge.calibrate``, ...).
"""

from __future__ import annotations

from juge.label.api import (  # noqa: F401 - re-exported: `juge label ...`, one function per command
    label_add_rater,
    label_attach_run,
    label_disagreements,
    label_export,
    label_init,
    label_release,
    label_revoke_rater,
    label_rotate_link,
    label_server,
    label_status,
)

# isort: split
# API functions that live in their domain modules, re-exported (``x as x``) one line each.
from juge.calibration.api import Rows as Rows
from juge.calibration.api import calibrate as calibrate
from juge.calibration.api import calibration_inputs as calibration_inputs
from juge.calibration.api import demo_path as demo_path
from juge.config import eval_config as eval_config
from juge.data.split import split as split
from juge.data.traces import import_traces as import_traces
from juge.demos.api import demo as demo
from juge.drift.api import drift as drift
from juge.label.audit import audit_sample as audit_sample
from juge.label.audit import audit_status as audit_status
from juge.policy.api import plan as plan
from juge.policy.api import policy_derive as policy_derive
from juge.policy.api import policy_status as policy_status
from juge.policy.api import policy_test as policy_test
from juge.policy.api import route as route
from juge.probes.api import probe_injection as probe_injection
from juge.reports.api import report as report
from juge.reports.api import run_report as run_report
from juge.runs.api import compare as compare
from juge.runs.api import delete_runs as delete_runs
from juge.runs.api import dry_run as dry_run
from juge.runs.api import estimate as estimate
from juge.runs.api import export as export
from juge.runs.api import get_provider as get_provider
from juge.runs.api import list_runs as list_runs
from juge.runs.api import load_judge as load_judge
from juge.runs.api import prompt as prompt
from juge.runs.api import run as run
from juge.runs.api import run_async as run_async
from juge.runs.api import show as show
from juge.runs.junit import run_junit as run_junit
from juge.scaffold import init_project as init_project
from juge.tune.api import tune_judge as tune_judge
from juge.view.api import view_server as view_server
