"""`python -m pqbench.record` prints the run format's JSON Schema (docs/run-format.schema.json)."""

from __future__ import annotations

import json

from pqbench.record.models import json_schema

print(json.dumps(json_schema(), indent=1, sort_keys=True))
