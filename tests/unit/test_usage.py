"""Token usage read from recorded answers where the catalog says (and by shape where its
fields find none: the counts from before the catalog, ``pytest_plugin/_usage.py`` at 8c9652b,
the first cases of tests/data/usage_cases.yaml, so a change here is a change users see in the
"replay saved … tokens" line), Bedrock's usage in every form, and the price table behind the
savings line."""

from __future__ import annotations

from typing import Any

import pytest

from cassettes_core import Interaction, LLMRequest, LLMResponse, StreamEvent, catalog
from cassettes_core.usage import PriceLineError, PriceTable, Usage, parse_price_lines, usage_of
from tests.helpers.data import table

# (provider, answer body or None, stream events or None, (input, output)): the table and the
# shapes it shares are in tests/data/usage_cases.yaml.
CASES = [
    pytest.param(
        case["provider"], case.get("body"), case.get("stream"), tuple(case["counts"]), id=name
    )
    for name, case in table("usage_cases")["cases"].items()
]


def _interaction(provider: str, body: Any, events: list[Any] | None) -> Interaction:
    request = LLMRequest(provider=provider, fields={"model": "m", "messages": []})
    return Interaction(
        seq=1,
        digest=request.digest(),
        request=request,
        response=LLMResponse(body=body) if body is not None else None,
        stream=tuple(StreamEvent(data=d) for d in events) if events is not None else None,
    )


@pytest.mark.parametrize(("provider", "body", "events", "counts"), CASES)
def test_tokens_are_counted_where_each_provider_reports_them(
    provider: str, body: Any, events: list[Any] | None, counts: tuple[int, int]
) -> None:
    assert usage_of(_interaction(provider, body, events)) == Usage("m", *counts)


def test_a_registered_endpoints_fields_still_count_an_unknown_provider() -> None:
    # A shape only a registered endpoint describes (the old reading knew none of it).
    endpoint = catalog.Endpoint(
        name="acme.gen",
        family="acme",
        base_url="https://api.acme-gen.test/v1",
        send_path="/gen",
        path=catalog.suffix("/v1/gen"),
        route="/v1/gen",
        base_env="ACME_BASE_URL",
        key_env="ACME_API_KEY",
        semantic_fields=frozenset({"model", "contents"}),
        usage=catalog.TokenFields(
            input=("promptTokenCount",), output=("candidatesTokenCount",), answer="usageMetadata"
        ),
    )
    body = {"usageMetadata": {"promptTokenCount": 5, "candidatesTokenCount": 2}}
    catalog.register(endpoint)
    try:
        assert usage_of(_interaction("other.gen", body, None)) == Usage("m", 5, 2)
        assert usage_of(_interaction("acme.gen", body, None)) == Usage("m", 5, 2)
    finally:
        catalog.unregister("acme.gen")


def test_the_price_table() -> None:
    """The longest prefix wins (a dated mini model is priced as mini); cost is tokens times
    the per-million price, input and output apart; cassette_prices lines replace a default
    price and add new prefixes."""
    table = PriceTable.with_overrides([])
    assert table.price("gpt-4o-mini-2024-07-18") == table.prices["gpt-4o-mini"]
    assert table.price("gpt-4o-2024-08-06") == table.prices["gpt-4o"]
    table = PriceTable({"m": (1.0, 2.0)})
    assert table.cost("m-1", 1_000_000, 500_000) == pytest.approx(2.0)
    assert table.cost("unknown", 10, 10) is None
    table = PriceTable.with_overrides(["gpt-4o-mini = 1 2  # our contract", "", "my-ft = 3 4"])
    assert table.price("gpt-4o-mini") == (1.0, 2.0)
    assert table.price("my-ft-v2") == (3.0, 4.0)


@pytest.mark.parametrize(
    "line",
    [
        pytest.param("gpt-4o 1 2", id="no-equals"),
        pytest.param("gpt-4o = 1", id="one-number"),
        pytest.param("= 1 2", id="no-prefix"),
        pytest.param("gpt-4o = one two", id="not-numbers"),
        pytest.param("gpt-4o = -1 2", id="negative"),
    ],
)
def test_bad_price_line(line: str) -> None:
    """A malformed price line says what the syntax is."""
    with pytest.raises(PriceLineError, match="model-prefix = input output"):
        parse_price_lines([line])
