"""Recognize street addresses by their conventions in the US, GB, DE, FR and IN.

A street is a house number and capitalised words ending in a street type (the USPS and Royal
Mail street suffixes, German ``-straße``/``-weg``…, French ``rue``/``avenue``…), or a flat
or studio before such words. Towns, states and postcodes that follow the street, comma by
comma, are part of the address when a postcode closes the chain; so is a P.O. box. A
street found takes in the building named before it and the town, postcode and nation
written after it. An address all in lower case is read by the part no prose has: a British
postcode, a US state's code with its ZIP code, a military post office. Town names
elsewhere are left to NER's LOCATION.
"""

from __future__ import annotations

import re

import regex
from presidio_analyzer import Pattern, PatternRecognizer, RecognizerResult
from presidio_analyzer.nlp_engine import NlpArtifacts

from learnstream.streams.privacy.dictionary import is_common_word
from learnstream.streams.privacy.regions import is_region
from learnstream.streams.privacy.technology import is_tech_word
from learnstream.streams.privacy.words import FUNCTION_WORDS, is_product

__all__ = ["StreetAddressRecognizer", "may_hold_street"]

_SUFFIXES = (
    "Alley|Annex|Arcade|Avenue|Ave|Av|Bayou|Beach|Bend|Bluffs?|Bottom|Boulevard|Blvd|Brooks?|"
    "Burgs?|Bypass|Canyon|Cape|Causeway|Centers?|Circles?|Cir|Cliffs?|Close|Commons?|"
    "Corners?|Courts?|Ct|Coves?|Creek|Crescent|Crossing|Crossroad|Dale|Drives?|Dr|Drove|"
    "Estates?|Expressway|Extensions?|Falls?|Ferry|Flats?|Fords?|Forest|Forges?|Fort|"
    "Freeway|Gardens?|Gateway|Glens?|Greens?|Groves?|Harbors?|Haven|Heights|Highway|Hwy|"
    "Hills?|Hollow|Inlet|Islands?|Isle|Junctions?|Knolls?|Lakes?|Landing|Lane|Ln|Loaf|"
    "Lodge|Manors?|Meadows?|Mews|Mills?|Motorway|Mount|Mountains?|Nagar|Marg|Neck|Orchard|"
    "Oval|Overpass|Parkways?|Passage|Pike|Pines?|Place|Pl|Plains?|Plaza|Prairie|Ranch|"
    "Rapids?|Ridges?|Rise|River|Roads?|Rd|Route|Row|Shoals?|Shores?|Skyway|Springs?|"
    "Squares?|Sq|Stravenue|Streets?|St|Str|Terrace|Throughway|Trafficway|Trail|Tunnel|Turnpike|"
    "Underpass|Vale|Valleys?|Via|Viaduct|Villages?|Ville|Vista|Wharf"
)
#: Street types that are also everyday words in agent text ("3 Smoke Tests Pass"): a street
#: ending in one counts only with the postcode that closes its address.
_COMMON = (
    "Branch|Bridge|Camp|Club|Course|Crest|Curve|Dam|Divide|Fields?|Forks?|Keys?|Land|"
    "Lights?|Locks?|Loop|Mall|Mission|Parks?|Pass|Path|Points?|Ports?|Radial|Ramp|Rest|Run|"
    "Spurs?|Station|Stream|Summit|Trace|Track|Trailer|Unions?|Views?|Walks?|Wall|Ways?|"
    "Wells?|Yard"
)
_WORD = r"[A-ZÀ-Þ][\w'’.-]*"
_HOUSE = r"\d{1,5}[A-Za-z]?(?:[-/]\d{1,5}[A-Za-z]?)?"
_UNIT = r"(?:Flat|Studio|Apartment|Apt\.?|Suite|Unit)\s+\w{1,5}"
#: English-speaking streets: "1777 Kramer Court", "Flat 0, Francesca Plains", and with a
#: building's number before the house's ("083 254 Damvergi Street").
_EN_START = (
    rf"(?:{_UNIT},?\s+(?:{_HOUSE},?\s+)?|(?<![\w.-]){_HOUSE}(?:[ \t]+{_HOUSE})?,?\s+)"
    r"(?:[NSEW]\.?\s+)?"
)
#: A numbered street's ordinal ("350 5th Avenue", "12 W 42nd St").
_ORDINAL = r"\d{1,3}(?:st|nd|rd|th)"
_EN = rf"{_EN_START}(?:(?:{_WORD}|{_ORDINAL})\s+){{1,4}}(?i:{_SUFFIXES})\b\.?(?:,?\s+{_UNIT})?"
#: An everyday street type is read as one only when written as the words before it are, with
#: a capital or in capitals: "834 Tamalpais Heights walk…" is a street and a verb after it.
_COMMON_TYPE = rf"(?:{_COMMON}|{_COMMON.upper()})"
_EN_COMMON = rf"{_EN_START}(?:{_WORD}\s+){{1,4}}{_COMMON_TYPE}\b\.?(?:,?\s+{_UNIT})?"
_DE_TYPES = r"straße|strasse|str\.|gasse|weg|allee|platz|damm|ufer|chaussee|ring|steig|pfad"
#: German streets: "Drubinstraße 47-26", "Leyla-Fröhlich-Weg 6", "Berliner Straße 5".
_DE = rf"(?:{_WORD}[\s-])*(?=[A-ZÀ-Þ])[\w'-]*(?i:{_DE_TYPES})\s+{_HOUSE}(?![\w])"
_FR_TYPES = r"rue|avenue|av\.|boulevard|bd|allée|impasse|quai|chemin|place|route|cours|square"
#: French streets: "5, avenue Samson", "87, rue de Barre", "avenue Julie Ledoux".
_FR = (
    rf"(?:(?<![\w.-]){_HOUSE}(?:[ \t]+{_HOUSE})?(?:\s?(?:bis|ter))?,?\s+)?(?i:{_FR_TYPES})\s+"
    rf"(?:(?:de la|de l'|du|des|de|la|le|l'|d')\s*)?{_WORD}(?:[ \t]+{_WORD}){{0,3}}"
)
#: A capitalised word in any script (Greek and Cyrillic capitals too), then more words.
_ANY_WORD = r"[^\W\d_a-z][\w'’.-]*"
#: Streets written with the house number after the name, as most of Europe and Latin
#: America write them, behind a building or postal number: "324 Helmstok 174",
#: "449 Πεντέλης 210", "625 ul. Asnyka Adama 82", "Rua Cidade de Maracajá 468",
#: the number closing its line or followed by a comma or a flat ("2 VMs to 3 hosts" is no
#: street).
_NUMBER_LAST = (
    rf"(?<![\w.-]){_HOUSE},?[ \t]+(?:(?i:ul|al|pl|rua|r|av|calle|via)\.?[ \t]+)?{_ANY_WORD}"
    rf"(?:[ \t]+(?:{_ANY_WORD}|d[aeiou]s?|del|la|le|van|von|der|den)){{0,3}}"
    r"[ \t]+\d{1,5}[A-Za-z]?\.?"
    rf"(?=[ \t]*(?:[,\n\r]|$|{_UNIT}))(?:,?\s+{_UNIT})*"
)
#: Lower-case words inside a street's name written with the house number last ("Nordre
#: gate 64", "Tamme põik 17", "Slovenska ulica 40"): a street type of its language, never an
#: English function word ("2 Pods to 3").
_INNER_LOWER = (
    r"(?!(?:to|of|and|or|in|on|at|for|from|with|by|the|a|an|is|are|was|per|vs|via|into)"
    r"(?![\w'’-]))[^\W\d_A-Z][\w'’-]*"
)
#: Streets with the house number last and lower-case words in their name, behind a
#: building or postal number, the number closing the line or followed by a comma or a
#: flat: "2210 Nordre gate 64 Suite 12", "118 Tamme põik 17".
_NUMBER_LAST_LOWER = (
    rf"(?<![\w.-]){_HOUSE},?[ \t]+{_ANY_WORD}"
    rf"(?:[ \t]+(?:{_ANY_WORD}|{_INNER_LOWER})){{1,3}}"
    r"[ \t]+\d{1,5}[A-Za-z]?\.?"
    rf"(?=[ \t]*(?:[,\n\r]|$|{_UNIT}))(?:,?\s+{_UNIT})*"
)
#: Streets written with the house number last and an English street type after it, behind
#: a building number ("4410 Skovbrynet 12 St.", "310 Husova 1808 St.").
_NUMBER_THEN_TYPE = (
    rf"(?<![\w.-]){_HOUSE},?[ \t]+{_ANY_WORD}(?:[ \t]+(?:{_ANY_WORD}|{_INNER_LOWER})){{0,3}}"
    r"[ \t]+\d{1,5}[A-Za-z]?[ \t]+(?:Street|St|Avenue|Ave|Road|Rd|Str)\b\.?"
)
#: A street named without a house number, by its type written out after one to three
#: capitalised words of any script and, as many write it, its number: "Quellmoor Mills Street",
#: "Vinohradská 1394 street", "Ερμού 54 street". A name of English words only ("Wall
#: Street", "Main Road") is left (``_named_street``).
_NAMED = (
    rf"(?<![\w.-]){_ANY_WORD}(?:[ \t]+{_ANY_WORD}){{0,2}}(?:[ \t]+\d{{1,5}}[A-Za-z]?)?"
    r"[ \t]+(?i:street|avenue|road|boulevard)(?![\w-])(?![ \t]+[^\W\d_a-z])"
)
#: A street written with the house number last and no number before it, where a place
#: is named: after "on", "at", "of", "in", "to", "from" or "near", closing its clause or
#: followed by an English street type ("The shop is on Laugavegur 28", "the far
#: end of Kerkstraat 120.", "enter on Skovvej 41 St. at night"). A
#: product's or a tool's name with its version ("on Windows 10", "in Python 3") is none
#: (``_numbered_street``), and a number of one digit is a version more often than a house's.
_PLACED_NUMBER_LAST = (
    r"(?<=(?<![\w-])(?:[Oo]n|[Aa]t|[Oo]f|[Ii]n|[Tt]o|[Ff]rom|[Nn]ear)[ \t]+)"
    rf"(?:(?:ul|al|pl|r|av|avda)\.[ \t]+)?{_ANY_WORD}"
    rf"(?:[ \t]+(?:{_ANY_WORD}|{_INNER_LOWER})){{0,3}}"
    r"[ \t]+\d{2,5}[A-Za-z]?"
    r"(?:[ \t]+(?:Street|St|Avenue|Ave|Road|Rd)\b\.?(?![ \t]+[^\W\d_a-z])"
    r"|\.?(?=[ \t]*(?:[,;!?\r\n]|\.(?!\w)|$)))"
)
#: The value of a form's or a letter's address line: what follows a label "Address:"
#: opening its line (a home, postal, billing, shipping or mailing one too), on the same
#: line or the next, to the end of that line ("Address:     772 Republica de Chile 7715
#: Suite 228"). It holds a digit and a capitalised word; a memory address, a URL, an
#: e-mail or a network address (digits, dots and colons) is none ("Address: 0x7ffd",
#: "IP Address: 10.0.0.1": a label word before "Address" other than those is none).
_LABEL = (
    r"^[ \t]*(?:(?:[Hh]ome|[Pp]ostal|[Bb]illing|[Ss]hipping|[Mm]ailing)[ \t]+)?"
    r"[Aa]ddress[ \t]*:[ \t]*(?:\r?\n[ \t]*)?"
)
_LABELLED = (
    _LABEL + r"(?![^\n]*(?:0x|://|@))(?![\d.:\[\]/ \t]+(?:\r?\n|$))"
    r"(?=[^\n]*\d)(?=[^\n]*[^\W\d_a-z][^\W\d_A-Z])"
    r"[^\W_][^\n]*?(?=[ \t]*\.?[ \t]*(?:\r?\n|$))"
)
#: P.O. boxes: "P.O. Box 1234", "PO Box 12", "Post Office Box 7", in any case.
_PO_BOX = r"(?<![\w.])(?i:P\.?\s?O\.?|Post\s+Office)\s*(?i:Box)\s+\d{1,6}(?!\w)"
#: A flat, suite or apartment with its number, alone ("Apt. 559" on a letter's line): the
#: words name a dwelling in a building, written with a capital and a number only there.
_LONE_UNIT = r"(?<![\w.])(?:Apartment|Apt\.?|Suite)\s+\d{1,5}[A-Za-z]?(?![\w.]?\d)"
_MILITARY = rf"(?:(?:PSC|Unit)\s+\d+,?\s+Box\s+\d+|(?:USNS|USNV|USS|USCGC)\s+{_WORD})"
_POSTCODE = (
    r"(?:[A-Z]{2}\s+)?(?:\d{5}(?:-\d{4})?|\d{6}|[A-Z]{1,2}\d[A-Z\d]?\s?\d[A-Z]{2})(?![\w])"
    r"|(?:APO|FPO|DPO)\s+A[AEP]\s+\d{5}"
)
#: Town and region segments after a street, up to a postcode (and the town after a
#: continental postcode: "24158 Ochsenfurt"); a flat or suite may stand among them.
_TAIL = (
    rf"(?:(?:,\s*|\s+)(?:{_UNIT}|{_WORD}(?:[\s-]{_WORD}){{0,3}}))" + r"{0,4}?"
    rf",?\s+(?:{_POSTCODE})(?:\s+{_WORD}(?:[\s-]\w[\w'’-]*){{0,4}})?"
)


#: The lines of a letter's address block after its street, each a flat, or one to four
#: capitalised words (a town, a region, a country: "Joinville", ", PA", "KOKKOLA") with a
#: postcode after them or not ("Czech Republic 60530"), or a postcode alone ("…\n, QLD\n
#: 92893"): "139 Westglen Road\n Apt. 983\n Waiatarua\n New Zealand". A line holding
#: anything else ends the block; prose going on after the last line ("…\n Brazil for post
#: mail?") is not the block's. A line may open with a mark (``_QUOTED``).
#: A short lower-case word between two capitalised ones in a town's name ("Ústí nad
#: Labem", "Frankfurt am Main", "Rothenburg ob der Tauber"), never an English function word.
_LINE_PARTICLE = (
    r"(?!(?:to|of|and|or|in|on|at|for|by|the|a|an|is)(?![\w'’-]))[^\W\d_A-Z]{1,3}"
    r"(?=[ \t]+[^\W\d_a-z])"
)
#: A region's slot a tool exported empty: how pandas, Python and JSON write a missing
#: value ("Brelling, nan 40417", a line ", None" between the town and the postcode).
_MISSING = r"(?:nan|NaN|None|none|null|N/A|n/a)"
#: A town's line may carry its region, a code or an exported empty slot, before the postcode
#: ("Vale de Corvos, QX 31908").
_REGION = rf"(?:,[ \t]*(?:[A-Z]{{2,3}}|{_MISSING})(?=[ \t]+\d))?"
#: A British postcode on a line, in capitals ("LN8N 0BF").
_UK_POSTCODE = r"[A-Z]{1,2}\d[A-Z\d]?[ \t]?\d[A-Z]{2}"
_LINE = (
    rf"(?:{_UNIT}|{_ANY_WORD}(?:[ \t-]+(?:{_ANY_WORD}|{_LINE_PARTICLE})){{0,3}}{_REGION}"
    rf"(?:[ \t]+(?:\d{{3,6}}(?:-\d{{4}})?|{_UK_POSTCODE}))?)"
)
_LINE_END = r"(?=[ \t]*(?:\r?\n|$|[.,?!;]))"
#: The marks a line may open with before an address block's line: a quoted e-mail's ``>``
#: ("> Apt. 876"), a list's bullet, a template's braces, characters lost to an encoding
#: (``}}``, ``???``): the marks ``names.addressee`` reads before a block's name line too.
_LEAD_MARKS = "}?*>#-"
_QUOTED = r"(?:[}?*>#-]+[ \t]*)?"
_LINES = (
    rf"(?:[ \t]*\r?\n[ \t]*{_QUOTED},?[ \t]*(?:{_LINE}(?:{_LINE_END}|(?=[ \t]+[a-z]))"
    rf"|\d{{4,6}}(?:-\d{{4}})?{_LINE_END}|{_MISSING}(?=[ \t]*\r?\n)))+"
)


#: A town's word: a capital in any script, no period (the sentence's stays outside).
_TOWN_WORD = r"[^\W\d_a-z][\w'’-]*"
#: A word in capitals, as the post writes a town ("TROMSØ", "LI").
_CAPITALS = r"[^\W\d_a-z]{2,}(?![\w'’-])"
#: The town and country written after a flat on the street's own line, up to the line's or
#: the sentence's end ("… Apt. 542 KÖTTMANNSDORF Austria?", "… Suite 626 FAUSKE Norway",
#: "… Suite 12 Tollard nan" with its region exported empty),
#: or, with a word in capitals as the post writes a town, up to the next lower-case word
#: ("… Suite 12 Tromsø TROMS for post"): only after a flat, so a street in prose
#: keeps the words after it ("…, Apt. 5 Then We Deploy it").
_UNIT_TOWN = (
    rf"(?:(?<={_UNIT})[ \t]+{_TOWN_WORD}(?:[ \t]+{_TOWN_WORD}){{0,3}}(?:[ \t]+{_MISSING})?"
    r"(?=[ \t]*(?:[?.!,;:)\r\n]|$))"
    rf"|(?<={_UNIT})[ \t]+(?:{_TOWN_WORD}[ \t]+){{0,2}}{_CAPITALS}(?:[ \t]+{_TOWN_WORD}){{0,2}}"
    r"(?=[ \t]+[^\W\d_A-Z]))?"
)


#: A town and a country after a street, comma by comma, closing the line or the sentence
#: with no postcode ("71236 Mühle 77 Suite 160, BODØ, Norway"): each segment one to three
#: capitalised words, so a street in prose keeps the clause after it.
_COMMA_TOWNS = (
    rf"(?:,[ \t]*{_TOWN_WORD}(?:[ \t-]+{_TOWN_WORD}){{0,2}}){{1,3}}"
    r"(?=[ \t]*(?:[?.!;)\r\n]|$))"
)


#: The streets of a corner, with or without their numbers: "the corner of 262 Thisseos
#: Avenue and Semmens Greens", "at the corner of Via Pisanelli 89 St. and Růžena Junctions
#: St.": capitalised words, numbers and the words joining them, after "corner of"; dotted
#: initials ("P.O. Box 286") and a lower-case word before a capitalised one or a number
#: ("ul. Długa 44", "12 rue Oberkampf", "Thorvald Meyers gate 40") too.
_CORNER_WORD = (
    rf"(?:{_TOWN_WORD}(?:\.(?=[ \t]+(?:and|&)[ \t]))?|(?:[A-Z]\.)+|\d{{1,5}}[A-Za-z]?\.?"
    rf"|{_INNER_LOWER}\.?(?=[ \t]+(?:[^\W\d_a-z]|\d)))"
)
_CORNER = (
    rf"(?<=(?i:\bcorner\s+of)\s+)(?:the\s+)?{_CORNER_WORD}"
    rf"(?:[ \t]+(?:(?:and|&|de|del|la|le|da|do|y|à)[ \t]+)*{_CORNER_WORD}){{1,9}}"
)


#: Addresses written all in lower case, as a form's or a chat's text may carry them, read only
#: with the part of them no prose has: a British postcode ("n9d 0ff"), a US state's code and
#: ZIP code ("va 18803"), a military post office ("apo ae 09045").
_LOWER_WORD = r"[a-z][a-z'’-]*(?![\w'’-])"
_LOWER_BREAK = r"(?:,?[ \t]+|[, \t]*\r?\n[ \t]*)"
_LOWER_UNIT = r"(?:flat|studio|apartment|apt\.?|suite|unit)[ \t]+\w{1,5}"
_LOWER_POSTCODE = r"[a-z]{1,2}\d[a-z\d]?[ \t]\d[a-z]{2}(?![\w-])"
#: The line a British address may close with: its nation, in English or in its own language,
#: or the kingdom's name or code (the ISO names are ``regions.py``'s).
_UK_NATIONS = (
    "England", "Scotland", "Wales", "Northern Ireland", "Cymru", "Alba", "Great Britain",
    "Britain", "United Kingdom", "UK", "GB",
)  # fmt: skip
_LOWER_NATIONS = "|".join(n.lower() for n in _UK_NATIONS)
#: A British block: a flat or a house number or not, up to six words over up to as many
#: lines, the postcode, and the nation after it or not ("flat 19w\nann oval\nelliottchester\n
#: n9d 0ff\nscotland"); one with no flat and no number holds a street type (``_lower_street``).
_LOWER_UK = (
    rf"(?<![\w.-])(?:(?:{_LOWER_UNIT}|\d{{1,5}}[a-z]?){_LOWER_BREAK})?"
    rf"{_LOWER_WORD}(?:{_LOWER_BREAK}{_LOWER_WORD}){{0,5}}{_LOWER_BREAK}{_LOWER_POSTCODE}"
    rf"(?:{_LOWER_BREAK}(?:{_LOWER_NATIONS})(?![\w-]))?"
)
_LOWER_TYPES = f"{_SUFFIXES}|{_COMMON}".lower()
_US_STATES = (
    "al|ak|az|ar|ca|co|ct|de|dc|fl|ga|hi|id|il|in|ia|ks|ky|la|me|md|ma|mi|mn|ms|mo|mt|ne|nv|"
    "nh|nj|nm|ny|nc|nd|oh|ok|or|pa|ri|sc|sd|tn|tx|ut|vt|va|wa|wv|wi|wy|pr|gu|vi|as|mp"
)
#: A US block: the house number, one to three words and a street type, a flat or not, the
#: town and the state's code with the ZIP code ("20383 tina trace apt. 044\ncowanview\nwi
#: 46417", "648 wheeler plains, cameronmouth, va 18803").
_LOWER_US = (
    rf"(?<![\w.-])\d{{1,5}}(?:[ \t]+{_LOWER_WORD}){{1,3}}?[ \t]+(?:{_LOWER_TYPES})\.?"
    rf"(?:,?[ \t]+{_LOWER_UNIT})?(?:{_LOWER_BREAK}{_LOWER_WORD}){{1,3}}{_LOWER_BREAK}"
    rf"(?:{_US_STATES})[ \t]+\d{{5}}(?:-\d{{4}})?(?![\w-])"
)
#: A military address: the unit's or the ship's line, then the post office, its region and the
#: ZIP code ("psc 9253, box 3189\napo aa 56269", "uss reynolds fpo ap 57810"), in any case.
_ANY_MILITARY = (
    r"(?<![\w.-])(?i:(?:psc|unit)[ \t]+\d+,?[ \t]+box[ \t]+\d+|(?:usns|usnv|uss|uscgc)[ \t]+"
    rf"[^\W\d_][\w'’-]*){_LOWER_BREAK}(?i:apo|fpo|dpo)[ \t]+(?i:a[aep])[ \t]+\d{{5}}(?![\w-])"
)

#: The lower-case US and military blocks (``StreetAddressRecognizer._lower``).
_LOWER_ENDS = (_LOWER_US, _ANY_MILITARY)
#: A part every lower-case block ends with: a British postcode, a US state's code and ZIP
#: code, or a military post office.
_LOWER_GATE = regex.compile(
    rf"{_LOWER_POSTCODE}|(?<![\w-])(?:{_US_STATES})[ \t]+\d{{5}}"
    r"|(?i:apo|fpo|dpo)[ \t]+(?i:a[aep])[ \t]"
)


#: A part that every match of the patterns below holds as is, one per pattern or more (read
#: by the regex engine Presidio runs them on, with the same flags): a flat; a house number
#: before a street's first word (a capital or an ordinal: English streets), or before a name
#: in any script (the number last, a Polish "ul."); a German street type before its number,
#: a French one before its name; a P.O. box's or a military box's number; "corner of"; a
#: military ship; a street type written out; a place's preposition before a name; an
#: address line's label. A sentence with numbers in it ("the login 500 error", "retry 3
#: times") holds none, and the recognizer's patterns need not run over it. A new pattern
#: adds its part here (tests/unit/test_pii_gates.py holds the gate to the recognizer).
_STREET_PARTS = tuple(
    regex.compile(rx, flags=regex.DOTALL | regex.MULTILINE)
    for rx in (
        r"(?:Flat|Studio|Apartment|Apt\.?|Suite|Unit)\s",
        rf"\d[A-Za-z]?,?\s+(?:[A-ZÀ-Þ]|{_ORDINAL})",
        r"\d[A-Za-z]?,?[ \t]+(?:(?i:ul|al|pl|rua|r|av|calle|via)\.?[ \t]+)?[^\W\d_a-z]",
        rf"(?<=(?i:{_DE_TYPES}))\s+\d",
        rf"(?<=(?i:{_FR_TYPES})\s+)(?:(?:de la|de l'|du|des|de|la|le|l'|d')\s*)?[A-ZÀ-Þ]",
        r"(?i:Box)\s+\d",
        r"(?i:corner\s+of)\s",
        r"US(?:NS|NV|S|CGC)\s",
        r"[ \t](?i:street|avenue|road|boulevard)",
        r"(?<=(?:[Oo]n|[Aa]t|[Oo]f|[Ii]n|[Tt]o|[Ff]rom|[Nn]ear))[ \t]+"
        r"(?:(?:ul|al|pl|r|av|avda)\.[ \t]+)?[^\W\d_a-z]",
        r"[Aa]ddress[ \t]*:",
    )
)


def may_hold_street(text: str) -> bool:
    """Tell cheaply whether ``StreetAddressRecognizer`` could find an address in text."""
    return _LOWER_GATE.search(text) is not None or any(
        part.search(text) is not None for part in _STREET_PARTS
    )


class StreetAddressRecognizer(PatternRecognizer):
    """Recognize street addresses with the town and postcode that follow them."""

    def __init__(self) -> None:
        streets = [
            rf"(?:{s}){_UNIT_TOWN}(?:{_TAIL}|{_COMMA_TOWNS})?(?:{_LINES})?"
            for s in (_EN, _DE, _FR, _PO_BOX, _NUMBER_LAST)
        ]
        streets += [_LONE_UNIT + _UNIT_TOWN, _CORNER]
        streets += [rf"(?:{s}){_TAIL}" for s in (_EN_COMMON, _MILITARY)]
        streets += [
            rf"(?:{s}){_UNIT_TOWN}(?:{_TAIL}|{_COMMA_TOWNS})?(?:{_LINES})?"
            for s in (_NUMBER_LAST_LOWER, _NUMBER_THEN_TYPE)
        ]
        patterns = [Pattern(f"street {i}", rx, 0.6) for i, rx in enumerate(streets)]
        patterns.append(Pattern(_NAMED_STREET, _NAMED, 0.6))
        patterns.append(Pattern(_NUMBERED_STREET, _PLACED_NUMBER_LAST, 0.6))
        patterns.append(Pattern(_NAMED_COMMON, _EN_COMMON, 0.6))
        patterns.append(Pattern(_LABELLED_ADDRESS, rf"(?:{_LABELLED})(?:{_LINES})?", 0.6))
        super().__init__(
            "STREET_ADDRESS", patterns=patterns, global_regex_flags=re.DOTALL | re.MULTILINE
        )
        # The lower-case blocks try up to six words at every word, so they run apart, only on
        # a text holding the part each must end with (2.5x this recognizer's time otherwise).
        lower = [Pattern(_LOWER_BLOCK, _LOWER_UK, 0.6)]
        lower += [Pattern(f"lower-case {i}", rx, 0.6) for i, rx in enumerate(_LOWER_ENDS)]
        self._lower = PatternRecognizer(
            "STREET_ADDRESS",
            name="StreetAddressRecognizer",
            patterns=lower,
            global_regex_flags=re.DOTALL | re.MULTILINE,
        )

    def analyze(
        self,
        text: str,
        entities: list[str],
        nlp_artifacts: NlpArtifacts | None = None,
        regex_flags: int | None = None,
    ) -> list[RecognizerResult]:
        """Return the addresses, each without a last line that opens a sentence going on,
        and an address line's without its label."""
        found = super().analyze(text, entities, nlp_artifacts, regex_flags)
        if _LOWER_GATE.search(text):
            lower = self._lower.analyze(text, entities)
            for r in lower:  # the engine keeps only results it can tell this recognizer's
                r.recognition_metadata[RecognizerResult.RECOGNIZER_IDENTIFIER_KEY] = self.id
            found = self.remove_duplicates(found + lower)
        found = [r for r in found if _pattern(r) != _NAMED_STREET or _named_street(text, r)]
        found = [r for r in found if _pattern(r) != _NUMBERED_STREET or _numbered_street(text, r)]
        found = [r for r in found if _pattern(r) != _NAMED_COMMON or _proper_street(text, r)]
        found = [r for r in found if _pattern(r) != _LOWER_BLOCK or _lower_street(text, r)]
        for r in found:
            if _pattern(r) == _LABELLED_ADDRESS and (label := _LABEL_AT.match(text, r.start)):
                r.start = label.end()  # the value, not its label
            r.end = _without_prose_line(text, r.start, r.end)
            if before := _BUILDING.search(text, max(0, r.start - 12), r.start):
                r.start = before.start()  # "4410 <23 Rue …>": the building's number
            r.start = _with_lead_street(text, r.start)
            r.start, r.end = _with_building(text, r.start), _with_town(text, r.end)
        return found


#: The pattern of streets named without a house number (``_NAMED``), and of streets with
#: the number last and none before (``_PLACED_NUMBER_LAST``).
_NAMED_STREET, _NUMBERED_STREET = "named street", "numbered street"
#: The pattern of a house number and words ending in a street type that is also an everyday
#: word ("1254 Cathcart Way"), kept without its postcode only by ``_proper_street``.
_NAMED_COMMON = "street of a common type"
#: The pattern of a British address in lower case (``_LOWER_UK``).
_LOWER_BLOCK = "lower-case block"
#: The pattern of an address line's value, which matches from its label (``_LABELLED``).
_LABELLED_ADDRESS = "labelled address"
_LABEL_AT = re.compile(_LABEL, re.MULTILINE)
#: A building's or a postal number right before a street found ("14386 <street>").
_BUILDING = re.compile(r"(?<![\w.,:/-])\d{1,6}[ \t]+\Z")


#: A capitalised word (of any script) right before a street found, with "and" between them
#: or not: "Orvelle and <118 Quillon Drive>", "Tasmaru <41 Brannock Points>".
_LEAD_STREET = re.compile(rf"(?<![\w.,'’&-])({_TOWN_WORD})[ \t]+((?:and|&)[ \t]+)?\Z")


def _with_lead_street(text: str, start: int) -> int:
    """Return where a street found starts once the street written before it is taken in.

    The other street of a corner, written before it with "and" ("Orvelle and 118 Quillon
    Drive", "Tasmaru and P.O. Box 77"), and a street's name before its house number
    when another street's words follow that number ("Tasmaru 41 Brannock Points",
    "Kellavik 7 Dunmore Road": the number closes the first street's name). An English
    word, a software package's or a product's name is no street's ("Deploy and 12 Main
    Street" keeps it).
    """
    lead = _LEAD_STREET.search(text, max(0, start - 40), start)
    if lead is None or not (lead.group(2) or text[start : start + 1].isdigit()):
        return start
    word = lead.group(1)
    if is_common_word(word) or is_tech_word(word) or is_product(word):
        return start
    return lead.start(1)


#: What stands between an address's parts: a comma, spaces, or a line break.
_BREAK = r"(?:,[ \t]*|[ \t]+|[ \t]*\r?\n[ \t]*)"
_BUILDING_KINDS = r"(?:Building|Block|House|BUILDING|BLOCK|HOUSE)"
#: A building's name right before its flat or its street, on the same line or the one above,
#: as British addresses write it first: "Daniels Building\n497 Laura Ramp", "Mistry Block
#: Studio 54D …", "House Jones, Flat 59, …", "CARTER BUILDING, STUDIO 0, …".
_BUILDING_NAME = re.compile(
    rf"(?<![\w.'’-])(?:({_TOWN_WORD})[ \t]+{_BUILDING_KINDS}|{_BUILDING_KINDS}[ \t]+({_TOWN_WORD}))"
    rf"{_BREAK}\Z"
)


def _with_building(text: str, start: int) -> int:
    """Return where an address starts once the building's name written before it is taken
    in ("The House" and "This Block" name none)."""
    before = _BUILDING_NAME.search(text, max(0, start - 60), start)
    if before is None or (before.group(1) or before.group(2)).lower() in FUNCTION_WORDS:
        return start
    return before.start()


_TOWN_PREFIXES = "North|South|East|West|New|Lake|Port|Fort|Mount|Saint|Upper|Lower"
#: The town after a street, on its line or the next: one word that is somewhere a name, or
#: any capitalised word after a prefix towns take ("North Jeremyport", "Port Chloe").
_TOWN_AFTER = re.compile(
    rf"{_BREAK}(?:((?:{_TOWN_PREFIXES}|{_TOWN_PREFIXES.upper()}))[ \t]+)?({_TOWN_WORD})"
    r"(?![\w'’-])"
)
_POSTCODE_AFTER = re.compile(
    rf"{_BREAK}(?:{_UK_POSTCODE}|{_LOWER_POSTCODE}|\d{{5}}(?:-\d{{4}})?)"
    r"(?![\w-])"
)
_WORDS_AFTER = re.compile(rf"{_BREAK}([^\W\d_][\w'’-]*(?:[ \t]+[^\W\d_][\w'’-]*){{0,2}})")
_NATIONS = frozenset(n.lower() for n in _UK_NATIONS)


def _with_town(text: str, end: int) -> int:
    """Return where an address ends once the town, the postcode and the country written
    after it are taken in, in that order, each where it stands ("Flat 2 Lynn Overpass
    Howellsborough.", "77 Jack View\nNorth Jeremyport", "…, E31 4UT, SCOTLAND").

    A town without a prefix is a word that is no English word, software's or product's name
    or country ("12 Main Street Tomorrow" keeps its last word). A part on a line of its own
    closes that line: a line going on in prose is the next sentence ("…\n New Zealand for
    post mail?").
    """
    town = _TOWN_AFTER.match(text, end)
    if town is not None and _whole_line(text, town):
        word = town.group(2)
        if town.group(1) or not (
            is_common_word(word) or is_tech_word(word) or is_product(word) or is_region(word)
        ):
            end = town.end()
    if (postcode := _POSTCODE_AFTER.match(text, end)) and _whole_line(text, postcode):
        end = postcode.end()
    if (country := _WORDS_AFTER.match(text, end)) is not None:
        words = country.group(1).split()
        for n in range(len(words), 0, -1):
            name = " ".join(words[:n])
            if (is_region(name) or name.lower() in _NATIONS) and _whole_line(
                text, country, country.start(1) + len(name)
            ):
                return country.start(1) + len(name)
    return end


_LINE_CLOSES = re.compile(r"[ \t]*[.,;:!?]?[ \t]*(?:\r?\n|\Z)")


def _whole_line(text: str, part: re.Match[str], end: int | None = None) -> bool:
    """Tell whether a part after a street (up to ``end``) stands on the street's line, or
    closes a line of its own."""
    part_text = text[part.start() : part.end() if end is None else end]
    lead = part_text[: len(part_text) - len(part_text.lstrip(" \t\r\n,"))]
    return "\n" not in lead or _LINE_CLOSES.match(text, part.start() + len(part_text)) is not None


_LOWER_UNIT_AT = re.compile(_LOWER_UNIT)
_LOWER_TYPE_WORD = re.compile(rf"(?<![\w'’-])(?:{_LOWER_TYPES})(?![\w'’-])")


def _lower_street(text: str, result: RecognizerResult) -> bool:
    """Tell whether a lower-case block before a British postcode is an address: it opens
    with a flat or a house number, or one of its words is a street type."""
    block = text[result.start : result.end]
    if block[:1].isdigit() or _LOWER_UNIT_AT.match(block):
        return True
    return _LOWER_TYPE_WORD.search(block) is not None


def _pattern(result: RecognizerResult) -> str | None:
    """Return the name of the pattern that found result."""
    explanation = result.analysis_explanation
    return explanation.pattern_name if explanation is not None else None


def _named_street(text: str, result: RecognizerResult) -> bool:
    """Tell whether a street named without a house number holds a word that is somewhere a
    name: one of English words, software's or products' names only ("Wall Street", "The
    Python Road") names no one's street."""
    words = [w.strip(".,'’") for w in text[result.start : result.end].split()[:-1]]
    return any(
        not w.isdigit() and not is_common_word(w) and not is_tech_word(w) and not is_product(w)
        for w in words
    )


def _proper_street(text: str, result: RecognizerResult) -> bool:
    """Tell whether a house number and words ending in an everyday street type name a street
    without its postcode: every word between them is somewhere a name and none an English
    word, a product's or a software package's name or an acronym ("1254 Cathcart Way",
    "161 Ballyferris Path"; "3 Smoke Tests Pass" and "2 Kafka Streams Path" are none)."""
    words = [w.strip(".,'’") for w in text[result.start : result.end].split()]
    named = [w for w in words[:-1] if w[:1].isupper() and not w[:1].isdigit()]
    if not named or any(w.isupper() or is_tech_word(w) or is_product(w) for w in named):
        return False
    if len(named) <= 2 and re.fullmatch(r"\d{3,5}[A-Za-z]?", words[0]):
        # "1062 Captain Walk", "581 School Spur": a house's number, not a count of things
        # ("200 Smoke Tests Pass")
        return not any(w.endswith("s") and is_common_word(w) for w in named)
    return not any(is_common_word(w) for w in named)


def _numbered_street(text: str, result: RecognizerResult) -> bool:
    """Tell whether a street with its number last names a street: a word of it is somewhere
    a name, and none is a product's or a software package's name or an acronym."""
    words = [w.strip(".,'’") for w in text[result.start : result.end].split()[:-1]]
    named = [w for w in words if w[:1].isupper()]
    if any(is_tech_word(w) or is_product(w) or w.isupper() for w in named):
        return False  # "Windows 10", "Python 3", a standard's acronym: "RFC 2231", "ISO 8601"
    return any(not is_common_word(w) for w in named)


def _without_prose_line(text: str, start: int, end: int) -> int:
    """Return where an address ends once a last line that opens prose is cut off.

    A block's last line may have its sentence go on after it ("…\n Iceland for post
    mail?"), but a line whose first word is an English word never given as a name is the
    next sentence, not a town ("12 Main Street\nSee the docs").
    """
    if not text[end : end + 2].strip(" \t")[:1].islower():
        return end
    cut = text.rfind("\n", start, end)
    if cut < 0:
        return end
    first = text[cut:end].lstrip(" \t\r\n" + _LEAD_MARKS).split(None, 1)[0].lstrip(",")
    return len(text[:cut].rstrip(" \t\r")) if is_common_word(first) else end
