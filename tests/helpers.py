"""Paths and small helpers the tests share (imported by the tests, not a pytest plugin)."""
from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
KERNELS = ROOT / "tests" / "fixtures" / "kernels"
HANDWRITTEN = ROOT / "tests" / "fixtures" / "handwritten"
ALL_KERNELS = sorted(KERNELS.glob("*.cu"))


def fixture(name: str) -> Path:
    return KERNELS / name


def lsp_test_client(published=None):
    """pytest-lsp's test client for the server tests: answers the server's inlay-hint refresh and
    capability registrations; `published(ls, params)`, when given, also receives every
    publishDiagnostics (after the client has stored it in `ls.diagnostics`)."""
    from lsprotocol import types as lsp
    from pygls.protocol import default_converter
    from pytest_lsp import LanguageClient
    from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

    features = {**DEFAULT_CLIENT_FEATURES, lsp.WORKSPACE_INLAY_HINT_REFRESH: lambda ls, params: None,
                lsp.CLIENT_REGISTER_CAPABILITY: lambda ls, params: None}
    if published is not None:
        def store(ls, params):
            ls.diagnostics[params.uri] = params.diagnostics
            published(ls, params)
        features[lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = store
    client = LanguageClient(converter_factory=default_converter)
    register_lsp_features(client, features)
    return client
