"""The application layer: one use case per question a command asks, and the decisions they
share once (what one build is, what one machine is, which runs a comparison uses, what a
gate decides, what the noise model learns from). Pure decisions over what one store query
returns, tested without a process; the commands parse, call one use case, and render."""
