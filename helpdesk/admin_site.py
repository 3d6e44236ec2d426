"""The admin site: staff of an organization only, and the same login limits as POST /api/auth/login."""

from django.contrib import admin, messages
from django.contrib.admin.forms import AdminAuthenticationForm
from django.template.response import TemplateResponse

from foundation.exceptions import RateLimited
from foundation.metrics.instruments import rate_limit_rejected
from helpdesk.login_limits import login_address_count, login_authenticate


class LoginForm(AdminAuthenticationForm):
    """Django's admin login form, authenticating through the login limits the API's login uses."""

    def clean(self):
        email, password = self.cleaned_data.get("username"), self.cleaned_data.get("password")
        if email is not None and password:
            # RateLimited goes up to HelpdeskAdminSite.login, which answers the 429 page.
            self.user_cache = login_authenticate(
                self.request, email=email, password=password, allowed=HelpdeskAdminSite.staff_may_enter
            )
            if self.user_cache is None:
                raise self.get_invalid_login_error()
        return self.cleaned_data


class HelpdeskAdminSite(admin.AdminSite):
    login_form = LoginForm
    site_header = "Helpdesk — painel de atendimento"
    site_title = "Helpdesk"
    index_title = "Atendimento"

    def has_permission(self, request) -> bool:
        return self.staff_may_enter(request.user)

    @staticmethod
    def staff_may_enter(user) -> bool:
        """Staff work inside one active organization; a staff user without one has no place here."""
        if not (user.is_active and user.is_staff):
            return False
        # A suspended organization's staff are kept out like its keys and tokens.
        return user.is_superuser or (user.organization_id is not None and user.organization.is_active)

    def login(self, request, extra_context=None):
        if request.method != "POST":
            return super().login(request, extra_context)
        try:
            login_address_count(request)
            return super().login(request, extra_context)
        except RateLimited as limited:
            return self._login_refused(request, limited)

    def _login_refused(self, request, limited: RateLimited) -> TemplateResponse:
        rate_limit_rejected(limited.limit)
        messages.error(request, "Muitas tentativas de login. Tente novamente em alguns minutos.")
        context = {
            **self.each_context(request),
            "title": "Entrar",
            "app_path": request.get_full_path(),
            "form": AdminAuthenticationForm(request),
        }
        response = TemplateResponse(request, self.login_template or "admin/login.html", context, status=429)
        response["Retry-After"] = limited.headers.get("Retry-After", "60")
        return response
