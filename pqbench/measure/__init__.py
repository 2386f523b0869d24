"""What pqbench measures, each in a room of its own: speed, files, TLS handshakes, memory per
operation; the checks a pair passes before it is timed; this machine's fingerprint."""
