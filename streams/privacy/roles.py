"""Names found by the roles the parse gives them: roles only a person takes in a sentence.

A lone capitalised word is a name as often as a tool's ("Zenity", "Hunspell"), and where no
cue, title or second name word marks it, only the sentence's grammar can: some roles are
taken by people and not by programs. The tagger and parser (``ner.py``'s ``parse``) give
each word its role; a name-shaped word the model tags a proper noun (any tag for a word of
another script, whose tag is a guess) is a person's name when it is

- the subject of a verb of a manner of speaking or of saying that only a person does
  ("Ines shouted at Tomasz", "said Oskar"): Levin's verb classes 37.3 and 37.7 (English Verb
  Classes and Alternations, 1993), without the verbs machines and programs do too
  ("report", "explain", "state", "ask", "reply", "complain", "hum", "roar");
- the object of "at", "to" or "with" hanging from such a verb ("shouted at Tomasz", "said
  Oskar to Lene");
- the indirect object of a verb of giving or telling (Levin 13.1, 37.1) whose subject is a
  person: "he", "she", "they" or a name ("Oskar had handed Lene his address"; not "It
  sends Hunspell the word list", nor the imperative "Give Zorbel more memory");
- the subject of a clause in which "his", "her", "him", "himself" or "herself" stands
  ("Brannigan sold his old guitars", "Okafor began painting, selling her first canvas"),
  or of a sentence the next one refers to with such a pronoun ("Tavish is back from leave.
  Ask him first."): a person's pronoun, which programs never take ("its").
  "He" and "she" are not read in the next sentence: they open a sentence about someone
  else as often ("Zorbel is a parser. Its author says he wrote it");
- the subject of "is" or "was" whose attribute is a noun for a person (``words.HUMANS``:
  "Brannigan is a kind person", "Lene was his best friend"), and the names set beside such
  a noun, listed or not ("its two founders: Orvell and Brisvane"): a program is
  called a tool, a parser or a library, never a person, a friend or a founder;
- the subject of "is" or "was" from a place's or a firm's name, with no attribute and no
  determiner before that name ("Brisvane is from Tollard Corp"; not "Zenity is from the
  GNOME project").

A word that is English (``dictionary.py``), a software package's name (``technology.py``)
or a known product is none, whatever its role; but for who shouts, whispers or mutters, or
is shouted or whispered at or to (a manner of speaking, not "say", which programs do too):
there a word software packages' names hold ("Kai shouted at Orvell") is a name, whatever
noun's tag the model gives it.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING

from learnstream.streams.privacy.dictionary import is_capitalised_word, is_common_word
from learnstream.streams.privacy.names import CODE, addressee, may_head, name_spans
from learnstream.streams.privacy.technology import is_tech_word
from learnstream.streams.privacy.words import (
    FUNCTION_WORDS,
    GIVING,
    HONORIFICS,
    HUMANS,
    PERSONAL,
    SPEAKING,
    is_caseless,
    is_name_word,
    is_product,
    tokens,
    word_set,
)

if TYPE_CHECKING:
    from spacy.tokens import Doc, Token

    from learnstream.streams.privacy.words import Token as Word

__all__ = [
    "may_hold_one_case_name",
    "may_take_role",
    "one_case_addressee",
    "one_case_names",
    "one_case_reading",
    "recased",
    "recased_beside",
    "role_spans",
]

Span = tuple[str, int, int]


#: Prepositions taking the person spoken to or with ("shouted at Tomasz", "said to Lene").
_SPOKEN_TO = word_set("at to with")
#: Subjects that are people: personal pronouns of the third person ("you" and "I" give a
#: program what it needs: "you can pass Zenity the path").
_PEOPLE = word_set("he she they")
_WORD = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*")
_ONE_CASE = re.compile(r"[^\W\d_]{3,}(?:['’-][^\W\d_]+)*")
_PROPER, _COMMON = frozenset({"NNP", "NNPS"}), frozenset({"NN", "NNS"})
#: Dependencies by which a word's clause goes on without a subject of its own.
_SAME_CLAUSE = frozenset(
    {"dobj", "dative", "prep", "pobj", "xcomp", "advcl", "poss", "attr", "acomp", "npadvmod"}
)
_SPEAKS = re.compile(r"(?i)(?<![\w-])(?:" + "|".join(sorted(SPEAKING | PERSONAL)) + r")(?![\w-])")
#: The forms of "be" (the parse here has no lemmatizer).
_BE = word_set("be is was are were been being am 's ’s")
_FROM = re.compile(r"(?i)(?<![\w-])(?:is|was)[ \t]+from(?![\w-])")
_HUMAN = re.compile(r"(?i)(?<![\w-])(?:" + "|".join(sorted(HUMANS)) + r")(?![\w-])")
_GIVES = re.compile(r"(?i)(?<![\w-])(?:" + "|".join(sorted(GIVING)) + r")(?![\w-])")


def may_take_role(text: str) -> bool:
    """Tell cheaply whether a role rule could apply: a verb of speaking or a person's
    pronoun and a name-shaped word, or a verb of giving with a name-shaped word right after
    it, where its indirect object stands ("had handed Lene his keys")."""
    # a speaker, a person's pronoun, a noun for a person or "is from": a name anywhere
    anywhere = any(r.search(text) is not None for r in (_SPEAKS, _HUMAN, _FROM))
    given = {m.end() for m in _GIVES.finditer(text)}
    if not anywhere and not given:
        return False  # the words' shapes are read only where a rule's word stands
    words = [t for t in tokens(text) if is_name_word(t.core) or _one_case(t.core)]
    if not words or anywhere:
        return bool(words)
    return any(text[: t.start].rstrip() and len(text[: t.start].rstrip()) in given for t in words)


def may_hold_one_case_name(text: str) -> bool:
    """Tell cheaply whether ``one_case_names`` could find a name written in lower case, in
    text showing no capital a name would (``names.may_hold_name``): two words in one case
    side by side, listed or with an initial between them, one of which reads as a name
    (``_reads_as_name`` and ``_listed`` ask no less)."""
    if not _one_case_pair(_WORD.findall(text)):
        return False  # the words' places are read below only for a pair
    last: re.Match[str] | None = None
    for m in _WORD.finditer(text):
        if not _one_case(m.group()):
            last = None if len(m.group()) > 1 else last  # an initial keeps the run
            continue
        named = _name_like(m.group()) or last is not None and _name_like(last.group())
        if last is not None and named and _joined(text[last.end() : m.start()]):
            return True
        last = m
    return False


def _one_case_pair(words: list[str]) -> bool:
    """Tell whether a word in one case (``_one_case``) follows another with at most
    one-letter words between them: what ``may_hold_one_case_name`` needs before it reads
    the gap between two words (a word of one letter is never in one case)."""
    after_one = False
    for word in words:
        if _one_case(word):
            if after_one:
                return True
            after_one = True
        elif len(word) > 1:
            after_one = False
    return False


def _joined(gap: str) -> bool:
    """Tell whether what stands between two words joins them in a name or a list: a space,
    an initial, a comma or "and"/"or"."""
    core = " ".join(gap.replace(".", " ").split())
    return core in _JOINS or core == "" or len(core) == 1 and core.isalpha()


def recased(text: str, spans: list[Span]) -> str:
    """Return text with the words written in one case that may be names title-cased, as
    the tagger reads names: it takes "GRETA" for a verb and "sophia" for a common noun
    ("ORVICK's" reads "Orvick's": a possessive's "'s" stays as written).
    Every character keeps its place, so the parse's offsets are the text's. Words of the
    ``spans`` found already keep their case: the grammar checks read them as written."""

    def title(m: re.Match[str]) -> str:
        word = m.group()
        if any(a < m.end() and m.start() < b for _, a, b in spans):
            return word
        if len(word) == 1:
            return word.upper() if _initial(text, m.start()) else word
        stem, own = (word[:-2], word[-2:]) if word[-2:] in ("'s", "’s") else (word, "")
        new = stem[:1].upper() + stem[1:].lower()
        return new + own if len(new) == len(stem) and _one_case(stem) else word

    return _WORD.sub(title, text)


#: A word in one case right before, and right after, a lone letter (its period after it).
_BEFORE = re.compile(r"(?<![\w'’-])[^\W\d_]{3,}[ \t]$")
_AFTER = re.compile(r"\.?[ \t]([^\W\d_]{3,})(?![\w'’-])")


def _initial(text: str, at: int) -> bool:
    """Tell whether the lower-case letter at ``at`` is an initial: alone between two words
    in one case that may be names ("wenna k pellacott", "wenna k. pellacott", made up),
    which the reading title-cases with them so that the rules read one name."""
    if not text[at].islower():
        return False
    before = _BEFORE.search(text, max(0, at - 40), at)
    after = _AFTER.match(text, at + 1)
    if before is None or after is None:
        return False
    return _one_case(before.group().strip()) and _one_case(after.group(1))


def one_case_reading(text: str, spans: list[Span], read: str) -> str | None:
    """Return the reading of text ``one_case_names`` needs: ``read`` (``recased(text,
    spans)``) when a word it title-cases reads as a name (``_name_like``) or two in lower
    case stand side by side, else None.

    Every span that pass keeps holds such a word, so without one the model need not read
    the text recased, nor the rules read it twice; nor when such words stand only inside an
    address, a path or an identifier (``_outside_code``): "reported by
    dana.whitfield@example.org (ref qzvkrbta)".
    """
    if read == text:
        return None
    changed = _changed(text, read)
    named = any(_name_like(text[a:b]) for a, b in changed)
    if not named and not _pair_in_lower_case(text, changed):
        return None
    return read if _outside_code(text, read, changed) else None


def _outside_code(text: str, read: str, changed: list[tuple[int, int]]) -> bool:
    """Tell whether the words recased outside an address, a path or an identifier
    (``_in_code_word``) could give ``one_case_names`` a span: one of them reads as a name
    (``_name_like``), or two in lower case follow each other among the words recased.

    No span of the rules holds a word inside such a word, so a span kept holds only words
    recased outside them: one reading as a name (``_reads_as_name``, ``_listed``), or two
    in lower case or more, and then every word recased between them, as a span is whole.
    """
    words = tokens(read)
    free = [not _in_code_word(words, a) for a, _ in changed]
    if all(free):
        return True
    kept = [text[a:b] for (a, b), f in zip(changed, free, strict=True) if f]
    if any(_name_like(w) or _name_like(_bare(w)) for w in kept):
        return True
    lower = [f and text[a:b].islower() for (a, b), f in zip(changed, free, strict=True)]
    return any(x and y for x, y in zip(lower, lower[1:], strict=False))


def _in_code_word(words: list[Word], at: int) -> bool:
    """Tell whether the letter at ``at`` stands in a word (between spaces, without the
    punctuation around it) of ASCII characters that is not letters alone, joined by
    apostrophes or hyphens: an e-mail address, a path, a dotted or snake-cased name
    ("dana.whitfield@example.org", "~/notes/wenna", "build_keith").

    Every span ``names.name_spans`` returns covers words of letters alone: NER's spans are
    kept, and grown, over name-shaped words and particles only (``is_name_word``), as are
    the runs read by use; the names after a cue are letters only, and the runs of a script
    without capitals are not ASCII. So a word recased inside such a word is in no span
    ``one_case_names`` keeps, whatever the model finds in the reading.
    """
    for t in words:
        if t.start <= at < t.end:
            return t.core.isascii() and _WORD.fullmatch(t.core) is None
    return False


def _pair_in_lower_case(text: str, changed: list[tuple[int, int]]) -> bool:
    """Tell whether two words in lower case title-cased stand side by side: a name no list
    knows may be there ("wenna pellacott", made up), which the model may call a person's
    (``_reads_as_name``)."""
    pairs = zip(changed, changed[1:], strict=False)
    return any(text[b:c] == " " and text[a:d].islower() for (a, b), (c, d) in pairs)


def recased_beside(text: str, read: str, spans: list[Span]) -> str:
    """Return ``recased(text, spans)`` from ``read``, ``recased(text, [])``: the words the
    spans overlap put back as written, without title-casing the text again."""
    if read == text or not spans:
        return read
    out = read
    for a, b in _changed(text, read):
        if any(x < b and a < y for _, x, y in spans):
            out = out[:a] + text[a:b] + out[b:]
    return out


def one_case_names(
    text: str, spans: list[Span], reading: str, model: list[Span]
) -> tuple[str, list[Span]]:
    """Return the person spans the rules that read capitals find over a word written all in
    lower case or all in capitals, and text with those spans' words title-cased (for the
    parse that checks them; every other word as written).

    Case hides a name from every rule that reads capitals: "ask keith about it", "said
    GRETA to GREGORY", "its founders: MARU, OKONJO and LINDQVIST" (made up). Read with
    such words title-cased (``reading``, from ``one_case_reading``: words that are
    neither English, nor a software package's or a known product's name), the same rules
    and cues find them as they find "Keith". A span so found must hold a word that reads as
    a name, not as an acronym or an identifier (``_name_like``: "by NASA", "in ANSI C", "to
    javac" stay), and is kept only where the parse does not call it a thing
    (``pii._grammatical``). ``model`` holds the model's spans in ``reading``, so a name
    opening the text ("MORGAN KING's …") or heading nothing the rules read is found as NER
    finds it title-cased; the caller runs the model over all its texts' readings at once.
    """
    changed = _changed(text, reading)
    people = [
        s
        for s in name_spans(reading, model)
        if s[0] == "PERSON" and not any(a < s[2] and s[1] < b for _, a, b in spans)
    ]
    words = [[_bare(text[a:b]) for a, b in changed if a < s[2] and s[1] < b] for s in people]
    listed = _listed(text, people, words)
    found = [
        s
        for s, w in zip(people, words, strict=True)
        if _reads_as_name(w, _modelled(s, model)) or s in listed
    ]
    out = text
    for a, b in changed:
        if any(x < b and a < y for _, x, y in found):
            out = out[:a] + reading[a:b] + out[b:]
    return out, found


def _changed(text: str, read: str) -> list[tuple[int, int]]:
    """Return where the words of text that ``read`` writes otherwise stand."""
    return [m.span() for m in _WORD.finditer(text) if read[m.start() : m.end()] != m.group()]


def one_case_addressee(text: str) -> Span | None:
    """Return the first line of a contact block when it is a name written in one case
    ("orla vantreece\n\n12 Quarry Lane…", made up): ``names.addressee`` of the text read
    title-cased, when the words recased make a name (``_reads_as_name``) or are two or
    more: the line heading an address or a phone is a name's slot, as on an envelope, and
    most surnames are in no word list; English words there are no name ("build notes")."""
    if not may_head(text):
        return None
    line = text.split("\n", 1)[0]
    read = recased(line, [])
    if read == line or (head := addressee(read)) is None:
        return None
    changed = [m.group() for m in _WORD.finditer(line[head[1] : head[2]])]
    words = [w for w in changed if _one_case(w)]
    return head if len(words) >= 2 or _reads_as_name(words) else None


def _reads_as_name(words: list[str], modelled: bool = False) -> bool:
    """Tell whether the words recased in a span make a name: one that reads as a name
    (``_name_like``), and in lower case a second beside it. A lone lower-case word the
    list gives capitalised is an English word as often ("set", "mark", "will").

    Two words in lower case or more that the model, reading them title-cased, calls a
    person's name make one too, though the list knows neither: most surnames and many given
    names are in no English word list ("wenna pellacott", made up); the rules found the span
    by its use and the model by its shape, and an identifier it does not know ("gnuplot
    sshfs") it seldom calls a person.
    """
    if len(words) >= 2 and modelled and all(w.islower() for w in words):
        return True
    if not any(_name_like(w) for w in words):
        return False
    return any(w.isupper() for w in words) or len(words) >= 2


#: What joins the items of a list ("wendy, keith and brisko").
_JOINS = frozenset({",", "and", "or", ", and", ", or", "&"})
#: How many lone words in lower case a list needs to be one of names (two: "a and b").
_LIST = 3


def _listed(text: str, people: list[Span], words: list[list[str]]) -> list[Span]:
    """Return the spans that stand, one word in lower case each, in a list of three or more
    such spans, two of which read as names: "Invited: wendy, keith and brisko" (made up).

    Alone, such a word is an English word as often (``_reads_as_name``); three listed that
    the rules found as names, by a cue or the model, and the list gives at least two of as
    names, are a list of people, as "numpy, scipy and pandas" is one of packages (which the
    word lists know).
    """
    lone = [(s, w[0]) for s, w in zip(people, words, strict=True) if len(w) == 1 and w[0].islower()]
    groups: list[list[tuple[Span, str]]] = []
    for item in lone:
        gap = " ".join(text[groups[-1][-1][0][2] : item[0][1]].split()) if groups else ""
        if groups and gap in _JOINS:
            groups[-1].append(item)
        else:
            groups.append([item])
    return [
        s for g in groups if len(g) >= _LIST and sum(_name_like(w) for _, w in g) >= 2 for s, _ in g
    ]


def _modelled(span: Span, model: list[Span]) -> bool:
    """Tell whether the model found a person's name over the whole span."""
    return any(e == "PERSON" and a <= span[1] and span[2] <= b for e, a, b in model)


def _bare(word: str) -> str:
    """Return a word without its possessive ("ORVELLA's" is in capitals, as "ORVELLA")."""
    return word[:-2] if word[-2:] in ("'s", "’s") else word


def _name_like(word: str) -> bool:
    """Tell whether a word in one case reads as a name rather than an acronym or a tool's
    identifier: one the word list gives capitalised somewhere (a given name or a surname:
    "keith", "GRETA"), or five capitals or more ("TURCOTTE"; an acronym is shorter: "NASA",
    "ANSI", "PSGI"), or a Latin word with a letter beyond ASCII ("brankovič", made up): a
    tool's identifier is written in ASCII. A lower-case word the list does not know is an
    identifier as often ("javac", "gnuplot", "sshfs"). A possessive is read without its
    "'s" against the list only: a program owns an algorithm as often as a person a car."""
    bare = _bare(word)
    if is_capitalised_word(bare) or _latin_beyond_ascii(bare):
        return True
    return word.isupper() and len(word) >= 5


def _latin_beyond_ascii(word: str) -> bool:
    """Tell whether a word is written in Latin letters, one of them beyond ASCII ("é",
    "ř", "ð"). Words of other scripts are read by their own rules (``names.py``)."""
    return not word.isascii() and all(c < "\u0250" for c in word)


#: Words in one case that are never a name: function words, titles, person's pronouns.
_NEVER_ONE_CASE = FUNCTION_WORDS | HONORIFICS | PERSONAL | _PEOPLE
#: Distinct words whose ``_one_case`` answer is kept: every text's words are read by the
#: gate (``may_hold_one_case_name``) and agent text repeats its words from text to text.
_WORDS_KEPT = 8192


@lru_cache(maxsize=_WORDS_KEPT)
def _one_case(word: str) -> bool:
    """Tell whether a word written all in lower case or all in capitals may be a name:
    letters, not English, not a tool's or a product's, no function word or title."""
    if not (word.islower() or word.isupper()) or not _ONE_CASE.fullmatch(word):
        return False
    if word.isupper() and (len(word) < 3 or not set(word) & set("AEIOUY")):
        return False  # an acronym: "HTTP", "SQL", "CI"
    if word.lower() in _NEVER_ONE_CASE:
        return False
    if _plural_of_thing(word):
        return False
    return not is_common_word(word) and not is_tech_word(word) and not is_product(word)


def _plural_of_thing(word: str) -> bool:
    """Tell whether a word is the plural of an English or a software word that the list
    never gives capitalised: "wildcards", "kwargs" are things; "Brooks" and "Williams" are
    names the list gives."""
    if len(word) < 4 or word[-1] not in "sS" or is_capitalised_word(word):
        return False
    stem = word[:-1]
    return is_common_word(stem) or is_tech_word(stem) or is_product(stem)


def _candidate(word: Token, known: frozenset[str], tools: bool = False) -> bool:
    """Tell whether a word may be a name: shaped so, tagged a proper noun (a noun will do
    for a word the model does not know, whose tag is a guess; any tag but a verb's in
    another script), not English, not a tool's or a product's."""
    text = word.text
    if _one_case(text):  # "sophia", "SOPHIA": any noun's tag, as the model reads neither
        return word.tag_ in _PROPER | _COMMON
    if not is_name_word(text) or is_product(text) or (is_tech_word(text) and not tools):
        return False
    if is_caseless(text) or not text.isascii():
        return not is_common_word(text) and not word.tag_.startswith("VB")
    nouns = _PROPER if word.lower_ in known and not tools else _PROPER | _COMMON
    return word.tag_ in nouns and not is_common_word(text)


def _name(word: Token, known: frozenset[str], tools: bool = False) -> bool:
    """Tell whether the word and the compound words before it may be a name: a name takes
    no determiner and no number ("the RFC 2231 says", "the API told him"). ``tools`` lets
    a word that software packages' names hold be one, whatever noun's tag it has."""
    if any(c.dep_ in ("det", "nummod") for c in word.children):
        return False
    parts = [c for c in word.children if c.dep_ == "compound" and c.i < word.i] + [word]
    return all(_candidate(p, known, tools) for p in parts)


#: Verbs of saying, which programs do too ("Pylint says the import is unused").
_SAYING = word_set("say says said saying")


def _shouts(word: Token) -> bool:
    """Tell whether the word is who shouts, whispers or mutters, or who is shouted or
    whispered at or to: a manner of speaking no program has, so the word is a person's
    name even where software packages' names hold it ("Kai shouted at Orvell")."""
    head = word.head
    if word.dep_ == "nsubj":
        return head.lower_ in SPEAKING and head.lower_ not in _SAYING
    if word.dep_ == "pobj" and head.lower_ in _SPOKEN_TO and head.dep_ == "prep":
        return head.head.lower_ in SPEAKING and head.head.lower_ not in _SAYING
    return False


def _span(word: Token) -> Span:
    first = min([word] + [c for c in word.children if c.dep_ == "compound" and c.i < word.i])
    return ("PERSON", first.idx, word.idx + len(word.text))


def _personal_in_clause(verb: Token) -> bool:
    """Tell whether a person's pronoun stands in the verb's clause (not in a clause with a
    subject of its own)."""
    todo = list(verb.children)
    while todo:
        w = todo.pop()
        if w.lower_ in PERSONAL and w.tag_ in ("PRP", "PRP$"):
            return True
        if w.dep_ in _SAME_CLAUSE and not any(c.dep_ in ("nsubj", "nsubjpass") for c in w.children):
            todo.extend(w.children)
    return False


def _referred_to(word: Token) -> bool:
    """Tell whether the subject of a sentence's main verb, the sentence's only subject, is
    referred to in the next sentence by a person's pronoun ("Tavish is back from leave. Ask
    him first."; not "Zorbel is fast. It scales.")."""
    sentence = word.sent
    if word.head != sentence.root or sentence.end >= len(word.doc):
        return False
    if any(w.dep_ == "nsubj" and w.i != word.i for w in sentence):
        return False
    after = word.doc[sentence.end].sent
    return any(w.lower_ in PERSONAL and w.tag_ in ("PRP", "PRP$") for w in after)


def _called_human(verb: Token) -> bool:
    """Tell whether the verb is a form of "be" whose attribute is a noun for a person ("Oskar
    is a kind person", "Lene was his best friend"): a program is never one."""
    if verb.lower_ not in _BE:
        return False
    return any(c.dep_ == "attr" and c.lower_ in HUMANS for c in verb.children)


def _comes_from(verb: Token) -> bool:
    """Tell whether the verb is "is" or "was" and says where its subject comes from, a
    place's or a firm's name with no determiner, and has no attribute or adjective:
    "Brisvane is from Tollard Corp", "Orvell was from Oslo". A program is written in, made
    by or part of something ("Zenity is from the GNOME project"); a person is from a place
    or a firm."""
    if verb.lower_ not in ("is", "was"):
        return False
    deps = {c.dep_ for c in verb.children}
    if deps & {"attr", "acomp", "xcomp", "ccomp", "neg"}:
        return False
    where = [c for c in verb.children if c.dep_ == "prep" and c.lower_ == "from"]
    return any(
        c.i == verb.i + 1 and o.dep_ == "pobj" and o.tag_ in _PROPER and not _determined(o)
        for c in where
        for o in c.children
    )


def _determined(word: Token) -> bool:
    """Tell whether a determiner hangs from the word ("the GNOME project")."""
    return any(c.dep_ == "det" for c in word.children)


def _personal_subject(verb: Token, known: frozenset[str]) -> bool:
    """Tell whether the verb's subject is a person: a personal pronoun or a name."""
    for c in verb.children:
        if c.dep_ == "nsubj":
            return c.lower_ in _PEOPLE or _name(c, known)
    return False


def _role(word: Token, known: frozenset[str]) -> bool:
    """Tell whether the word's role in its sentence is one only a person takes."""
    head = word.head
    if word.dep_ == "nsubj" and head.tag_.startswith("VB"):
        return (
            head.lower_ in SPEAKING
            or _personal_in_clause(head)
            or _referred_to(word)
            or _called_human(head)
            or _comes_from(head)
        )
    if word.dep_ == "conj":  # "our founders: Lund, Okafor and Brisk"
        while word.dep_ == "conj" and word.head.i < word.i:
            word = word.head
        return word.dep_ == "appos" and word.head.lower_ in HUMANS
    if word.dep_ == "appos":
        return head.lower_ in HUMANS
    if word.dep_ == "pobj" and head.lower_ in _SPOKEN_TO and head.dep_ == "prep":
        return head.head.lower_ in SPEAKING
    if word.dep_ == "dative" and head.lower_ in GIVING:
        return _personal_subject(head, known)
    return False


def role_spans(text: str, doc: Doc, taken: list[Span], known: frozenset[str]) -> list[Span]:
    """Return the PERSON spans of names their roles mark in the parsed text, but for those
    ``taken`` overlaps and those in code, a URL or a pathed word. ``known`` holds the
    (lower-cased) words the model knows."""
    found: list[Span] = []
    code = [("CODE", *m.span()) for m in CODE.finditer(text)]
    for word in doc:
        named = _name(word, known) and _role(word, known)
        if not named and not (_shouts(word) and _name(word, known, tools=True)):
            continue
        span = _span(word)
        if "\n" in text[span[1] : span[2]]:
            continue
        if not any(a < span[2] and span[1] < b for _, a, b in taken + found + code):
            found.append(span)
    return found
