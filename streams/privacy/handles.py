"""Recognize usernames: an @handle that is no email, a value under a user-like key or flag.

An "@word" in technical text is as often code as a person: a decorator (``@property``, on
its own line or in backticks), an annotation (``@Override``, ``@param``), a CSS at-rule, an
npm scope (``@types/node``) or a package pin (``pkg@1.2``). A handle here starts after a
space or an opening bracket, is not followed by ``/``, ``(``, ``.word`` or the ``def`` or
``class`` it decorates on the next line, and is none of those language words.
"""

from __future__ import annotations

import re

from presidio_analyzer import Pattern, PatternRecognizer

from learnstream.streams.privacy.words import word_set

__all__ = ["USERNAME_CUES", "USER_KEY", "UsernameRecognizer"]

#: What a text needs before a username can be found in it (the gate, lower-cased text).
USERNAME_CUES = re.compile(r"@|user|login|sudo|invalid user| for \S+ from ")
#: A key whose value names an account: user, username, user_name, login, login_name.
USER_KEY = r"(?<![\w-])(?:user(?:_?name)?|login(?:_?name)?)"
_HANDLE = (
    r"(?:(?<=^)|(?<=\s|[(\[,;]))@[A-Za-z][A-Za-z0-9_-]{1,38}"
    r"(?![\w@/(-]|\.\w|[^\S\n]*\n[^\S\n]*(?:@|def |class |async |public |private ))"
)
#: The value of ``user=…`` / ``user: …``; after a colon, not a class in a type hint
#: (``user: User = …``, ``user: Optional[str]``).
_KEYED = (
    rf"(?<=(?i:{USER_KEY})[\"']?\s*=\s*[\"']?)"
    r"[A-Za-z0-9][A-Za-z0-9._@-]{1,63}(?![\w.@(-])",
    rf"(?<=(?i:{USER_KEY})[\"']?\s*:\s*[\"']?)(?![A-Z][\w.]*(?:\s*[=,)\]|]|\[))"
    r"[A-Za-z0-9][A-Za-z0-9._@-]{1,63}(?![\w.@(-])",
)
_LOGIN = r"(?<![\w.-])[A-Za-z0-9][A-Za-z0-9._-]{0,31}"
#: A login in commands and auth logs: ``--user=X``, ``--username X``, ``--login X``, ``sudo -u
#: X``, the user of ``ssh|scp|sftp|rsync user@host``, and sshd's "Failed password for X from".
#: ``--user X`` is not read: pip's and systemctl's ``--user`` take no value. A curl ``--user
#: name:password`` is a credential: secrets take it whole.
_COMMANDS = (
    rf"(?<=--(?:(?i:username|login)(?:=|\s+)|(?i:user)=)[\"']?){_LOGIN}(?![\w.@(:-])",
    rf"(?<=(?<![\w-])sudo\s+(?:-\S+\s+)*-u\s*){_LOGIN}(?![\w.@(-])",
    rf"(?<=(?<![\w-])(?:ssh|scp|sftp|rsync)\s[^\n@]{{0,60}}){_LOGIN}(?=@[A-Za-z0-9])",
    rf"(?<=(?:(?:Failed|Accepted) \S+ for (?:invalid user )?|Invalid user )){_LOGIN}(?= from )",
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
#: Values under a user key that are types, literals, the key's own name passed on
#: (``user=user``) or built-in accounts, not a person's name.
_NOT_NAMES = word_set(
    "none null nil true false str string int optional any self user username user_name "
    "login login_name current_user root admin guest anonymous nobody git"
)


class UsernameRecognizer(PatternRecognizer):
    """Recognize @handles and the values of user-like keys as USERNAME."""

    def __init__(self) -> None:
        patterns = [Pattern("handle", _HANDLE, 0.6)]
        patterns += [Pattern(f"user key {i}", rx, 0.6) for i, rx in enumerate(_KEYED)]
        patterns += [Pattern(f"login {i}", rx, 0.6) for i, rx in enumerate(_COMMANDS)]
        super().__init__("USERNAME", patterns=patterns, global_regex_flags=re.MULTILINE)

    def validate_result(self, pattern_text: str) -> bool:
        """Refuse language at-words, type or literal values and attributes (``request.user``)."""
        if pattern_text.startswith("@"):
            return pattern_text[1:].lower() not in _CODE_WORDS
        return pattern_text.lower().rsplit(".", 1)[-1] not in _NOT_NAMES
