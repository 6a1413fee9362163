"""Checks the catalog-row test files share: a new row cites the pinned file its shape was read
from and meets its published total; an alias resolves to its base row, which cites it."""

from __future__ import annotations

import re
from collections.abc import Iterable

import pytest

from gpuprice.models.architectures import catalog, find_model

COMMIT = re.compile(r"@[0-9a-f]{40}\b")


def assert_rows_cite_a_pinned_source(model_ids: Iterable[str]) -> None:
    entries = catalog()
    ids = list(model_ids)
    assert not [m for m in ids if m not in entries]
    for model_id in ids:
        assert COMMIT.search(entries[model_id].source), model_id
        assert entries[model_id].note, model_id


def assert_row_meets_its_published_total(model_id: str) -> None:
    entry = catalog()[model_id]
    assert find_model(model_id) == entry.arch
    assert entry.arch.n_params / 1e9 == pytest.approx(entry.published_params_b, rel=0.02)


def assert_alias_resolves_to(name: str, model_id: str) -> None:
    """``name`` reads ``model_id``'s shape and the base row names it beside a pinned citation."""
    entry = catalog()[model_id]
    assert find_model(name) == entry.arch
    assert name in entry.aliases
    cited = f"{entry.source} {entry.note or ''}"
    assert COMMIT.search(cited) and name.split("/")[-1].lower() in cited.lower()
