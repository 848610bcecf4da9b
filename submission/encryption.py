"""OpenSSL `enc` files: the passphrase file, AES-256-CBC with either of two key derivations, and a new passphrase.

The results chair opens archives with `pack_submission.sh --unpack`, which runs `openssl enc -d -aes256` with no
derivation option: openssl's default, EVP_BytesToKey with one round of SHA-256 (openssl 1.1.0 and later; 1.0.x used
MD5, `KDF_OPENSSL_MD5`, which is only read). That is what `package --encrypt` writes unless asked otherwise
(`KDF_OPENSSL`). `KDF_PBKDF2` (PBKDF2-HMAC-SHA256,
600,000 iterations) is stronger, but the chair then needs the openssl line `open_command` gives. All write the
`Salted__` header and an 8-byte salt; the header does not say which derivation was used, so `decrypt_any` tries
each. AES-256-CBC is not authenticated: a wrong key shows as bad padding, or (rarely) as garbage that is then not
a gzip stream, which is why `decrypt_any` also looks at the gzip magic.
"""

from __future__ import annotations

import hashlib
import os
import secrets
from pathlib import Path

from mlsubmit.core.errors import FatalError
from mlsubmit.core.support.safe_io import open_regular

OPENSSL_MAGIC = b"Salted__"
PBKDF2_ITERATIONS = 600_000
KDF_OPENSSL = "openssl"  # openssl enc's default since 1.1.0: EVP_BytesToKey, SHA-256, one round
KDF_OPENSSL_MD5 = "openssl-md5"  # the same with MD5, openssl 1.0.x's default: read, never written
KDF_PBKDF2 = "pbkdf2"
KDFS = (KDF_OPENSSL, KDF_PBKDF2)  # what package can write
_READABLE = (KDF_OPENSSL, KDF_OPENSSL_MD5, KDF_PBKDF2)
_SALT_LEN = 8
_KEY_LEN, _IV_LEN = 32, 16
_CHUNK = 1 << 20
PASS_MAX = 1023  # openssl's -pass file: reads at most this many bytes of the first line
_GZIP_MAGIC = b"\x1f\x8b"
_NEW_PASSPHRASE_BYTES = 32  # 256 bits of randomness, 43 URL-safe characters


class CryptoError(Exception):
    """Decryption failed: wrong passphrase, or the file was damaged or is not in OpenSSL's format."""


def read_passphrase(path: Path) -> bytes:
    """The first line of the file without its newline, as `openssl -pass file:` reads it."""
    try:
        with open_regular(path) as fh:  # a FIFO or /proc/kmsg would block the run
            first = fh.readline(PASS_MAX + 1)
    except OSError as exc:
        raise FatalError(f"{path}: cannot read the passphrase file: {exc.strerror or exc}") from None
    phrase = first.split(b"\n", 1)[0]
    if len(first) > PASS_MAX and not first.endswith(b"\n"):
        raise FatalError(f"{path}: the passphrase is longer than openssl's limit of {PASS_MAX} bytes")
    if not phrase:
        raise FatalError(f"{path}: the passphrase file's first line is empty")
    return phrase


def readable_by_others(path: Path) -> bool:
    try:
        return bool(path.stat().st_mode & 0o077)
    except OSError:
        return False


def generate_passphrase(path: Path) -> bytes:
    """A long random passphrase written to a new file of mode 0600; an existing file is never replaced."""
    phrase = secrets.token_urlsafe(_NEW_PASSPHRASE_BYTES).encode("ascii")
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        raise FatalError(f"{path}: already exists; --generate-passphrase writes a new file only") from None
    except OSError as exc:
        raise FatalError(f"{path}: cannot create the passphrase file: {exc.strerror or exc}") from None
    with os.fdopen(fd, "wb") as fh:
        fh.write(phrase + b"\n")
    os.chmod(path, 0o600)  # the umask may have taken bits away, never added: this only makes it explicit
    return phrase


def open_command(kdf: str, encrypted: str, plain: str, passphrase_file: str) -> str:
    """The openssl line that decrypts a file written with `kdf`."""
    extra = f"-pbkdf2 -iter {PBKDF2_ITERATIONS} -md sha256 " if kdf == KDF_PBKDF2 else ""
    return f"openssl enc -d -aes256 {extra}-pass file:{passphrase_file} -in {encrypted} -out {plain}"


def _bytes_to_key(passphrase: bytes, salt: bytes, digest: str) -> bytes:
    """EVP_BytesToKey with one round: D_i = H(D_(i-1) || passphrase || salt), concatenated until key and IV fit."""
    material, block = b"", b""
    while len(material) < _KEY_LEN + _IV_LEN:
        block = hashlib.new(digest, block + passphrase + salt, usedforsecurity=False).digest()
        material += block
    return material


def _key_iv(passphrase: bytes, salt: bytes, kdf: str) -> tuple[bytes, bytes]:
    if kdf in (KDF_OPENSSL, KDF_OPENSSL_MD5):
        material = _bytes_to_key(passphrase, salt, "sha256" if kdf == KDF_OPENSSL else "md5")
    elif kdf == KDF_PBKDF2:
        material = hashlib.pbkdf2_hmac("sha256", passphrase, salt, PBKDF2_ITERATIONS, _KEY_LEN + _IV_LEN)
    else:
        raise ValueError(f"unknown key derivation {kdf!r}")
    return material[:_KEY_LEN], material[_KEY_LEN : _KEY_LEN + _IV_LEN]


def encrypt_file(src: Path, dest: Path, passphrase: bytes, *, kdf: str = KDF_OPENSSL, salt: bytes | None = None
                 ) -> None:
    # lazy: cryptography: ~15 ms to import; only --encrypt and encrypted archives need it
    from cryptography.hazmat.primitives import padding
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

    salt = salt if salt is not None else os.urandom(_SALT_LEN)
    key, iv = _key_iv(passphrase, salt, kdf)
    encryptor = Cipher(algorithms.AES(key), modes.CBC(iv)).encryptor()
    padder = padding.PKCS7(128).padder()
    with open(src, "rb") as fin, open(dest, "wb") as fout:
        fout.write(OPENSSL_MAGIC + salt)
        for chunk in iter(lambda: fin.read(_CHUNK), b""):
            fout.write(encryptor.update(padder.update(chunk)))
        fout.write(encryptor.update(padder.finalize()) + encryptor.finalize())


def is_encrypted(path: Path) -> bool:
    try:
        with open(path, "rb") as fh:
            return fh.read(len(OPENSSL_MAGIC)) == OPENSSL_MAGIC
    except OSError:
        return False


def decrypt_file(src: Path, dest: Path, passphrase: bytes, *, kdf: str = KDF_OPENSSL) -> None:
    # lazy: cryptography: ~15 ms to import; only --encrypt and encrypted archives need it
    from cryptography.hazmat.primitives import padding
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

    with open(src, "rb") as fin:
        header = fin.read(len(OPENSSL_MAGIC) + _SALT_LEN)
        if len(header) != len(OPENSSL_MAGIC) + _SALT_LEN or not header.startswith(OPENSSL_MAGIC):
            raise CryptoError("not an OpenSSL `enc` file (no Salted__ header)")
        key, iv = _key_iv(passphrase, header[len(OPENSSL_MAGIC) :], kdf)
        decryptor = Cipher(algorithms.AES(key), modes.CBC(iv)).decryptor()
        unpadder = padding.PKCS7(128).unpadder()
        body = 0
        with open(dest, "wb") as fout:
            for chunk in iter(lambda: fin.read(_CHUNK), b""):
                body += len(chunk)
                fout.write(unpadder.update(decryptor.update(chunk)))
            if body == 0 or body % 16:
                raise CryptoError("the encrypted data is truncated (not a whole number of AES blocks)")
            try:
                fout.write(unpadder.update(decryptor.finalize()) + unpadder.finalize())
            except ValueError:
                raise CryptoError("wrong passphrase, or the file is damaged (bad padding)") from None


def decrypt_any(src: Path, dest: Path, passphrase: bytes) -> str:
    """Decrypt a gzip file written with any of the derivations (openssl's default first); returns the one used."""
    last = CryptoError("wrong passphrase, or the file is damaged")
    for kdf in _READABLE:
        try:
            decrypt_file(src, dest, passphrase, kdf=kdf)
        except CryptoError as exc:
            if "truncated" in str(exc) or "Salted__" in str(exc):
                raise
            last = exc
            continue
        with open(dest, "rb") as fh:
            if fh.read(len(_GZIP_MAGIC)) == _GZIP_MAGIC:
                return kdf
        last = CryptoError("wrong passphrase (the decrypted bytes are not a gzip stream)")
    raise last
