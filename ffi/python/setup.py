"""Builds the memloop C library with cargo and ships it inside the package."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

HERE = Path(__file__).resolve().parent
WORKSPACE = HERE.parent.parent
LIBRARY = {"darwin": "libmemloop_ffi.dylib", "win32": "memloop_ffi.dll"}.get(
    sys.platform, "libmemloop_ffi.so"
)


class BuildWithCargo(build_py):
    """Runs `cargo build -p memloop-ffi` and copies the library into the package."""

    def run(self):
        super().run()
        profile = os.environ.get("MEMLOOP_CARGO_PROFILE", "release")
        subprocess.run(
            ["cargo", "build", "--locked", "-p", "memloop-ffi", "--profile", profile],
            cwd=WORKSPACE,
            check=True,
        )
        target = Path(os.environ.get("CARGO_TARGET_DIR", WORKSPACE / "target"))
        out_dir = "debug" if profile in ("dev", "test") else profile
        built = target / out_dir / LIBRARY
        dest = Path(self.build_lib) / "memloop" / LIBRARY
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(built, dest)
        if out_dir == "debug" and shutil.which("strip"):
            # Test builds carry full debug info (hundreds of MB): keep the wheel small.
            subprocess.run(["strip", "--strip-debug", str(dest)], check=True)


class BinaryDistribution(Distribution):
    """The package carries a native library: its wheel is platform-specific."""

    def has_ext_modules(self):
        return True


setup(cmdclass={"build_py": BuildWithCargo}, distclass=BinaryDistribution)
