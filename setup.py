"""Build the optional native timing extension.

The extension is optional: without a C compiler or the system libcrypto headers the
install still succeeds, and pqbench reports the native implementations as unavailable.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "pqbench.timing._native",
            sources=["pqbench/timing/_native.c"],
            libraries=["crypto", "dl"],
            extra_compile_args=["-O2", "-std=c11", "-Wall"],
            optional=True,
        )
    ]
)
