"""The pytest plugin of provider-cassettes (registered as ``cassettes`` via ``pytest11``).

``CassetteSession`` is the type of the ``cassette`` fixture, for annotations; ``cassette_for``
gives a fixture of any scope a cassette of its own::

    from pytest_plugin import CassetteSession, cassette_for

    @pytest.mark.cassette
    def test_agent(cassette: CassetteSession) -> None: ...

    @pytest.fixture(scope="module")
    def agent(request: pytest.FixtureRequest) -> Iterator[Agent]:
        with cassette_for(request):
            yield build_agent()

Loaded on first access: importing the plugin stays free of the core's imports.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_plugin._session import CassetteSession, cassette_for

__all__ = ["CassetteSession", "cassette_for"]


def __getattr__(name: str) -> Any:
    if name == "CassetteSession":
        from pytest_plugin._session import CassetteSession

        return CassetteSession
    if name == "cassette_for":
        from pytest_plugin._session import cassette_for

        return cassette_for
    raise AttributeError(f"module 'pytest_plugin' has no attribute {name!r}")
