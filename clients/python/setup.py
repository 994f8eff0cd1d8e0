"""setuptools hook for ``make wheel``: when ``src/hotrank/libhotrank.so`` is present (the
Makefile copies the built module into a staging copy of this directory, never into the
checkout), the wheel is a platform wheel ``py3-none-<platform>``: it holds a Linux shared
object but no Python extension, so any CPython 3 on that platform can use it. Without the
module (``pip install -e``), it is the plain pure-Python package."""

from pathlib import Path

from setuptools import Distribution, setup
from setuptools.command.bdist_wheel import bdist_wheel

BUNDLED = (Path(__file__).resolve().parent / "src" / "hotrank" / "libhotrank.so").is_file()


class ModuleDistribution(Distribution):
    """A distribution with a binary inside: a platform wheel, files in platlib."""

    def has_ext_modules(self) -> bool:
        return BUNDLED


class ModuleWheel(bdist_wheel):
    def get_tag(self) -> tuple[str, str, str]:
        python, abi, plat = super().get_tag()
        return ("py3", "none", plat) if BUNDLED else (python, abi, plat)


setup(distclass=ModuleDistribution, cmdclass={"bdist_wheel": ModuleWheel})
