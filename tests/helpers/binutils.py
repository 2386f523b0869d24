"""What binutils (or `file`) say of an ELF file: the reference the ELF reader is held to."""

from __future__ import annotations

import re
import shutil
import subprocess


def build_id(path: str) -> str | None:
    """The GNU build-id as `readelf -n` (or else `file -L`) prints it."""
    if shutil.which("readelf"):
        out = subprocess.run(["readelf", "-n", path], capture_output=True, text=True,
                             check=False).stdout
        found = re.search(r"Build ID:\s*([0-9a-f]+)", out)
    else:
        assert shutil.which("file"), "these tests need readelf (binutils) or file"
        out = subprocess.run(["file", "-L", path], capture_output=True, text=True,
                             check=False).stdout
        found = re.search(r"BuildID\[\w+\]=([0-9a-f]+)", out)
    return found.group(1) if found else None
