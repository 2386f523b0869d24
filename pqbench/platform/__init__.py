"""The floor every room stands on: errors, untrusted text, interrupts and child processes."""
