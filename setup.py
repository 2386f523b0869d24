"""Build the optional C extensions.

All are optional: without a C compiler or the system libcrypto headers the install still
succeeds, pqbench reports the native implementations as unavailable, `files corpus`
falls back to cryptography's XTS, and `pqbench memory` reports heap figures as unavailable.
"""

import sys
from glob import glob

from setuptools import Extension, setup

FLAGS = ["-O2", "-std=c11", "-Wall"]

setup(
    ext_modules=[
        Extension(
            "pqbench.timing._native",
            # One file per concern, sharing csrc/native.h (loop, liboqs, libcrypto public
            # key, EVP bulk, the Python module); only PyInit__native is exported.
            sources=sorted(glob("pqbench/timing/csrc/*.c")),
            depends=["pqbench/timing/csrc/native.h"],
            libraries=["crypto", "dl"],
            extra_compile_args=[*FLAGS, "-fvisibility=hidden"],
            optional=True,
        ),
        Extension(
            "pqbench.measure.files._xts",
            sources=["pqbench/measure/files/_xts.c"],
            libraries=["crypto"],
            extra_compile_args=FLAGS,
            optional=True,
        ),
        # Not a Python module: the allocator interposer `pqbench memory` LD_PRELOADs into
        # its measurement worker (see the file). Built like an extension only to be
        # compiled and installed with one; glibc's LD_PRELOAD makes it Linux-only.
        *([Extension(
            "pqbench.measure.memory._memhook",
            sources=["pqbench/measure/memory/_memhook.c"],
            libraries=["dl"],
            extra_compile_args=[*FLAGS, "-fvisibility=hidden"],
            optional=True,
        )] if sys.platform.startswith("linux") else []),
    ]
)
