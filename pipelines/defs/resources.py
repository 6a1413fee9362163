"""Resources for the code location (paths from GPUPRICE_HOME / GPUPRICE_ARCHIVE)."""

import os

import dagster as dg

from gpuprice.pipelines.resources import default_resources


@dg.definitions
def defs() -> dg.Definitions:
    # The daemon scrapes live; set GPUPRICE_SOURCE=archive to replay recorded pages instead.
    return dg.Definitions(resources=default_resources(source=os.environ.get("GPUPRICE_SOURCE", "live")))
