"""The code location: everything under pipelines/defs/ (one folder per domain).

The defs are loaded from the package itself rather than by finding the pyproject.toml above it
(dg.load_from_defs_folder): an installed wheel has no pyproject.toml, and the code location must
load the same from a checkout and from site-packages (tests/test_packaging.py).
"""

from __future__ import annotations

import warnings
from pathlib import Path

import dagster as dg

from gpuprice.pipelines import defs as defs_package

with warnings.catch_warnings():
    # dg.load_from_defs_folder silences these too: the loader's own preview notices, not ours.
    warnings.simplefilter("ignore", dg.PreviewWarning)
    warnings.simplefilter("ignore", dg.BetaWarning)
    tree = dg.ComponentTree.from_module(defs_package, project_root=Path(__file__).parent)
    # Built at the defs folder, not the tree's root: the root adds the JSON schemas of every
    # installed component type for the UI's component library (~0.1 s of every run and every
    # load of the code location); this project defines no components.
    defs = tree.build_defs(Path(defs_package.__file__).parent)
