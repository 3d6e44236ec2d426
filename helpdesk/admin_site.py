"""The admin site: staff of an organization only, and the same login limits as POST /api/auth/login."""

from django.contrib import admin, messages
from django.contrib.admin.forms import AdminAuthenticationForm
from django.template.response import TemplateResponse

from helpdesk.auth import login_account_check, login_account_failed, login_address_count
from helpdesk.exceptions import RateLimited
from helpdesk.metrics.instruments import rate_limit_rejected


class HelpdeskAdminSite(admin.AdminSite):
    site_header = "Helpdesk — painel de atendimento"
    site_title = "Helpdesk"
    index_title = "Atendimento"

    def has_permission(self, request) -> bool:
        """Staff work inside one active organization; a staff user without one has no place here."""
        user = request.user
        if not (user.is_active and user.is_staff):
            return False
        # A suspended organization's staff are kept out like its keys and tokens.
        return user.is_superuser or (user.organization_id is not None and user.organization.is_active)

    def login(self, request, extra_context=None):
        if request.method != "POST":
            return super().login(request, extra_context)
        email = request.POST.get("username", "")
        try:
            login_address_count(request)
            login_account_check(request, email)
        except RateLimited as limited:
            return self._login_refused(request, limited)
        response = super().login(request, extra_context)
        if not request.user.is_authenticated:
            login_account_failed(request, email)
        return response

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
