"""The code location: everything under pipelines/defs/ (one folder per domain).

The defs are loaded from the package itself rather than by finding the pyproject.toml above it
(dg.load_from_defs_folder): an installed wheel has no pyproject.toml, and the code location must
load the same from a checkout and from site-packages (tests/test_packaging.py).

Every process that loads this module runs gpuprice's assets or serves them (a run worker that
the UI, the daemon or ``dagster job execute`` starts; the code server), so it gets the
collector thresholds of a batch process before the asset modules load, and freezes what it
loaded once the definitions are built (gpuprice/gc_tuning.py).
"""

from __future__ import annotations

import warnings
from pathlib import Path

import dagster as dg

from gpuprice.gc_tuning import freeze_loaded_code, tune_for_batch_process

tune_for_batch_process()

from gpuprice.pipelines import defs as defs_package  # noqa: E402  (after the collector is tuned)

with warnings.catch_warnings():
    # dg.load_from_defs_folder silences these too: the loader's own preview notices, not ours.
    warnings.simplefilter("ignore", dg.PreviewWarning)
    warnings.simplefilter("ignore", dg.BetaWarning)
    tree = dg.ComponentTree.from_module(defs_package, project_root=Path(__file__).parent)
    # Built at the defs folder, not the tree's root: the root adds the JSON schemas of every
    # installed component type for the UI's component library (~0.1 s of every run and every
    # load of the code location); this project defines no components.
    defs = tree.build_defs(Path(defs_package.__file__).parent)

# Loaded for the process's lifetime: skipped by later collections and by the teardown at exit.
freeze_loaded_code()
