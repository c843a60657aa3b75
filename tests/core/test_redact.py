"""Credential-shaped text is redacted wherever it appears, in any case the shape allows, and
ordinary prose (which skips the shapes' scans) comes through unchanged."""

import pytest

from core.redact import MASK, MEMO_CHARS, MEMO_ENTRIES, Redactor

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(("text", "kept"), [
    ("postgresql://app:s3cretpass@db:5432/x", "postgresql://app:"),
    ("HTTPS://User:Pa55word@host/", "HTTPS://User:"),
    ("GET /search?q=cats&API_KEY=abc123def", "GET /search?q=cats&API_KEY="),
    ("config: {'Api-Key': 'abcdef123456'}", "config: {'Api-Key': '"),
    ("PASSWORD=hunter2hunter2", "PASSWORD="),
    ("Client_Secret: 0123456789abcdef", "Client_Secret: "),
    ("Authorization: Bearer abcdef0123456789xyz", "Authorization: Bearer "),
    ("slack said xoxb-1234-5678-abcdef", "slack said "),
    ("key sk-ant-0123456789abcdefghij", "key "),
    ("tavily tvly-dev-0123456789", "tavily "),
    ("gh token ghp_0123456789abcdefghijABCD", "gh token "),
])
def test_each_credential_shape_is_redacted(text: str, kept: str) -> None:
    redacted = Redactor()(text)
    assert redacted.startswith(kept) and MASK in redacted
    assert text[len(kept):] not in redacted


def test_prose_and_configured_values() -> None:
    redactor = Redactor()
    prose = ("Bearer bonds pay interest; the key point is that a token economy rewards "
             "behaviour (see https://example.org/a?b=c). Ünïcödé İstanbul stays as written.")
    assert redactor(prose) == prose
    redactor.add("Configured-Secret-991")
    assert redactor("it said Configured-Secret-991 twice: Configured-Secret-991") == \
        f"it said {MASK} twice: {MASK}"


def test_a_kept_redaction_is_dropped_when_a_secret_is_added() -> None:
    """Texts redacted before are answered from what was kept, until a secret is added: then
    the same text is redacted again with it; and only the latest MEMO_ENTRIES are kept."""
    redactor = Redactor()
    text = "the stored answer mentions Added-Later-Secret-42 once"
    assert redactor(text) == text
    assert redactor(text) == text  # kept
    redactor.add("Added-Later-Secret-42")
    assert redactor(text) == f"the stored answer mentions {MASK} once"
    long = "x" * (MEMO_CHARS + 1) + " password=hunter2hunter2"
    assert redactor(long).endswith(f"password={MASK}")
    for n in range(MEMO_ENTRIES + 10):
        assert redactor(f"text {n}") == f"text {n}"
    _, kept = redactor._current
    assert len(kept) == MEMO_ENTRIES and long not in kept and "text 0" not in kept
