"""Memory per operation: the peak stack, peak heap and allocations of one call.

`pqbench memory` measures every public-key operation pqbench times natively (liboqs through
the library liboqs-python loaded, and the system libcrypto) one call at a time, on valid
inputs prepared and checked exactly as for the timing loop (csrc/oqs.c, pk.c, pk_pq.c), so
decapsulation takes the real path; decapsulation of a ciphertext with one bit changed
(FIPS 203 implicit rejection) is a row of its own, `decaps-reject`.

How each figure is obtained (`memory_method`):

* Stack: "painted stack (high-water mark, harness subtracted)". The call runs on an
  8 MiB region pqbench maps (a guard page below it) and fills with a 64-bit pattern; the
  thread switches to it with makecontext/swapcontext, so the per-thread state the
  preparation warmed up (OpenSSL's per-thread DRBG, its error queue) is the state the
  call sees, as in the timing loop. The lowest word that lost the pattern is the
  high-water mark. The harness's own frames (the context trampoline, the entry function,
  arming the heap counter, an empty call: 40 bytes on x86-64 with gcc 12) are measured
  the same way with an empty operation and subtracted. The worker runs with
  LD_BIND_NOW=1, so no call pays for the dynamic linker resolving a symbol on first use.
  Bytes a function reserves but never writes are not seen (a painted stack measures
  touched memory, which is what can overflow a guard); the red zone below the stack
  pointer that leaf functions write is.
* Heap: "LD_PRELOAD malloc interposer (bytes requested)". liboqs calls malloc directly,
  and OpenSSL's CRYPTO_set_mem_functions only works before libcrypto's first allocation,
  long past in any Python process (hashlib and ssl load libcrypto at start-up); so the
  measurement runs in a worker process (`worker.py`) started with pqbench's allocator
  interposer (`_memhook.c`) preloaded. It replaces malloc, calloc, realloc, reallocarray,
  free and the aligned allocators, passes every call on to glibc, and counts only the
  measuring thread's calls while the call runs: the peak of bytes requested and not yet
  freed, and the number of allocations (a realloc is one, as valgrind's DHAT counts).
  Requested bytes, not malloc_usable_size, so the figure is the library's demand and not
  the allocator's rounding. Without the interposer (not built, or not Linux) heap figures
  are null and the method says "heap not counted".

Each operation is measured `--calls` times (default 5), each time on keys and inputs
prepared afresh, in a worker process of its own (libcrypto's global caches grow with every
algorithm a process uses, and some calls' heap with them: a figure must not depend on what
else the run measured). The record keeps the largest figure and the smallest-to-largest
range (`memory_range`): ML-DSA signing loops a random number of times, RSA encryption's
random padding now and then takes a deeper path, RSA key generation tries a random number
of candidates.

`benchmarks/memory_vs_valgrind.py` measures the same operations under valgrind (massif
with --stacks=yes, DHAT) and prints both figures side by side.

Modules: `records` (the figure and its mapping to the shared record), `runner` (the plan,
the worker process, problems), `worker` (the process that measures), `compare` (exact
before/after verdicts).
"""
