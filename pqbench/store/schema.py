"""The storage schema, one definition for SQLite and PostgreSQL.

The schema carries a version; a database written by a newer pqbench is refused, never
altered. History of versions:

1. runs, measurements with their per-round samples, problems, verifications, annotations.
"""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    BigInteger,
    Column,
    Float,
    ForeignKey,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
)

SCHEMA_VERSION = 1
APPLICATION = "pqbench"

metadata = MetaData()

meta = Table(
    "pqbench_meta", metadata,
    Column("key", String(64), primary_key=True),
    Column("value", Text, nullable=False),
)

runs = Table(
    "pqbench_runs", metadata,
    Column("run_id", String(64), primary_key=True),
    Column("kind", String(16), nullable=False),
    Column("started_at", String(40), nullable=False),
    Column("finished_at", String(40), nullable=False),
    Column("status", String(16), nullable=False),
    Column("label", Text),
    Column("command", Text, nullable=False),
    Column("os_build", Text),
    Column("hostname", Text),
    Column("testbed", String(64)),
    Column("settings", JSON, nullable=False),
    Column("environment", JSON, nullable=False),
)

measurements = Table(
    "pqbench_measurements", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("run_id", String(64), ForeignKey("pqbench_runs.run_id", ondelete="CASCADE"),
           nullable=False, index=True),
    Column("algorithm", Text, nullable=False),
    Column("implementation", Text, nullable=False),
    Column("operation", Text, nullable=False),
    Column("block_size", Integer),
    Column("ops_per_sec", Float, nullable=False),
    Column("us_per_op", Float, nullable=False),
    Column("cycles_per_op", Float),
    Column("counter", Text),
    Column("sizes", JSON, nullable=False),
    Column("attributes", JSON, nullable=False),
)

samples = Table(
    "pqbench_samples", metadata,
    Column("measurement_id", Integer, ForeignKey("pqbench_measurements.id", ondelete="CASCADE"),
           primary_key=True),
    Column("round_index", Integer, primary_key=True),
    Column("ops", BigInteger, nullable=False),
    Column("elapsed_ns", BigInteger, nullable=False),
    Column("cycles", BigInteger),
)

problems = Table(
    "pqbench_problems", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("run_id", String(64), ForeignKey("pqbench_runs.run_id", ondelete="CASCADE"),
           nullable=False, index=True),
    Column("algorithm", Text, nullable=False),
    Column("implementation", Text, nullable=False),
    Column("operation", Text),
    Column("kind", String(32), nullable=False),
    Column("reason", Text, nullable=False),
)

verifications = Table(
    "pqbench_verifications", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("run_id", String(64), ForeignKey("pqbench_runs.run_id", ondelete="CASCADE"),
           nullable=False, index=True),
    Column("algorithm", Text, nullable=False),
    Column("implementation", Text, nullable=False),
    Column("checks", JSON, nullable=False),
)

build_notes = Table(
    "pqbench_annotations", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("build", Text, nullable=False),
    Column("text", Text, nullable=False),
    Column("created_at", String(40), nullable=False),
    UniqueConstraint("build", "text"),
)
