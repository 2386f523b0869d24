"""Build the optional C extensions.

Both are optional: without a C compiler or the system libcrypto headers the install still
succeeds, pqbench reports the native implementations as unavailable, and `files corpus`
falls back to cryptography's XTS.
"""

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
            "pqbench.files._xts",
            sources=["pqbench/files/_xts.c"],
            libraries=["crypto"],
            extra_compile_args=FLAGS,
            optional=True,
        ),
    ]
)
