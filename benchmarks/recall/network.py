"""MAC, IPv4 and IPv6 addresses in the forms logs and people write them."""

from __future__ import annotations

import ipaddress

from benchmarks.recall.source import Source, Value, plain

__all__ = ["ipv4", "ipv6", "mac"]


def mac(src: Source) -> Value:
    """Return a MAC address: colons, dashes or Cisco's dotted form, either case."""
    octets = [src.chars("0123456789abcdef", 2) for _ in range(6)]
    joined = "".join(octets)
    forms = {
        "colons": ":".join(octets),
        "dashes": "-".join(octets).upper(),
        "cisco": ".".join(joined[i : i + 4] for i in range(0, 12, 4)),
        "colons upper": ":".join(octets).upper(),
    }
    form = src.rng.choice(tuple(forms))
    return plain(forms[form], form)


def ipv4(src: Source) -> Value:
    """Return a public or private IPv4 address (Faker), sometimes with a port or prefix."""
    faker = src.faker("en_US")
    private = src.rng.random() < 0.5
    address = faker.ipv4_private() if private else faker.ipv4_public()
    suffix = src.rng.choice(("", "", f":{src.rng.randint(1024, 65535)}", "/32"))
    return Value(address + suffix, (address,), ("private" if private else "public") + suffix[:1])


def ipv6(src: Source) -> Value:
    """Return an IPv6 address, compressed as usually printed or in full."""
    address = ipaddress.IPv6Address(src.faker("en_US").ipv6())
    if src.rng.random() < 0.3:  # a real /64 host: the zeros in the middle compress to ::
        address = ipaddress.IPv6Address(int(address) & ~(0xFFFF_FFFF << 32))
    full = src.rng.random() < 0.3
    return plain(address.exploded if full else address.compressed, "full" if full else "compressed")
