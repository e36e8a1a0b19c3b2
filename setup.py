"""Packages found, not listed: every package and data folder under toolclear/ ships, plus the bundled
samples (sample_data/ of the checkout) as toolclear.inspector.samples, so an installed
inspector has them. The rest of the metadata is in pyproject.toml."""

from setuptools import find_namespace_packages, setup

setup(
    # namespace packages too: toolclear/data holds only data (the pricing presets), no __init__.py
    packages=[*find_namespace_packages(include=["toolclear", "toolclear.*"], exclude=["*.__pycache__"]),
              "toolclear.inspector.samples"],
    package_dir={"toolclear.inspector.samples": "sample_data"},
)
