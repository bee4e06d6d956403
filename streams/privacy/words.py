"""Word-level facts the name finder reads: tokens, name-shaped words, cues and known products.

Everything here is about the shape and the use of words, never a list of people or places:
a name is found by how text uses it ("ask X", "X approved", "X's"), and a capitalised word
is kept only when nothing about its shape says it is code, an id or a product.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, replace
from functools import lru_cache

from learnstream.streams.privacy.dictionary import is_common_word
from learnstream.streams.privacy.technology import is_tech_word

__all__ = [
    "word_set",
    "AFTER_VERBS",
    "CONNECTORS",
    "CUES",
    "DONE_VERBS",
    "FUNCTION_WORDS",
    "GIVING",
    "HONORIFICS",
    "HUMANS",
    "WORKS",
    "LABELS",
    "MODALS",
    "OBJECTS",
    "PARTICLES",
    "PERSONAL",
    "PERSON_VERBS",
    "SPEAKING",
    "SPEECH_VERBS",
    "TASK_VERBS",
    "Token",
    "is_code_shaped",
    "is_name_word",
    "is_product",
    "tokens",
]


def word_set(text: str) -> frozenset[str]:
    """Return the space-separated words of text as a set."""
    return frozenset(text.split())


#: Infrastructure and product names that agent text mentions in title case. A precision
#: guard only: a name the model or a cue would otherwise mask ("Add a Grafana alert").
_PRODUCTS = word_set(
    "kafka grafana prometheus kubernetes postgres postgresql redis mysql mongodb elasticsearch "
    "opensearch kibana jenkins docker helm terraform ansible nginx envoy istio consul vault "
    "jira confluence slack github gitlab bitbucket sentry datadog splunk pagerduty opsgenie "
    "airflow spark flink faust zookeeper rabbitmq celery django flask fastapi python java "
    "golang rust node linux ubuntu debian windows aws azure gcp cloudflare snowflake bigquery "
    "tableau looker stripe twilio okta auth0 openai anthropic loki tempo jaeger argo argocd "
    "rocksdb cassandra clickhouse minio ceph"
)
#: Days and months: capitalised by spelling, never a person ("by Thursday", "to May").
_CALENDAR = word_set(
    "monday tuesday wednesday thursday friday saturday sunday january february march april "
    "may june july august september october november december today tonight tomorrow yesterday"
)
#: Words that, right before a name, say it names a person (lower-cased, one or two words).
CUES = word_set(
    "ask asked ping pinged cc bcc from to by with contact contacted assign assigned owner "
    "reviewer reviewers approver approvers escalate escalated notify notified tell told "
    "thank thanks call email mail message dm invite invited behalf for "
    "assignee requester reporter manager colleague hi hello hey dear"
)
#: Labels that, before a colon, say the value after it is a person ("Reviewer: Dana",
#: "Approved by: Dana"): the cues, and role nouns that only label a person.
LABELS = CUES | word_set(
    "author authors approvers assignees owners contacts attendees participants members lead user "
    "on-call oncall signed-off-by co-authored-by reviewed-by acked-by"
)
#: Words joining names into one list ("Dana and Priya", "Dana, Priya and Ravi").
CONNECTORS = frozenset({",", "and", "or", "&", ", and", ", or"})
#: Lower-case words that, right after a name, say it is a person acting.
AFTER_VERBS = word_set(
    "approved rejected said says asked asks wrote writes owns owned wants wanted confirmed "
    "reported requested signed agreed declined is was were has had have will can should already "
    "joined left reviewed merged opened"
)
#: Verbs of speech: after a lone capitalised word opening a clause, only a person fits
#: ("Dana said", unlike "Deploy is" or "Rollback approved").
SPEECH_VERBS = word_set(
    "said says asked asks wrote writes replied replies agreed thinks thought mentioned "
    "suggested explained"
)
#: Verbs that, after a lone word opening a clause, only a person fits ("Dana wants", unlike
#: "Deploy is" or "Retry will run").
PERSON_VERBS = SPEECH_VERBS | word_set(
    "wants wanted agrees declined declines prefers preferred promised thinks insists"
)
#: Past tenses a step can take too ("Rollback approved"): a person's only with an object.
DONE_VERBS = word_set("approved rejected reviewed signed confirmed merged owns owned vetoed")
OBJECTS = word_set("it this that these those the a an them us me our my his her their off")
#: "Olusegun will review": a modal, then a task only a person takes on.
MODALS = word_set("will would can could should must")
TASK_VERBS = word_set(
    "review approve sign decide confirm reply respond join lead own handle take call ping email "
    "present chair"
)
#: Capitalised at the start of a clause by grammar, never a name on their own ("It wants",
#: "We will review", "Let's", "Yes, please").
FUNCTION_WORDS = word_set(
    "i you he she it we they me him her us them this that these those there here who what "
    "which when where why how let everyone everybody someone somebody anyone anybody nobody "
    "nothing something team all both each either neither none one yes no ok okay sure thanks "
    "hi hello hey also then now please so but and or if"
)


def _forms(stems: str) -> frozenset[str]:
    """Return the verbs' forms: base, -s, past and participle, -ing (``stem/past/participle``
    where irregular, ``stem`` alone where regular)."""
    out: set[str] = set()
    for item in stems.split():
        base, *irregular = item.split("/")
        out.add(base)
        out.add(base + ("es" if base.endswith(("s", "sh", "ch", "x", "z", "o")) else "s"))
        if base.endswith("e"):
            out |= {base + "d", base[:-1] + "ing"}
        elif base.endswith("y") and base[-2:-1] not in "aeiou":
            out |= {base[:-1] + "ied", base[:-1] + "ies", base + "ing"}
        else:
            out |= {base + "ed", base + "ing"}
        out |= set(irregular)
    return frozenset(out)


#: Verbs of a manner of speaking or of saying that only a person does: Levin's classes 37.3
#: and 37.7 (English Verb Classes and Alternations, 1993), without those machines and
#: programs do too ("report", "explain", "state", "ask", "reply", "complain", "hum").
SPEAKING = _forms(
    "babble bawl bellow blurt chatter croak drawl gasp giggle groan grumble grunt holler "
    "lisp mumble murmur mutter scream screech shout shriek snarl sob stammer stutter wail "
    "whimper whisper yell exclaim laugh sigh say/said remark confess confide apologise "
    "apologize retort"
)
#: Levin 13.1 (give verbs) and 37.1 (transfer of a message): a recipient is their indirect
#: object.
GIVING = _forms(
    "give/gave/given hand lend/lent/lent loan pass pay/paid/paid sell/sold/sold offer "
    "owe promise tell/told/told show/showed/shown teach/taught/taught send/sent/sent "
    "write/wrote/written email mail"
)
#: Nouns that say of someone that they are a person, or whose relative or founder they
#: are; nothing a program is: "Oskar is a kind person", "its founders: Lund and Okafor".
#: Singular and plural.
_HUMAN_NOUNS = word_set(
    "person man woman guy girl boy lady gentleman child kid friend colleague neighbour "
    "neighbor wife husband son daughter mother father parent brother sister uncle aunt "
    "cousin grandmother grandfather grandparent founder co-founder cofounder"
)
HUMANS = frozenset(w + s for w in _HUMAN_NOUNS for s in ("", "s")) | word_set(
    "people men women children"
)
#: Nouns of what a person writes, plays or performs, or is a fan of, which a name before
#: them is the author or the performer of: "the Pellacott novel", "a Rosalind Quibbet
#: concert", "a huge Tamsin Orvell fan" (a tool's name before a noun is a thing's: "the Qt
#: frontend").
_WORK_NOUNS = word_set(
    "novel poem memoir biography autobiography song ballad album concert gig recital "
    "painting portrait sculpture film movie fan admirer"
)
WORKS = frozenset(w + s for w in _WORK_NOUNS for s in ("", "s"))
#: Pronouns only a person takes ("its" is a thing's).
PERSONAL = word_set("his her him himself herself")
HONORIFICS = word_set("mr mrs ms miss dr prof herr frau m mme mlle sir madam")
#: Degrees and titles written after a name ("Dana Whitfield PhD", "Priya Raman MD").
POSTNOMINALS = word_set("phd md dvm dds jr sr ii iii iv esq mba msc bsc cpa rn")
#: Abbreviations a message writes in capitals beside the person it asks ("Dana Whitfield
#: PTAL", "ask Dana Whitfield ASAP", "FYI Priya"): English words, never a product's or a
#: name's, so neither makes the name beside it a thing's.
MESSAGE_ABBREVIATIONS = word_set(
    "asap ptal fyi eod eow cob lgtm sgtm tbd tba wip afaik iirc imo imho eta ooo pto btw "
    "rsvp aka icymi wfh afk tia nb"
)
#: Lower-case parts of surnames ("Ludwig van Beethoven", "Ahmad bin Ali").
PARTICLES = word_set("van von de der den da di du del della la le bin binti ibn al ter zu")

#: A run between spaces, cut after a colon a quotation opens right after, as a chat or a
#: script writes who speaks a line ('Ines:"Not today"').
_WORD = re.compile(r"\S+?:(?=[\"“«])|\S+")
_LEAD, _TRAIL = "([{\"'«“‘", ")]}\"'.,;:!?»”’"
_OPENING = "([{"
_POSSESSIVE = re.compile(r"['’]s?$")
_NAME_WORD = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*")
_CLAUSE_END = frozenset(".;:!?")
#: What ends a clause between two words: its punctuation, or a line break.
_BREAKS = _CLAUSE_END | {"\n"}
_SPACE = re.compile(r"\s*")
#: A lower-case letter then a capital inside a word: where camel-case humps join.
_HUMP = re.compile(r"(?<=[^\W\d_])(?<=[^\W\dA-Z_])[A-Z]")
#: Two capitals before the first lower-case letter: an acronym prefix, not a name.
_CAPITALS_FIRST = re.compile(r"[A-Z]{2,}[a-z]")
#: What comes before a capital inside a person's name: Mc/Mac, the particles written
#: joined (DeShawn, LaToya, DiCaprio, VanDyke), Fitz, and the given-name prefixes that take a
#: capital after them (JaMarcus, KeShawn, DaQuan, ReShonda, ShaQuille, TaNisha).
_HUMP_PREFIXES = word_set("mc mac de di da du la le lo van von fitz ja ke re sha ta")


@dataclass(frozen=True)
class Token:
    """A whitespace-delimited word: its core (punctuation stripped) and where it stands."""

    core: str
    start: int  # of the core
    end: int  # of the core, before a possessive
    possessive: bool
    opens_clause: bool  # first word of the text or of a line, or after . ; : ! ?
    closes: bool  # punctuation or a line break after it ends a run of name words


def tokens(text: str) -> list[Token]:
    """Return the words of text with their cores and clause positions."""
    return list(_tokens(text))


#: The rules of one text read its words several times over (``names.py``, ``roles.py``);
#: a record's texts are read one after the other, so a few suffice.
_READ_AGAIN = 16


@lru_cache(maxsize=_READ_AGAIN)
def _tokens(text: str) -> tuple[Token, ...]:
    """Return the words of text (``tokens``), read once for the rules that read it again."""
    out: list[Token] = []
    for m in _WORD.finditer(text):
        raw = m.group()
        core = raw.lstrip(_LEAD)
        start = m.start() + len(raw) - len(core)
        trail = core[len(core.rstrip(_TRAIL)) :]
        core = core.rstrip(_TRAIL)
        possessive = bool(_POSSESSIVE.search(core)) and len(core) > 2
        if possessive:
            core = _POSSESSIVE.sub("", core)
        opens = not out or out[-1].closes and bool(set(text[out[-1].end : start]) & _BREAKS)
        # "Dana K. Whitfield", "Dr. Smith": an initial or an honorific does not end the name
        initial = trail == "." and (len(core) == 1 and core.isupper() or core.lower() in HONORIFICS)
        # a line break ends the run too: "Name: Dana Whitfield\nPhone: ..." is a form's line
        broken = "\n" in _SPACE.match(text, m.end()).group()  # type: ignore[union-attr]
        closes = bool(trail) and not initial or broken
        if out and raw[0] in _OPENING and not out[-1].closes:
            # "fonts for X (Cronyx collection)", "Chinese (China)": a bracket opens an aside,
            # so the word before it ends its run of name words as punctuation after it would
            out[-1] = replace(out[-1], closes=True)
        out.append(Token(core, start, start + len(core), possessive, opens, closes))
    return tuple(out)


def is_product(word: str) -> bool:
    """Tell whether a word is a known product or a calendar word (never a person)."""
    low = word.lower()
    return low in _PRODUCTS or low in _CALENDAR


def is_caseless(word: str) -> bool:
    """Tell whether a word is written in a script that has no capitals: its letters are
    neither upper nor lower case (Unicode's "other letter"), its marks and zero-width
    joiners go with them, and dots may part initials."""
    if not word or word[0].isascii():
        return False
    parts = word.rstrip(".").split(".")  # initials: के.सी.
    return all(p and _caseless_part(p) for p in parts)


def _caseless_part(word: str) -> bool:
    """Tell whether word is caseless letters, their marks and the joiners between them."""
    kinds = [unicodedata.category(c) for c in word]
    return kinds[0] == "Lo" and all(k in ("Lo", "Cf") or k[0] == "M" for k in kinds)


def is_name_word(word: str) -> bool:
    """Tell whether a word is shaped like a name: capitalised letters, no code or id marks,
    or a word of a script without capitals (Han, Hangul, kana, Arabic, Devanagari): there
    no capital can mark a name, so its use alone decides, as for a capitalised word."""
    if is_caseless(word):
        return True
    if not word or not word[0].isupper() or not _NAME_WORD.fullmatch(word):
        return False
    if word.isupper() and len(word) > 1:  # HTTP, INC, SLA: acronyms, not names
        return False
    if _CAPITALS_FIRST.match(word):
        return False  # IPython, KDevelop, FFmpeg: a name's second letter is lower case
    humps = [m.start() for m in _HUMP.finditer(word)]
    if len(humps) > 1 or (humps and word[: humps[0]].lower() not in _HUMP_PREFIXES):
        return False  # SessionStore, NumPy, QtConsole: code; McDonald, DeShawn, LaToya: names
    parts = re.split(r"[-'’]", word)
    if not all(p[:1].isupper() or p.lower() in PARTICLES for p in parts) or is_product(word):
        return False
    if "-" in word and any(len(p) == 1 for p in word.split("-")):
        return False  # Mach-O, X-Ray, T-Mobile: a letter joined by a hyphen names a thing
    return not _compound_of_things(word)


def _compound_of_things(word: str) -> bool:
    """Tell whether a hyphenated word joins words none of which is a name: English words
    and software words ("Font-Awesome", "Python-Markdown", "Open-Source"). A double name
    holds a word that is somewhere a name ("Smith-Jones", "Anne-Sophie")."""
    parts = word.split("-")
    if len(parts) < 2:
        return False
    return all(is_product(p) or is_common_word(p) or is_tech_word(p) for p in parts)


def is_code_shaped(word: str) -> bool:
    """Tell whether a capitalised word is a product's or a tool's, by shape or by name.

    A known product ("Airflow", "Flask"), or a capitalised word no name is shaped like: a
    capital inside it ("EventBridge", "WiFi", "LXQt", "NumPy"), a digit, or four capitals
    or more ("ONNX", "GNOME"). Short capitals ("IBM", "CEO", "MD") and degrees written
    after a name ("PhD") are left: they stand beside people's names too.
    """
    known = word.lower() in _PRODUCTS  # not the calendar: "ask Dana today"
    if word.isupper() and word.lower() in MESSAGE_ABBREVIATIONS:
        return False  # "Dana Whitfield PTAL": a request to the person, no product
    if not word[:1].isupper() or word.lower() in POSTNOMINALS or known:
        return known
    if word.isupper():
        return word.isalpha() and len(word) >= 4
    if any(map(str.isdigit, word)) or _CAPITALS_FIRST.match(word):
        return True
    humps = [m.start() for m in _HUMP.finditer(word)]
    return len(humps) > 1 or bool(humps) and word[: humps[0]].lower() not in _HUMP_PREFIXES
