"""PII anonymization of LearningSample payloads with Presidio (offline, cached)."""

from __future__ import annotations

import dataclasses
import hashlib
from collections import Counter, OrderedDict
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from presidio_analyzer import RecognizerResult as AnalyzerResult
from presidio_anonymizer import AnonymizerEngine, RecognizerResult

from learnstream.streams.privacy.cache import DigestCache
from learnstream.streams.privacy.config import NER_ENTITIES, PrivacyConfig
from learnstream.streams.privacy.escapes import line_view
from learnstream.streams.privacy.gates import MAY_HOLD_PII, WARM_TEXT, candidates
from learnstream.streams.privacy.grammar import is_thing, without_leading_verb, worth_parsing
from learnstream.streams.privacy.lists import UserLists
from learnstream.streams.privacy.namelists import listed_names
from learnstream.streams.privacy.names import (
    addressee,
    echoes,
    given_names,
    is_whole_name,
    may_hold_name,
    merge,
    name_spans,
    recipient,
    with_degrees,
    worth_ner,
)
from learnstream.streams.privacy.ner import NerDetector
from learnstream.streams.privacy.recognizers import build_analyzer
from learnstream.streams.privacy.results import (
    Found,
    absorb,
    logins_in_names,
    names_beside,
    operator,
    tagged,
)
from learnstream.streams.privacy.roles import (
    may_hold_one_case_name,
    may_take_role,
    one_case_addressee,
    one_case_names,
    one_case_reading,
    recased,
    recased_beside,
    role_spans,
)
from learnstream.streams.privacy.secrets import find_secrets, may_hold_secret
from learnstream.streams.privacy.walk import walk_sample

if TYPE_CHECKING:
    from spacy.tokens import Doc

__all__ = ["CACHE_SIZE", "Anonymizer", "build_anonymizer"]

CACHE_SIZE = 10_000
_Counts = tuple[tuple[str, int], ...]
_Spans = list[tuple[str, int, int]]
#: What a contact block holds besides the name heading it (``names.addressee``).
_CONTACT = frozenset({"STREET_ADDRESS", "PHONE_NUMBER"})
#: Marks a contact block's line may open with (``names.addressee``).
_LEAD_MARKS = "}?*>#-"


def _overlaps(span: tuple[str, int, int], others: list[tuple[int, int]]) -> bool:
    """Tell whether span overlaps one of the (start, end) ranges."""
    return any(a < span[2] and span[1] < b for a, b in others)


def _grammatical(
    text: str, spans: _Spans, doc: Doc | None, found: _Spans, known: frozenset[str]
) -> _Spans:
    """Return the spans the parsed text's grammar does not call things (all without a parse)."""
    if doc is None:
        return spans
    named = [(a, b) for _, a, b in found]
    spans = [without_leading_verb(doc, s) for s in spans]
    return [
        s
        for s in spans
        if not worth_parsing(text, s, found) or not is_thing(doc, s, _overlaps(s, named), known)
    ]


#: Texts whose ``_may_name`` answer is kept: a record's texts are asked three times in
#: turn (read ahead, ``_reading``, ``_names``), and a record holds a few dozen.
_ASKED_AGAIN = 1024


@lru_cache(maxsize=_ASKED_AGAIN)
def _may_name(text: str) -> bool:
    """Tell cheaply whether text could hold a name: by its capitals or scripts, or in lower
    case by its words (``roles.may_hold_one_case_name``)."""
    return may_hold_name(text) or may_hold_one_case_name(text)


def _last_line(text: str) -> str:
    """Return the text's last line but for its marks, empty for a text of one line."""
    body = text.rstrip()
    cut = body.rfind("\n")
    return body[cut + 1 :].strip(" \t" + _LEAD_MARKS) if cut >= 0 else ""


def _config_key(config: PrivacyConfig) -> bytes:
    """Return a digest of every setting that changes what a text anonymizes to."""
    return hashlib.sha256(repr(dataclasses.astuple(config)).encode()).digest()


@dataclasses.dataclass(frozen=True)
class _Seen:
    """What NER and the rules that read capitals find in texts, before the parse."""

    found: dict[str, _Spans]  # NER's spans, per text worth reading (``worth_ner``)
    spans: list[_Spans]  # per text, NER's spans checked and those found by use
    recased: dict[str, str]  # per text, its words in one case title-cased but the spans'
    cased: dict[str, tuple[str, _Spans]]  # per text, ``one_case_names`` where it found some


def _read_names(ner: NerDetector, texts: list[str]) -> _Seen:
    """Return what NER and the rules find in texts, then in their words in one case.

    The readings ``one_case_names`` needs depend on the spans found first, but are nearly
    always those of the texts title-cased whole: one ``nlp.pipe`` call reads the texts and
    those, and a second only the readings a span found changed.
    """
    worth = [t for t in texts if worth_ner(t)]
    titled = {t: recased(t, []) for t in texts}
    guessed = [g for t, r in titled.items() if (g := one_case_reading(t, [], r)) is not None]
    guessed = list(dict.fromkeys(guessed))
    ran = ner.find(worth + guessed)
    found = dict(zip(worth, ran[: len(worth)], strict=True))
    model = dict(zip(guessed, ran[len(worth) :], strict=True))
    spans = [name_spans(t, found.get(t, [])) for t in texts]
    reads = {t: recased_beside(t, titled[t], s) for t, s in zip(texts, spans, strict=True)}
    needed = {
        t: r
        for t, s in zip(texts, spans, strict=True)
        if (r := one_case_reading(t, s, reads[t])) is not None
    }
    missing = [r for r in dict.fromkeys(needed.values()) if r not in model]
    model |= dict(zip(missing, ner.find(missing) if missing else [], strict=True))
    cased = {
        t: c
        for t, s in zip(texts, spans, strict=True)
        if t in needed and (c := one_case_names(t, s, needed[t], model[needed[t]]))[1]
    }
    return _Seen(found, spans, reads, cased)


class Anonymizer:
    """Replace PII in sample payloads; engines are built once per instance."""

    def __init__(self, config: PrivacyConfig) -> None:
        """Build the Presidio analyzer, the NER model and the anonymizer (none if PII is off)."""
        self.config = config
        pii_on = config.anonymize_pii and bool(config.analyzed_entities)
        self._entities = [e for e in config.entities if e not in NER_ENTITIES]
        self._secrets = config.anonymize_pii and config.detect_secrets
        self._lists = UserLists(config.allow, config.deny)
        self._denies = config.anonymize_pii and bool(config.deny)
        self._enabled = self._secrets or pii_on or self._denies
        self._operators = {"DEFAULT": operator(config)}
        self._analyzer = build_analyzer(config) if pii_on and self._entities else None
        self._ner = NerDetector() if pii_on and config.ner else None
        self._engine = AnonymizerEngine()  # type: ignore[no-untyped-call]
        self._cache: DigestCache[tuple[str, _Counts]] = DigestCache(CACHE_SIZE, _config_key(config))
        # What ``anonymize_person`` answered, by the same digests: a person key's values recur
        # from record to record ("role-reviewer-001", "the reporter"), and telling whether one
        # is a whole name costs more than the lookup.
        self._people_cache: DigestCache[tuple[str, _Counts]] = DigestCache(
            CACHE_SIZE, _config_key(config)
        )
        self._ahead: dict[bytes, _Spans] = {}  # name spans found for a record's texts at once
        # The last texts no detector reads (``_reading`` gives None), so not asked again: most
        # of a record's strings ("pending", "Collect deploy logs") recur in later records, and
        # the answer depends on the text and the configuration alone. Such a text comes out
        # unchanged, so keeping it holds nothing the anonymizer would mask.
        self._unread: OrderedDict[str, None] = OrderedDict()

    def warm(self) -> None:
        """Run every configured recognizer once on made-up text (nothing is cached).

        Presidio, phonenumbers and spaCy load a good part of what they need on first use; a
        worker calls this at start, before it freezes its start-up objects out of the
        collector, so neither the first records nor every later full collection pays for it.
        """
        if self._enabled:
            self._anonymize_uncached(WARM_TEXT)

    def anonymize_text(self, text: str) -> tuple[str, Counter[str]]:
        """Return text with PII and secrets replaced and the count of entities found, by type."""
        if not self._enabled or not text:
            return text, Counter()
        if text in self._unread:
            self._unread.move_to_end(text)
            return text, Counter()
        key = self._cache.digest(text)
        todo: list[str] | None = None
        # A text in the cache was put there because it needed reading: it is not asked again.
        if key not in self._cache:
            todo = self._reading(text)
            if todo is None:
                self._unread[text] = None
                if len(self._unread) > CACHE_SIZE:
                    self._unread.popitem(last=False)
                return text, Counter()  # e.g. "src/app.py": a dot, but no entity's shape
        done = self._cache.get(key)
        if done is None:
            done = self._anonymize_uncached(text, self._ahead.pop(key, None), todo)
            self._cache.put(key, done)
        return done[0], Counter(dict(done[1]))

    def anonymize_person(self, text: str) -> tuple[str, Counter[str]]:
        """Return the value of a person key (``decided_by``): all of it a name if shaped so."""
        if self._ner is None:
            return self.anonymize_text(text)
        key = self._cache.digest(text)
        done = self._people_cache.get(key)
        if done is None:
            done = self._person_uncached(text)
            self._people_cache.put(key, done)
        return done[0], Counter(dict(done[1]))

    def _person_uncached(self, text: str) -> tuple[str, _Counts]:
        """Return a person key's value anonymized: whole when it is a name (memoized by
        anonymize_person)."""
        if not is_whole_name(text) or self._lists.allows_all(text):
            out, found = self.anonymize_text(text)
            return out, tuple(found.items())
        whole = [RecognizerResult("PERSON", 0, len(text), 1.0)]
        return self._engine.anonymize(text, whole, operators=self._operators).text, (("PERSON", 1),)

    def _reading(self, text: str) -> list[str] | None:
        """Return the pattern entities to run over text if any configured detector could find
        something in it (the list may be empty: a name, a secret or a denied word), else None.

        The pattern gates are asked first: ``_find`` needs their answer for every text read,
        so each text is gated once, whichever test says it needs reading.
        """
        if not self._enabled or not text:
            return None
        view = line_view(text)
        todo = self._pattern_entities(view)
        if (
            todo
            or (self._denies and self._lists.denies(text))
            or (self._ner is not None and _may_name(view))
            or (self._secrets and may_hold_secret(text))
        ):
            return todo
        return None

    def _may_hold_pii(self, text: str) -> bool:
        """Tell whether a configured pattern recognizer could match text at all."""
        return bool(self._pattern_entities(text))

    def _pattern_entities(self, view: str) -> list[str]:
        """Return the configured pattern entities whose recognizer could match the line view
        of a text (none with no pattern entity configured)."""
        if self._analyzer is None or not MAY_HOLD_PII.search(view):
            return []
        return self.candidates(view)

    def candidates(self, text: str) -> list[str]:
        """Return the configured pattern entities whose recognizer could match ``text``."""
        return candidates(self._entities, text)

    def find(self, text: str) -> Found:
        """Return what ``anonymize_text`` masks in text, each span with the recognizer that
        found it, and the PII hits the allow list lets through (``learnstream privacy
        explain``; nothing is cached or logged)."""
        todo = self._reading(text)
        return self._find(text, todo=todo) if todo is not None else Found([], [])

    def ner_spans(self, text: str) -> _Spans:
        """Return the spans the NER model itself finds in text, before any check (none
        with NER off)."""
        return self._ner.find([line_view(text)])[0] if self._ner is not None else []

    def _find(self, text: str, ahead: _Spans | None = None, todo: list[str] | None = None) -> Found:
        """Return the results to mask in text and the PII hits the allow list let through
        (``todo``: the pattern entities to run, when ``_reading`` has told them already)."""
        found, analyzer, view = [], self._analyzer, line_view(text)
        todo = self._pattern_entities(view) if todo is None else todo
        if analyzer is not None and todo:
            found = analyzer.analyze(view, language="en", entities=todo)
        pii = [tagged(r.entity_type, r.start, r.end, r.score, _analyzer_name(r)) for r in found]
        secrets = find_secrets(text) if self._secrets else []  # gated inside
        names = self._names(view, ahead) + self._addressee(view, pii)
        pii = logins_in_names(pii, names)
        pii += names_beside(pii, secrets, names)
        kept = self._lists.allowed(text, pii)  # the allow list never releases a secret
        results = self._lists.apply(text, absorb(kept, secrets) if secrets else kept)
        kept_ids = {id(r) for r in kept}
        return Found(results, [r for r in pii if id(r) not in kept_ids])

    def _anonymize_uncached(
        self, text: str, ahead: _Spans | None = None, todo: list[str] | None = None
    ) -> tuple[str, _Counts]:
        """Analyze and anonymize one string (memoized by anonymize_text)."""
        results = self._find(text, ahead, todo).results
        if not results:
            return text, ()
        out = self._engine.anonymize(
            text, results, operators=self._operators, merge_entities_with_spaces=False
        )
        return out.text, tuple(Counter(item.entity_type for item in out.items).items())

    def _addressee(self, text: str, pii: list[RecognizerResult]) -> _Spans:
        """Return the name heading a contact block in which an address or a phone was found,
        or whose last line is a place alone ("Rosalind Quibbet\n\nLYON\nFrance"), and the
        name written on the line above a street address."""
        contact = any(r.entity_type in _CONTACT for r in pii)
        last = _last_line(text)
        if self._ner is None or not (contact or last):
            return []  # one line and no address or phone: no block to head
        head = addressee(text) or one_case_addressee(text)
        if not contact:
            return [head] if head is not None and self._is_place(last) else []
        found = [head] if head is not None else []
        for r in pii:
            if r.entity_type == "STREET_ADDRESS" and (name := recipient(text, r.start)):
                found.append(name)
        return found

    def _is_place(self, line: str) -> bool:
        """Tell whether NER finds the line a place and nothing else: a letter's address
        block ending in its country ("…\nFrance")."""
        if self._ner is None:
            return False
        found = self._ner.find([line])[0]
        return any(e == "LOCATION" and a == 0 and b == len(line) for e, a, b in found)

    def _names(self, text: str, ahead: _Spans | None) -> _Spans:
        """Return the person and place spans of text (read ahead with its record, or now)."""
        if self._ner is None or not _may_name(text):
            return []
        return self._people(self._ner, [text])[0] if ahead is None else ahead

    @staticmethod
    def _people(ner: NerDetector, texts: list[str]) -> list[_Spans]:
        """Return, per text, its person and place spans that the grammar does not call things.

        NER's spans, checked, and those found by use, then the names the parse gives a
        person's role (``roles.py``) and those two population records vouch for
        (``namelists.py``); NER and the parse each run once over all the texts
        (``nlp.pipe``), the parse only over those holding a span or a role's word.
        """
        seen = _read_names(ner, texts)
        found, cased = seen.found, seen.cased
        spans = [
            s + cased[t][1] if t in cased else s for t, s in zip(texts, seen.spans, strict=True)
        ]
        held = [
            t
            for t, s in zip(texts, spans, strict=True)
            if any(worth_parsing(t, x, found.get(t, [])) for x in s) or may_take_role(t)
        ]
        # A role's word may fall on any word in one case; else only the names found so are
        # read title-cased, and every other word as written (``one_case_names``).
        read = {
            t: seen.recased[t] if may_take_role(t) else cased[t][0] if t in cased else t
            for t in held
        }
        docs = dict(zip(read, ner.parse(list(read.values())), strict=True))
        kept = [
            _grammatical(
                read.get(t, t) if t in cased else t, s, docs.get(t), found.get(t, []), ner.known
            )
            for t, s in zip(texts, spans, strict=True)
        ]
        people = [
            merge(
                s
                + given_names(t)
                + listed_names(t, found.get(t, []))
                + (role_spans(t, doc, s, ner.known) if doc else [])
            )
            for t, s in zip(texts, kept, strict=True)
            for doc in [docs.get(t)]
        ]
        return [
            with_degrees(t, merge(s + echoes(t, s))) for t, s in zip(texts, people, strict=True)
        ]

    def _read_names_ahead(self, texts: list[str]) -> None:
        """Find the names of a record's texts not read yet at once (batched NER and parse)."""
        if self._ner is None:
            return
        todo = {}
        for text in texts:
            key = self._cache.digest(text) if _may_name(text) else None
            if key is not None and key not in todo and key not in self._cache:
                todo[key] = line_view(text)
        if todo:
            found = self._people(self._ner, list(todo.values()))
            self._ahead = dict(zip(todo, found, strict=True))

    def anonymize_sample(self, sample: dict[str, Any]) -> tuple[dict[str, Any], Counter[str]]:
        """Return a new sample with its payload's PII and secrets replaced (see ``walk.py``)."""
        try:
            return walk_sample(
                sample, self.anonymize_text, self.anonymize_person, ahead=self._read_names_ahead
            )
        finally:
            self._ahead = {}


def _analyzer_name(result: AnalyzerResult) -> str:
    """Return the name of the Presidio recognizer that found result."""
    return str((result.recognition_metadata or {}).get("recognizer_name", "pattern"))


def build_anonymizer(config: PrivacyConfig) -> Anonymizer:
    """Build an Anonymizer for config (engines are constructed once, here)."""
    return Anonymizer(config)
