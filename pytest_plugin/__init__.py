"""The pytest plugin of provider-cassettes (registered as ``cassettes`` via ``pytest11``).

``CassetteSession`` is the type of the ``cassette`` fixture, for annotations::

    from pytest_plugin import CassetteSession

    @pytest.mark.cassette
    def test_agent(cassette: CassetteSession) -> None: ...

It is loaded on first access, so importing the plugin stays free of the core's imports.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_plugin._live import CassetteSession

__all__ = ["CassetteSession"]


def __getattr__(name: str) -> Any:
    if name == "CassetteSession":
        from pytest_plugin._live import CassetteSession

        return CassetteSession
    raise AttributeError(f"module 'pytest_plugin' has no attribute {name!r}")
