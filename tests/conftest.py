"""Fixtures shared by the kit's own tests."""
from __future__ import annotations

import contextlib

import pytest

import opkit


@pytest.fixture(scope="session")
def bundled_ops(tmp_path_factory):
    """opkit's bundled ops, registered once per test session.

    Loaded from a folder outside any workspace: the repository itself is a workspace (its ops/ are the
    bundled ops), so opkit.load() there would ask for `opkit build` in the checkout. Outside it, the
    bundled ops come from the per-user cache build that every user gets on first load.
    """
    with contextlib.chdir(tmp_path_factory.mktemp("outside-workspace")):
        return opkit.load()
