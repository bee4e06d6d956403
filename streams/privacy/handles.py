"""Recognize usernames: an @handle that is no email, a value under a user-like key or flag.

An "@word" in technical text is as often code as a person: a decorator (``@property``, on
its own line or in backticks), an annotation (``@Override``, ``@param``), a CSS at-rule, an
npm scope (``@types/node``, and ``@types`` alone where the text writes it so too) or a
package pin (``pkg@1.2``). A handle here follows no word, path or backtick, is not followed
by ``/``, ``(`` or the ``def`` or ``class`` it decorates on the next line, and is none of
those language words; a dotted one (``@eric.durr``) is no
decorator off a module or an object (``@functools.wraps``, ``@app.route``).
"""

from __future__ import annotations

import mimetypes
import re
import sys

from presidio_analyzer import Pattern, PatternRecognizer, RecognizerResult
from presidio_analyzer.nlp_engine import NlpArtifacts

from learnstream.streams.privacy.dictionary import is_capitalised_word, is_common_word
from learnstream.streams.privacy.technology import is_tech_word
from learnstream.streams.privacy.words import word_set

__all__ = ["USERNAME_CUES", "USER_KEY", "UsernameRecognizer", "may_hold_username"]

#: What a text needs before a username can be found in it (the gate, lower-cased text).
USERNAME_CUES = re.compile(r"@|user|login|owner|author|committer|sudo|invalid user| for \S+ from ")
#: What a text needs as written, besides a cue: every pattern below holds one of these
#: as it stands, outside any case-blind group: a handle's "@" after no letter, digit or
#: other mark the handle pattern refuses before it (an e-mail's "@" follows its local
#: part), the command before an ``ssh`` login's "@", a key's "=" or ":", a flag's "--",
#: "sudo", sshd's " from ", or "User" / "user" before a login. "the login 500 error" and
#: "mail dana@example.org" hold a cue and none of them.
_MARKS = re.compile(r"(?<![A-Za-z0-9_.@`|/\\:+-])@|ssh|scp|sftp|rsync|[=:]|--|sudo| from |[Uu]ser")
#: A key whose value names an account: user, username, user_name, login, login_name.
USER_KEY = r"(?<![\w-])(?:user(?:_?name)?|login(?:_?name)?)"
#: A file's or a repository's owner assigned (Ansible's ``owner=``, GitHub's): an account.
#: "Owner: platform team" is a label in prose, not a key.
_OWNER_KEY = r"(?<![\w-])owner"
#: A handle may hold dots between its parts (Instagram's, Mastodon's local part: ``@eric.durr``)
#: and follow any character but a word's, a path's, a backtick or an rST substitution's bar
#: (``}}@x`` and ``"@x"`` are handles; ``|@composite|`` is not).
_HANDLE = (
    r"(?<![\w.@`|/\\:+-])@[A-Za-z][A-Za-z0-9_-]{1,38}(?:\.[A-Za-z0-9_-]{1,38})*"
    r"(?![\w@/(-]|\.\w|[^\S\n]*\n[^\S\n]*(?:@|def |class |async |public |private ))"
)
#: The value of ``user=…`` / ``user: …``; after a colon, not a class in a type hint
#: (``user: User = …``, ``user: Optional[str]``).
_KEYED = (
    rf"(?<=(?i:{USER_KEY}|{_OWNER_KEY})[\"']?\s*=\s*[\"']?)"
    r"[A-Za-z0-9][A-Za-z0-9._@-]{1,63}(?![\w.@(-])",
    rf"(?<=(?i:{USER_KEY})[\"']?\s*:\s*[\"']?)(?![A-Z][\w.]*(?:\s*[=,)\]|]|\[))"
    r"[A-Za-z0-9][A-Za-z0-9._@-]{1,63}(?![\w.@(-])",
)
_LOGIN = r"(?<![\w.-])[A-Za-z0-9][A-Za-z0-9._-]{0,31}"
#: "User X" as logs and admin notes write an account: only a value no word or identifier has
#: the shape of: two words joined by a dot (``mark.perez``, not a file: ``config.yaml``), a
#: word and an initial joined by ``_`` (``anna_h``; ``data_dir`` is an identifier), or a word
#: ending in digits (``diana72``). "user data", "User Guide", "user id 42" are kept.
_MARKED = (
    r"(?<=(?<![\w-])[Uu]ser\s+)(?:[a-z]{2,}\.[a-z]{2,}|[a-z]{2,}_[a-z]|[a-z]{2,}[0-9]{1,4})"
    r"(?![\w@(:-]|\.\w)"
)
#: "User X" where X is letters alone: a login only when it is an initial glued to a surname
#: (``hmorrow``, ``quinnr``), read against the word list: X is no word of it, and X without
#: its first or its last letter is a word it gives capitalised. "User xattrs", "User jobs"
#: (a word), "User mfa" (too short) are kept.
_GLUED = re.compile(r"(?<![\w-])[Uu]ser\s+([a-z]{5,17})(?![\w@(:-]|\.\w)")
#: Commands whose ``--user`` is a switch that takes no value (pip's, systemd's, flatpak's):
#: the word after it is a package or a verb.
_USER_SWITCH = r"(?:pip3?|pipx|python3?|setup\.py|systemctl|journalctl|systemd-run|busctl|flatpak)"
#: A login in commands and auth logs: ``--user=X``, ``--user X`` (but after a command whose
#: ``--user`` is a switch), ``--username X``, ``--login X``, git's ``--author``/``--committer``,
#: ``sudo -u X``, the user of ``ssh|scp|sftp|rsync user@host``, and sshd's "Failed password for
#: X from". A uid (``--user 1000``) is no login; a curl ``--user name:password`` is a
#: credential: secrets take it whole.
_COMMANDS = (
    rf"(?<=--(?:(?i:username|login|author|committer)(?:=|\s+)|(?i:user)=)[\"']?){_LOGIN}"
    r"(?![\w.@(:-])",
    rf"(?<=(?<![\w-])--user\s+[\"']?)(?<!(?<![\w-]){_USER_SWITCH}\s[^\n]*)(?!\d+\b){_LOGIN}"
    r"(?![\w.@(:-])",
    rf"(?<=(?<![\w-])sudo\s+(?:-\S+\s+)*-u\s*){_LOGIN}(?![\w.@(-])",
    rf"(?<=(?<![\w-])(?:ssh|scp|sftp|rsync)\s[^\n@]{{0,60}}){_LOGIN}(?=@[A-Za-z0-9])",
    rf"(?<=(?:(?:Failed|Accepted) \S+ for (?:invalid user )?|Invalid user )){_LOGIN}(?= from )",
    _MARKED,
)


#: At-words of programming languages, docs and stylesheets, not people.
_CODE_WORDS = word_set(
    "property staticmethod classmethod dataclass abstractmethod cached_property override "
    "overload final deprecated param params return returns throws throw type see since "
    "author version link inheritdoc example media import font-face keyframes supports "
    "charset namespace page layer apply tailwind mixin include extend use forward each if "
    "else for while function interface implementation end protocol synthesize dynamic "
    "objc_method selector encode test before after beforeeach aftereach autowired "
    "component service bean inject entity table column id transient value data builder "
    "getter setter slf4j nonnull nullable functionalinterface suppresswarnings safevarargs "
    "retention target documented inherited repeatable native app router pytest mock patch "
    "fixture jit njit vectorize wraps contextmanager asynccontextmanager total_ordering "
    "lru_cache cache singledispatch validator root_validator field_validator "
    "model_validator computed_field here channel everyone latest next beta canary"
)
#: The last part of a dotted decorator: a web route, a property's accessor, a test mark, a
#: CLI command, a task queue's task (``@app.route``, ``@x.setter``, ``@pytest.mark.slow``).
_DECORATOR_ENDS = word_set(
    "route get post put delete head options websocket middleware on_event exception_handler "
    "setter getter deleter command group option argument pass_context callback task "
    "shared_task register receiver listens_for fixture mark parametrize skip skipif xfail "
    "usefixtures filterwarnings slow timeout asyncio function jit no_grad inference_mode "
    "handler event listener hook subscriber job schedule"
)
#: Python's own modules, whose functions decorate (``@functools.wraps``, ``@abc.abstractmethod``).
_MODULES = frozenset(sys.stdlib_module_names)
#: File extensions: Python's own MIME table (not the host's), and source and config files it
#: lacks.
_EXTENSIONS = frozenset(mimetypes.MimeTypes().types_map[True]) | {
    f".{ext}"
    for ext in word_set(
        "py pyi yaml yml toml ini cfg conf env md rst lock rs go ts tsx jsx rb sql log db key "
        "pem crt"
    )
}
#: Values under a user key that are types, literals, the key's own name passed on
#: (``user=user``) or built-in accounts, not a person's name.
_NOT_NAMES = word_set(
    "none null nil true false str string int optional any self user username user_name "
    "login login_name current_user root admin guest anonymous nobody git"
)


def may_hold_username(text: str) -> bool:
    """Tell cheaply whether ``UsernameRecognizer`` could find anything in text: a cue and a
    mark its patterns need."""
    return _MARKS.search(text) is not None and USERNAME_CUES.search(text.lower()) is not None


class UsernameRecognizer(PatternRecognizer):
    """Recognize @handles and the values of user-like keys as USERNAME."""

    def __init__(self) -> None:
        patterns = [Pattern("handle", _HANDLE, 0.6)]
        patterns += [Pattern(f"user key {i}", rx, 0.6) for i, rx in enumerate(_KEYED)]
        patterns += [Pattern(f"login {i}", rx, 0.6) for i, rx in enumerate(_COMMANDS)]
        super().__init__("USERNAME", patterns=patterns, global_regex_flags=re.MULTILINE)

    def analyze(
        self,
        text: str,
        entities: list[str],
        nlp_artifacts: NlpArtifacts | None = None,
        regex_flags: int | None = None,
    ) -> list[RecognizerResult]:
        """Return the patterns' matches and the glued logins after "User"; a handle the
        text also writes as an npm scope ("the @acme plugin … @acme/cli") is the scope's."""
        found = super().analyze(text, entities, nlp_artifacts, regex_flags)
        found = [r for r in found if not _scope(text, text[r.start : r.end])]
        for m in _GLUED.finditer(text):
            start, end = m.span(1)
            if _glued_login(m.group(1)) and not any(r.start < end and start < r.end for r in found):
                found.append(RecognizerResult("USERNAME", start, end, 0.6))
        return found

    def validate_result(self, pattern_text: str) -> bool:
        """Refuse language at-words, type or literal values and attributes (``request.user``)."""
        if pattern_text.startswith("@"):
            parts = pattern_text[1:].lower().split(".")
            if len(parts) > 1 and (
                parts[0] in _MODULES or parts[-1] in _DECORATOR_ENDS or _CODE_WORDS & set(parts)
            ):
                return False  # a decorator off a module or an object: @functools.wraps
            return parts[0] not in _CODE_WORDS
        last = pattern_text.lower().rsplit(".", 1)
        if len(last) > 1 and f".{last[1]}" in _EXTENSIONS:
            return False  # a file: user: config.yaml
        return last[-1] not in _NOT_NAMES


def _scope(text: str, hit: str) -> bool:
    """Tell whether an @handle found in text stands in it as an npm scope too (``@acme/``)."""
    return hit.startswith("@") and f"{hit}/" in text


def _glued_login(word: str) -> bool:
    """Tell whether a word of letters is an initial glued to a surname, not a word."""
    if is_common_word(word) or is_capitalised_word(word) or is_tech_word(word):
        return False
    return is_capitalised_word(word[1:]) or is_capitalised_word(word[:-1])
