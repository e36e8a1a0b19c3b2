"""Packages found, not listed: every package under toolclear/ ships, plus the bundled
samples (sample_data/ of the checkout) as toolclear.inspector.samples, so an installed
inspector has them. The rest of the metadata is in pyproject.toml."""

from setuptools import find_packages, setup

setup(
    packages=[*find_packages(include=["toolclear", "toolclear.*"]), "toolclear.inspector.samples"],
    package_dir={"toolclear.inspector.samples": "sample_data"},
)
