"""LLM inference cost and capacity calculator: serverless API, dedicated endpoint or self-hosted GPUs.

The share of each prompt that repeats an earlier prompt's start decides cost more than the engine
does: cached input is billed at a fraction of the input price and skips prefill. Everything here
is pure Python (no UI); the Streamlit app and the command line call it.
"""

__version__ = "0.1.0"
