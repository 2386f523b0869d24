"""`pqbench tls`: what post-quantum key exchange and certificates cost in real TLS 1.3
handshakes, per TLS library, verified from the wire before they are timed.

catalog (groups and certificate key types as data), certs (the throw-away PKI), wire (the
handshake messages), checks (verified before timed), model (round trips on paper),
inprocess (over memory buffers) and loopback (over sockets): the two drivers, pyopenssl /
pythonssl / libssl (the implementations), registry, grid (the run) and records (to the
stored run).
"""
