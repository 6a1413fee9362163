"""The keys of each provider's three stage assets, and how to read a provider back from a step.

The Dagster UI titles an asset node with the last component of its key, so that component names
both the stage and the provider (``raw/raw_crusoe`` is titled "raw_crusoe"), while the first
component keeps the catalog's folders by stage. The three stages of a provider run as one step,
``scrape_<provider>``.
"""

from __future__ import annotations

from collections.abc import Iterable

import dagster as dg

PROVIDER_STAGES = ("raw", "parsed", "snapshot")
# The unpartitioned reference data, and what runs after the providers' snapshots (in graph order).
REFERENCE_ASSETS = ("dim_gpu", "public_price_observations", "memory_fit")
MODEL_ASSETS = ("offers_with_specs", "workload_rankings", "analytics_copy")


def provider_asset_key(stage: str, provider: str) -> dg.AssetKey:
    return dg.AssetKey([stage, f"{stage}_{provider}"])


def provider_asset_keys(providers: Iterable[str]) -> list[dg.AssetKey]:
    """Every stage of every provider, in stage order per provider."""
    return [provider_asset_key(stage, p) for p in providers for stage in PROVIDER_STAGES]


def daily_selection(providers: Iterable[str]) -> dg.AssetSelection:
    """What ``gpuprice run`` and ``gpuprice backfill`` run: the reference data, the providers'
    stages and the models after them."""
    return dg.AssetSelection.assets(*REFERENCE_ASSETS, *provider_asset_keys(providers), *MODEL_ASSETS)


def provider_step(provider: str) -> str:
    """The step (op) that materializes the provider's three stages."""
    return f"scrape_{provider}"


def step_provider(step_key: str, providers: Iterable[str]) -> str | None:
    """The provider whose stages ran as ``step_key`` (``scrape_crusoe``), or None."""
    for provider in providers:
        if step_key == provider_step(provider):
            return provider
    return None
