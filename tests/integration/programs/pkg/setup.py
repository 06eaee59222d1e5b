# A package pip can install with neither an index nor the wheel package (--no-index
# --no-build-isolation): setuptools' legacy `setup.py install`, as from Debian's venv.
from setuptools import setup

setup(name="qpkg", version="0.1", packages=["qpkg"], package_dir={"": "src"})
