"""The libraries pqbench times: one adapter per implementation with its known answers, the
foreign-language stack workers, liboqs found or compiled, and other OS userlands."""
