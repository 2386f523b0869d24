"""The run record: its typed models and their JSON Schema."""
