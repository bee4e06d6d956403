"""Fixtures the unit tests of several modules share."""

from __future__ import annotations

import pytest

from learnstream.streams.privacy.config import PrivacyConfig
from learnstream.streams.privacy.pii import Anonymizer


@pytest.fixture(scope="module")
def anonymizer() -> Anonymizer:
    """Build the default anonymizer once per module (loading the NER model is slow); a
    module testing other settings defines its own."""
    return Anonymizer(PrivacyConfig())
