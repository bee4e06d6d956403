"""Consent: every worker's view of the consent topic and the fence before a verdict."""
