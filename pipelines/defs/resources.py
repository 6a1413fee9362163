"""Resources for the code location: the edge where the environment becomes settings.

GPUPRICE_SOURCE has the same default here as for ``gpuprice run`` (archive: recorded pages);
a deployment that scrapes the providers daily sets GPUPRICE_SOURCE=live (README, Configuration).
"""

import dagster as dg

from gpuprice.pipelines.resources import resources_for
from gpuprice.settings import Settings


@dg.definitions
def defs() -> dg.Definitions:
    from gpuprice.warehouse import connection, lake

    lake.select(*Settings.warehouse_engine())  # GPUPRICE_WAREHOUSE: the DuckDB file or a DuckLake
    connection.set_lock_timeout(Settings.lock_timeout())  # GPUPRICE_LOCK_TIMEOUT
    lake.set_snapshot_retention(Settings.lake_snapshot_days())  # GPUPRICE_LAKE_SNAPSHOT_DAYS
    return dg.Definitions(resources=resources_for(Settings.from_env()))
