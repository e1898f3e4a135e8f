"""The google-genai SDK against the loopback emulator: clients and the calls the Gemini tests make.

Each call returns what a test compares: the SDK objects' ``model_dump()`` without
``sdk_http_response`` (the raw HTTP headers the SDK copies in: a cassette keeps only the
headers an SDK reads, see the README's Gemini section).
"""

from __future__ import annotations

from typing import Any

from google import genai
from google.genai import types

MODEL = "gemini-2.5-flash"
EMBED_MODEL = "gemini-embedding-001"
# The SDK's own class statement warns (aiohttp discourages subclassing ClientSession).
SDK_WARNING = "Inheritance class AiohttpClientSession from ClientSession is discouraged"


def client(base_url: str, api_key: str, **options: Any) -> genai.Client:
    """A Gemini Developer API client sending to ``base_url`` (the emulator)."""
    http = types.HttpOptions(base_url=base_url, **options)
    return genai.Client(api_key=api_key, http_options=http)


def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


def dumped(answer: Any) -> Any:
    """An SDK answer as data, field by field (``sdk_http_response`` left out)."""
    return answer.model_dump(exclude={"sdk_http_response"})


def config(prompt_temperature: float = 0.2, **extra: Any) -> types.GenerateContentConfig:
    return types.GenerateContentConfig(temperature=prompt_temperature, **extra)


def tool_config() -> types.GenerateContentConfig:
    """A function tool, called by hand (automatic calling off: the test sends the result)."""
    return types.GenerateContentConfig(
        tools=[get_weather],
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
    )


def sync_calls(gemini: genai.Client, prompt: str = "What is the capital of France?") -> list[Any]:
    """generate, stream and embed, then a function-call round trip, as data."""
    out = [dumped(gemini.models.generate_content(model=MODEL, contents=prompt, config=config()))]
    out += [
        dumped(chunk)
        for chunk in gemini.models.generate_content_stream(
            model=MODEL, contents=f"Stream: {prompt}", config=config()
        )
    ]
    out.append(dumped(gemini.models.embed_content(model=EMBED_MODEL, contents=[prompt, "Paris"])))
    out += function_round_trip(gemini)
    return out


def function_round_trip(gemini: genai.Client) -> list[Any]:
    """A function call answered with its result: the call's signature goes back with it."""
    asked = types.Content(role="user", parts=[types.Part.from_text(text="Weather in Paris?")])
    first = gemini.models.generate_content(model=MODEL, contents=[asked], config=tool_config())
    called = first.candidates[0].content  # type: ignore[index]
    assert called is not None
    assert called.parts
    assert called.parts[0].function_call is not None
    assert called.parts[0].thought_signature  # bytes, sent back base64 encoded
    call = called.parts[0].function_call
    result = types.Part.from_function_response(name=str(call.name), response={"result": "sunny"})
    answer = types.Content(role="user", parts=[result])
    second = gemini.models.generate_content(
        model=MODEL, contents=[asked, called, answer], config=tool_config()
    )
    return [dumped(first), dumped(second)]
