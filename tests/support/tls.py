"""Make throwaway certificate authorities and certificates for TLS tests (PEM, no keytool)."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

__all__ = ["Authority", "Issued"]


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _san(host: str) -> x509.GeneralName:
    try:
        return x509.IPAddress(ipaddress.ip_address(host))
    except ValueError:
        return x509.DNSName(host)


@dataclass(frozen=True)
class Issued:
    """A certificate and its private key, as PEM text."""

    certificate: str
    private_key: str

    def write(self, directory: Path, stem: str, password: str | None = None) -> tuple[Path, Path]:
        """Write ``<stem>.crt`` and ``<stem>.key`` (encrypted with ``password``); return both."""
        key = serialization.load_pem_private_key(self.private_key.encode(), None)
        encryption: serialization.KeySerializationEncryption = (
            serialization.BestAvailableEncryption(password.encode())
            if password
            else serialization.NoEncryption()
        )
        pem = key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, encryption
        )
        cert, key_path = directory / f"{stem}.crt", directory / f"{stem}.key"
        cert.write_text(self.certificate)
        key_path.write_bytes(pem)
        return cert, key_path


class Authority:
    """A self-signed CA that issues server and client certificates."""

    def __init__(self, name: str = "learnstream test CA") -> None:
        self._key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.now(UTC)
        self._cert = (
            x509.CertificateBuilder()
            .subject_name(_name(name))
            .issuer_name(_name(name))
            .public_key(self._key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - timedelta(minutes=5))
            .not_valid_after(now + timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(self._key, hashes.SHA256())
        )

    @property
    def certificate(self) -> str:
        """Return the CA certificate as PEM."""
        return self._cert.public_bytes(serialization.Encoding.PEM).decode()

    def write(self, path: Path) -> Path:
        """Write the CA certificate to ``path`` (a client's cafile); return it."""
        path.write_text(self.certificate)
        return path

    def issue(
        self, common_name: str, hosts: tuple[str, ...] = ("127.0.0.1", "localhost")
    ) -> Issued:
        """Return a certificate for ``hosts`` (subject alternative names), signed by this CA."""
        key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.now(UTC)
        cert = (
            x509.CertificateBuilder()
            .subject_name(_name(common_name))
            .issuer_name(self._cert.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - timedelta(minutes=5))
            .not_valid_after(now + timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([_san(h) for h in hosts]), critical=False)
            .sign(self._key, hashes.SHA256())
        )
        key_pem = key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
        return Issued(cert.public_bytes(serialization.Encoding.PEM).decode(), key_pem.decode())
