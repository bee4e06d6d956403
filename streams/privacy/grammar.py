"""Name spans checked against the sentence's grammar: spaCy's tagger and parser.

Capitals and cue words cannot tell a person from a product in technical text ("bindings
for Ruby", "the Qt frontend", "The Notebook has support for..."); the sentence's grammar
often can. A span is taken for a thing, not a person or a place, when the tagger and parser
say that

- a word of it that the model knows is tagged other than a proper noun (a verb, an
  adjective, a common noun: "Return True", "Open Source", "Write Styler");
- it modifies a common noun ("Qt frontend", "Haskell programs", "Markdown format"),
  directly or through a chain of proper nouns ("the Ismene VPN gateway"), but for a noun
  of what a person writes or performs, or is a fan of (``words.WORKS``: "the Pellacott
  novel", "a Rosalind Quibbet concert", "a huge Tamsin Orvell fan"); or it modifies an
  acronym, which qualifies products ("Firefox ESR", "Gen AI", "the Rome Workspace API")
  and never a person's name, but for a degree or a job title after it ("Dana Whitfield
  MD", "… CEO");
- a determiner leads a PERSON span ("The Notebook", "An Okapi plugin");
- it is one word that a common noun's preposition takes ("library for Ruby"; not "to",
  "with", "by", "of", "than", which name people's roles), or, NER not finding it, it heads
  a verbless text with a preposition after it ("Client Library for OpenStack").

Each is a use of the words that names of people and places do not take in a sentence. The
model's own word weighs more: a span NER calls a person may be tagged a common noun ("My
name is Sofia/NN") and, as a full name, modify one ("a Cecilie Josefsen fan"); a word the
model has never seen (most surnames) has a guessed tag, which is not read; a span right
after a number is a street ("99 Derry Street"), left to the address rules; and a span in a
script without capitals (Han, Arabic, Devanagari…) is read by none of these: the English
model's tags and links for such words are guesses ("a huge 山田太郎 fan").
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from learnstream.streams.privacy.words import (
    HONORIFICS,
    MESSAGE_ABBREVIATIONS,
    PARTICLES,
    POSTNOMINALS,
    WORKS,
    is_caseless,
    word_set,
)

if TYPE_CHECKING:
    from spacy.tokens import Doc, Span, Token

__all__ = ["is_thing", "without_leading_verb", "worth_parsing"]

Found = tuple[str, int, int]
#: Penn Treebank tags of proper nouns, of common nouns.
_PROPER, _COMMON = frozenset({"NNP", "NNPS"}), frozenset({"NN", "NNS"})
_NOUNS = _PROPER | _COMMON
#: Tags a name's span may hold besides proper nouns: punctuation, the possessive, initials.
_NEUTRAL = frozenset({"POS", "HYPH", ",", ".", ":", "``", "''", "-LRB-", "-RRB-"})
#: Tags of function words a span may have taken in before its name ("Per 'Amanda'").
_LEADING = frozenset({"DT", "IN", "CC", "TO", "PRP$", "``", "''"})
#: Articles a capitalised run may open with ("A Pulumi package"): no part of a name.
_ARTICLES = frozenset({"a", "an", "the"})
#: Prepositions naming a recipient, a companion, an author, an owner or a peer compared:
#: roles people take.
_PERSON_PREPOSITIONS = frozenset({"to", "with", "by", "of", "than"})
#: How many proper nouns a modifier's chain may pass on its way to a common noun.
_CHAIN = 3
#: Links by which a word modifies the noun it hangs from ("Qt frontend", "Markdown format").
_MODIFIER = frozenset({"compound", "nmod", "amod"})
#: Short capitals that stand after a person's name as a job title ("Dana Whitfield CEO");
#: degrees and generations are ``words.POSTNOMINALS``.
_PERSON_ACRONYMS = POSTNOMINALS | word_set("ceo cto cfo coo cio ciso cmo vp svp evp md hr pm")
#: A word written in capitals, digits allowed after the first letter: an acronym ("ESR", "AI",
#: "API", "S3"), at most six characters (longer runs in capitals are words shouted).
_ACRONYM_LENGTH = 6


def worth_parsing(text: str, span: Found, found: list[Found]) -> bool:
    """Tell cheaply whether the grammar could call the span a thing: not a full name NER found.

    A PERSON span of two words or more that NER found is kept by every rule here but a
    verb or adjective inside it or a determiner before it, which names in agent text do not
    take; the parse costs as much as NER, so such a span is not parsed for. An article
    opening the span is not one of its words.
    """
    entity, start, end = span
    words = text[start:end].split()
    if words and words[0].lower() in _ARTICLES:
        words = words[1:]  # "A Pulumi package": an article, then one word
    full = entity == "PERSON" and len(words) > 1
    return not (full and any(e == "PERSON" and a < end and start < b for e, a, b in found))


def _unparsed(word: str) -> bool:
    """Tell whether a word is written in a script other than Latin (Han, Arabic, Cyrillic,
    Greek…): the English model knows none of its words, so its tag and parse are guesses,
    capitals or not ("Цвітан Баштан Itself" is no verb and no thing)."""
    letters = [c for c in word if c.isalpha()]
    return is_caseless(word) or bool(letters) and all(ord(c) > _LATIN_END for c in letters)


#: The last code point of the Latin letters (Basic Latin to Latin Extended-B).
_LATIN_END = 0x024F


def without_leading_verb(doc: Doc, span: Found) -> Found:
    """Return the span without a verb opening it: the run of capitalised words found in a
    title ("Refund Quillon Brevatt at ...") takes in its imperative, and a verb in a span
    would call the whole of it a thing; the name after the verb is still a name. A word of
    a script without capitals is no English verb, whatever tag the model guesses for it."""
    entity, start, end = span
    words = doc.char_span(start, end, alignment_mode="expand")
    if words is None or len(words) < 2 or not words[0].tag_.startswith("VB"):
        return span
    if _unparsed(words[0].text):
        return span
    return entity, max(start, words[1].idx), end


def is_thing(doc: Doc, span: Found, named: bool, known: frozenset[str]) -> bool:
    """Tell whether the parsed text's grammar says the span names a thing, not a person.

    ``named`` says NER found the span (a person or a place): the model's word then outweighs
    a noun tag ("My name is Sofia/NN") and a full name modifying a noun ("a Cecilie Josefsen
    fan").
    ``known`` holds the (lower-cased) words the model knows: only their tags are read.
    """
    entity, start, end = span
    words = doc.char_span(start, end, alignment_mode="expand")
    if words is None or not len(words) or _numbered(words):
        return False
    if all(_unparsed(w.text) for w in words if w.tag_ not in _NEUTRAL):
        return False  # the English model's parse of Han, Cyrillic, Greek… is a guess
    nouns = named or (len(words) == 1 and words.root.dep_ == "nsubj")  # "Brindelle/NN will"
    if _not_proper(words, _NOUNS if nouns else _PROPER, known):
        return True
    if _modifies_thing(words) and not (named and _name_length(words) > 1):
        return True
    if _object_of_thing(words) or (not named and _heading(words) and _all_known(words, known)):
        return True
    return entity == "PERSON" and _determined(words)  # "the Netherlands" is a place


def _name_length(words: Span) -> int:
    """Return how many words of the span follow the function words leading it: "A Pulumi"
    is one word of a name, as "Per Amanda" is; "Cecilie Josefsen" two."""
    return sum(1 for w in words[_first_named(words) - words.start :] if w.tag_ not in _NEUTRAL)


def _first_named(words: Span) -> int:
    """Return the index in the doc of the span's first word not leading it as a function
    word (its end when all are)."""
    return next((w.i for w in words if w.tag_ not in _LEADING), words.end)


def _numbered(words: Span) -> bool:
    """Tell whether a number comes right before the span: a street after its house number."""
    return words.start > 0 and bool(words.doc[words.start - 1].like_num)


def _not_proper(words: Span, names: frozenset[str], known: frozenset[str]) -> bool:
    """Tell whether a word the model knows in the span is tagged other than ``names``.

    Names of people and places are tagged NNP in running text; product and feature names
    written in title case are often tagged by what the word is ("Open/JJ Source/NN").
    Function words leading the span ("Per 'Amanda'") are not the name's.
    """
    first = _first_named(words)
    for word in words:
        if word.i < first or _untagged(word) or word.lower_ not in known:
            continue
        if word.tag_ not in names:
            return True
    return False


def _untagged(word: Token) -> bool:
    """Tell whether a word's tag says nothing of a name: punctuation, a particle, a title,
    an initial, or a word outside the English alphabet (its tag is the tagger's guess)."""
    low = word.lower_.rstrip(".")
    if word.tag_ in _NEUTRAL or low in PARTICLES or low in HONORIFICS or len(low) == 1:
        return True
    return not word.text.isascii()


def _modifies_thing(words: Span) -> bool:
    """Tell whether the span hangs from a common noun outside it ("the Qt frontend"), or
    from a chain of proper nouns that does ("the Kestrel HTTP server": Kestrel modifies
    HTTP, which modifies server), or from an acronym on that chain ("Firefox ESR", "Amazon
    S3 cloud"): what an acronym qualifies is a product, a standard or a service."""
    root = words.root
    if root.dep_ not in _MODIFIER:
        return False
    head, hops = root.head, 0
    while True:
        if not words.start <= head.i < words.end and _acronym(head) and _same_line(words, head):
            return True
        if not (head.tag_ in _PROPER and head.dep_ == "compound" and hops < _CHAIN):
            break
        head, hops = head.head, hops + 1
    inside = words.start <= head.i < words.end
    if head.lower_ in WORKS:  # "the Pellacott novel", "a Tamsin Orvell fan": an author's
        return False
    return head.tag_ in _COMMON and not inside and _same_line(words, head)


def _acronym(word: Token) -> bool:
    """Tell whether a word is an acronym no person's name is written with: two to six
    capitals and digits, a capital first ("ESR", "AI", "S3"; not "CEO", "PhD" or "MD")."""
    text = word.text
    if not 2 <= len(text) <= _ACRONYM_LENGTH or not text[0].isupper() or not text.isalnum():
        return False
    low = text.lower()
    return (
        text.isupper()
        and text.isascii()
        and low not in _PERSON_ACRONYMS
        and low not in MESSAGE_ABBREVIATIONS  # "Dana Whitfield ASAP" asks a person
    )


def _same_line(words: Span, other: Token) -> bool:
    """Tell whether a word stands on the span's line: the parser links words across a line
    break ("Dana Whitfield\\n14 Harrowgate Lane\\nLeeds"), which no sentence's grammar does."""
    doc = words.doc
    lo, hi = min(words.start_char, other.idx), max(words.end_char, other.idx + len(other))
    return "\n" not in doc.text[lo:hi]


def _object_of_thing(words: Span) -> bool:
    """Tell whether a lone word is the object of a preposition hanging from a noun.

    "library for Ruby", "extension for Caja", "test files for Clazy", "ImageMagick API for
    Ruby", "Better SQL in Jupyter": what a library, a package, a file or a named product
    is for or in is a thing (the noun may be a title-cased product's, tagged NNP). A
    summary goes to a person and a call is with one (see ``_PERSON_PREPOSITIONS``), an
    action is done for one ("Deploy the build for Dana": the preposition hangs from the
    verb), and a list of names is left to the list rule.
    """
    root, prep = words.root, words.root.head
    if len(words) > 1 or root.dep_ != "pobj" or prep.lower_ in _PERSON_PREPOSITIONS:
        return False
    listed = any(child.dep_ == "conj" for child in root.children)
    return (
        prep.dep_ == "prep"
        and prep.head.tag_ in _NOUNS
        and not listed
        and _same_line(words, prep.head)
    )


def _all_known(words: Span, known: frozenset[str]) -> bool:
    """Tell whether the model knows every word of the span (a surname it has never seen, as
    in the title "Refund Quillon Brevatt at 14 Harrowgate Lane", makes no heading)."""
    return all(w.lower_ in known for w in words if not _untagged(w))


def _heading(words: Span) -> bool:
    """Tell whether the span heads a verbless text with a preposition after it.

    "Client Library for OpenStack", "Kanji Dictionary in XML format": a title; a person
    named in a verbless text is labelled ("Reviewer: Dana") or listed, not qualified.
    """
    root = words.root
    if root.dep_ != "ROOT" or any(t.pos_ == "VERB" or t.tag_.startswith("VB") for t in words.doc):
        return False
    return any(child.dep_ == "prep" and child.i >= words.end for child in root.children)


def _determined(words: Span) -> bool:
    """Tell whether a determiner leads the span or hangs from its head ("The Notebook")."""
    if words[0].tag_ == "DT":
        return True
    return any(child.dep_ == "det" for child in words.root.children)
