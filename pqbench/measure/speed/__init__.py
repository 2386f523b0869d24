"""Measuring: the speed suite (check, then time each operation) and capability masks."""
