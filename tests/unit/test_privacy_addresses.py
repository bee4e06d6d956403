"""Street addresses written with the house number last, flats alone, and chains with a flat."""

from __future__ import annotations

import pytest

from learnstream.streams.privacy.config import PrivacyConfig
from learnstream.streams.privacy.pii import Anonymizer


@pytest.fixture(scope="module")
def anonymizer() -> Anonymizer:
    """Build an anonymizer of pattern entities only (no NER: the address rules alone)."""
    return Anonymizer(PrivacyConfig(ner=False))


@pytest.mark.parametrize(
    ("text", "private"),
    [
        ("Send it to 324 Helmstok 174, Almere", ("Helmstok", "324", "174")),
        ("his address: 449 Πεντέλης 210", ("Πεντέλης", "449", "210")),
        ("625 ul. Asnyka Adama 82\nSuite 527\nRzeszów", ("Asnyka", "625", "527")),
        ("28708 Rua Cidade de Maracajá 468\n Apt. 172", ("Maracajá", "468", "172")),
        ("his address: 083 254 Damvergi Street", ("083", "254", "Damvergi")),
        ("Flat on the third floor: Apt. 559", ("559",)),
        ("3240 Meadow Drive\n Apt. 983\n Waiatarua\n Netherlands 29952", ("983", "29952")),
    ],
)
def test_streets_with_the_number_last_and_flats_are_masked(
    anonymizer: Anonymizer, text: str, private: tuple[str, ...]
) -> None:
    out, counts = anonymizer.anonymize_text(text)
    assert counts["STREET_ADDRESS"] >= 1
    assert not [p for p in private if p in out]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "How do I change my address to 139 168 Westglen Road\n Apt. 983\n Waiatarua\n"
            " New Zealand for post mail?",
            "How do I change my address to <STREET_ADDRESS>\n New Zealand for post mail?",
        ),
        (
            "Send: 03103 12 Timms Drive\nŽamberk\n, PA\n Czech Republic 04015",
            "Send: <STREET_ADDRESS>",
        ),
        ("Meet me at 36884 Löberöd 27\n Suite 431\n ÅSARP\n Sweden", "Meet me at <STREET_ADDRESS>"),
        ("12 Main Street\nSee the docs\n", "<STREET_ADDRESS>\nSee the docs\n"),
    ],
)
def test_the_lines_of_an_address_block_go_with_its_street(
    anonymizer: Anonymizer, text: str, expected: str
) -> None:
    assert anonymizer.anonymize_text(text)[0] == expected


@pytest.mark.parametrize(
    "text",
    [
        "Release notes\nPostgres 16\nKafka 4",  # no street: lines alone are no address
        "Upgrade 3 Django 4 apps",
        "Move 2 VMs to 3 hosts",
        "Raise the limit from 3 Mbps to 5",
        "Supports Python 3 and Qt 5",
        "Run the suite 3 times",
    ],
)
def test_numbers_around_capitalised_words_in_technical_text_are_kept(
    anonymizer: Anonymizer, text: str
) -> None:
    assert anonymizer.anonymize_text(text)[0] == text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "sent to 84251 Hadikgasse 49 Apt. 542 KÖTTMANNSDORF Austria?",
            "sent to <STREET_ADDRESS>?",
        ),
        ("located at 1006 Skoanveien 226 Suite 626 FAUSKE Norway", "located at <STREET_ADDRESS>"),
        (
            "ship to 1777 Kramer Court, Apt. 5 Then We Deploy it",
            "ship to <STREET_ADDRESS> Then We Deploy it",
        ),
    ],
)
def test_the_town_after_a_flat_on_the_streets_line_goes_with_it(
    anonymizer: Anonymizer, text: str, expected: str
) -> None:
    """A town and a country after a flat close the street's line; words before more prose
    do not."""
    assert anonymizer.anonymize_text(text)[0] == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "to 3348 84 Cassinia Street\nKARARA\n, QLD\n 92893. Call me",
            "to <STREET_ADDRESS>. Call me",
        ),
        ("build 4411 finished\n20240 rows", "build 4411 finished\n20240 rows"),
    ],
)
def test_a_postcode_alone_on_its_line_ends_an_address_block(
    anonymizer: Anonymizer, text: str, expected: str
) -> None:
    """A postcode on a line of its own goes with the block above it; with no street above,
    digits on a line are left."""
    assert anonymizer.anonymize_text(text)[0] == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("sent to 71236 Mühle 77 Suite 160, BODØ, Norway", "sent to <STREET_ADDRESS>"),
        ("it is 137 Tavcarjeva 44, Kangilinnguit, Greenland.", "it is <STREET_ADDRESS>."),
        (
            "meet at 1777 Kramer Court, then Deploy, Test and Ship",
            "meet at <STREET_ADDRESS>, then Deploy, Test and Ship",
        ),
    ],
)
def test_a_town_and_country_after_commas_close_the_street(
    anonymizer: Anonymizer, text: str, expected: str
) -> None:
    """Capitalised segments after a street, comma by comma, up to the line's or sentence's
    end, are its town and country; a clause going on after it is not."""
    assert anonymizer.anonymize_text(text)[0] == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "change it to the corner of 262 Thisseos Avenue and Semmens Greens for mail",
            "change it to the corner of <STREET_ADDRESS> for mail",
        ),
        (
            "located at the corner of Tverråsveien 128 and Yonis Village. It serves food.",
            "located at the corner of <STREET_ADDRESS>. It serves food.",
        ),
        ("a corner of the API and the CLI", "a corner of the API and the CLI"),
        ("it cuts a corner of Kafka's design", "it cuts a corner of Kafka's design"),
    ],
)
def test_the_streets_of_a_corner_are_masked(
    anonymizer: Anonymizer, text: str, expected: str
) -> None:
    """After "corner of", capitalised words and numbers name the streets that meet, with
    or without their numbers; lower-case words or one word after it are no corner."""
    assert anonymizer.anonymize_text(text)[0] == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "change it to 621 Hrisateigur 32\n Apt. 427\n Húsavík\n Iceland for post mail?",
            "change it to <STREET_ADDRESS> for post mail?",
        ),
        (
            "office at 1777 Kramer Court\n2024 budget approved",
            "office at <STREET_ADDRESS>\n2024 budget approved",
        ),
    ],
)
def test_prose_after_an_address_blocks_last_line_is_not_the_blocks(
    anonymizer: Anonymizer, text: str, expected: str
) -> None:
    """The block's last line may have the sentence go on after it; a number opening prose
    on the next line is no postcode."""
    assert anonymizer.anonymize_text(text)[0] == expected


@pytest.mark.parametrize(
    ("text", "town"),
    [
        ("> Dana Whitfield\n> 14 Harrowgate Lane\n> Apt. 3\n> LEEDS\n> United Kingdom 12345",
         "LEEDS"),
        ("}}Priya Raman\n}}2204 Lindevej 48\n}}Suite 12\n}}ODENSE\n}}Denmark 50210", "ODENSE"),
        ("- 88 Orchard Road\n- Flat 2\n- Bristol", "Bristol"),
    ],
)  # fmt: skip
def test_the_lines_of_a_block_that_open_with_a_mark_go_with_its_street(
    anonymizer: Anonymizer, text: str, town: str
) -> None:
    out = anonymizer.anonymize_text(text)[0]
    assert town not in out
    assert "<STREET_ADDRESS>" in out


@pytest.mark.parametrize(
    "text",
    ["12 Main Street\n> Deploy the canary first", "12 Main Street\n- Run the smoke tests"],
)
def test_a_marked_line_of_prose_after_a_street_is_kept(anonymizer: Anonymizer, text: str) -> None:
    out = anonymizer.anonymize_text(text)[0]
    assert out.endswith(text.split("\n", 1)[1])


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Gigs on Quellmoor Street were loud.",
            "Gigs on <STREET_ADDRESS> were loud.",
        ),
        ("Ona lives on Vinohradská 1394 street.", "Ona lives on <STREET_ADDRESS>."),
        ("It refers to Ερμού 54 street.", "It refers to <STREET_ADDRESS>."),
    ],
)
def test_a_street_named_by_its_type_written_out_needs_no_house_number(
    anonymizer: Anonymizer, text: str, expected: str
) -> None:
    assert anonymizer.anonymize_text(text)[0] == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Drop it at 4410 Skovbrynet 12 St.", "Drop it at <STREET_ADDRESS>"),
        ("Return to 2210 Nordre gate 64 Suite 12", "Return to <STREET_ADDRESS>"),
        ("??? 118 Tamme põik 17\n??? Tartu", "??? <STREET_ADDRESS>"),
    ],
)
def test_streets_with_the_number_last_take_lower_case_types_and_an_english_type_after(
    anonymizer: Anonymizer, text: str, expected: str
) -> None:
    assert anonymizer.anonymize_text(text)[0] == expected


@pytest.mark.parametrize(
    "text",
    [
        "The Python Road Map for 2025",  # a product's word, then a capitalised word
        "It is on Main Road and The Road.",  # English words only
        "Take the road to the main street.",  # no capitalised name
        "Scale from 1 Worker to 4, then stop.",  # an English function word inside
        "Resize 2 Pods to 3\nthen wait.",
        "Run 3 Python 3 tests on Street View.",
    ],
)
def test_technical_text_of_the_same_shapes_is_no_street(anonymizer: Anonymizer, text: str) -> None:
    assert anonymizer.anonymize_text(text)[0] == text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The shop is on Laugavegur 28", "The shop is on <STREET_ADDRESS>"),
        (
            "She works at the far end of Kerkstraat 120.",
            "She works at the far end of <STREET_ADDRESS>",
        ),
        ("It is on ul. Długa 44", "It is on <STREET_ADDRESS>"),
        ("Enter on Skovvej 41 St. at night", "Enter on <STREET_ADDRESS> at night"),
    ],
)
def test_a_street_with_its_number_last_is_masked_where_a_place_is_named(
    anonymizer: Anonymizer, text: str, expected: str
) -> None:
    assert anonymizer.anonymize_text(text)[0] == expected


@pytest.mark.parametrize(
    "text",
    [
        "It runs on Windows 10 and Python 3.",  # products and their versions
        "The strategy defined in RFC 2231.",  # a standard's acronym
        "Read about it in Section 12.",  # English words
        "Released in March 2024.",
        "Upgrade to Zorbel 2.",  # a version of one digit
        "See the roadmap in Kestrel 12 Road Map.",  # a capitalised word after the type
    ],
)
def test_a_product_or_a_standard_with_its_number_is_no_street(
    anonymizer: Anonymizer, text: str
) -> None:
    assert anonymizer.anonymize_text(text)[0] == text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "it is 4410 23 Rue Oberkampf Suite 12 Lyon France",
            "it is <STREET_ADDRESS>",
        ),
        (
            "Change it to 5120 77 Harrow St Suite 12 Tromsø TROMS for post mail?",
            "Change it to <STREET_ADDRESS> for post mail?",
        ),
    ],
)
def test_a_building_number_before_and_the_town_after_a_flat_go_with_the_street(
    anonymizer: Anonymizer, text: str, expected: str
) -> None:
    assert anonymizer.anonymize_text(text)[0] == expected


@pytest.mark.parametrize(
    ("text", "private"),
    [
        ("6453 Jiráskova 219\n Apt. 18\n Ústí nad Labem\n Czech Republic 40001", "Labem"),
        ("1438 13 Avenue Habib Bourguiba\n Suite 32\n Sousse\n Tunisia 40000", "Sousse"),
    ],
)
def test_the_lines_of_a_block_go_with_the_street(
    anonymizer: Anonymizer, text: str, private: str
) -> None:
    """A town's name may hold a short lower-case word; a French street's name ends its line."""
    out = anonymizer.anonymize_text(text)[0]
    assert out == "<STREET_ADDRESS>"
    assert private not in out


def test_a_lower_case_word_after_a_blocks_town_is_prose() -> None:
    anonymizer = Anonymizer(PrivacyConfig(ner=False))
    text = "12 Kramer Court\n Brazil for post mail?"
    assert "for post mail?" in anonymizer.anonymize_text(text)[0]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Name: Lene Brask\nAddress:     Nordre gate 64, Oslo",
            "Name: Lene Brask\nAddress:     <STREET_ADDRESS>",
        ),
        ("Address:\nRua Augusta 274", "Address:\n<STREET_ADDRESS>"),
        ("Billing address: Hollow Farm, 3240 Meadow", "Billing address: <STREET_ADDRESS>"),
    ],
)
def test_the_value_of_an_address_line_is_an_address(
    anonymizer: Anonymizer, text: str, expected: str
) -> None:
    assert anonymizer.anonymize_text(text)[0] == expected


@pytest.mark.parametrize(
    "text",
    [
        "Address: 0x7ffd1234",  # a memory address
        "MAC Address: 00:11:22",  # another label's address
        "Address: see the docs",  # no digit
        "The address is 12 bytes wide.",  # no label opening the line
    ],
)
def test_other_address_lines_are_left(anonymizer: Anonymizer, text: str) -> None:
    assert anonymizer.anonymize_text(text)[0] == text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Stop at the corner of ul. Długa 44 St. and Harrow Well St.",
            "Stop at the corner of <STREET_ADDRESS>.",
        ),
        (
            "Use the corner of 12 rue Oberkampf and Lindqvist Plains for this card",
            "Use the corner of <STREET_ADDRESS> for this card",
        ),
        (
            "Stop at the corner of P.O. Box 28 St. and Lumo Gardens St.",
            "Stop at the corner of <STREET_ADDRESS>.",
        ),
    ],
)
def test_a_corners_streets_take_lower_case_types_and_initials(
    anonymizer: Anonymizer, text: str, expected: str
) -> None:
    assert anonymizer.anonymize_text(text)[0] == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Ship it to 350 5th Avenue, New York, NY 10118", "Ship it to <STREET_ADDRESS>"),
        ("He lives at 12 W 42nd St.", "He lives at <STREET_ADDRESS>"),
    ],
)
def test_numbered_streets_are_streets(anonymizer: Anonymizer, text: str, expected: str) -> None:
    assert anonymizer.anonymize_text(text)[0] == expected


def test_an_ordinal_before_no_street_type_is_left(anonymizer: Anonymizer) -> None:
    text = "Run 3 5th Generation tests"
    assert anonymizer.anonymize_text(text)[0] == text


@pytest.mark.parametrize(
    ("text", "private"),
    [
        ("Ship it to 418 Quillon Str. 12 Apt. 9\nUpper Brelling, nan 40417", ("40417",)),
        ("Meet at 512 Kellavikveien 31\nTOLLARD\n, None\n 29366?", ("29366", "TOLLARD")),
        ("Sent to 77 Brannock Avenue Suite 12 Orvelton nan", ("Orvelton",)),
        ("Sent to 3121 Vellanhóli 14\nVale de Corvos, QX 31908", ("31908", "Corvos")),
    ],
)
def test_a_region_exported_empty_or_as_a_code_stays_in_the_block(
    anonymizer: Anonymizer, text: str, private: tuple[str, ...]
) -> None:
    out = anonymizer.anonymize_text(text)[0]
    assert "<STREET_ADDRESS>" in out
    assert not [p for p in private if p in out]


@pytest.mark.parametrize(
    "text",
    [
        "Fill NaN values:\nPandas, nan 0.5 by default",
        "Returns None\n, None\n 12345 rows when the frame is empty",
    ],
)
def test_missing_values_in_technical_text_are_no_region(anonymizer: Anonymizer, text: str) -> None:
    assert anonymizer.anonymize_text(text)[0] == text


@pytest.mark.parametrize(
    ("text", "private"),
    [
        ("Deliver to Orvelle and 118 Quillon Drive, please", ("Orvelle", "118")),
        (
            "Sent to Tasmaru 41 Brannock Points\n Suite 8\n Tollard\n Estonia 40417",
            ("Tasmaru", "Brannock"),
        ),
        ("It is in Kellavik 7 Dunmore Road\n Apt. 31\n BRELLING", ("Kellavik", "Dunmore")),
    ],
)
def test_the_street_written_before_a_street_found_goes_with_it(
    anonymizer: Anonymizer, text: str, private: tuple[str, ...]
) -> None:
    out = anonymizer.anonymize_text(text)[0]
    assert "<STREET_ADDRESS>" in out
    assert not [p for p in private if p in out]


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("Deploy and 12 Main Street get the new router", "Deploy and "),
        ("Upgrade Kafka 3 Main Street servers first", "Upgrade Kafka "),
        ("Python 3 Main Street", "Python "),
    ],
)
def test_an_english_word_or_a_tools_name_before_a_street_is_not_a_street(
    anonymizer: Anonymizer, text: str, kept: str
) -> None:
    assert anonymizer.anonymize_text(text)[0].startswith(kept)


@pytest.mark.parametrize(
    ("text", "private"),
    [
        ("Other rise up 1254 Cathcart Way clearly wait.", ("1254", "Cathcart")),
        ("Gun 161 Ballyferris Path theory difference", ("161", "Ballyferris")),
        ("Common allow first 255 Brooklands Trace mention.", ("255", "Brooklands")),
        ("Be speak change yard 894 Kodiak Av Hospital again", ("894", "Kodiak")),
    ],
)
def test_a_street_of_an_everyday_type_is_masked_when_its_words_are_names(
    anonymizer: Anonymizer, text: str, private: tuple[str, ...]
) -> None:
    out, counts = anonymizer.anonymize_text(text)
    assert counts["STREET_ADDRESS"] == 1
    assert not any(word in out for word in private)


@pytest.mark.parametrize(
    "text",
    [
        "3 Smoke Tests Pass",
        "We ran 2 Kafka Streams Path checks",
        "It took 12 Fast Track Runs",
        "Merged 4 Pull Requests Way faster",
        "Ship 2 API Gateway Points",
    ],
)
def test_numbers_before_english_or_product_words_of_an_everyday_type_are_kept(
    anonymizer: Anonymizer, text: str
) -> None:
    assert anonymizer.anonymize_text(text)[0] == text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a building's name before its flat or street, on its line or the one above
        ("Harlow House, Flat 12, Penrose Walk, Dunmoor, KT3 4QP", "<STREET_ADDRESS>"),
        ("Quayle Building\n214 Marrick Lane\nBexworth", "<STREET_ADDRESS>"),
        # the town after a street, on its line or closing the next, and the nation
        ("Flat 3 Yelvin Overpass Tarnbridgeham.", "<STREET_ADDRESS>."),
        ("14 Corran Viaduct\nNorth Ellisport", "<STREET_ADDRESS>"),
        ("Studio 9, Ollery Tunnel, Mossgate, E4 7UT, SCOTLAND. Then", "<STREET_ADDRESS>. Then"),
        ("12 Main Street Tomorrow we ship", "<STREET_ADDRESS> Tomorrow we ship"),
        # an everyday street type in lower case is the next word, not the street's
        ("at 834 Tamalpine Heights walk there", "at <STREET_ADDRESS> walk there"),
        ("1062 Captain Walk", "<STREET_ADDRESS>"),
        ("run 200 Smoke Tests Pass", "run 200 Smoke Tests Pass"),
        # all in lower case, read by the part no prose has
        (
            "notes\nflat 7b\nmoss row\nkelbridge\nkt3 4qp\nwales\nthanks",
            "notes\n<STREET_ADDRESS>\nthanks",
        ),
        ("4410 fenwick trace apt. 12\nmarlow\nwi 53703", "<STREET_ADDRESS>"),
        ("648 orrin plains, cadmouth, va 18803 today", "<STREET_ADDRESS> today"),
        ("psc 4410, box 2231\napo ae 09012", "<STREET_ADDRESS>"),
        ("upgrade the box to ab1 2cd", "upgrade the box to ab1 2cd"),
    ],
)
def test_a_street_takes_in_its_building_town_nation_and_lower_case_blocks(
    anonymizer: Anonymizer, text: str, expected: str
) -> None:
    assert anonymizer.anonymize_text(text)[0] == expected
