"""``juge view``: a read-only local web app over the run store, calibrations, policies and their holdout tests,
for the evaluation owner (never for raters: it shows model names, verdicts and people's labels side by side)."""
