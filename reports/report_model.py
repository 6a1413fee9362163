"""The base of every report model: frozen pydantic models (a report is read, never changed)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class FrozenModel(BaseModel):
    """Immutable, and free to hold plain Python objects (dates, week objects)."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)
