"""Who our requests say they are, and where a provider's API key may come from.

Every request names us: ``User-Agent: gpuprice/<version> (+<contact>; <purpose>)``, so a site
owner can see who we are and reach us. ``GPUPRICE_USER_AGENT`` replaces the whole string,
``GPUPRICE_CONTACT`` only the contact URL. API keys are optional and come only from environment
variables (``GPUPRICE_<PROVIDER>_API_KEY``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from importlib import metadata

DEFAULT_CONTACT = "https://github.com/gpuprice/gpuprice"
PURPOSE = "price tracking for LLM training planning"


def _version() -> str:
    try:
        return metadata.version("gpuprice")
    except metadata.PackageNotFoundError:  # running from a source tree without install
        return "0.1"


def default_user_agent(env: Mapping[str, str] | None = None) -> str:
    """Our identifying User-Agent, honouring GPUPRICE_USER_AGENT and GPUPRICE_CONTACT."""
    env = os.environ if env is None else env
    agent = env.get("GPUPRICE_USER_AGENT", "").strip()
    if not agent:
        contact = env.get("GPUPRICE_CONTACT", "").strip() or DEFAULT_CONTACT
        agent = f"gpuprice/{_version()} (+{contact}; {PURPOSE})"
    if any(ch in agent for ch in "\r\n\x00"):
        raise ValueError("the User-Agent must be one line (check GPUPRICE_USER_AGENT / GPUPRICE_CONTACT)")
    return agent


def api_key_env_var(provider: str) -> str:
    """The environment variable that may hold a provider's API key: GPUPRICE_RUNPOD_API_KEY."""
    return f"GPUPRICE_{provider.upper()}_API_KEY"
