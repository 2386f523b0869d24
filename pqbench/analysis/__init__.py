"""Analysis: statistics, verdicts, comparisons, explanations and histories over frozen runs.

Pure domain code: runs in, plain records out; no printing and no storage.
"""
