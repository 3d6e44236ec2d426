"""Login limits: one code path for both doors, POST /api/auth/login and /admin/login/.

- `LOGIN_RATE_LIMIT` per client address, on every attempt.
- `LOGIN_ACCOUNT_RATE_LIMIT` failures per (account, address), checked before the password: an address
  that has guessed too much is refused for that account, whatever it sends next.
- `LOGIN_ACCOUNT_ALERT_RATE` failures of the account from every address. It never refuses a password on
  its own (whoever can fail logins from a few addresses would otherwise keep the owner out): past it,
  an address that has not logged in to the account lately gets `LOGIN_NEW_ADDRESS_RATE_LIMIT` failures
  instead of the full budget, so many addresses guess slower while the owner still logs in.

Addresses are `client_address`'s: the trusted proxy's header, IPv6 per /64.
"""

import contextlib
import hashlib
import unicodedata
from collections.abc import Callable

from django.conf import settings
from django.contrib.auth import authenticate
from django.core.cache import caches

from foundation.exceptions import RateLimited
from foundation.ratelimit import CACHE_ERRORS, client_address, count_request
from helpdesk.audit import AuditActor, audit_record, change
from helpdesk.models import AuditRecord, User, login_email

ACCOUNT_POLICY = "login-conta"
# An address that logged in to an account keeps the full budget this long while the account is under attack.
KNOWN_ADDRESS_SECONDS = 30 * 86400


def login_address_count(request) -> None:
    """Every login attempt, through the API or the admin, counts against the client's address."""
    count_request(
        request,
        group="panel-login",
        rate=settings.LOGIN_RATE_LIMIT,
        key=client_address,
        policy="login",
        fail_open=settings.LOGIN_RATELIMIT_FAIL_OPEN,
    )


def login_authenticate(
    request, *, email: str, password: str, allowed: Callable[[User], bool] = lambda user: True
) -> User | None:
    """The active user whose e-mail and password these are and whom the door `allowed` lets in, or None (a
    failure of the account from this address, and so recorded). RateLimited before the password is looked
    at when this address has used up its budget for the account; the same whether the account exists or
    not, so the refusal tells nothing about it."""
    attempt = _Attempt(request, email)
    attempt.check()
    user = authenticate(request, email=email.strip(), password=password)
    if user is None or not user.is_active or not allowed(user):
        attempt.failed()
        known = user or User.objects.filter(email__iexact=login_email(email)).first()
        _login_audit("login.falhou", request, email, known)
        return None
    attempt.succeeded()
    _login_audit("login.sucesso", request, email, user)
    return user


def _login_audit(action: str, request, email: str, user: User | None) -> None:
    """A login, through the API or the admin: the account's organization sees it; an e-mail of no account
    is a platform-level record (superusers only). Never the password."""
    door = "admin" if request is not None and request.path.startswith("/admin") else "api"
    actor = AuditActor.user(user) if user is not None else AuditActor(AuditRecord.ACTOR_USER, "", email.strip()[:255])
    audit_record(
        action,
        organization_id=user.organization_id if user is not None else None,
        resource_type="usuario",
        resource_id=user.pk if user is not None else "",
        changes={"porta": change(None, door)},
        actor=actor,
    )


class _Attempt:
    """One login attempt's counters: of its account from its address, and of its account."""

    def __init__(self, request, email: str):
        self.request = request
        self.accounts = _account_keys(email)
        self.address = client_address(None, request)

    def check(self) -> None:
        for account in self.accounts:
            here = f"{account}|{self.address}"
            self._count("panel-login-account", settings.LOGIN_ACCOUNT_RATE_LIMIT, here, increment=False)
            if self._under_attack(account) and not self._known(account):
                self._count("panel-login-new-address", settings.LOGIN_NEW_ADDRESS_RATE_LIMIT, here, increment=False)

    def failed(self) -> None:
        for account in self.accounts:
            here = f"{account}|{self.address}"
            for group, rate, value in (
                ("panel-login-account", settings.LOGIN_ACCOUNT_RATE_LIMIT, here),
                ("panel-login-new-address", settings.LOGIN_NEW_ADDRESS_RATE_LIMIT, here),
                ("panel-login-account-all", settings.LOGIN_ACCOUNT_ALERT_RATE, account),
            ):
                with contextlib.suppress(RateLimited):  # reaching a limit refuses the next attempt, not this one
                    self._count(group, rate, value, increment=True)

    def succeeded(self) -> None:
        for account in self.accounts:
            with contextlib.suppress(*CACHE_ERRORS):
                caches[settings.RATELIMIT_USE_CACHE].set(self._known_key(account), 1, KNOWN_ADDRESS_SECONDS)

    def _under_attack(self, account: str) -> bool:
        try:
            self._count("panel-login-account-all", settings.LOGIN_ACCOUNT_ALERT_RATE, account, increment=False)
        except RateLimited:
            return True
        return False

    def _known(self, account: str) -> bool:
        try:
            return bool(caches[settings.RATELIMIT_USE_CACHE].get(self._known_key(account)))
        except CACHE_ERRORS:
            return False

    def _known_key(self, account: str) -> str:
        # Hashed: a cache key holds neither the e-mail nor the address (and stays short).
        return "hd:login-conhecido:" + hashlib.sha256(f"{account}|{self.address}".encode()).hexdigest()

    def _count(self, group: str, rate: str, value: str, *, increment: bool) -> None:
        count_request(
            self.request,
            group=group,
            rate=rate,
            key=lambda _group, _request: value,
            policy=ACCOUNT_POLICY,
            fail_open=settings.LOGIN_RATELIMIT_FAIL_OPEN,
            increment=increment,
        )


def _account_keys(email: str) -> list[str]:
    """Whose budgets an attempt spends: the e-mail's canonical form, so every spelling of one address
    shares them, account or not; and the user's id once the e-mail resolves as the login resolves it
    (`email__iexact`, as the backend's get_by_natural_key), for spellings the database folds and the
    canonical form does not (PostgreSQL's UPPER() makes a dotless ı an I)."""
    email = email.strip()
    keys = ["email:" + canonical_email(email)]
    users = list(User.objects.filter(email__iexact=login_email(email)).values_list("pk", flat=True)[:2])
    if len(users) == 1:
        keys.append(f"usuario:{users[0]}")
    return keys


def canonical_email(email: str) -> str:
    """NFKC and case folding (Unicode's NFKC_Casefold, near enough): ſ is s, ß is ss, ﬅ is st, ｓ is s."""
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", email.strip()).casefold())
