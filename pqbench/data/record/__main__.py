"""`python -m pqbench.data.record` prints the run format's JSON Schema
(docs/run-format.schema.json); `python -m pqbench.data.record compare` the schema of
`pqbench compare --json` (docs/compare.schema.json)."""

from __future__ import annotations

import json
import sys

from pqbench.data.record.comparison import schema
from pqbench.data.record.models import json_schema

print(json.dumps(schema() if sys.argv[1:] == ["compare"] else json_schema(), indent=1,
                 sort_keys=True))
