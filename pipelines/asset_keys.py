"""The keys of each provider's three stage assets, and how to read a provider back from a step.

The Dagster UI titles an asset node with the last component of its key, so that component names
both the stage and the provider (``raw/raw_crusoe`` is titled "raw_crusoe"), while the first
component keeps the catalog's folders by stage.
"""

from __future__ import annotations

from collections.abc import Iterable

import dagster as dg

PROVIDER_STAGES = ("raw", "parsed", "snapshot")


def provider_asset_key(stage: str, provider: str) -> dg.AssetKey:
    return dg.AssetKey([stage, f"{stage}_{provider}"])


def provider_asset_keys(providers: Iterable[str]) -> list[dg.AssetKey]:
    """Every stage of every provider, in stage order per provider."""
    return [provider_asset_key(stage, p) for p in providers for stage in PROVIDER_STAGES]


def step_provider(step_key: str, providers: Iterable[str]) -> str | None:
    """The provider whose stage asset ran as ``step_key`` (``raw__raw_crusoe``), or None."""
    for provider in providers:
        if any(step_key == "__".join(provider_asset_key(s, provider).path) for s in PROVIDER_STAGES):
            return provider
    return None
