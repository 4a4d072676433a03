"""Stand-in for the Python `openai` package, put on sys.path by tensorwise_llama_plugin.py ONLY where the real one is
not installed (it is not in Debian 12). Importing it works, so a test file that imports `openai` at module level is
still collected and its other tests run; a test that makes a client is skipped with the reason below. Nothing here
answers a request."""
import pytest

REASON = ("the Python openai package is not in Debian 12; the same calls are covered by the npm openai client tests "
          "in electron/serve/")


class OpenAI:
    def __init__(self, *args, **kwargs):
        pytest.skip(REASON)


class AsyncOpenAI(OpenAI):
    pass
