"""The one thing pyproject.toml cannot say: the package second_brain.dashboard lives in the top-level dashboard/
folder (the web app's files), beside src/'s packages. The wheel and editable installs carry it from there."""

from setuptools import find_packages, setup

setup(packages=[*find_packages("src"), "second_brain.dashboard", "second_brain.dashboard.views"],
      package_dir={"": "src", "second_brain.dashboard": "dashboard"})
