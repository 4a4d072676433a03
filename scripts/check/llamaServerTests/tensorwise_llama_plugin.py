"""pytest plugin for running llama.cpp's server tests (tools/server/tests) against `tensorwise serve`.

Loaded with `-p tensorwise_llama_plugin` by electron/serve/compat/llamaServerTests.cpu.test.ts; llama.cpp's files are not
changed. It does five things, each for a reason that has nothing to do with what the tests check:

- The Python `openai` package is not in Debian 12 (the only registry CI reaches for Python). Only where it is missing,
  a stand-in module is put on sys.path whose client classes skip the calling test with that reason. The same client
  calls are covered by the npm `openai` client in electron/serve/*.cpu.test.ts. Where the real package is installed,
  it is used.
- conftest.py's session fixture calls ServerPreset.load_all(), which starts each preset once to download its model
  from Hugging Face. Nothing is downloaded here (the shim generates models), so load_all does nothing.
- The tests listed in the exclusion file (TENSORWISE_LLAMA_EXCLUDED, JSON written from
  electron/serve/testing/llamaServerTestSelection.ts) are deselected with their reason; an entry matching no collected
  test is an error, so the list cannot go stale unnoticed.
- Under pytest-xdist, each worker gets a port the runner found free (tensorwise_worker_port).
- Each test's outcome (and a skip's reason) is written to TENSORWISE_LLAMA_REPORT as JSON for the runner to check,
  and the deselected tests with their reasons beside it (.deselected).
"""
import importlib.util
import json
import os
import sys

import pytest

_HERE = os.path.dirname(os.path.abspath(__file__))
OPENAI_MISSING = importlib.util.find_spec("openai") is None
if OPENAI_MISSING:
    sys.path.insert(0, os.path.join(_HERE, "openai_missing"))

_excluded: list[dict] = []
_outcomes: list[dict] = []
_deselected: list[dict] = []


def _matches(nodeid: str, entry: str) -> bool:
    # an entry is a test (all its parameter sets) or one parameter set
    return nodeid == entry or nodeid.startswith(entry + "[")


def pytest_configure(config):
    path = os.environ.get("TENSORWISE_LLAMA_EXCLUDED")
    if path:
        with open(path, encoding="utf-8") as file:
            _excluded.extend(json.load(file))


@pytest.fixture(scope="session", autouse=True)
def tensorwise_worker_port(configure_worker_port, request):
    """conftest.py's configure_worker_port gives pytest-xdist worker N the fixed port 8080 + 10 N, where another
    program may already answer /health (utils.py would take it for the server it started). The runner hands each
    worker a port it found free instead (TENSORWISE_LLAMA_PORTS, comma-separated)."""
    ports = os.environ.get("TENSORWISE_LLAMA_PORTS")
    worker = getattr(request.config, "workerinput", {}).get("workerid")
    if ports and worker is not None:
        os.environ["PORT"] = ports.split(",")[int(worker[2:])]


def pytest_sessionstart(session):
    utils = sys.modules.get("utils")
    if utils is None:
        raise pytest.UsageError("llama.cpp's utils.py was not imported by its conftest.py: run pytest in tools/server/tests")
    utils.ServerPreset.load_all = staticmethod(lambda: None)


def pytest_collection_modifyitems(session, config, items):
    keep, drop = [], []
    used = set()
    for item in items:
        entry = next((e for e in _excluded if _matches(item.nodeid, e["test"])), None)
        if entry is None:
            keep.append(item)
        else:
            used.add(entry["test"])
            drop.append(item)
            _deselected.append({"test": item.nodeid, "reason": entry["reason"]})
    stale = [e["test"] for e in _excluded if e["test"] not in used]
    if stale:
        raise pytest.UsageError("exclusions that match no collected test (renamed or removed upstream?): " + ", ".join(stale))
    if drop:
        config.hook.pytest_deselected(items=drop)
    items[:] = keep


def pytest_runtest_logreport(report):
    if report.when == "call" or report.outcome != "passed":
        entry = {"test": report.nodeid, "when": report.when, "outcome": report.outcome}
        if report.skipped and isinstance(report.longrepr, tuple):
            entry["reason"] = report.longrepr[2]
        elif report.failed:
            entry["message"] = str(report.longrepr)[-3000:]
        _outcomes.append(entry)


def pytest_sessionfinish(session):
    path = os.environ.get("TENSORWISE_LLAMA_REPORT")
    if not path:
        return
    # under pytest-xdist the workers collect (and deselect) and the controller receives every outcome; all workers
    # collect the same tests, so any one's list of deselected tests is the list
    if _deselected:
        _write(path + ".deselected", _deselected)
    if not hasattr(session.config, "workerinput"):
        _write(path, {"openaiMissing": OPENAI_MISSING, "outcomes": _outcomes})


def _write(path, value):
    partial = f"{path}.{os.getpid()}"
    with open(partial, "w", encoding="utf-8") as file:
        json.dump(value, file, indent=1)
    os.replace(partial, path)
