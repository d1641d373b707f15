"""The demo: the calibration study on the embedded MT-Bench sample, and the local judge's live run over it."""
