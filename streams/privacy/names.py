"""Person and place spans: NER's spans checked for shape, and names found by their use.

The small NER model tags tool names, word ids, class names and imperative verbs; a name has
none of their marks (digits, ``-``/``_``/``/``/``.`` inside a word, lower case, a URL or code
around it). It also misses names it has not seen, so name-shaped words are taken as a name
by their use: after a person cue ("escalate to", "ask") or a person label and a colon
("Reviewer: Dana"), behind an honorific ("Dr. Smith"), before ``'s`` or a verb ("approved",
"is", "said"), two or three in a row inside a sentence, or listed with one ("Dana and
Priya approved"). A lone word opening a text or clause needs a use no step or tool has
("Dana wants", "Olusegun will review", "Jürgen approved it", "Dana, please"). A PERSON span
grows over the name words next to it. A span of common English words only ("Dark Mode") is
a title-cased phrase, not a person."""

from __future__ import annotations

import re

from learnstream.streams.privacy.capitals import capitals_runs
from learnstream.streams.privacy.dictionary import is_common_word
from learnstream.streams.privacy.regions import is_region
from learnstream.streams.privacy.technology import is_tech_word
from learnstream.streams.privacy.words import (
    AFTER_VERBS,
    CONNECTORS,
    CUES,
    DONE_VERBS,
    FUNCTION_WORDS,
    HONORIFICS,
    HUMANS,
    LABELS,
    MESSAGE_ABBREVIATIONS,
    MODALS,
    OBJECTS,
    PARTICLES,
    PERSON_VERBS,
    PERSONAL,
    POSTNOMINALS,
    SPEAKING,
    SPEECH_VERBS,
    TASK_VERBS,
    Token,
    is_caseless,
    is_code_shaped,
    is_name_word,
    is_product,
    tokens,
    word_set,
)

__all__ = [
    "CODE",
    "addressee",
    "echoes",
    "recipient",
    "is_whole_name",
    "may_head",
    "may_hold_name",
    "name_spans",
    "with_degrees",
    "worth_ner",
]

Span = tuple[str, int, int]
#: URLs, inline code and e-mail-like or dotted/pathed words: nothing inside is a name.
#: A word after the first whose first letter may be a capital (any non-ASCII letter counts).
_LATER_CAPITAL = re.compile(r"\s[(\[{\"'«“‘]*[^\W\d_a-z]")


def _alt(words: frozenset[str]) -> str:
    return "|".join(sorted(words))


#: A text opening with a lone word its use marks as a person's: "Dana said", "Dana wants",
#: "Jürgen approved it", "Olusegun will review", "Dana's call", "Dana, please ship it",
#: "Dana, could you rerun it?" (``_addressed``).
_SPEAKER = re.compile(
    rf"(?i)\W*[^\W\d_]+(?:['’]s(?!\w)|,\s+(?:please|you)(?!\w)"
    r"|,\s+(?:can|could|would|will|may|shall|do|did|are|have)\s+(?:i|you|we)(?!\w)"
    rf"|\s+(?:{_alt(PERSON_VERBS)})(?!\w)"
    rf"|\s+(?:{_alt(DONE_VERBS)})\s+(?:{_alt(OBJECTS)})(?!\w)"
    rf"|\s+(?:{_alt(MODALS)})\s+(?:{_alt(TASK_VERBS)})(?!\w))"
)
#: A text opening with a word whose clause holds a verb of speaking, a person's pronoun or a
#: noun for a person: its subject may be a person by its role (``roles.py``: "Brannigan sold
#: his guitars", "dana whispered", "Oskar is a kind person").
_ROLE_WORDS = SPEAKING | PERSONAL | HUMANS
_FIRST_CLAUSE = re.compile(r"[^.;:!?\n]*")
_WORDS = re.compile(r"[^\W\d_]+")


def _role_opener(text: str) -> bool:
    """Tell whether the text's first clause opens with a word and holds a verb of speaking,
    a person's pronoun or a noun for a person (``_ROLE_WORDS``)."""
    clause = _FIRST_CLAUSE.match(text.lstrip()).group()  # type: ignore[union-attr]
    if not clause[:1].isalpha():
        return False
    return not _ROLE_WORDS.isdisjoint(_WORDS.findall(clause.lower()))


_QUOTES = "\"'«“‘"
#: Marks a line may open with before a contact block's line (``addresses._LEAD_MARKS``).
_LEAD_MARKS = "}?*>#-"
#: A letter beyond the Latin alphabets (a script with or without capitals), wherever it
#: stands: a name in Han or Arabic needs no space or capital before it.
#: What may stand before a name written all in lower case or capitals (``_uncapitalised``).
_UNCAPITALISED_CUE = re.compile(
    rf"(?i)(?<!\w)(?:(?:{_alt(HONORIFICS)})\.?\s|name\W|(?:call|calls|called|name|names|"
    r"named)\s+(?:me|him|her|them)\s)"
)
_OTHER_SCRIPT = re.compile(r"[^\W\d_\u0000-\u024f]")
CODE = _CODE = re.compile(r"\w+://\S+|`[^`]*`|\S*[/\\@=<>{}\[\]_]\S*|\S+\.\w\S*")


def may_hold_name(text: str) -> bool:
    """Tell cheaply whether text could hold a name span: a capital after its first word, a
    letter of another script, or a cue a name in one case may follow ("ms.", "name is").

    Every span ``name_spans`` keeps holds a name word that is not the text's first word (a
    lone first word is an imperative as often as a name) unless a verb of speech follows
    it, so most agent strings ("Collect deploy logs") skip the name step whole.
    """
    return (
        _LATER_CAPITAL.search(text) is not None
        or _SPEAKER.match(text) is not None
        or _role_opener(text)
        or _OTHER_SCRIPT.search(text) is not None
        or _UNCAPITALISED_CUE.search(text) is not None
    )


def worth_ner(text: str) -> bool:
    """Tell whether text holds a name-shaped word that does not open a clause."""
    if not may_hold_name(text):
        return False
    return any(not t.opens_clause and is_name_word(t.core) for t in tokens(text))


def is_whole_name(text: str) -> bool:
    """Tell whether the whole text is one to four name words ("Dana", "Dr. Priya Raman").

    Read only where a sample's key says the value is a person (``decided_by``): alone, a
    capitalised word is as often a step, a status or an enum value as a name.
    """
    words = tokens(text)
    if not 0 < len(words) <= 4 or words[0].core.lower() in FUNCTION_WORDS or _CODE.search(text):
        return False
    return all(is_name_word(t.core) or t.core.lower() in PARTICLES for t in words)


def _heading(line: str) -> str:
    """Return a line without the spaces and the marks around it."""
    return line.strip().lstrip(_LEAD_MARKS).strip()


def may_head(text: str) -> bool:
    """Tell cheaply whether the text's first line is short enough for a contact block's
    name (``addressee``): four words at most (``tokens`` cuts a line into no fewer)."""
    return len(_heading(text.split("\n", 1)[0]).split()) <= 4


def addressee(text: str) -> Span | None:
    """Return the first line of a contact block when it is a person's name alone: two to
    four name words heading a text in which a street address or a phone number was found
    (a letter's, a signature's, a vCard's: "Nusa Márkus\n\n5277 Algade 60\n…").

    The caller says an address or a phone was found; a heading of common words ("Billing
    Address", "Head Office") is none, as every name holds a word that is somewhere a name.
    """
    if not may_head(text):
        return None
    line = text.split("\n", 1)[0]
    core = _heading(line)
    words = tokens(core)
    if not 2 <= len(words) <= 4 or not is_whole_name(core):
        return None
    if any(_never_a_name(t.core) for t in words if t.core.lower() not in PARTICLES):
        return None
    start = line.index(core)
    return ("PERSON", start, start + len(core))


#: A label opening a line before the value on it ("Billing address: ", "Name: ").
_LINE_LABEL = re.compile(r"[^\W\d_][\w -]{0,30}:[ \t]*")


def recipient(text: str, street: int) -> Span | None:
    """Return the line above a street address when it is a person's name alone: two to four
    name words, after a mark or a label or not ("Billing address: Lene Brask\n    14
    Harrowgate Lane", "}}Mirna Kovač\n}}5778 Kramer Court"), blank lines between them
    or not; as on an envelope, the name written above the street is its recipient's.

    ``street`` is where the street found starts; a line of common words ("Head Office")
    names no one.
    """
    line_start = text.rfind("\n", 0, street) + 1
    if text[line_start:street].strip(" \t" + _LEAD_MARKS):
        return None  # the street does not open its line
    above = text[:line_start].rstrip(" \t\r\n")
    if not above:
        return None
    start = above.rfind("\n") + 1
    line = above[start:]
    core = line.lstrip(" \t" + _LEAD_MARKS)
    if label := _LINE_LABEL.match(core):
        core = core[label.end() :]
    words = tokens(core)
    if not 2 <= len(words) <= 4 or not is_whole_name(core):
        return None
    if any(_never_a_name(t.core) for t in words if t.core.lower() not in PARTICLES):
        return None
    at = start + line.rindex(core)
    return ("PERSON", at, at + len(core))


#: What each of ``given_names``' cues holds: a colon, or a word giving or asking a name.
_GIVEN_CUE = re.compile(r"(?i):|name|call")


def given_names(text: str) -> list[Span]:
    """Return the names the text itself gives as a person's, which no word's grammar or
    dictionary sense overrides: after words giving a name or asking for one ("my name is
    Else Brink", "her maiden name is Rook", "What's your name? Mara P Fox", a
    form's "Name: Rose Moss" line), and who speaks a line of a chat or a script ("Ines:
    back in five", 'Tomasz: "Who is on call?"'), unless a common word or a tool's name opens
    that line ("Note: run the tests"). A title is no such cue here: "MS Access" is a
    product, and the rules of ``name_spans`` read a title's name; nor is a question on the
    line before ("Your name?\nUser: …": the line's label). A name written in one case
    after such words, or after a title with its period ("call me brisko", "Ms. dana
    whitfield"; ``_uncapitalised``), is given too, which the tagger would read as a noun.

    The grammar checks (``grammar.py``) read a name's words as the sentence uses them; here
    the text says what they are.
    """
    if _GIVEN_CUE.search(text) is None and _UNCAPITALISED_CUE.search(text) is None:
        return []
    words = tokens(text)
    code = [m.span() for m in _CODE.finditer(text)]
    found = [
        ("PERSON", a, b)
        for a, b in _uncapitalised(text, words, True)
        if not _inside(a, b, code) and _given_in_one_case(text[a:b])
    ]
    for i, j in _runs(words):
        titled = i > 0 and words[i - 1].core.lower().rstrip(".") in HONORIFICS  # "MS Access"
        # an answer on the question's line: the next line opens with its own label ("User:")
        answered = i > 0 and "\n" not in text[words[i - 1].end : words[i].start]
        given = _named_so(words, i) or answered and not titled and _person_cue(text, words, i)
        speaks = words[j - 1].closes and _speaker(text, words, i, j) and _may_name(words[i:j])
        if (given or speaks) and not _inside(words[i].start, words[j - 1].end, code):
            found.append(("PERSON", words[i].start, words[j - 1].end))
    return found


def _given_in_one_case(span: str) -> bool:
    """Tell whether words in one case a cue gives are a name whatever their grammar: two
    words or more, or one in capitals or beyond ASCII ("call me BRISKO", "Mrs. brankovič"),
    and no tool's word. A lone lower-case word is a login as often ("My name is root"):
    the grammar checks read it."""
    words = span.split()
    if any(map(_thing_word, words)):
        return False
    return len(words) >= 2 or span.isupper() or not span.isascii()


def _thing_word(word: str) -> bool:
    """Tell whether a word in one case is a tool's, or joins English or software words
    with hyphens ("kafka-consumer"): a cue gives it as a name, not a person's."""
    parts = word.strip(_PUNCTUATION).split("-")
    return any(is_tech_word(p) or is_product(p) for p in parts) or all(map(is_common_word, parts))


def merge(spans: list[Span]) -> list[Span]:
    """Return spans with overlapping or touching ones joined (PERSON wins over LOCATION)."""
    return _merge(spans)


def name_spans(text: str, found: list[Span]) -> list[Span]:
    """Return NER's spans that pass the shape checks, widened and joined by context finds."""
    words = tokens(text)
    code = [m.span() for m in _CODE.finditer(text)]
    found = [_without_abbreviations(s, words) for s in found]
    kept = [s for s in found if _plausible(text, s, words, code)]
    people = [_widen(s, words) if s[0] == "PERSON" else s for s in kept]
    known = [(a, b) for entity, a, b in people if entity == "PERSON"]
    used = _by_use(text, words, known)
    people += [("PERSON", a, b) for a, b in used if not _inside(a, b, code)]
    people += [("PERSON", a, b) for a, b in _uncapitalised(text, words) if not _inside(a, b, code)]
    people += [("PERSON", a, b) for a, b in capitals_runs(words) if not _inside(a, b, code)]
    dotted = [(a, b) for a, b in code if not is_caseless(_letters(text[a:b]))]  # के.सी.
    people += [
        ("PERSON", a, b) for a, b in _caseless_runs(text, words) if not _inside(a, b, dotted)
    ]
    ner = [(a, b) for entity, a, b in kept if entity == "PERSON"]
    spans = [part for s in _merge(people) for part in _thing_words(s, words, text, ner)]
    return [s for s in spans if not _glossed(text, s[1], s[2])]


#: Words that make a run of another script in English text a sample of that script or
#: language, not a name: "the 中文 locale", "renders 日本語 text", "Arabic (العربية) UI".
_GLOSS = re.compile(
    r"(?i)(?<![^\W\d_])(?:languages?|locales?|translat\w*|i18n|l10n|scripts?|characters?|"
    r"words?|phrases?|terms?|means|meaning|spelt|spelled|"
    r"glyphs?|fonts?|encod\w*|unicode|utf-?\d+|input|keyboards?|ime|transliterat\w*|"
    r"chinese|japanese|korean|arabic|hindi|urdu|persian|farsi|nepali|marathi|sanskrit|"
    r"hebrew|thai|mandarin|cantonese|kanji|hanzi|hangul|hiragana|katakana|kana|devanagari|"
    r"cyrillic|russian|ukrainian|bulgarian|serbian|belarusian|macedonian|kazakh|mongolian|"
    r"greek)"
    r"(?![^\W\d_])"
)


_GLOSS_REACH = 30
#: Where a sentence ends: its mark and a space, or a line break.
_SENTENCE_END = re.compile(r"[.!?。！？](?:\s|$)|\n")
#: A name has at most four words; a longer run of Cyrillic words is a phrase of it.
_RUN_WORDS = 4
_PUNCTUATION = "{}()[]<>\"'«»“”‘’.,;:!?*_~`|"


def _caseless_runs(text: str, words: list[Token]) -> list[tuple[int, int]]:
    """Return the runs of words of a script without capitals in text written in Latin
    letters: such a run is a name ("ask 김서준", "佐藤 shouted at 素珍", "They had 3: مأمون,
    مهيب and كندة").

    No capital marks a name in Han, Hangul, kana, Arabic or Devanagari, and English text
    switches script for little else than a name; it does for a language's own words
    ("the 中文 locale"), so a run near a word for a language, a script or its input is
    kept. Text with fewer than half as many Latin words as such words is the language
    itself, not English around a name.
    """
    caseless = [i for i, t in enumerate(words) if _other_script(_letters(t.core))]
    latin = sum(1 for t in words if t.core.isascii() and any(c.isalpha() for c in t.core))
    if not caseless or 2 * latin < len(caseless):
        return []
    runs: list[tuple[int, int]] = []
    for i in caseless:
        t = words[i]
        start = t.start + t.core.index(_letters(t.core))
        if runs and i - 1 in caseless and not words[i - 1].closes:
            runs[-1] = (runs[-1][0], t.end)
        else:
            runs.append((start, t.end))
    return [(a, b) for a, b in runs if not _prose(text[a:b])]


def _prose(run: str) -> bool:
    """Tell whether a run of Cyrillic words is too long for a name: a phrase of the
    language ("Документация проекта на русском языке"). Arabic names run longer, and
    Han or kana are written without spaces, so only Cyrillic is counted."""
    words = run.split()
    return len(words) > _RUN_WORDS and all(_CYRILLIC.search(w) or _GREEK.search(w) for w in words)


_CYRILLIC = re.compile(r"[\u0400-\u04ff]+(?:['’-][\u0400-\u04ff]+)*")
#: A Greek word of three letters or more: one or two are a symbol ("Δt", "μ", "λ").
_GREEK = re.compile(r"[\u0370-\u03ff\u1f00-\u1fff]{3,}(?:['’-][\u0370-\u03ff\u1f00-\u1fff]+)*")


def _other_script(word: str) -> bool:
    """Tell whether a word is written in a script without capitals, in Cyrillic or in Greek:
    English text switches to Cyrillic or Greek, as to Han or Arabic, for little else than a
    name ("ask Оксана", "the Борислав Ганчев version", "Γιώργος approved"), whatever its
    case ("перуна"); a Greek letter or two is a symbol, not a word ("Δt", "μs")."""
    return (
        is_caseless(word)
        or _CYRILLIC.fullmatch(word) is not None
        or _GREEK.fullmatch(word) is not None
    )


def _glossed(text: str, start: int, end: int) -> bool:
    """Tell whether a span of words without capitals stands near a word for a language, a
    script or its input, in its own sentence: a sample of the language, not a name ("the
    中文 locale"; not "… the next term. Ask 刘雷 first")."""
    if not all(_other_script(_letters(w)) for w in text[start:end].split()):
        return False
    before = text[max(0, start - _GLOSS_REACH) : start]
    after = text[end : end + _GLOSS_REACH]
    if ends := list(_SENTENCE_END.finditer(before)):
        before = before[ends[-1].end() :]
    if (first := _SENTENCE_END.search(after)) is not None:
        after = after[: first.start()]
    return _GLOSS.search(f"{before}{text[start:end]}{after}") is not None


_LETTERS_ONLY = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*")


def _uncapitalised(text: str, words: list[Token], given: bool = False) -> list[tuple[int, int]]:
    """Return names written all in lower case or all in capitals right after a cue that
    only a person's name follows: an honorific ("ms. dana whitfield", "Mr. WHITFIELD"),
    words giving a name ("my name is dana", "call me DANA") or a person's name asked for
    ("What's your last name? whitfield", "under my partner's name dana whitfield", a
    form's "Name:" line).

    Such a case hides the capital the other rules read, and words in it are as often
    commands, tools or shouting, so nothing but these cues reads them; and a word the
    dictionary gives as English only ("ms. manager", "call me maybe") or a product is
    none.
    """
    found: list[tuple[int, int]] = []
    i = 0
    while i < len(words):
        j = i
        while j < len(words) and j - i < 3 and _uncapitalised_word(words[j].core):
            j += 1
            if words[j - 1].closes:
                break
        if j > i and _person_cue(text, words, i, given):
            found.append((words[i].start, words[j - 1].end))
        i = max(j, i + 1)
    return found


def _uncapitalised_word(word: str) -> bool:
    """Tell whether a word in one case may be a name: letters, not English, not a tool."""
    if len(word) < 2 or not (word.islower() or word.isupper()):
        return False
    if not _LETTERS_ONLY.fullmatch(word) or word.lower() in FUNCTION_WORDS | HONORIFICS:
        return False
    return not is_common_word(word) and not is_product(word)


def _person_cue(text: str, words: list[Token], i: int, given: bool = False) -> bool:
    """Tell whether the words before word i call for a person's name; ``given``: only
    a person's name, an honorific then with its period ("Ms. dana", not "MS SQL")."""
    if i == 0 or words[i - 1].closes and words[i - 1].core.lower() != "name":
        return _named_so(words, i) if i else False
    prev = words[i - 1].core.lower().rstrip(".")
    if prev in HONORIFICS and _titles(text, words, i - 1, given):
        return True
    if _named_so(words, i):
        return True
    if prev != "name" or text[words[i - 1].end : words[i].start].strip() not in ("", ":", "?"):
        return False
    owner = words[i - 2] if i >= 2 else None
    if owner is not None and (owner.possessive or owner.core.lower() in _WHOSE):
        return True
    return words[i - 1].core == "Name" and words[i - 1].opens_clause  # a form's "Name:" line


def _titles(text: str, words: list[Token], k: int, dotted: bool = False) -> bool:
    """Tell whether the honorific word k titles a person: capitalised or with its period
    ("Ms whitfield", "ms. whitfield"), and not a unit after a number ("137 ms at")."""
    if k and any(c.isdigit() for c in words[k - 1].core):
        return False
    period = text[words[k].end : words[k].end + 1] == "."
    return period or not dotted and words[k].core[0].isupper()


def _letters(word: str) -> str:
    """Return word without the punctuation around its letters (``}}赵华`` -> ``赵华``)."""
    return word.strip(_PUNCTUATION)


def _thing_words(
    span: Span, words: list[Token], text: str, found: list[tuple[int, int]]
) -> list[Span]:
    """Return a PERSON span's parts that may name a person: none when common words make
    it a thing's name.

    A span of title-cased common words only ("Dark Mode", "Robot Framework") or of one
    letter names no one: every name holds a word that is somewhere a name (dictionary.py).
    Nor does a span of several words one of which is never a name: the noun a product's
    name ends in ("Alibaba Cloud", "Sphinx Extension", "Microsoft Teams") or the imperative
    or function word a title opens with ("Write Styler", "While Cppcheck"). A common word
    opening the text, a line or a clause is cut off first ("Meanwhile Dana Whitfield
    said"): what is left is still a name when it is two words or more. A span is read in
    the parts its punctuation and line breaks cut it into ("Dana Whitfield's Cautionary
    Tales"). A lone word left after the cut is a name only where NER found it or quotes
    set it off ("Per 'Amanda'"). A lone word, or a span of words only, that many
    software packages' names hold ("Pylint", "Qiskit Runtime"; ``technology.py``) names a
    tool; a full name keeps its words. ``words`` are the text's, as ``tokens`` read them;
    ``found`` are NER's PERSON spans. A span an honorific opens is a person's: English
    words closing it are cut off instead ("Dr. Dana Whitfield Apt. 4", the flat's word
    after the name on an envelope's line). A place of one word is dropped when the word is
    never a name ("Segment Anything in Images"): a town's name is a name in the list; and
    when it stands beside a product's word or is listed with one, as a maker's or a
    product's name does ("the GIMP (Portugal)", "NetBSD, Chile and OpenBSD").
    """

    def quoted(t: Token) -> bool:
        return t.start > 0 and text[t.start - 1] in _QUOTES

    entity, start, end = span
    covered = [t for t in words if t.start < end and start < t.end]
    if entity != "PERSON":  # a place of one word that is never a name ("Images", "Scheme")
        lone = len(covered) == 1 and (
            is_common_word(covered[0].core) or is_tech_word(covered[0].core)
        )
        # … or listed with a product's word ("LiteOn, NEC and Brevik")
        lone = lone or len(covered) == 1 and _beside_code(text, covered, words)
        return [] if lone else [span]
    parts: list[list[Token]] = [[]]
    for t in covered:
        if parts[-1] and _script_changes(parts[-1][-1], t):
            parts.append([])  # a name is written in one script: "Оксана Ковальчук Afterwards"
        parts[-1].append(t)
        if t.closes or t.possessive:
            parts.append([])
    kept = []
    for part in filter(None, parts):
        if len(part) > 1 and part[0].opens_clause and _never_a_name(part[0].core):
            part = part[1:]  # "Meanwhile Dana Whitfield", "Per 'Amanda'", "While Cppcheck"
            if len(part) == 1 and not (
                _inside(part[0].start, part[0].end, found) or quoted(part[0])
            ):
                continue  # the opener made the run: "Use Composio", "Write Styler"
        while len(part) > 2 and _titled(part) and _never_a_name(part[-1].core):
            part = part[:-1]  # "Dr. Dana Whitfield Apt. 4": a title makes it a person's
        if _run_on(part, found):
            part = part[:-1]  # "Carol White Main whole …": the next sentence's first word
        if _may_name(part) and not _beside_code(text, part, words):
            last = part[-1] is covered[-1]
            kept.append((entity, max(start, part[0].start), end if last else part[-1].end))
    return kept


def _run_on(part: list[Token], found: list[tuple[int, int]]) -> bool:
    """Tell whether a name NER found runs on into one more capitalised word that is never a
    name ("Carol White Main whole rather …", a sentence whose period was lost): the two
    words or more before it stay when they may name a person (``_may_name``). A product's
    name ends in such a noun with one name word before it ("Alibaba Cloud") and stays a
    thing."""
    if len(part) < 3 or not _inside(part[0].start, part[-1].end, found):
        return False
    head, last = part[:-1], part[-1]
    if last.closes or not _never_a_name(last.core):
        return False
    return _may_name(head)


def _script_changes(before: Token, word: Token) -> bool:
    """Tell whether one word is in Latin letters and the other in another script; a title
    before a name stays with it, in whatever script the name is ("Ms. 佐藤 舞")."""
    if before.core.lower().rstrip(".") in HONORIFICS:
        return False
    return _other_script(_letters(before.core)) != _other_script(_letters(word.core))


def _titled(part: list[Token]) -> bool:
    """Tell whether an honorific opens the words ("Dr. Dana Whitfield")."""
    return part[0].core.lower().rstrip(".") in HONORIFICS


def _beside_code(text: str, part: list[Token], words: list[Token]) -> bool:
    """Tell whether name words stand right beside a product's or a tool's word, or in a
    list with one: a maker's or a product's name ("Apache Airflow", "ONNX
    Runtime", "Tuya WiFi"; "NumPy, SciPy, Matplotlib"; "PBS, Slurm, SGE or LSF")."""
    i, j = words.index(part[0]), words.index(part[-1])
    if i > 0 and _beside(text, words[i - 1], words[i]) and is_code_shaped(words[i - 1].core):
        return True
    after = words[j + 1] if j + 1 < len(words) else None
    if after is not None and _beside(text, words[j], after) and is_code_shaped(after.core):
        return True
    listed = _listed_with(text, i, j, words)  # by shape only: "James and Cassandra"
    return any(is_code_shaped(t.core) and not is_product(t.core) for t in listed)


def _beside(text: str, left: Token, right: Token) -> bool:
    """Tell whether two words stand together: no punctuation ends the first, or only a
    bracket opens the second, as a product's gloss does ("KiNG (Kinemage, Next Generation)")."""
    return not left.closes or text[left.end : right.start].strip(" \t") in ("(", "[", "{")


def _listed_with(text: str, i: int, j: int, words: list[Token]) -> list[Token]:
    """Return the one-word items of the list that words [i, j] stand in ("A, B and C"), up
    to three on each side."""
    items: list[Token] = []
    k = i
    for _ in range(3):  # leftwards
        if k >= 2 and words[k - 1].core in ("and", "or"):
            k -= 2
        elif k >= 1 and text[words[k - 1].end : words[k].start].strip() == ",":
            k -= 1
        else:
            break
        items.append(words[k])
    k = j
    for _ in range(3):  # rightwards
        gap = text[words[k].end : words[k + 1].start].strip() if k + 1 < len(words) else "."
        if gap == "," or (not gap and words[k + 1].core in ("and", "or")):
            k += 2 if words[k + 1].core in ("and", "or") else 1
        else:
            break
        if k >= len(words) or words[k].core in ("and", "or") and k + 1 >= len(words):
            break
        k += words[k].core in ("and", "or")
        items.append(words[k])
    return items


def _may_name(part: list[Token]) -> bool:
    """Tell whether the words of one part of a PERSON span may be a person's name."""
    named = [t.core for t in part if t.core.lower() not in PARTICLES]
    if not named:
        return True
    if len(named) == 1:  # "C", "R": a language; an initial alone names no one
        one_letter = len(named[0]) == 1 and not is_caseless(named[0])  # 郭: a surname
        return not one_letter and not is_common_word(named[0]) and not is_tech_word(named[0])
    return not any(map(_never_a_name, named)) and not all(map(is_tech_word, named))


def _never_a_name(word: str) -> bool:
    """Tell whether a word of a name span is an English word never given as a name (not an
    initial or a title: "Sir", "Miss")."""
    return len(word) > 1 and word.lower() not in HONORIFICS and is_common_word(word)


def _without_abbreviations(span: Span, words: list[Token]) -> Span:
    """Return a PERSON span without the message abbreviations NER read into its ends
    ("Dana Whitfield ASAP", "FYI Priya Raman"): the name is the rest."""
    entity, start, end = span
    if entity != "PERSON":
        return span
    covered = [t for t in words if t.start < end and start < t.end]
    before = len(covered)
    while len(covered) > 1 and _abbreviation(covered[-1].core):
        covered.pop()
    while len(covered) > 1 and _abbreviation(covered[0].core):
        covered.pop(0)
    if len(covered) == before:
        return span  # as NER read it, with a possessive or a period after the name
    return entity, max(start, covered[0].start), min(end, covered[-1].end)


def _abbreviation(word: str) -> bool:
    """Tell whether a word is a message abbreviation written in capitals ("ASAP"; "Tia",
    "Eta" are names)."""
    return word.isupper() and word.lower() in MESSAGE_ABBREVIATIONS


def _plausible(text: str, span: Span, words: list[Token], code: list[tuple[int, int]]) -> bool:
    """Tell whether a NER span is shaped like a name or a place, not code, an id or a verb."""
    entity, start, end = span
    covered = [t for t in words if t.start < end and start < t.end]
    if not covered or _inside(start, end, code) or any(c.isdigit() for c in text[start:end]):
        return False
    if not all(is_name_word(t.core) or t.core.lower() in PARTICLES for t in covered):
        return False
    named = [t for t in covered if t.core.lower() not in PARTICLES]
    if not named:  # "van" alone
        return False
    if entity == "LOCATION" and is_region(text[start:end]):
        return False  # a country, a language, a script: no one's place (regions.py)
    if len(named) == 1 and named[0].opens_clause:  # "Summarise", "Deploy": imperatives
        i = words.index(named[0])
        return i + 1 < len(words) and is_name_word(words[i + 1].core)
    before = words[words.index(covered[0]) - 1] if words.index(covered[0]) else None
    return not (entity == "PERSON" and before is not None and before.core.isdigit())


def _inside(start: int, end: int, code: list[tuple[int, int]]) -> bool:
    """Tell whether [start, end) overlaps a URL, code or a pathed word."""
    return any(a < end and start < b for a, b in code)


def _by_use(text: str, words: list[Token], known: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Return runs of name words that their use marks as a name.

    A cue, a person label and a colon, or an honorific before the run, ``'s`` or a verb
    after it, or two or three name words in a row ("lists Dana Whitfield."; a
    clause-opening pair needs a lower-case word after it, so a title-cased heading alone is
    kept). A lone word opening a clause is a name only by a use no step or tool has
    ("Dana wants", "Olusegun will review", "Dana, please"). Runs joined by "," or "and"
    are one list: all names when one of them is (by use or in a ``known`` NER span), or
    when a verb follows the list.
    Title-cased phrases inside a sentence ("the Incident Review Board") are masked too: a
    name left is a leak, a phrase masked is a lost word.
    """
    runs = _runs(words)
    named = [_named(text, words, i, j) for i, j in runs]
    for group in _lists(text, words, runs):
        last = runs[group[-1]][1]
        after = words[last].core if last < len(words) and not words[last - 1].closes else ""
        spans = [(words[runs[g][0]].start, words[runs[g][1] - 1].end) for g in group]
        listed = any(named[g] or _inside(*spans[k], known) for k, g in enumerate(group))
        if listed or after in AFTER_VERBS or after in SPEECH_VERBS:
            for g in group:
                named[g] = True
    return [
        (words[i].start, words[j - 1].end) for (i, j), ok in zip(runs, named, strict=True) if ok
    ]


def _named(text: str, words: list[Token], i: int, j: int) -> bool:
    """Tell whether the run of words [i, j) is used as a person's name."""
    if j - i == 1 and words[i].core.lower() in FUNCTION_WORDS | HONORIFICS:
        return False  # "It wants", "Dr. wants": grammar or a title, no name
    prev = words[i - 1].core.lower().rstrip(".") if i else ""
    nxt = words[j].core if j < len(words) else ""
    cued = i > 0 and not words[i - 1].closes and (prev in CUES or prev in HONORIFICS)
    labelled = i > 0 and prev in LABELS and text[words[i - 1].end : words[i].start].strip() == ":"
    titled = j - i >= 2 and words[i].core.lower() in HONORIFICS
    several = j - i >= 2 and (nxt.islower() or not words[i].opens_clause)
    if cued or labelled or titled or several or words[j - 1].possessive or _named_so(words, i):
        return True
    if _person_cue(text, words, i):  # "What's your last name? Chládek", "Name: Dana"
        return True
    if words[j - 1].closes:
        if _speaker(text, words, i, j):
            return True
        return _addressed(text, words, i, j)
    if not words[i].opens_clause:
        return nxt in AFTER_VERBS or nxt in SPEECH_VERBS
    then = words[j + 1].core.lower() if j + 1 < len(words) else ""
    return (
        nxt in PERSON_VERBS
        or (nxt in DONE_VERBS and then in OBJECTS)
        or (nxt in MODALS and then in TASK_VERBS)
    )


#: Who a question or a request put to someone names: "Dana, can I …", "Dana, could you …".
_ASKERS = word_set("can could would will may shall do did are have")
_ASKED = word_set("i you we")


def _addressed(text: str, words: list[Token], i: int, j: int) -> bool:
    """Tell whether the run [i, j) opens its clause as the person spoken to, a comma after
    it: a request ("Dana, please", "Dana, you …") or a question put to them ("Dana, can I
    take the pager?", "Dana, could you rerun it?"). A step or a tool is not spoken to."""
    if j >= len(words) or not words[i].opens_clause:
        return False
    if text[words[j - 1].end : words[j].start].strip() != ",":
        return False
    nxt, then = words[j].core.lower(), words[j + 1].core.lower() if j + 1 < len(words) else ""
    return nxt in ("please", "you") or (nxt in _ASKERS and then in _ASKED)


#: Words before "name is" that make it a person's name ("my name is", "her maiden name is").
_WHOSE = word_set("my your his her their our maiden first last given family full")
#: Verbs that give a person a name, before the person ("call me", "named him").
_NAMING = word_set("call calls called name names named")


def _named_so(words: list[Token], i: int) -> bool:
    """Tell whether the words before word i give a person's name: "my name is Dana", "her
    maiden name is Trpinc", "people call me Dana", "she named him Adrian". A thing's name
    is given otherwise ("a tool called Zenity", "the package name is ...")."""
    before = [t.core.lower() for t in words[max(0, i - 3) : i]]
    if any(t.closes for t in words[max(0, i - 3) : i - 1]) or i and words[i - 1].closes:
        return False
    if before[-3:-2] and before[-2:] == ["name", "is"] and before[-3] in _WHOSE:
        return True
    return len(before) >= 2 and before[-1] in ("me", "him", "her", "them") and before[-2] in _NAMING


def _speaker(text: str, words: list[Token], i: int, j: int) -> bool:
    """Tell whether the run [i, j) opens a line of a chat or a script as who speaks it
    ("Dana: I'll take the pager", "Jacob: Remember me?"): the run starts the text or a line,
    a colon follows it, and words follow on that line. A heading or a label in that place
    is a common word ("Note:", "Rejected:"), dropped as one (``_may_name``), or a known
    product ("Kafka: bump to 4.0")."""
    line_start = i == 0 or "\n" in text[words[i - 1].end : words[i].start]
    after = text[words[j - 1].end :]
    return line_start and after.startswith(":") and bool(after[1:].split("\n", 1)[0].strip())


def _lists(text: str, words: list[Token], runs: list[tuple[int, int]]) -> list[list[int]]:
    """Return the indices of runs joined into lists by "," "and" "or" (two runs or more)."""
    groups: list[list[int]] = []
    for k in range(1, len(runs)):
        gap = " ".join(text[words[runs[k - 1][1] - 1].end : words[runs[k][0]].start].split())
        if gap in CONNECTORS:
            if groups and groups[-1][-1] == k - 1:
                groups[-1].append(k)
            else:
                groups.append([k - 1, k])
    return groups


def _runs(words: list[Token]) -> list[tuple[int, int]]:
    """Return [i, j) ranges of 1-3 name words in a row (particles inside allowed)."""
    runs, i = [], 0
    while i < len(words):
        j = i
        while j < len(words) and j - i < 4 and _in_run(words, i, j):
            j += 1
            if words[j - 1].closes or words[j - 1].possessive:
                break
        if j > i and is_name_word(words[j - 1].core):
            runs.append((i, j))
        i = max(j, i + 1)
    return runs


def _in_run(words: list[Token], i: int, j: int) -> bool:
    """Tell whether word j may continue a run of name words that starts at word i."""
    word = words[j]
    if j == i and word.opens_clause and word.core.lower() in CUES:
        return False  # "Ask Dana": the cue, not part of the name
    if is_name_word(word.core):
        return True
    return j > i and word.core.lower() in PARTICLES and not words[j - 1].closes


def _widen(span: Span, words: list[Token]) -> Span:
    """Grow a PERSON span over the name words right before and after it, within its clause."""
    entity, start, end = span
    idx = [k for k, t in enumerate(words) if t.start < end and start < t.end]
    lo, hi = idx[0], idx[-1]
    while lo > 0 and _joins(words[lo - 1], words[lo - 1].opens_clause) and not words[lo - 1].closes:
        lo -= 1
    while hi + 1 < len(words) and not words[hi].closes and _joins(words[hi + 1], False):
        hi += 1
    return entity, min(start, words[lo].start), max(end, words[hi].end)


def _joins(word: Token, opens: bool) -> bool:
    """Tell whether a neighbouring word belongs to the name beside it."""
    low = word.core.lower()
    return is_name_word(word.core) and not is_product(word.core) and not (opens and low in CUES)


def _merge(spans: list[Span]) -> list[Span]:
    """Return spans with overlapping or touching ones joined (PERSON wins over LOCATION)."""
    out: list[Span] = []
    for entity, start, end in sorted(spans, key=lambda s: (s[1], -s[2])):
        if out and start <= out[-1][2]:
            last = out[-1]
            kind = "PERSON" if "PERSON" in (last[0], entity) else last[0]
            out[-1] = (kind, last[1], max(last[2], end))
        else:
            out.append((entity, start, end))
    return out


def echoes(text: str, spans: list[Span]) -> list[Span]:
    """Return the other places the text names a person found by one word of their name:
    "Unlike the Tremmlin runbook, this one was written by Oskar Tremmlin", "Brisvane took
    the pager from Brisvane Okonjo", "a talk given by Wenna Pellacott and chaired by
    Pellacott".

    Once a span is masked as a person's, the same word written again with its capital is
    the same name, whatever its use there; an English word, a software package's or a
    product's name, a particle or a title is no such word ("Dana Law … the law").
    """
    people = [(a, b) for entity, a, b in spans if entity == "PERSON"]
    if not people:
        return []
    words = tokens(text)
    named = {t.core for t in words if _inside(t.start, t.end, people) and _echoed(t.core)}
    if not named:
        return []
    code = [m.span() for m in _CODE.finditer(text)]
    taken = [(a, b) for _, a, b in spans]
    return [
        ("PERSON", t.start, t.end)
        for t in words
        if t.core in named
        and not _inside(t.start, t.end, taken)
        and not _inside(t.start, t.end, code)
    ]


def _echoed(word: str) -> bool:
    """Tell whether a word of a person's span names them alone elsewhere in the text."""
    low = word.lower()
    if len(word) < 2 or not is_name_word(word) or low in PARTICLES or low in HONORIFICS:
        return False
    return not is_common_word(word) and not is_tech_word(word) and not is_product(word)


#: A degree or a generation written after a name, with a comma before it or not:
#: "Tamsin Orvell MD", "Dana Whitfield, PhD", "Oskar Tremmlin III", "Ron Akers Jr.".
_AFTER_NAME = re.compile(r"(?:,[ \t]*|[ \t]+)([A-Za-z]{2,5})(?![\w'’-])")


def with_degrees(text: str, spans: list[Span]) -> list[Span]:
    """Return the spans with each PERSON span grown over a degree or a generation written
    right after it ("Dr. Tamsin Orvell MD", "Wenna Pellacott DVM", "Nimundde Nafiand, PhD"):
    alone such letters name no one, after a name they are part of how it is written, and
    a sample keeping them keeps what the person studied. A degree opening a new clause is
    not the name's ("Dana Whitfield. MD notes follow")."""
    out = []
    for entity, start, end in spans:
        m = _AFTER_NAME.match(text, end) if entity == "PERSON" else None
        if m is not None and m.group(1)[0].isupper() and m.group(1).lower() in POSTNOMINALS:
            end = m.end(1)  # a period after it may end the sentence
        out.append((entity, start, end))
    return out
