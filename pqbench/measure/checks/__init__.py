"""Checks: the pre-timing check of a pair, known-answer tests, and the vectors they load."""
