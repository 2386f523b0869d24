"""File benchmarks: stream-hash named files, and write/read/encrypt a random corpus.

Modules: inputs (which paths can be measured, and a clear error for the rest), cache (page
cache residency and dropping), stream (the read-only and overlapped hash passes), hashing
(per-file results and --jobs), corpus (the generated corpus), storage (the file system and
device in the fingerprint), runs (results as stored runs of kind "files").
"""
