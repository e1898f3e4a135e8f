"""Provider API domains the isolation guard knows beyond the catalog's endpoints.

A host is a provider's when it is one of these domains or below one (``eu.api.openai.com``),
or matches one of the patterns (regional Vertex, Bedrock and SageMaker runtimes).
"""

from __future__ import annotations

import re

# Domains whose every subdomain is the provider's API: (domain, provider).
PROVIDER_DOMAINS: tuple[tuple[str, str], ...] = (
    ("openai.com", "OpenAI"),  # api.openai.com, eu.api.openai.com, any regional *.api.openai.com
    ("openai.azure.com", "Azure OpenAI"),
    ("openai.azure.us", "Azure OpenAI (US Government)"),
    ("openai.azure.cn", "Azure OpenAI (China)"),
    ("cognitiveservices.azure.com", "Azure AI services"),
    ("cognitiveservices.azure.us", "Azure AI services (US Government)"),
    ("cognitiveservices.azure.cn", "Azure AI services (China)"),
    ("api.cognitive.microsoft.com", "Azure AI services"),  # regional: eastus.api.cognitive…
    ("services.ai.azure.com", "Azure AI Foundry"),
    ("models.ai.azure.com", "Azure AI serverless models"),
    ("inference.ai.azure.com", "Azure AI inference"),
    ("inference.ml.azure.com", "Azure ML online endpoints"),
    ("anthropic.com", "Anthropic"),
    ("claude.ai", "Anthropic"),
    ("generativelanguage.googleapis.com", "Google Gemini"),
    ("generativelanguage.mtls.googleapis.com", "Google Gemini"),
    ("aiplatform.googleapis.com", "Google Vertex AI"),
    ("aiplatform.mtls.googleapis.com", "Google Vertex AI"),
    ("groq.com", "Groq"),
    ("mistral.ai", "Mistral"),
    ("together.xyz", "Together"),
    ("together.ai", "Together"),
    ("openrouter.ai", "OpenRouter"),
    ("deepseek.com", "DeepSeek"),
    ("x.ai", "xAI"),
    ("fireworks.ai", "Fireworks"),
    ("cohere.com", "Cohere"),
    ("cohere.ai", "Cohere"),
    ("perplexity.ai", "Perplexity"),
    ("cerebras.ai", "Cerebras"),
    ("ai21.com", "AI21"),
    ("voyageai.com", "Voyage"),
    ("api-inference.huggingface.co", "Hugging Face inference"),
    ("router.huggingface.co", "Hugging Face inference"),
    ("endpoints.huggingface.cloud", "Hugging Face inference endpoints"),
    ("replicate.com", "Replicate"),
    ("api.nvidia.com", "NVIDIA NIM"),
    ("sambanova.ai", "SambaNova"),
    ("deepinfra.com", "DeepInfra"),
    ("novita.ai", "Novita"),
    ("hyperbolic.xyz", "Hyperbolic"),
    ("lambda.ai", "Lambda"),
    ("lambdalabs.com", "Lambda"),
    ("moonshot.cn", "Moonshot"),
    ("moonshot.ai", "Moonshot"),
    ("dashscope.aliyuncs.com", "Alibaba DashScope"),
    ("dashscope-intl.aliyuncs.com", "Alibaba DashScope"),
    ("bigmodel.cn", "Zhipu"),
    ("minimax.chat", "MiniMax"),
    ("minimaxi.com", "MiniMax"),
    ("01.ai", "01.AI"),
    ("llama.com", "Meta Llama API"),
    ("jina.ai", "Jina"),
    ("mixedbread.ai", "Mixedbread"),
    ("nomic.ai", "Nomic"),
    ("aleph-alpha.com", "Aleph Alpha"),
    ("reka.ai", "Reka"),
    ("upstage.ai", "Upstage"),
    ("writer.com", "Writer"),
    ("friendli.ai", "Friendli"),
    ("featherless.ai", "Featherless"),
    ("nebius.ai", "Nebius AI Studio"),
    ("nebius.com", "Nebius AI Studio"),
    ("baseten.co", "Baseten"),
    ("runpod.ai", "RunPod"),
    ("stability.ai", "Stability"),
    ("elevenlabs.io", "ElevenLabs"),
    ("assemblyai.com", "AssemblyAI"),
    ("deepgram.com", "Deepgram"),
    ("predibase.com", "Predibase"),
    ("gateway.ai.cloudflare.com", "Cloudflare AI Gateway"),
    ("portkey.ai", "Portkey"),
    ("helicone.ai", "Helicone"),
    ("ai-gateway.vercel.sh", "Vercel AI Gateway"),
    ("ollama.com", "Ollama Cloud"),
    ("models.github.ai", "GitHub Models"),
    ("z.ai", "Z.ai"),
)

# Hosts a domain list cannot say: regional Vertex (``us-east5-aiplatform.googleapis.com``),
# Bedrock and SageMaker runtimes in any region, FIPS and VPC-endpoint forms, China partition.
PROVIDER_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"(?:^|\.)[a-z0-9-]+-aiplatform(?:\.mtls)?\.googleapis\.com$"), "Google Vertex AI"),
    # Regional endpoints: aiplatform.us-central1.rep.googleapis.com
    (re.compile(r"(?:^|\.)aiplatform\.[a-z0-9-]+\.rep\.googleapis\.com$"), "Google Vertex AI"),
    (
        # amazonaws.com(.cn), and the dual-stack api.aws
        re.compile(
            r"(?:^|\.)bedrock[a-z0-9-]*\.(?:[a-z0-9-]+\.)*(?:amazonaws\.com(?:\.cn)?|api\.aws)$"
        ),
        "Amazon Bedrock",
    ),
    (
        re.compile(
            r"(?:^|\.)runtime\.sagemaker\.(?:[a-z0-9-]+\.)*(?:amazonaws\.com(?:\.cn)?|api\.aws)$"
        ),
        "Amazon SageMaker runtime",
    ),
)

# Headers that carry a provider's key where no catalog endpoint lists them yet (Gemini's).
OTHER_KEY_HEADERS: tuple[str, ...] = ("x-goog-api-key",)
