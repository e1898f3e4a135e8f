"""Shared by the isolation attack tests: the inner runs' provider calls (``calls.py`` in the
pytester folder), and the summary lines every refusing run prints."""

from __future__ import annotations

import pytest

# The SDKs are imported only where used (openai ~2 s, anthropic ~4 s of CPU in each fresh
# process): the subprocess runs, which test the session rather than a client, use ``raw``.
CALLS = """
import os


def raw(method="GET", path="/models"):
    import httpx2

    url = os.environ["OPENAI_BASE_URL"] + path
    body = {"model": "gpt-4o-mini"} if method == "POST" else None
    return httpx2.request(method, url, json=body, timeout=2)


def oa(**options):
    import openai

    return openai.OpenAI(max_retries=0, **options)


def chat(client=None):
    client = client or oa()
    return client.chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": "hi"}]
    )


def claude_tokens():
    import anthropic

    return anthropic.Anthropic(max_retries=0).messages.count_tokens(
        model="claude-3-5-haiku-latest", messages=[{"role": "user", "content": "hi"}]
    )
"""


# Every real provider API host in its regional and cloud forms (and spellings of them), with
# the provider the catalog names: the unit test checks the names, the integration test that a
# request to each, through every client, is refused before its name is resolved.
PROVIDER_HOSTS = {
    "api.openai.com": "OpenAI",
    "eu.api.openai.com": "OpenAI",
    "us.api.openai.com": "OpenAI",
    "API.OpenAI.COM.": "OpenAI",  # case and the trailing dot of a fully qualified name
    "x.openai.azure.com": "Azure OpenAI",
    "x.cognitiveservices.azure.com": "Azure AI services",
    "x.services.ai.azure.com": "Azure AI Foundry",
    "x.openai.azure.us": "Azure OpenAI (US Government)",
    "api.anthropic.com": "Anthropic",
    "generativelanguage.googleapis.com": "Google Gemini",
    "aiplatform.googleapis.com": "Google Vertex AI",
    "us-east5-aiplatform.googleapis.com": "Google Vertex AI",  # Claude on Vertex
    "europe-west4-aiplatform.googleapis.com": "Google Vertex AI",
    "bedrock-runtime.us-east-1.amazonaws.com": "Amazon Bedrock",  # Claude on Bedrock
    "bedrock.eu-west-1.amazonaws.com": "Amazon Bedrock",
    "bedrock-runtime-fips.us-gov-west-1.amazonaws.com": "Amazon Bedrock",
    "bedrock-runtime.cn-north-1.amazonaws.com.cn": "Amazon Bedrock",
    "api.groq.com": "Groq",
    "api.mistral.ai": "Mistral",
    "api.together.xyz": "Together",
    "openrouter.ai": "OpenRouter",
    "api.deepseek.com": "DeepSeek",
    "api.x.ai": "xAI",
    "api.fireworks.ai": "Fireworks",
    "api.cohere.com": "Cohere",
    "api.perplexity.ai": "Perplexity",
    "api.cerebras.ai": "Cerebras",
    "api.ai21.com": "AI21",
    "api.voyageai.com": "Voyage",
    "router.huggingface.co": "Hugging Face inference",
    "api.replicate.com": "Replicate",
    "integrate.api.nvidia.com": "NVIDIA NIM",
    "api.openаi.com": "OpenAI",  # a Cyrillic a: the look-alike is read as the name it imitates
    "ollama.com": "Ollama Cloud",  # Ollama Cloud
    "eastus.api.cognitive.microsoft.com": "Azure AI services",  # Azure OpenAI's regional endpoints
    "x.cognitiveservices.azure.cn": "Azure AI services (China)",
    "generativelanguage.mtls.googleapis.com": "Google Gemini",
    "aiplatform.us-central1.rep.googleapis.com": "Google Vertex AI",  # Vertex regional endpoints
    "bedrock-runtime.us-east-1.api.aws": "Amazon Bedrock",  # AWS dual-stack
    "bedrock-runtime-fips.us-east-1.api.aws": "Amazon Bedrock",
    "models.github.ai": "GitHub Models",
    "api.z.ai": "Z.ai",
    "x@api.openai.com": "OpenAI",  # userinfo is not the host
    "my-res.openai.azure.com": "Azure OpenAI",
    "my-res.cognitiveservices.azure.com": "Azure AI services",
    "my-res.services.ai.azure.com": "Azure AI Foundry",
    "us-central1-aiplatform.mtls.googleapis.com": "Google Vertex AI",
    "bedrock-agent-runtime.eu-central-1.amazonaws.com": "Amazon Bedrock",
    "vpce-1.bedrock-runtime.us-east-1.vpce.amazonaws.com": "Amazon Bedrock",
    "runtime.sagemaker.us-west-2.amazonaws.com": "Amazon SageMaker runtime",
}


def refused_lines(result: pytest.RunResult, *lines: str) -> None:
    """The run's summary has the refused-calls section, and ``lines`` in order."""
    result.stdout.fnmatch_lines(
        ["*provider-cassettes: live calls refused*", "*live call* refused before connecting*"]
    )
    if lines:
        result.stdout.fnmatch_lines(list(lines))
