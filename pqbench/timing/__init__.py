"""Timing loops: the Python loop and the native one honour the same contract."""
