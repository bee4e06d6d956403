"""Every kind of planted value: its generator, its sentence templates and its recall target."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from benchmarks.recall import network, numbers, people, secrets
from benchmarks.recall.source import Source, Value

__all__ = ["KINDS", "STRUCTURAL", "TEMPLATES", "TEXTUAL", "Kind"]

#: Issue 29's recall targets: structural kinds, and names and addresses.
STRUCTURAL, TEXTUAL = 0.99, 0.95

#: Sentence templates by topic, as (sample field, text with ``{v}``): plan objectives and
#: steps, rejection reasons, user corrections and A2E prompts, as agent runtimes carry them.
TEMPLATES: dict[str, tuple[tuple[str, str], ...]] = {
    "person": (
        ("objective", "Escalate to {v} before the deploy window."),
        ("objective", "Schedule a handover call with {v} about the billing migration"),
        ("step", "Ask {v} to review the rollback plan"),
        ("step", "Assign next week's on-call rotation to {v}"),
        ("reason", "{v} already owns this service; talk to them first."),
        ("reason", "Rejected: {v} is on leave until Monday"),
        ("correction", "No, the ticket was opened by {v}, not by the reporter"),
        ("correction", "Send the summary to {v} instead of the whole team"),
        ("prompt", "Draft a reply to {v} explaining why the refund took five days"),
        ("prompt", "Who approved the access request from {v} last quarter?"),
    ),
    # Held out: written after the name finder's cue, label and verb lists, and on purpose
    # not from them (several labels, verbs and positions below are in none of its lists), so
    # recall here says how the finder does on shapes it was not tuned to.
    "person_heldout": (
        ("reason", "Reviewer: {v}"),
        ("reason", "DRI: {v}"),
        ("step", "Escalation path: {v}, then the platform lead"),
        ("objective", "Point of contact for the migration: {v}"),
        ("reason", "{v} approved the change yesterday"),
        ("reason", "{v} is out today, so the window moves"),
        ("correction", "{v} needs the dashboard by noon"),
        ("correction", "{v} can't make the review; push it a day"),
        ("reason", "Blocked. {v} wants a canary first."),
        ("prompt", "Per '{v}', the canary stays at 5 %"),
        ("prompt", 'Forward the incident summary to "{v}"'),
        ("step", "Pair with {v}"),
        ("correction", "Thanks, {v}"),
        ("objective", "Rotate the pager so it is not {v} again"),
        ("reason", "Last touched by {v}"),
        ("prompt", "What did {v} decide about the retention policy?"),
    ),
    "place": (
        ("objective", "Ship the replacement router to {v} by Thursday"),
        ("objective", "Verify the invoice address {v} against the contract"),
        ("step", "Update the billing address to {v}"),
        ("step", "Send the signed contract by post to {v}."),
        ("reason", "The customer moved; {v} is no longer valid"),
        ("correction", "Use the warehouse at {v}, not the old depot"),
        ("prompt", "Write a delivery note for {v}"),
    ),
    "contact": (
        ("objective", "Fix the login 500 error reported by {v}"),
        ("objective", "Follow up with {v} about the failed deploy and write a postmortem"),
        ("step", "Notify {v} when the migration finishes"),
        ("step", "Add {v} to the incident channel"),
        ("reason", "Please ask {v} first"),
        ("reason", "Wrong contact ({v}), that is the legacy team"),
        ("correction", "Also notify on-call at {v}"),
        ("correction", "The contact is {v}, the old one bounced"),
        ("prompt", "Summarise the thread with {v} in three bullet points"),
    ),
    "payment": (
        ("objective", "Migrate billing for {v} to the new processor"),
        ("step", "Refund the last charge on {v}"),
        ("step", "Verify that {v} matches the invoice"),
        ("reason", "Too risky: {v} is the company account"),
        ("correction", "The payout goes to {v}, not the one on file"),
        ("prompt", "Why was the payment from {v} declined twice?"),
    ),
    "identity": (
        ("objective", "Update the employee record with {v}"),
        ("objective", "Verify identity for the loan application ({v})"),
        ("step", "Check {v} against the HR system"),
        ("reason", "Rejected: the form shows {v} and it does not match"),
        ("correction", "The applicant's id is {v}; fix the typo"),
        ("prompt", "Fill in the onboarding form for the new hire, {v}"),
    ),
    "network": (
        ("objective", "Block traffic from {v} on the edge firewall"),
        ("step", "Allow {v} in the staging security group"),
        ("step", "Check the DHCP lease for {v}"),
        ("reason", "{v} is the bastion host, do not touch it"),
        ("correction", "The failing device is {v}, not the printer"),
        ("prompt", "Why does {v} keep dropping off the VPN?"),
    ),
    "secret": (
        ("objective", "Rotate {v} before Friday's release"),
        ("step", "Set {v} in the staging environment"),
        ("step", "Move {v} to the vault and remove it from the repo"),
        ("reason", "The plan pastes {v} into a public ticket"),
        ("correction", "Use {v} for the deploy job instead"),
        ("prompt", "The CI job fails with {v}, why?"),
        ("prompt", "Here is my config: {v}"),
    ),
}


@dataclass(frozen=True)
class Kind:
    """A kind of planted value: what makes it, where it is written, what recall it needs."""

    name: str
    label: str
    make: Callable[[Source], Value]
    topic: str
    target: float | None  # None: reported, no target


def _kinds() -> tuple[Kind, ...]:
    k = Kind
    base = (
        k("person_name", "person names (Faker, 5 locales)", people.person_name, "person",
          TEXTUAL),
        k("person_name_unseen", "person names no list holds", people.unseen_name, "person",
          TEXTUAL),
        k("person_name_heldout", "person names, held-out templates (lone, titled, listed)",
          people.heldout_name, "person_heldout", TEXTUAL),
        k("postal_address", "postal addresses (Faker: US, GB, DE, FR)", people.address, "place",
          TEXTUAL),
        k("postal_address_unseen", "postal addresses, made-up streets and towns",
          people.unseen_address, "place", TEXTUAL),
        k("email_public", "emails, public domains", people.email_public, "contact", STRUCTURAL),
        k("email_internal", "emails, internal domains (.local .internal .corp .lan)",
          people.email_internal, "contact", STRUCTURAL),
        k("phone_national", "phones, national forms (US GB DE FR IN)", numbers.phone_national,
          "contact", STRUCTURAL),
        k("phone_international", "phones, international forms", numbers.phone_international,
          "contact", STRUCTURAL),
        k("credit_card", "cards, Luhn-valid, 9 networks", numbers.card, "payment", STRUCTURAL),
        k("iban", "IBANs (GB, DE, FR)", numbers.iban, "payment", STRUCTURAL),
        k("us_ssn", "US SSNs", numbers.us_ssn, "identity", STRUCTURAL),
        k("uk_nino", "UK National Insurance numbers", numbers.nino, "identity", STRUCTURAL),
        k("de_steuer_id", "DE Steuer-ID", numbers.steuer_id, "identity", STRUCTURAL),
        k("fr_insee", "FR INSEE / NIR", numbers.insee, "identity", STRUCTURAL),
        k("in_aadhaar", "IN Aadhaar", numbers.aadhaar, "identity", STRUCTURAL),
        k("in_pan", "IN PAN", numbers.pan, "identity", STRUCTURAL),
        k("passport", "passport numbers after a keyword", numbers.passport, "identity", STRUCTURAL),
        k("date_of_birth", "dates of birth after a birth keyword", people.date_of_birth,
          "identity", None),
        k("mac_address", "MAC addresses", network.mac, "network", STRUCTURAL),
        k("ipv4", "IPv4 addresses", network.ipv4, "network", STRUCTURAL),
        k("ipv6", "IPv6 addresses", network.ipv6, "network", STRUCTURAL),
        k("url_credentials", "URLs with a password", secrets.url_credentials, "secret", STRUCTURAL),
        k("key_assignment", "NAME_PASSWORD=… style assignments", secrets.assignment, "secret",
          STRUCTURAL),
        k("keyword_secret", "IBM Cloud / COS / Softlayer / Cloudant keys after their keyword",
          secrets.keyword_secret, "secret", STRUCTURAL),
        k("aws_key", "AWS key id (+ its secret beside it)", secrets.aws_pair, "secret", STRUCTURAL),
    )  # fmt: skip
    tokens = tuple(
        Kind(name, f"{name.replace('_', ' ')}, bare or after a keyword", make, "secret", STRUCTURAL)
        for name, make in secrets.TOKENS.items()
    )
    tail = (
        Kind("private_key", "PEM private key blocks", secrets.private_key, "secret", STRUCTURAL),
        Kind("high_entropy_quoted", "random keys, quoted after a word like 'secret'",
             secrets.high_entropy, "secret", STRUCTURAL),
        Kind("high_entropy_bare", "random keys, bare (no keyword, no quotes)",
             secrets.bare_entropy, "secret", None),
    )  # fmt: skip
    return base + tokens + tail


KINDS: dict[str, Kind] = {kind.name: kind for kind in _kinds()}
