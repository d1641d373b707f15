"""Calibration: measure judges against people (reads judgments; never calls a model)."""
